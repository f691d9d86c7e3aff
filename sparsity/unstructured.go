package sparsity

import (
	"fmt"
	"math"
	"slices"

	"github.com/tensorcast-go/tensorcast/mask"
)

// Unstructured masks: no group structure, a threshold or a kept fraction.

// Threshold returns the mask that keeps the elements of x with |x| > t. A NaN
// element is kept (it ranks above +Inf, as in [Magnitude]); t = 0 keeps
// exactly the non-zero elements. t must be ≥ 0 and not NaN (else a
// *ScoreError).
func Threshold(x []float32, shape []int, t float32) (*mask.Mask, error) {
	g, err := splitAxis("threshold", shape, -1, Pattern{})
	if err == nil {
		err = g.checkLen("threshold", "x", x)
	}
	if err == nil {
		err = checkScores("threshold", []float32{t})
	}
	if err != nil {
		return nil, err
	}
	tk := magKey(t)
	bits := make([]byte, (len(x)+7)/8)
	for i, v := range x {
		if magKey(v) > tk {
			bits[i>>3] |= 1 << (i & 7)
		}
	}
	return mask.FromBytes(shape, bits)
}

// DensityOptions refine [Density]. The zero value ranks by |x| over the whole
// tensor.
type DensityOptions struct {
	// PerRow keeps the fraction in every row (every run of the last axis)
	// instead of over the whole tensor, as Wanda's unstructured pruning does.
	PerRow bool
	// Scores, when not nil, rank the elements instead of |x| (one per
	// element, each ≥ 0 and not NaN).
	Scores []float32
}

// Density returns the mask that keeps the fraction density (0 ≤ density ≤ 1)
// of the elements of x with the largest |x| (or scores): k = ⌊density·n + ½⌋
// of the n elements of the tensor, or of each row with PerRow. Ties go to the
// lower row-major index; NaN ranks above +Inf.
func Density(x []float32, shape []int, density float64, o DensityOptions) (*mask.Mask, error) {
	g, err := splitAxis("density", shape, -1, Pattern{})
	if err == nil {
		err = g.checkLen("density", "x", x)
	}
	if err != nil {
		return nil, err
	}
	if !(density >= 0 && density <= 1) {
		return nil, fmt.Errorf("%w: density %v is not in [0, 1]", ErrOptions, density)
	}
	keys := make([]uint32, len(x))
	if o.Scores != nil {
		if len(o.Scores) != len(x) {
			return nil, &ShapeError{Op: "density", Shape: slices.Clone(shape), Reason: fmt.Sprintf("%d scores for %d elements", len(o.Scores), len(x))}
		}
		if err := checkScores("score", o.Scores); err != nil {
			return nil, err
		}
		for i, v := range o.Scores {
			keys[i] = magKey(v)
		}
	} else {
		for i, v := range x {
			keys[i] = magKey(v)
		}
	}
	bits := make([]byte, (len(x)+7)/8)
	row := g.n
	if o.PerRow {
		row = g.length
	}
	if row > 0 {
		var hist [1 << 16]int
		for lo := 0; lo < g.n; lo += row {
			k := int(math.Floor(density*float64(row) + 0.5))
			keepTop(bits, keys[lo:lo+row], lo, k, &hist)
		}
	}
	return mask.FromBytes(shape, bits)
}

// keepTop sets, in bits (offset by off), the k largest keys, ties to the lower
// index. It finds the k-th largest key with a two-pass radix selection (the
// top 16 bits, then the low 16 among keys sharing them). hist is scratch.
func keepTop(bits []byte, keys []uint32, off, k int, hist *[1 << 16]int) {
	if k <= 0 {
		return
	}
	set := func(i int) { bits[(off+i)>>3] |= 1 << ((off + i) & 7) }
	if k >= len(keys) {
		for i := range keys {
			set(i)
		}
		return
	}
	clear(hist[:])
	for _, v := range keys {
		hist[v>>16]++
	}
	need, hi := k, 0
	for b := len(hist) - 1; b >= 0; b-- {
		if hist[b] >= need {
			hi = b
			break
		}
		need -= hist[b]
	}
	clear(hist[:])
	for _, v := range keys {
		if int(v>>16) == hi {
			hist[v&0xffff]++
		}
	}
	lo := 0
	for b := len(hist) - 1; b >= 0; b-- {
		if hist[b] >= need {
			lo = b
			break
		}
		need -= hist[b]
	}
	thr := uint32(hi)<<16 | uint32(lo)
	// need is now how many keys equal to thr are kept: the first ones.
	for i, v := range keys {
		switch {
		case v > thr:
			set(i)
		case v == thr && need > 0:
			set(i)
			need--
		}
	}
}
