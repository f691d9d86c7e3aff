package masked

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Plain references of the branch-free loops: the obvious branchy loops, same
// accumulator assignment for the sums.

func refSum[T, A Float](xs []T, ks []bool) A {
	var s [4]A
	n4 := len(xs) / 4 * 4
	for i := range n4 {
		if ks[i] {
			s[i%4] += A(xs[i])
		}
	}
	// The tail after the last full group of four goes to accumulator 0.
	for i := n4; i < len(xs); i++ {
		if ks[i] {
			s[0] += A(xs[i])
		}
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

func refMax[T Float](xs []T, ks []bool, neg bool) T {
	m := T(math.Inf(-1))
	if neg {
		m = T(math.Inf(1))
	}
	for i, x := range xs {
		if !ks[i] {
			continue
		}
		if x != x {
			return x
		}
		if (!neg && x > m) || (neg && x < m) {
			m = x
		}
	}
	return m
}

func sameBitsOrNaN[T Float](t *testing.T, want, got T, msg ...any) {
	t.Helper()
	if want != want {
		require.True(t, got != got, msg...)
		return
	}
	require.Equal(t, want, got, msg...)
}

// TestFastLoops compares the branch-free sum and maxima with the plain loops
// over random data holding every edge (NaN of both signs, ±Inf, ±0,
// subnormals, the largest finite values), random masks, fully masked and fully
// kept slices, and lengths that are not multiples of four, at offsets that
// leave the slices unaligned.
func TestFastLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	edges32 := []float32{float32(math.NaN()), -float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		math.MaxFloat32, -math.MaxFloat32, 1, -1}
	edges64 := []float64{math.NaN(), -math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1),
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 1, -1}
	for trial := range 3000 {
		n := rng.IntN(70)
		off := rng.IntN(3)
		x32 := make([]float32, n+off)[off:]
		x64 := make([]float64, n+off)[off:]
		ks := make([]bool, n+off)[off:]
		pEdge := []float64{0, 0.05, 0.5}[trial%3]
		pKeep := []float64{0, 0.3, 0.75, 1}[trial%4]
		for i := range n {
			x64[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
			if rng.Float64() < pEdge {
				x64[i] = edges64[rng.IntN(len(edges64))]
			}
			x32[i] = float32(x64[i])
			if rng.Float64() < pEdge {
				x32[i] = edges32[rng.IntN(len(edges32))]
			}
			ks[i] = rng.Float64() < pKeep
		}
		sameBitsOrNaN(t, refSum[float32, float32](x32, ks), sumBlock[float32, float32](x32, ks), "sum32 %d", trial)
		sameBitsOrNaN(t, refSum[float32, float64](x32, ks), sumBlock[float32, float64](x32, ks), "sum32w %d", trial)
		sameBitsOrNaN(t, refSum[float64, float64](x64, ks), sumBlock[float64, float64](x64, ks), "sum64 %d", trial)
		sameBitsOrNaN(t, refMax(x32, ks, false), amaxBlock(x32, ks), "amax32 %d", trial)
		sameBitsOrNaN(t, refMax(x32, ks, true), aminBlock(x32, ks), "amin32 %d", trial)
		sameBitsOrNaN(t, refMax(x64, ks, false), amaxBlock(x64, ks), "amax64 %d", trial)
		sameBitsOrNaN(t, refMax(x64, ks, true), aminBlock(x64, ks), "amin64 %d", trial)
	}
}

// A type defined on float32 runs the same loops.
type myFloat float32

func TestDefinedFloatType(t *testing.T) {
	x, err := New([]myFloat{1, 5, -2, 8}, []int{4}, []bool{true, true, true, false}, nil)
	require.NoError(t, err)
	s, err := Sum(x, Options{})
	require.NoError(t, err)
	assert.Equal(t, []myFloat{4}, s.Data())
	m, err := Amax(x, Options{})
	require.NoError(t, err)
	assert.Equal(t, []myFloat{5}, m.Data())
	n, ok := NormSlice([]myFloat{-3, 2}, nil, math.Inf(1))
	assert.Equal(t, myFloat(3), n)
	assert.True(t, ok)
	assert.Equal(t, "[1 5 -2 --]", x.String())
}

// The slice forms used per block by scale selection allocate nothing.
func TestSliceFormsAllocateNothing(t *testing.T) {
	x := make([]float32, 64)
	keep := make([]bool, 64)
	for i := range x {
		x[i] = float32(i) - 20
		keep[i] = i%3 != 0
	}
	allocs := testing.AllocsPerRun(100, func() {
		AmaxSlice(x, keep)
		AminSlice(x, keep)
		SumSlice(x, keep)
		MeanSlice(x, keep)
		NormSlice(x, keep, math.Inf(1))
		NormSlice(x, nil, math.Inf(1))
		NormSlice(x, keep, 2)
		ArgmaxSlice(x, keep)
		VarSlice(x, keep, 1)
	})
	assert.Zero(t, allocs)
}
