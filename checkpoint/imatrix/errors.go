package imatrix

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/internal/fileerr"
)

// ErrNoEntry is wrapped by the *LookupError that Imatrix.Importance and
// Imatrix.Entry return for a tensor name the file has no entry for.
var ErrNoEntry = errors.New("no importance entry")

// FormatError reports input that is not a valid importance matrix in
// either format, with where the problem was found. Its fields are Format
// ("imatrix"), Path (the file name given to Read or Parse), Tensor (the
// tensor name of the entry at fault), Key (the GGUF metadata key at
// fault), Offset (-1 when not known), Reason, Err (io.ErrUnexpectedEOF
// for a truncated file, a *gguf.FormatError for a broken GGUF container,
// or the error of the file system) and Kind, which errors.Is matches with
// ErrInvalid and ErrTruncated (and the kinds of package gguf for a broken
// container). Its message reads
// `imatrix: imatrix.dat: tensor "blk.0.attn_q.weight": offset 40: nval -3 < 1`.
//
// It is the one error type of the module's file readers (an alias of the
// same type in package gguf, safetensors, npy and castdir), so errors.As
// with an *imatrix.FormatError also finds another reader's error: Format
// says which reader it is.
type FormatError = fileerr.FormatError

// The kinds of FormatError, matched by errors.Is.
var (
	// ErrInvalid: the file breaks a rule of its format.
	ErrInvalid = fileerr.ErrInvalid
	// ErrTruncated: the file ends inside an entry or its trailer.
	ErrTruncated = fileerr.ErrTruncated
	// ErrNotFormat is matched by a *NotImatrixError: the file is no
	// importance matrix at all.
	ErrNotFormat = fileerr.ErrNotFormat
)

// formatName is the Format of this package's errors.
const formatName = "imatrix"

// within is the error of the file at path that reading it with another
// reader gave (its GGUF container, its .npz archive): of that error's
// kind when it is a *FormatError.
func within(path, reason string, err error) error {
	e := &FormatError{Format: formatName, Path: path, Offset: -1, Reason: reason, Err: err}
	var fe *FormatError
	if errors.As(err, &fe) {
		e.Offset, e.Kind = fe.Offset, fe.Kind
		if fe.Format == "npz" {
			e.Offset = -1 // the archive's errors have no offset
		}
	}
	return e
}

// LookupError reports a tensor name the importance matrix has no entry
// for. It wraps ErrNoEntry.
type LookupError struct {
	// Path is the importance matrix file.
	Path string
	// Name is the tensor name looked up.
	Name string
	// Closest lists up to three names the file has that are nearest to
	// Name, nearest first (empty when none is close).
	Closest []string
}

// Error returns a message such as `im.gguf: no importance entry for
// "blk.0.attn_q.weigth" (closest: "blk.0.attn_q.weight")`.
func (e *LookupError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(ErrNoEntry.Error())
	b.WriteString(" for ")
	b.WriteString(strconv.Quote(e.Name))
	if len(e.Closest) > 0 {
		b.WriteString(" (closest: ")
		for i, c := range e.Closest {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(c))
		}
		b.WriteString(")")
	} else {
		b.WriteString(" (entries are named as GGUF tensors, e.g. \"blk.0.attn_q.weight\")")
	}
	return b.String()
}

// Unwrap returns ErrNoEntry.
func (e *LookupError) Unwrap() error { return ErrNoEntry }

// SizeError reports an entry whose size does not fit the tensor it was
// looked up for.
type SizeError struct {
	// Path is the importance matrix file.
	Path string
	// Name is the tensor name.
	Name string
	// Values and Matrices describe the entry: its number of importance
	// values and of matrices (experts; always 1 in a .dat file).
	Values, Matrices int
	// Cols and Experts describe the tensor: its row length and number of
	// experts (1 for a dense weight).
	Cols, Experts int
}

// Error returns a message such as `im.gguf: entry
// "blk.0.ffn_down.weight" has 4096 values in 1 matrices, the tensor wants
// 11008 columns × 1 experts`.
func (e *SizeError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString("entry ")
	b.WriteString(strconv.Quote(e.Name))
	b.WriteString(" has ")
	b.WriteString(strconv.Itoa(e.Values))
	b.WriteString(" values in ")
	b.WriteString(strconv.Itoa(e.Matrices))
	b.WriteString(" matrices, the tensor wants ")
	b.WriteString(strconv.Itoa(e.Cols))
	b.WriteString(" columns × ")
	b.WriteString(strconv.Itoa(e.Experts))
	b.WriteString(" experts")
	return b.String()
}

// NotImatrixError reports a file that is not an importance matrix at all
// (text, a model file, an archive of other arrays), as opposed to one that
// is damaged, which gives a *FormatError. Err holds the *FormatError of
// reading it as the format its first bytes suggested, for the details.
type NotImatrixError struct {
	// Path is the file name given to Read or Parse.
	Path string
	// Architecture is the general.architecture of a GGUF model file, ""
	// for other files.
	Architecture string
	// Type is the general.type of a GGUF file that is not an imatrix
	// ("model", "adapter"), or "".
	Type string
	// Err is the error of reading the file as an importance matrix.
	Err error
}

// Error returns a message such as `bad.txt is not an importance matrix
// (llama-imatrix's GGUF or .dat, or the .npz of docs/GGUF.md §2.6)` or
// `model-f16.gguf is a model file (general.architecture llama), not an
// importance matrix; compute one from it with llama-imatrix, or as
// docs/GGUF.md §2.6 describes`.
func (e *NotImatrixError) Error() string {
	const what = "an importance matrix (llama-imatrix's GGUF or .dat, or the .npz of docs/GGUF.md §2.6)"
	switch {
	case e.Architecture != "":
		return e.Path + " is a model file (general.architecture " + e.Architecture +
			"), not an importance matrix; compute one from it with llama-imatrix, or as docs/GGUF.md §2.6 describes"
	case e.Type != "":
		return e.Path + " is a GGUF file of general.type " + strconv.Quote(e.Type) + ", not " + what
	}
	return e.Path + " is not " + what
}

// Unwrap returns the error of reading the file as an importance matrix.
func (e *NotImatrixError) Unwrap() error { return e.Err }

// Is reports whether target is ErrNotFormat.
func (e *NotImatrixError) Is(target error) bool { return target == ErrNotFormat }

// notImatrix returns e, its *FormatError, if any, made of kind NotFormat.
func notImatrix(e *NotImatrixError) error {
	var fe *FormatError
	if errors.As(e.Err, &fe) && fe.Format == formatName {
		fe.Kind = fileerr.NotFormat
	}
	return e
}
