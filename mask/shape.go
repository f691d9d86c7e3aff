package mask

import (
	"fmt"
	"slices"

	"github.com/tensorcast-go/tensorcast/internal/shape"
)

// maxLen bounds the number of elements of a mask, so that bit offsets and
// byte counts never overflow an int.
const maxLen = shape.MaxElements

// size returns the number of elements of shape, or a *ShapeError for a
// negative dimension or a count beyond maxLen.
func size(op string, dims []int) (int, error) {
	n, neg, ok := shape.Elements(dims)
	switch {
	case neg >= 0:
		return 0, &ShapeError{Op: op, Shape: slices.Clone(dims), Reason: fmt.Sprintf("dimension %d is negative", neg)}
	case !ok:
		return 0, &ShapeError{Op: op, Shape: slices.Clone(dims), Reason: "too many elements"}
	}
	return n, nil
}

// BroadcastShapes returns the shape that arrays of the given shapes broadcast
// to under NumPy's rules: shapes are aligned at their last dimension, missing
// leading dimensions count as 1, and in each dimension the sizes must be equal
// or 1 (a size 1 stretches to the other; 1 against 0 gives 0). No shapes give
// the rank-0 shape []. Shapes that do not broadcast are a *ShapeError.
func BroadcastShapes(shapes ...[]int) ([]int, error) {
	rank := 0
	for _, s := range shapes {
		if _, err := size("broadcast", s); err != nil {
			return nil, err
		}
		rank = max(rank, len(s))
	}
	out := make([]int, rank)
	for i := range out {
		out[i] = 1
	}
	for k, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			switch o := out[off+i]; {
			case d == o || d == 1:
			case o == 1:
				out[off+i] = d
			default:
				return nil, &ShapeError{Op: "broadcast", Shape: slices.Clone(shapes[0]), Other: slices.Clone(s),
					Reason: fmt.Sprintf("shape %d has %d in dimension %d from the end where another has %d", k, d, len(s)-i, o)}
			}
		}
	}
	if _, err := size("broadcast", out); err != nil {
		return nil, err
	}
	return out, nil
}

// broadcastTo checks that from broadcasts to to (to unchanged) and returns
// from padded with leading ones to the rank of to.
func broadcastTo(op string, from, to []int) ([]int, error) {
	if len(from) > len(to) {
		return nil, &ShapeError{Op: op, Shape: slices.Clone(from), Other: slices.Clone(to),
			Reason: fmt.Sprintf("rank %d does not broadcast to rank %d", len(from), len(to))}
	}
	pad := make([]int, len(to))
	off := len(to) - len(from)
	for i := range off {
		pad[i] = 1
	}
	copy(pad[off:], from)
	for i, d := range pad {
		if d != to[i] && d != 1 {
			return nil, &ShapeError{Op: op, Shape: slices.Clone(from), Other: slices.Clone(to),
				Reason: fmt.Sprintf("dimension %d is %d, which is neither 1 nor %d", i-off, d, to[i])}
		}
	}
	return pad, nil
}
