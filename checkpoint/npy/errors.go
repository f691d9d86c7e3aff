package npy

import (
	"fmt"

	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// FormatError reports input that could not be decoded as a supported .npy
// file or .npz archive: malformed or unsupported content, truncated input,
// and read failures met while decoding. Its fields are Format ("npy", or
// "npz" for an archive), Path (set by ReadFile and ReadNPZ), Tensor (an
// archive's array), Offset (-1 when none applies), Reason, Err
// (io.ErrUnexpectedEOF when the input is truncated) and Kind, which
// errors.Is matches with ErrInvalid, ErrTruncated, ErrNotFormat,
// ErrUnsupported and ErrTooLarge. Its message reads
// "npy: file.npy: offset 0: bad magic (not an .npy file)".
//
// It is the one error type of the module's file readers (an alias of the
// same type in package gguf, safetensors, imatrix and castdir), so
// errors.As with a *npy.FormatError also finds another reader's error:
// Format says which reader it is.
type FormatError = fileerr.FormatError

// The kinds of FormatError, matched by errors.Is.
var (
	// ErrInvalid: the file breaks a rule of the format.
	ErrInvalid = fileerr.ErrInvalid
	// ErrTruncated: the file ends inside its header or payload.
	ErrTruncated = fileerr.ErrTruncated
	// ErrNotFormat: the file does not start with the .npy magic, or an
	// .npz is no zip archive.
	ErrNotFormat = fileerr.ErrNotFormat
	// ErrUnsupported: a valid file this package does not read: another
	// format version, an object, structured, complex, string or datetime
	// dtype.
	ErrUnsupported = fileerr.ErrUnsupported
	// ErrTooLarge: a header or an archive member larger than this package
	// accepts.
	ErrTooLarge = fileerr.ErrTooLarge
)

// The Format of this package's errors: .npy files and .npz archives.
const (
	formatNPY = "npy"
	formatNPZ = "npz"
)

// errAt returns a *FormatError of an .npy file at offset off, Truncated
// when err is io.ErrUnexpectedEOF.
func errAt(off int64, err error, reason string, args ...any) *FormatError {
	return fileerr.New(formatNPY, off, err, fmt.Sprintf(reason, args...))
}

// kindAt is errAt with no cause, of kind k.
func kindAt(k fileerr.Kind, off int64, reason string, args ...any) *FormatError {
	e := errAt(off, nil, reason, args...)
	e.Kind = k
	return e
}

// ErrNotRegular is matched (errors.Is) by the error of opening an input
// path that is not a regular file (a named pipe, a device, a directory):
// such a path is refused before it is opened, so a pipe cannot block.
var ErrNotRegular = inputfile.ErrNotRegular
