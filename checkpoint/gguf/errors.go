package gguf

import (
	"errors"

	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// ErrNoTensor is returned (wrapped) by File.TensorBytes and File.Float32s
// when the file has no tensor of the requested name.
var ErrNoTensor = errors.New("no such tensor")

// FormatError reports input that is not a valid GGUF v3 file, or a valid
// one this package does not support, with where the problem was found:
// its fields are Format ("gguf"), Path, Tensor, Key, Offset, Reason, Err
// (io.ErrUnexpectedEOF when the input is truncated) and Kind, which
// errors.Is matches with ErrInvalid, ErrTruncated, ErrNotFormat,
// ErrUnsupported and ErrTooLarge. Its message reads
// `gguf: model.gguf: tensor "blk.0.w": offset 120: n_dims 5 > 4`.
//
// It is the one error type of the module's file readers (an alias of the
// same type in package safetensors, npy, imatrix and castdir), so
// errors.As with a *gguf.FormatError also finds another reader's error:
// Format says which reader it is.
type FormatError = fileerr.FormatError

// The kinds of FormatError, matched by errors.Is.
var (
	// ErrInvalid: the file breaks a rule of the format.
	ErrInvalid = fileerr.ErrInvalid
	// ErrTruncated: the file ends inside its header or tensor data.
	ErrTruncated = fileerr.ErrTruncated
	// ErrNotFormat: the file does not start with the GGUF magic.
	ErrNotFormat = fileerr.ErrNotFormat
	// ErrUnsupported: another GGUF version, a big-endian file, or a
	// tensor type id this package does not know.
	ErrUnsupported = fileerr.ErrUnsupported
	// ErrTooLarge: more tensors or metadata keys than MaxTensors.
	ErrTooLarge = fileerr.ErrTooLarge
)

// format is the Format of this package's errors.
const format = "gguf"

// ErrNotRegular is matched (errors.Is) by the error of opening an input
// path that is not a regular file (a named pipe, a device, a directory):
// such a path is refused before it is opened, so a pipe cannot block.
var ErrNotRegular = inputfile.ErrNotRegular
