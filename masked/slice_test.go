package masked

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tensorcast-go/tensorcast/mask"
)

// The slice forms on the hand-derived case of TestMaskedOutNaNDoesNotLeak:
// kept {1, 2}, masked-out NaN, +Inf, -Inf.
func TestSliceForms(t *testing.T) {
	x := []float64{nan64, 1, pinf, 2, ninf}
	keep := []bool{false, true, false, true, false}
	none := make([]bool, 5)
	type res struct {
		v  float64
		ok bool
	}
	r := func(v float64, ok bool) res { return res{v, ok} }
	ri := func(v int, ok bool) res { return res{float64(v), ok} }
	for _, c := range []struct {
		name      string
		got       res
		want      float64
		fullyMask res
		wantEmpty float64
	}{
		{"sum", r(SumSlice(x, keep)), 3, r(SumSlice(x, none)), 0},
		{"prod", r(ProdSlice(x, keep)), 2, r(ProdSlice(x, none)), 1},
		{"mean", r(MeanSlice(x, keep)), 1.5, r(MeanSlice(x, none)), nan64},
		{"amax", r(AmaxSlice(x, keep)), 2, r(AmaxSlice(x, none)), ninf},
		{"amin", r(AminSlice(x, keep)), 1, r(AminSlice(x, none)), pinf},
		{"argmax", ri(ArgmaxSlice(x, keep)), 3, ri(ArgmaxSlice(x, none)), -1},
		{"argmin", ri(ArgminSlice(x, keep)), 1, ri(ArgminSlice(x, none)), -1},
		{"median", r(MedianSlice(x, keep)), 1, r(MedianSlice(x, none)), nan64},
		{"var", r(VarSlice(x, keep, 1)), 0.5, r(VarSlice(x, none, 1)), nan64},
		{"std", r(StdSlice(x, keep, 0)), 0.5, r(StdSlice(x, none, 0)), nan64},
		{"norm2", r(NormSlice(x, keep, 2)), sqrt5, r(NormSlice(x, none, 2)), 0},
		{"norm-inf", r(NormSlice(x, keep, ninf)), 1, r(NormSlice(x, none, ninf)), pinf},
		{"logsumexp", r(LogSumExpSlice(x, keep)), 2 + math.Log1p(math.Exp(-1)), r(LogSumExpSlice(x, none)), ninf},
	} {
		t.Run(c.name, func(t *testing.T) {
			sameFloats(t, []float64{c.want}, []float64{c.got.v}, 1e-15)
			assert.True(t, c.got.ok)
			sameFloats(t, []float64{c.wantEmpty}, []float64{c.fullyMask.v}, 0)
			assert.False(t, c.fullyMask.ok)
		})
	}

	// A nil keep keeps everything.
	v, ok := SumSlice([]float32{1, 2, 3}, nil)
	assert.Equal(t, float32(6), v)
	assert.True(t, ok)
	_, ok = SumSlice([]float32{}, nil)
	assert.False(t, ok)
	i, ok := ArgminSlice([]float64{3, 1, 2}, nil)
	assert.Equal(t, 1, i)
	assert.True(t, ok)
	assert.Panics(t, func() { SumSlice([]float64{1, 2}, []bool{true}) })

	dst := make([]float64, 5)
	CumsumSlice(dst, x, keep)
	assert.Equal(t, []float64{0, 1, 1, 3, 3}, dst)
	CumprodSlice(dst, x, keep)
	assert.Equal(t, []float64{1, 1, 1, 2, 2}, dst)
	a, b := 1/(1+math.E), 1/(1+1/math.E)
	SoftmaxSlice(dst, x, keep)
	sameFloats(t, []float64{0, a, 0, b, 0}, dst, 1e-15)
	SoftminSlice(dst, x, keep)
	sameFloats(t, []float64{0, b, 0, a, 0}, dst, 1e-15)
	lse := 2 + math.Log1p(math.Exp(-1))
	LogSoftmaxSlice(dst, x, keep)
	sameFloats(t, []float64{ninf, 1 - lse, ninf, 2 - lse, ninf}, dst, 1e-15)
	NormalizeSlice(dst, x, keep, 1, 1e-12)
	sameFloats(t, []float64{0, 1.0 / 3, 0, 2.0 / 3, 0}, dst, 1e-15)
	// eps floors the norm: kept {1, 2} has 1-norm 3 < 10.
	NormalizeSlice(dst, x, keep, 1, 10)
	sameFloats(t, []float64{0, 0.1, 0, 0.2, 0}, dst, 1e-15)
	assert.Panics(t, func() { CumsumSlice(make([]float64, 2), x, keep) })

	out, outKeep := make([]float64, 3), make([]bool, 3)
	LogAddExpSlice(out, outKeep, []float64{0, nan64, nan64}, []bool{true, false, false}, []float64{0, 4, nan64}, []bool{true, true, false})
	sameFloats(t, []float64{math.Ln2, 4, ninf}, out, 1e-15)
	assert.Equal(t, []bool{true, true, false}, outKeep)
	LogAddExpSlice(out, nil, []float64{1, 2, 3}, nil, []float64{1, 2, 3}, nil)
	sameFloats(t, []float64{1 + math.Ln2, 2 + math.Ln2, 3 + math.Ln2}, out, 1e-15)
}

