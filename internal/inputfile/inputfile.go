// Package inputfile opens the files the readers decode. Every reader of the
// module (safetensors, sharded indexes, GGUF, npy/npz, importance matrices,
// format detection) opens its input through Open, so the checks made on an
// input before it is read live in one place.
//
// Open refuses anything but a regular file (after symbolic links are
// followed): a named pipe would block the open, or the first read, until
// another process writes to it, and a device such as /dev/urandom or
// /dev/zero never ends. The refusal is a *NotRegularError, matched by
// errors.Is(err, ErrNotRegular).
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is matched (errors.Is) by the error Open returns for a path
// that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError reports an input path that names a named pipe, a device,
// a socket or a directory instead of a regular file.
type NotRegularError struct {
	// Path is the input as given.
	Path string
	// Mode is the file's mode (its type bits say what it is).
	Mode fs.FileMode
}

// Error returns a message such as
// "in.safetensors is a named pipe, not a regular file: give the path of a file (copy the stream to a file first)".
func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: give the path of a file (copy a stream to a file first)", e.Path, kind(e.Mode))
}

// Is reports whether target is ErrNotRegular.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// kind names the type of a non-regular file.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a plain file (mode " + m.String() + ")"
}

// Check returns a *NotRegularError if path (symbolic links followed) exists
// and is not a regular file, the error of os.Stat if it cannot be examined,
// and nil for a regular file. It never opens path.
func Check(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return nil
}

// Open opens the regular file at path for reading and returns it with its
// FileInfo. A path that is not a regular file is refused with a
// *NotRegularError before it is opened, so a named pipe never blocks the
// caller; the opened file is checked again in case path was replaced in
// between.
func Open(path string) (*os.File, fs.FileInfo, error) {
	if err := Check(path); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, fi, nil
}

// MaxReadFile is the largest file ReadFile reads (1 GiB): far above any
// config.json, tokenizer.json or info.json, and a bound on what a file
// beside a checkpoint can make ReadFile allocate.
const MaxReadFile = 1 << 30

// ErrTooLarge is matched (errors.Is) by the error ReadFile returns for a
// file larger than MaxReadFile.
var ErrTooLarge = errors.New("file too large to read whole")

// TooLargeError reports a file ReadFile refuses because it is larger than
// MaxReadFile.
type TooLargeError struct {
	// Path is the file as given.
	Path string
	// Size is its size in bytes.
	Size int64
}

// Error returns a message such as
// "config.json is 1099511627776 bytes, more than the 1073741824 a configuration file may have: check that it is the file meant".
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, more than the %d a configuration file may have: check that it is the file meant (it may be damaged)",
		e.Path, e.Size, MaxReadFile)
}

// Is reports whether target is ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// ReadFile reads the whole regular file at path, as os.ReadFile does, after
// refusing a path that is not a regular file (see Open) and, before
// allocating, a file larger than MaxReadFile (a *TooLargeError).
func ReadFile(path string) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > MaxReadFile {
		return nil, &TooLargeError{Path: path, Size: fi.Size()}
	}
	b := make([]byte, 0, fi.Size()+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}
