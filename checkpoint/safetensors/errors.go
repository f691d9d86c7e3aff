package safetensors

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// ErrNotFound is wrapped by the error returned when a tensor name is not in
// the file or checkpoint.
var ErrNotFound = errors.New("tensor not found")

// FormatError reports a file whose content breaks a rule of the safetensors
// format (or of a sharded checkpoint index), a truncated file, or a read
// failure met while decoding one.
type FormatError struct {
	// Path is the name of the file being decoded, or "" when unknown.
	Path string
	// Index is the sharded index that names the file at Path as a shard, or
	// "" when the file was opened by itself.
	Index string
	// Tensor is the name of the tensor concerned, or "" when the problem
	// is not about one tensor.
	Tensor string
	// Offset is the byte offset in the file at which the problem was
	// detected, or -1 when no offset applies (such as a tensor missing
	// from a shard).
	Offset int64
	// Reason describes the problem.
	Reason string
	// Err is the underlying cause, if any.
	Err error
	// Fix is what to do about the problem when it calls for a specific
	// step (such as "download every shard the index lists"), or "" when the
	// only remedy is to obtain the file again. Error appends it after "; ".
	Fix string
}

// Error returns a message such as
// `safetensors: model.safetensors: tensor "w": offset 120: size mismatch`.
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("safetensors: ")
	if e.Path != "" {
		b.WriteString(e.Path)
		if e.Index != "" {
			b.WriteString(" (a shard named by ")
			b.WriteString(e.Index)
			b.WriteString(")")
		}
		b.WriteString(": ")
	}
	if e.Tensor != "" {
		b.WriteString("tensor ")
		b.WriteString(strconv.Quote(clip(e.Tensor)))
		b.WriteString(": ")
	}
	if e.Offset >= 0 {
		b.WriteString("offset ")
		b.WriteString(strconv.FormatInt(e.Offset, 10))
		b.WriteString(": ")
	}
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

// maxQuoted bounds the length of names and shapes quoted in messages, so a
// hostile header cannot produce a huge error string.
const maxQuoted = 200

// clip shortens s to at most maxQuoted bytes (at a rune boundary), marking
// the cut with "...".
func clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	n := maxQuoted
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}

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
