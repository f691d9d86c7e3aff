// Package fileerr holds FormatError, the one error type of the module's
// file readers (gguf, safetensors and its sharded index, npy and npz,
// imatrix, castdir's info.json, load's format detection), so that every
// reader reports a file it refuses with the same fields and the same text.
//
// The reader packages export the type as an alias (type FormatError =
// fileerr.FormatError) and the sentinels of the kinds they report, so
// callers outside the module match them with errors.As and errors.Is
// without importing this package.
package fileerr

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind says what a refused file means to its caller: which remedy applies.
// The zero value is Invalid.
type Kind uint8

const (
	// Invalid: the file breaks a rule of its format (it is damaged, or
	// was not written by a writer of the format).
	Invalid Kind = iota
	// Truncated: the file ends before its content does; Err is
	// io.ErrUnexpectedEOF.
	Truncated
	// NotFormat: the file is not of the format at all (wrong magic bytes,
	// a JSON document of another kind): the wrong kind of input.
	NotFormat
	// Unsupported: the file is valid, but a variant the reader does not
	// read (another version, big-endian byte order, an unknown type).
	Unsupported
	// TooLarge: the file claims more (tensors, keys, bytes) than the
	// reader accepts, so it is refused before the work is done.
	TooLarge
	// MissingFile: a file this one names (a shard the index lists) does
	// not exist.
	MissingFile
	// LinkOutside: a file this one names is a symbolic link to a file
	// outside the directory it must lie in.
	LinkOutside
)

// The sentinels errors.Is matches for each Kind of FormatError.
var (
	ErrInvalid     = errors.New("invalid file")
	ErrTruncated   = errors.New("truncated file")
	ErrNotFormat   = errors.New("not a file of the format")
	ErrUnsupported = errors.New("unsupported variant of the format")
	ErrTooLarge    = errors.New("file over a reader limit")
	ErrMissingFile = errors.New("missing file")
	ErrLinkOutside = errors.New("file linked from outside its directory")
)

// kindErr is each Kind's sentinel.
var kindErr = [...]error{
	Invalid:     ErrInvalid,
	Truncated:   ErrTruncated,
	NotFormat:   ErrNotFormat,
	Unsupported: ErrUnsupported,
	TooLarge:    ErrTooLarge,
	MissingFile: ErrMissingFile,
	LinkOutside: ErrLinkOutside,
}

// Err returns the sentinel of k, which errors.Is matches for a
// FormatError of kind k.
func (k Kind) Err() error {
	if int(k) < len(kindErr) {
		return kindErr[k]
	}
	return ErrInvalid
}

// String returns the text of k's sentinel.
func (k Kind) String() string { return k.Err().Error() }

// FormatError reports a file a reader refuses: which file, of which
// format, where in it, why, and what kind of problem it is.
type FormatError struct {
	// Format names the reader that refused the file, as its package is
	// named ("gguf", "safetensors", "npy", "npz", "imatrix", "castdir",
	// "load"); the message starts with it.
	Format string
	// Path is the file, as given to the reader; "" when unknown.
	Path string
	// Index is the file that named Path (the sharded index of a shard),
	// or "" when Path was opened by itself.
	Index string
	// Tensor is the tensor (array, importance-matrix entry) at fault, or "".
	Tensor string
	// Key is the metadata key or header field at fault, or "".
	Key string
	// Offset is the byte offset in Path at which the problem was found,
	// or -1 when no offset applies; the message leaves an unknown offset
	// out.
	Offset int64
	// Reason says what is wrong.
	Reason string
	// Err is the underlying cause, if any: io.ErrUnexpectedEOF for a
	// truncated file, the error of the file system, or another reader's
	// error.
	Err error
	// Kind is what the problem means to the caller; errors.Is matches
	// its sentinel (ErrTruncated, ErrNotFormat, ...).
	Kind Kind
}

// New returns a FormatError of format at offset off (-1: unknown) for
// reason, caused by err (nil for none). Its Kind is Truncated when err is
// io.ErrUnexpectedEOF, Invalid otherwise; set Kind for another.
func New(format string, off int64, err error, reason string) *FormatError {
	e := &FormatError{Format: format, Offset: off, Reason: reason, Err: err}
	if err == io.ErrUnexpectedEOF {
		e.Kind = Truncated
	}
	return e
}

// Nested returns the message of e without its cause, and the cause, for
// a reader that reports e as part of an error of its own (an archive's
// member, a cast directory's part file): the outer error takes e's text
// into its Reason and e.Err as its Err, so that errors.Is finds the
// outer error's Kind only, not e's.
func Nested(e *FormatError) (text string, cause error) {
	c := *e
	c.Err = nil
	return c.Error(), e.Err
}

// maxQuoted bounds the bytes of a name quoted in a message, so a hostile
// file cannot produce a huge error string.
const maxQuoted = 200

// Error returns a message such as
// `gguf: model.gguf: tensor "blk.0.w": offset 120: n_dims 5 > 4`: the
// format, the file (with the index that names it), the tensor and key
// quoted (clipped to 200 bytes), the offset when known, the reason and
// the cause, each part left out when empty.
func (e *FormatError) Error() string {
	var b strings.Builder
	part := func(s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(s)
	}
	part(e.Format)
	if e.Path != "" {
		p := Name(e.Path)
		if e.Index != "" {
			p += " (a shard named by " + Name(e.Index) + ")"
		}
		part(p)
	}
	if e.Tensor != "" {
		part("tensor " + Quote(e.Tensor))
	}
	if e.Key != "" {
		part("key " + Quote(e.Key))
	}
	if e.Offset >= 0 {
		part("offset " + strconv.FormatInt(e.Offset, 10))
	}
	part(e.Reason)
	if e.Err != nil {
		part(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's Kind.
func (e *FormatError) Is(target error) bool { return target == e.Kind.Err() }

// Clip shortens s to at most 200 bytes (at a rune boundary), marking the
// cut with "...", for names and values quoted in messages.
func Clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// Quote returns s clipped and Go-quoted: safe to print whatever bytes it
// holds.
func Quote(s string) string { return strconv.Quote(Clip(s)) }

// Name returns a file name as a message prints it: as it is when it is
// valid UTF-8 without control characters, else clipped and quoted.
func Name(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	return Quote(s)
}