// NormSlice of order +Inf on float32 is the scale code's block amax: the
// largest kept |x|, NaN when a NaN is kept, 0 when nothing is.
func TestNormSliceAbsMax(t *testing.T) {
	nan := float32(math.NaN())
	x := []float32{-9, 3, nan, -4, float32(math.Inf(1)), 2}
	v, ok := NormSlice(x, []bool{false, true, false, true, false, true}, math.Inf(1))
	assert.Equal(t, float32(4), v)
	assert.True(t, ok)
	v, _ = NormSlice(x, []bool{false, true, true, false, false, false}, math.Inf(1))
	assert.True(t, math.IsNaN(float64(v)))
	v, _ = NormSlice(x, []bool{true, false, false, false, true, false}, math.Inf(1))
	assert.Equal(t, float32(math.Inf(1)), v)
	v, ok = NormSlice(x, make([]bool, 6), math.Inf(1))
	assert.Equal(t, float32(0), v)
	assert.False(t, ok)
	v, _ = NormSlice(x[:2], nil, math.Inf(1))
	assert.Equal(t, float32(9), v)
}

// The slice and tensor forms agree on random rows (one implementation).
func TestSliceMatchesTensor(t *testing.T) {
	x := []float32{0.5, -2, 7, 1.25, -3, 4, 4, -0.5, 6, 2}
	keep := []bool{true, false, true, true, true, false, true, true, true, false}
	tt, err := New(x, []int{10}, keep, nil)
	require.NoError(t, err)
	for _, c := range []struct {
		name   string
		tensor func() (*Tensor[float32], error)
		slice  func() (float32, bool)
	}{
		{"sum", func() (*Tensor[float32], error) { return Sum(tt, Options{}) }, func() (float32, bool) { return SumSlice(x, keep) }},
		{"var", func() (*Tensor[float32], error) { return Var(tt, 1, Options{}) }, func() (float32, bool) { return VarSlice(x, keep, 1) }},
		{"norm3", func() (*Tensor[float32], error) { return Norm(tt, 3, Options{}) }, func() (float32, bool) { return NormSlice(x, keep, 3) }},
		{"median", func() (*Tensor[float32], error) { return Median(tt, Options{}) }, func() (float32, bool) { return MedianSlice(x, keep) }},
		{"logsumexp", func() (*Tensor[float32], error) { return LogSumExp(tt, Options{}) }, func() (float32, bool) { return LogSumExpSlice(x, keep) }},
	} {
		r, err := c.tensor()
		require.NoError(t, err)
		v, ok := c.slice()
		assert.Equal(t, r.Data()[0], v, c.name)
		assert.Equal(t, r.Mask()[0], ok, c.name)
	}
	sm, err := Softmax(tt, 0, AccData)
	require.NoError(t, err)
	dst := make([]float32, 10)
	SoftmaxSlice(dst, x, keep)
	assert.Equal(t, sm.Data(), dst)
}

