package sparsity

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error of the package matches one of them with
// errors.Is.
var (
	// ErrPattern: an N:M pattern outside 1 ≤ N < M ≤ 16 with M a power of two,
	// or one an operation does not take (a CUTLASS layout needs 2:4).
	ErrPattern = errors.New("sparsity: bad N:M pattern")
	// ErrShape: a shape, an axis or a slice length that does not fit.
	ErrShape = errors.New("sparsity: bad shape")
	// ErrScores: an importance score or an activation norm that is negative
	// or NaN.
	ErrScores = errors.New("sparsity: bad scores")
	// ErrNotNM: a mask in which some group does not keep exactly N of M.
	ErrNotNM = errors.New("sparsity: mask is not N:M")
	// ErrDecode: stored metadata, bitmasks or offsets that are not valid.
	ErrDecode = errors.New("sparsity: bad stored data")
)

// PatternError reports an N:M pattern that is not valid.
type PatternError struct {
	Pattern string // as given ("3:4", "n3m6", ...)
	Reason  string
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("sparsity: pattern %q: %s", e.Pattern, e.Reason)
}

// Is reports whether target is ErrPattern.
func (e *PatternError) Is(target error) bool { return target == ErrPattern }

// ShapeError reports a shape, axis or length that does not fit an operation.
type ShapeError struct {
	Op     string // the operation: "magnitude", "compress", ...
	Shape  []int  // the tensor's shape
	Reason string
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("sparsity: %s: shape %v: %s", e.Op, e.Shape, e.Reason)
}

// Is reports whether target is ErrShape.
func (e *ShapeError) Is(target error) bool { return target == ErrShape }

// ScoreError reports a score or norm that cannot rank elements.
type ScoreError struct {
	What   string // "score" or "activation norm"
	Offset int    // its index in the slice given
	Value  float32
}

func (e *ScoreError) Error() string {
	return fmt.Sprintf("sparsity: %s %d is %v: scores and norms must be ≥ 0 and not NaN", e.What, e.Offset, e.Value)
}

// Is reports whether target is ErrScores.
func (e *ScoreError) Is(target error) bool { return target == ErrScores }

// GroupError reports a group of a mask that does not keep exactly N of its M
// elements.
type GroupError struct {
	Pattern Pattern
	// Index is the multi-index of the group's first element in the mask.
	Index []int
	// Offset is the row-major offset of that element.
	Offset int
	// Axis is the axis the groups run along (non-negative).
	Axis int
	Kept int // how many elements of the group are kept
}

func (e *GroupError) Error() string {
	return fmt.Sprintf("sparsity: mask is not %v along axis %d: the group starting at %v (offset %d) keeps %d",
		e.Pattern, e.Axis, e.Index, e.Offset, e.Kept)
}

// Is reports whether target is ErrNotNM.
func (e *GroupError) Is(target error) bool { return target == ErrNotNM }

// DecodeError reports stored sparsity data (index metadata, a packed bitmask,
// row offsets) that is not valid.
type DecodeError struct {
	Format string // "index metadata", "cutlass metadata", "bitmask", "row offsets", ...
	Offset int    // the offset of the bad byte (or element, for row offsets)
	Value  int64  // the bad byte or value
	Reason string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("sparsity: %s: offset %d (%#x): %s", e.Format, e.Offset, e.Value, e.Reason)
}

// Is reports whether target is ErrDecode.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }
