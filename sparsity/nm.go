package sparsity

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/mask"
)

// ErrOptions: an Options value that sets more than one source of ranking.
var ErrOptions = errors.New("sparsity: conflicting options")

// Options choose how [NM] ranks the elements of each group. The zero value
// ranks by magnitude. At most one field may be set.
type Options struct {
	// Scores, when not nil, rank the elements instead of |x|: one score per
	// element of x, larger is more important ([ByScores]).
	Scores []float32
	// Norms, when not nil, are Wanda's activation norms, one per index along
	// the sparse axis: element x_j ranks by |x_j|·Norms[j] ([Wanda]).
	Norms []float32
	// Mask, when not nil, is the mask to use; it is checked to be N:M along
	// the axis ([Check]) and returned as a copy.
	Mask *mask.Mask
}

// NM returns the N:M keep mask of x, of the given shape, with groups of
// p.M consecutive elements along axis (negative counts from the end, −1 is
// the last axis), ranked as o says.
func NM(x []float32, shape []int, axis int, p Pattern, o Options) (*mask.Mask, error) {
	set := 0
	for _, b := range []bool{o.Scores != nil, o.Norms != nil, o.Mask != nil} {
		if b {
			set++
		}
	}
	switch {
	case set > 1:
		return nil, fmt.Errorf("%w: set at most one of Scores, Norms and Mask", ErrOptions)
	case o.Scores != nil:
		g, err := splitAxis("scores", shape, axis, p)
		if err == nil {
			err = g.checkLen("scores", "x", x)
		}
		if err != nil {
			return nil, err
		}
		return ByScores(o.Scores, shape, axis, p)
	case o.Norms != nil:
		return Wanda(x, shape, axis, p, o.Norms)
	case o.Mask != nil:
		g, err := splitAxis("mask", shape, axis, p)
		if err == nil {
			err = g.checkLen("mask", "x", x)
		}
		if err == nil {
			err = checkMask("mask", g, o.Mask, p)
		}
		if err != nil {
			return nil, err
		}
		return o.Mask.Clone(), nil
	}
	return Magnitude(x, shape, axis, p)
}

// Magnitude returns the mask that keeps, in every group of p.M consecutive
// elements of x along axis, the p.N of largest |x|. Ties go to the lower index
// along the axis; a NaN ranks above +Inf (it is kept, not silently pruned).
// x holds a tensor of the given shape in row-major order, and the axis length
// must be a multiple of p.M (else a *ShapeError).
func Magnitude(x []float32, shape []int, axis int, p Pattern) (*mask.Mask, error) {
	g, err := splitAxis("magnitude", shape, axis, p)
	if err == nil {
		err = g.checkLen("magnitude", "x", x)
	}
	if err != nil {
		return nil, err
	}
	return selectNM(x, g, p)
}

// ByScores returns the mask that keeps, in every group of p.M consecutive
// elements along axis, the p.N of largest score; scores holds one value per
// element, row-major. A negative or NaN score is a *ScoreError. Ties go to
// the lower index along the axis.
func ByScores(scores []float32, shape []int, axis int, p Pattern) (*mask.Mask, error) {
	g, err := splitAxis("scores", shape, axis, p)
	if err == nil {
		err = g.checkLen("scores", "scores", scores)
	}
	if err == nil {
		err = checkScores("score", scores)
	}
	if err != nil {
		return nil, err
	}
	return selectNM(scores, g, p)
}