func TestMedianSelect(t *testing.T) {
	// Long inputs run the partitioning path of selectK; the lower median of a
	// permutation of 0..n-1 (with repeats) is known.
	for _, n := range []int{17, 18, 64, 101, 1000} {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64((i * 7919) % n) // a permutation of 0..n-1 (7919 is prime, n < 7919)
		}
		v, ok := MedianSlice(x, nil)
		assert.True(t, ok)
		assert.Equal(t, float64((n-1)/2), v, "n=%d", n)
		// Every value twice: rank (2n−1)/2 = n−1 of 0,0,1,1,… is (n−1)/2.
		v, _ = MedianSlice(append(x, x...), nil)
		assert.Equal(t, float64((n-1)/2), v, "n=%d doubled", n)
	}
	// All equal.
	v, _ := MedianSlice(make([]float64, 50), nil)
	assert.Equal(t, 0.0, v)
}

// TestNormSliceAmax checks NormSlice of order +Inf on float32 data, the
// block amax of scale selection that runs the kernels, on hand-derived
// blocks (a masked-out NaN and Inf do not leak, a kept NaN does, a block
// with nothing kept gives 0, the last block is short) and against the
// generic norm of order +Inf (normBlock) on random blocks.
func TestNormSliceAmax(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	x := []float32{1, -5, nan, 2 /**/, -3, inf, 0.5, -0.25 /**/, 7, -8, 9, nan /**/, 4, -6}
	keep := []bool{true, true, false, true, true, false, true, true, false, false, false, false, true, true}
	amax := func(x []float32, keep []bool, block int) []float32 {
		var out []float32
		for lo := 0; lo < len(x); lo += block {
			hi := min(len(x), lo+block)
			var k []bool
			if keep != nil {
				k = keep[lo:hi]
			}
			v, _ := NormSlice(x[lo:hi], k, math.Inf(1))
			out = append(out, v)
		}
		return out
	}
	assert.Equal(t, []float32{5, 3, 0, 6}, amax(x, keep, 4))
	all, _ := NormSlice(x, keep, math.Inf(1))
	assert.Equal(t, float32(6), all)
	keep[2] = true // a kept NaN
	assert.True(t, math.IsNaN(float64(amax(x, keep, 4)[0])))
	assert.Equal(t, inf, amax(x, nil, 4)[1]) // nil keeps everything
	assert.Panics(t, func() { NormSlice(x, keep[:3], math.Inf(1)) })

	r := rand.New(rand.NewPCG(5, 6))
	for _, block := range []int{1, 16, 32, 33} {
		n := 5*block + r.IntN(block)
		x, keep := make([]float32, n), make([]bool, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
			keep[i] = r.IntN(3) > 0
		}
		for b, got := range amax(x, keep, block) {
			lo, hi := b*block, min(n, (b+1)*block)
			want := normBlock[float32, float32](x[lo:hi], keep[lo:hi], math.Inf(1))
			assert.Equal(t, math.Float32bits(want), math.Float32bits(got), "block %d of %d", b, block)
		}
	}
}

// TestFromMask checks the bit-mask constructor and accessor: a broadcast
// [2,1] bit mask equals the same []bool mask, a nil mask keeps everything,
// and BitMask gives the full mask back, for a scalar too.
func TestFromMask(t *testing.T) {
	m, err := mask.FromBools([]int{2, 1}, []bool{true, false})
	require.NoError(t, err)
	data := []float32{1, 2, 3, 4, 5, 6}
	a, err := FromMask(data, []int{2, 3}, m)
	require.NoError(t, err)
	b, err := New(data, []int{2, 3}, []bool{true, false}, []int{2, 1})
	require.NoError(t, err)
	assert.Equal(t, b.Mask(), a.Mask())
	assert.Equal(t, []bool{true, true, true, false, false, false}, a.BitMask().Bools())
	assert.Equal(t, []int{2, 3}, a.BitMask().Shape())
	s, err := Sum(a, Options{Dims: []int{1}})
	require.NoError(t, err)
	assert.Equal(t, []float32{6, 0}, s.Data())
	assert.Equal(t, []bool{true, false}, s.Mask())

	all, err := FromMask(data, []int{6}, nil)
	require.NoError(t, err)
	assert.Equal(t, 6, all.BitMask().Count())
	sc, err := FromMask([]float64{7}, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, sc.BitMask().Count())
	_, err = FromMask(data, []int{3, 2}, m)
	assert.ErrorIs(t, err, ErrShape)
}
