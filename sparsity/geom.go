package sparsity

import (
	"fmt"
	"math"
	"slices"

	"github.com/tensorcast-go/tensorcast/internal/shape"
)

// geom is a tensor's shape split around the axis its groups run along:
// outer × length × inner elements, row-major.
type geom struct {
	shape                []int
	axis                 int // non-negative
	outer, length, inner int
	n                    int // elements
}

// maxElems bounds the element count of a tensor the package takes: 2^50, or
// the module's limit where int is narrower (32-bit builds).
const maxElems = min(1<<50, shape.MaxElements)

// splitAxis checks shape and axis (negative axes count from the end: −1 is the
// last) and, when p is not the zero Pattern, that p is valid and M divides the
// axis length.
func splitAxis(op string, shape []int, axis int, p Pattern) (geom, error) {
	bad := func(format string, args ...any) (geom, error) {
		return geom{}, &ShapeError{Op: op, Shape: slices.Clone(shape), Reason: fmt.Sprintf(format, args...)}
	}
	if p != (Pattern{}) {
		if err := p.Validate(); err != nil {
			return geom{}, err
		}
	}
	r := len(shape)
	if r == 0 {
		return bad("a scalar has no axis to group along")
	}
	if axis < -r || axis >= r {
		return bad("axis %d is out of range for rank %d", axis, r)
	}
	if axis < 0 {
		axis += r
	}
	g := geom{shape: slices.Clone(shape), axis: axis, outer: 1, inner: 1, length: shape[axis]}
	n := 1
	for i, d := range shape {
		if d < 0 {
			return bad("dimension %d is negative", i)
		}
		if d > 0 && n > maxElems/d {
			return bad("more than %d elements", maxElems)
		}
		n *= d
		switch {
		case i < axis:
			g.outer *= d
		case i > axis:
			g.inner *= d
		}
	}
	g.n = n
	if p.M != 0 && g.length%p.M != 0 {
		return bad("axis %d has %d elements, not a multiple of the group size %d of %v", axis, g.length, p.M, p)
	}
	return g, nil
}

// checkLen returns a *ShapeError unless x holds g.n floats.
func (g geom) checkLen(op, what string, x []float32) error {
	if len(x) != g.n {
		return &ShapeError{Op: op, Shape: slices.Clone(g.shape), Reason: fmt.Sprintf("%s holds %d floats for %d elements", what, len(x), g.n)}
	}
	return nil
}

// unravel returns the multi-index of row-major offset off in shape.
func unravel(shape []int, off int) []int {
	idx := make([]int, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] > 0 {
			idx[i] = off % shape[i]
			off /= shape[i]
		}
	}
	return idx
}

// checkScores returns a *ScoreError for the first negative or NaN value.
func checkScores(what string, s []float32) error {
	for i, v := range s {
		if v < 0 || math.IsNaN(float64(v)) {
			return &ScoreError{What: what, Offset: i, Value: v}
		}
	}
	return nil
}

// magKey is the magnitude key of x, the order every criterion ranks by: the
// float's bits without the sign, as an unsigned integer (−0 = +0, NaN above
// +Inf).
func magKey(x float32) uint32 { return math.Float32bits(x) &^ (1 << 31) }
