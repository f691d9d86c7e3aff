package safetensors

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// ErrNotFound is wrapped by the error returned when a tensor name is not in
// the file or checkpoint.
var ErrNotFound = errors.New("tensor not found")

// FormatError reports a file whose content breaks a rule of the
// safetensors format (or of a sharded checkpoint's index), a truncated
// file, or a read failure met while decoding one. Its fields are Format
// ("safetensors"), Path, Index (the index naming the shard at Path, or
// ""), Tensor, Offset (-1 when none applies, such as a tensor missing
// from a shard), Reason, Err and Kind, which errors.Is matches with the
// sentinels below. Its message reads
// `safetensors: model.safetensors: tensor "w": offset 120: size mismatch`.
//
// It is the one error type of the module's file readers (an alias of the
// same type in package gguf, npy, imatrix and castdir), so errors.As with
// a *safetensors.FormatError also finds another reader's error: Format
// says which reader it is.
type FormatError = fileerr.FormatError

// The kinds of FormatError, matched by errors.Is.
var (
	// ErrInvalid: the file breaks a rule of the format.
	ErrInvalid = fileerr.ErrInvalid
	// ErrTruncated: the file ends inside its header or tensor data, or
	// an index inside its JSON.
	ErrTruncated = fileerr.ErrTruncated
	// ErrNotFormat: the first 8 bytes are no header length a safetensors
	// file can have, the header is no JSON object, or an index file is
	// not a JSON object with a weight_map (a config.json, say).
	ErrNotFormat = fileerr.ErrNotFormat
	// ErrTooLarge: more tensors or __metadata__ keys than MaxTensors, or
	// an index over 1 GiB.
	ErrTooLarge = fileerr.ErrTooLarge
	// ErrMissingFile: a shard the index lists does not exist.
	ErrMissingFile = fileerr.ErrMissingFile
	// ErrLinkOutside: a shard is a symbolic link to a file outside the
	// index's directory.
	ErrLinkOutside = fileerr.ErrLinkOutside
)

// formatName is the Format of this package's errors.
const formatName = "safetensors"

// maxQuoted bounds the length of shapes quoted in messages, so a hostile
// header cannot produce a huge error string.
const maxQuoted = 200

// clip shortens a name for a message (see fileerr.Clip).
func clip(s string) string { return fileerr.Clip(s) }

// formatShape renders shape as "[2 3]".
func formatShape[T int | uint64](shape []T) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range shape {
		if i > 0 {
			b.WriteByte(' ')
		}
		if b.Len() > maxQuoted {
			b.WriteString("...")
			break
		}
		switch v := any(d).(type) {
		case int:
			b.WriteString(strconv.Itoa(v))
		case uint64:
			b.WriteString(strconv.FormatUint(v, 10))
		}
	}
	b.WriteByte(']')
	return b.String()
}

// ErrNotRegular is matched (errors.Is) by the error of opening an input
// path that is not a regular file (a named pipe, a device, a directory):
// such a path is refused before it is opened, so a pipe cannot block.
var ErrNotRegular = inputfile.ErrNotRegular