// Wanda returns the N:M mask of the Wanda criterion (Sun et al., 2023): the
// weight w_j at index j along axis scores |w_j|·norms[j], where norms[j] is
// the L2 norm of input channel j over calibration tokens; axis is the input
// channel axis (−1, the last, for a Linear weight [out, in]), along which the
// groups run. norms holds one value per index along axis, each ≥ 0 and not
// NaN (else a *ScoreError). Products are float32, as the reference computes
// them; ties go to the lower index.
func Wanda(w []float32, shape []int, axis int, p Pattern, norms []float32) (*mask.Mask, error) {
	g, err := splitAxis("wanda", shape, axis, p)
	if err == nil {
		err = g.checkLen("wanda", "w", w)
	}
	if err != nil {
		return nil, err
	}
	if len(norms) != g.length {
		return nil, &ShapeError{Op: "wanda", Shape: g.shape,
			Reason: fmt.Sprintf("%d activation norms for axis %d of %d elements", len(norms), g.axis, g.length)}
	}
	if err := checkScores("activation norm", norms); err != nil {
		return nil, err
	}
	scores := make([]float32, len(w))
	for o := 0; o < g.outer; o++ {
		for j, s := range norms {
			base := (o*g.length + j) * g.inner
			for i, v := range w[base : base+g.inner] {
				scores[base+i] = abs32(v) * s
			}
		}
	}
	return selectNM(scores, g, p)
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// selectNM runs the selection kernel over keys (ranked by magnitude) in the
// groups g describes.
func selectNM(keys []float32, g geom, p Pattern) (*mask.Mask, error) {
	bits := make([]byte, kernels.PackedLen(g.n, 1))
	if g.inner == 1 {
		kernels.SelectNM(bits, keys, p.N, p.M)
		return mask.FromBytes(g.shape, bits)
	}
	// Groups run across a stride: gather a chunk of columns of each group
	// block into rows of p.M, select, and scatter the bits back.
	chunk := min(g.inner, max(1, 4096/p.M))
	scratch := make([]float32, chunk*p.M)
	sbits := make([]byte, kernels.PackedLen(len(scratch), 1))
	for o := 0; o < g.outer; o++ {
		for a := 0; a < g.length; a += p.M {
			base := (o*g.length + a) * g.inner
			for i0 := 0; i0 < g.inner; i0 += chunk {
				c := min(chunk, g.inner-i0)
				for t := 0; t < p.M; t++ {
					row := keys[base+t*g.inner+i0 : base+t*g.inner+i0+c]
					for i, v := range row {
						scratch[i*p.M+t] = v
					}
				}
				kernels.SelectNM(sbits, scratch[:c*p.M], p.N, p.M)
				for k := 0; k < c*p.M; k++ {
					if sbits[k>>3]>>(k&7)&1 != 0 {
						i, t := k/p.M, k%p.M
						pos := base + t*g.inner + i0 + i
						bits[pos>>3] |= 1 << (pos & 7)
					}
				}
			}
		}
	}
	return mask.FromBytes(g.shape, bits)
}

// Check returns nil when every group of p.M consecutive elements of m along
// axis keeps exactly p.N, a *GroupError naming the first group that does not,
// or a *ShapeError or *PatternError.
func Check(m *mask.Mask, axis int, p Pattern) error {
	g, err := splitAxis("check", m.Shape(), axis, p)
	if err != nil {
		return err
	}
	fail := func(off int) error {
		kept := 0
		for t := 0; t < p.M; t++ {
			if m.Get(off + t*g.inner) {
				kept++
			}
		}
		return &GroupError{Pattern: p, Index: unravel(g.shape, off), Offset: off, Axis: g.axis, Kept: kept}
	}
	if g.inner == 1 {
		if bad := kernels.FirstBadGroupNM(m.Bytes(), g.n, p.N, p.M); bad >= 0 {
			return fail(bad * p.M)
		}
		return nil
	}
	for o := 0; o < g.outer; o++ {
		for a := 0; a < g.length; a += p.M {
			base := (o*g.length + a) * g.inner
			for i := 0; i < g.inner; i++ {
				kept := 0
				for t := 0; t < p.M; t++ {
					if m.Get(base + t*g.inner + i) {
						kept++
					}
				}
				if kept != p.N {
					return fail(base + i)
				}
			}
		}
	}
	return nil
}

// Prune returns a copy of x with the elements NM drops set to +0, the kept
// ones unchanged (signs included), and the mask.
func Prune(x []float32, shape []int, axis int, p Pattern, o Options) ([]float32, *mask.Mask, error) {
	m, err := NM(x, shape, axis, p, o)
	if err != nil {
		return nil, nil, err
	}
	out := slices.Clone(x)
	if err := m.Apply(out, m.Shape()); err != nil {
		return nil, nil, err
	}
	return out, m, nil
}
