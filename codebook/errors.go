package codebook

import (
	"errors"
	"fmt"
)

// Sentinel errors; the errors this package returns wrap one of them, so that
// errors.Is tells the cause, and most are a *TableError, *GrammarError or
// *MetaError that says where.
var (
	// ErrSize is a table with no entries or more than 256, or a signed
	// table whose magnitudes are not a power of two in number.
	ErrSize = errors.New("table size out of range")
	// ErrNaN is a NaN entry, or a NaN value in KMeans' data (a NaN
	// threshold is ErrThreshold).
	ErrNaN = errors.New("NaN entry")
	// ErrInf is an infinite entry, or an infinite value in KMeans' data.
	ErrInf = errors.New("infinite entry")
	// ErrUnsorted is an entry below the one before it (without AnyOrder).
	ErrUnsorted = errors.New("entries not in ascending order")
	// ErrDuplicate is an entry equal to another (without AllowDuplicates;
	// −0 and +0 are equal).
	ErrDuplicate = errors.New("duplicate entry")
	// ErrNegative is a negative magnitude of a signed table.
	ErrNegative = errors.New("negative magnitude")
	// ErrThreshold is an explicit threshold that is not finite, or not at or
	// above the entry below it and below the entry above it.
	ErrThreshold = errors.New("threshold out of place")
	// ErrCode is a code with no entry in its table.
	ErrCode = errors.New("code out of range")
	// ErrGrammar is a codebook name that does not parse.
	ErrGrammar = errors.New("bad codebook name")
	// ErrOffLine is an implicit pattern value that is not on its compute
	// format's number line, or an index shift that leaves it.
	ErrOffLine = errors.New("pattern off the number line")
	// ErrMeta is packed meta of the wrong length, with a table index out of
	// range, or with set padding bits.
	ErrMeta = errors.New("bad meta")
	// ErrArg is an argument out of range (a group size, a table count, a
	// slice of the wrong length).
	ErrArg = errors.New("bad argument")
)

// TableError is an error in a table's definition: the table's name, the
// position of the offending entry (−1 when it is about the whole table), its
// value, and the cause (one of the sentinel errors).
type TableError struct {
	Table string
	Index int
	Value float32
	Err   error
}

// Error implements error.
func (e *TableError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("codebook: table %q: %v", e.Table, e.Err)
	}
	return fmt.Sprintf("codebook: table %q: entry %d (%v): %v", e.Table, e.Index, e.Value, e.Err)
}

// Unwrap returns the cause.
func (e *TableError) Unwrap() error { return e.Err }

// GrammarError is a codebook name that does not parse or does not generate:
// the name, the byte offset of the trouble in it, what is wrong, and the
// cause (ErrGrammar, ErrOffLine, or a wrapped error of another package).
type GrammarError struct {
	Name   string
	Offset int
	Reason string
	Err    error
}

// Error implements error.
func (e *GrammarError) Error() string {
	return fmt.Sprintf("codebook: %q at offset %d: %s", e.Name, e.Offset, e.Reason)
}

// Unwrap returns the cause.
func (e *GrammarError) Unwrap() error { return e.Err }

// MetaError is packed meta that does not decode: the offset (the entry or
// byte named by the message), what is wrong, and the cause (ErrMeta).
type MetaError struct {
	Offset int
	Reason string
	Err    error
}

// Error implements error.
func (e *MetaError) Error() string {
	return fmt.Sprintf("codebook: meta at offset %d: %s", e.Offset, e.Reason)
}

// Unwrap returns the cause.
func (e *MetaError) Unwrap() error { return e.Err }
