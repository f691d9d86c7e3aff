package npy

import (
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// FormatError reports input that could not be decoded as a supported .npy
// file: malformed or unsupported content, truncated input, and read
// failures encountered while decoding.
type FormatError struct {
	// Path is the name of the file being decoded, or "" when unknown.
	// ReadFile fills it in.
	Path string
	// Offset is the byte offset in the input at which the problem was
	// detected.
	Offset int64
	// Reason describes the problem.
	Reason string
	// Err is the underlying cause, if any. It is io.ErrUnexpectedEOF when
	// the input is truncated.
	Err error
	// Fix is what to do about the problem when it calls for a specific
	// step (such as "download every shard the index lists"), or "" when the
	// only remedy is to obtain the file again. Error appends it after "; ".
	Fix string
}

// Error returns a message such as "npy: file.npy: offset 0: bad magic".
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("npy: ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString("offset ")
	b.WriteString(strconv.FormatInt(e.Offset, 10))
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Fix != "" {
		b.WriteString("; ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

// Unwrap returns the underlying cause, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// NextStep returns Fix: the specific next step the message gives, or "".
func (e *FormatError) NextStep() string { return e.Fix }

// ErrNotRegular is matched (errors.Is) by the error of opening an input
// path that is not a regular file (a named pipe, a device, a directory):
// such a path is refused before it is opened, so a pipe cannot block.
var ErrNotRegular = inputfile.ErrNotRegular
