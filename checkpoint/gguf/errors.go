package gguf

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// ErrNoTensor is returned (wrapped) by File.TensorBytes and File.Float32s
// when the file has no tensor of the requested name.
var ErrNoTensor = errors.New("no such tensor")

// FormatError reports input that is not a valid GGUF v3 file, or a valid
// one this package does not support (another version, big-endian byte
// order, an unknown tensor type), together with where the problem was
// found.
type FormatError struct {
	// Path is the name of the file being decoded, as given to Open or Read;
	// "" when unknown.
	Path string
	// Tensor is the name of the tensor whose info or data is at fault, or
	// "" when the problem is not in a tensor.
	Tensor string
	// Key is the metadata key whose value is at fault, or "".
	Key string
	// Offset is the byte offset in the file at which the problem was
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

// Error returns a message such as
// `gguf: model.gguf: tensor "blk.0.w": offset 120: n_dims 5 > 4`.
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("gguf: ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	if e.Tensor != "" {
		b.WriteString("tensor ")
		b.WriteString(strconv.Quote(e.Tensor))
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString("key ")
		b.WriteString(strconv.Quote(e.Key))
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
