package mask

import (
	"errors"
	"fmt"
)

// ErrShape is matched by every *ShapeError: shapes that do not broadcast,
// lengths that do not fit a shape, negative or too large dimensions.
var ErrShape = errors.New("mask: bad shape")

// ShapeError reports a shape or a length that does not fit an operation.
type ShapeError struct {
	// Op is the operation: "new", "broadcast", "and", "select", ...
	Op string
	// Shape is the mask's shape (or the first shape of the operation).
	Shape []int
	// Other is the shape it was checked against; nil when there is none.
	Other []int
	// Reason says what is wrong.
	Reason string
}

func (e *ShapeError) Error() string {
	s := fmt.Sprintf("mask: %s: shape %v", e.Op, e.Shape)
	if e.Other != nil {
		s += fmt.Sprintf(" against %v", e.Other)
	}
	return s + ": " + e.Reason
}

// Is reports whether target is ErrShape.
func (e *ShapeError) Is(target error) bool { return target == ErrShape }

// ErrDecode is matched by every *DecodeError.
var ErrDecode = errors.New("mask: bad mask bytes")

// DecodeError reports bytes that are no mask: a flag byte other than 0 and 1,
// or set padding bits after the last element of packed bits.
type DecodeError struct {
	// Offset is the offset of the bad byte in the input.
	Offset int
	// Value is the bad byte.
	Value byte
	// Reason says what is wrong with it.
	Reason string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("mask: byte %d (%#02x): %s", e.Offset, e.Value, e.Reason)
}

// Is reports whether target is ErrDecode.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// Errors a [Buffer] wraps in a *BufferError.
var (
	// ErrNotMaterialized: the buffer was used (Apply, Release, Mask) before
	// any Materialize.
	ErrNotMaterialized = errors.New("mask: buffer used before Materialize")
	// ErrReleased: every reference was already released, so the mask is
	// gone (a Release past zero, or a use after the last Release).
	ErrReleased = errors.New("mask: buffer used after its last Release")
	// ErrMismatch: Materialize brought a mask other than the one the
	// buffer holds.
	ErrMismatch = errors.New("mask: buffer holds a different mask")
)

// BufferError reports the misuse of a [Buffer]. Err is ErrNotMaterialized,
// ErrReleased, ErrMismatch or a *ShapeError, and errors.Is and errors.As see
// through it.
type BufferError struct {
	// Op is the method: "materialize", "release", "apply" or "mask".
	Op string
	// Err is the cause.
	Err error
	// Detail adds what was found (for a mismatch: the shapes, or the first
	// element that differs); may be empty.
	Detail string
}

func (e *BufferError) Error() string {
	s := "mask: buffer " + e.Op + ": " + trimPrefix(e.Err.Error())
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *BufferError) Unwrap() error { return e.Err }

func trimPrefix(s string) string {
	if len(s) > 6 && s[:6] == "mask: " {
		return s[6:]
	}
	return s
}
