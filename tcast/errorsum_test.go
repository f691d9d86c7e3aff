package tcast

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorSumByHand checks ErrorSum on values worked out by hand.
func TestErrorSumByHand(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	var s ErrorSum
	// Finite pairs (1,1), (2,3), (−4,−4), (0.5,0), (3,3), (−1,−1): signal
	// 1+4+16+0.25+9+1 = 31.25, noise 0+1+0+0.25+0+0 = 1.25, max error 1.
	// (5, NaN) loses a finite value; (NaN, 1) and (Inf, Inf) are skipped.
	// The lost value makes the error infinite: SQNR −Inf, MaxAbs and MSE
	// +Inf (on i15-int they were the finite pairs' figures, which say
	// "exact" when those are exact).
	s.Add([]float32{1, 2, -4, 0.5, 3, -1, 5, nan, inf}, []float32{1, 3, -4, 0, 3, -1, nan, 1, inf})
	e := s.Errors()
	require.NotNil(t, e.SQNR)
	assert.True(t, math.IsInf(*e.SQNR, -1), "%v", *e.SQNR)
	assert.True(t, math.IsInf(e.MaxAbs, 1), "%v", e.MaxAbs)
	assert.True(t, math.IsInf(e.MSE, 1), "%v", e.MSE)
	assert.Equal(t, 1, e.Lost)
	assert.True(t, e.IsLost())
	assert.Equal(t, [3]int{1, 1, 0}, [3]int{e.NaN, e.PosInf, e.NegInf}, "the source's NaN and +Inf")
	// Without the lost pair, the finite pairs' figures.
	var f ErrorSum
	f.Add([]float32{1, 2, -4, 0.5, 3, -1, nan, inf}, []float32{1, 3, -4, 0, 3, -1, 1, inf})
	e = f.Errors()
	require.NotNil(t, e.SQNR)
	assert.InDelta(t, 10*math.Log10(31.25/1.25), *e.SQNR, 1e-12)
	assert.Equal(t, 1.0, e.MaxAbs)
	assert.InDelta(t, 1.25/6, e.MSE, 1e-15)
	assert.False(t, e.IsLost())
	// An exact cast of the other values that lost one is not exact.
	e = Compare([]float32{1, 2, 3}, []float32{1, nan, 3})
	require.NotNil(t, e.SQNR, "nil would say exact")
	assert.True(t, math.IsInf(*e.SQNR, -1))
	assert.True(t, math.IsInf(e.MaxAbs, 1), "not 0")

	// Counted in every piece and merged: 2 NaN (one of each sign), 1 +Inf,
	// 2 −Inf among finite values.
	var a, b ErrorSum
	a.Add([]float32{1, -nan, -inf, 2}, []float32{1, 0, 0, 2})
	b.Add([]float32{nan, inf, 3, -inf}, []float32{nan, inf, 3, -inf})
	a.Merge(b)
	m := a.Errors()
	assert.Equal(t, [3]int{2, 1, 2}, [3]int{m.NaN, m.PosInf, m.NegInf})
	assert.Equal(t, 5, m.NonFinite())
	assert.Zero(t, m.Lost)

	var z ErrorSum
	z.Add([]float32{1, 2, 3, 4, 5}, []float32{1, 2, 3, 4, 5})
	assert.Nil(t, z.Errors().SQNR, "exact")
	assert.Zero(t, z.Errors().MaxAbs)
	var empty ErrorSum
	assert.Equal(t, Errors{}, empty.Errors())
}

// TestErrorSumMatchesCompare splits random values, with NaN and Inf among
// them, into pieces, sums them on separate ErrorSums and merges them, and
// compares with Compare of the whole.
func TestErrorSumMatchesCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for _, n := range []int{0, 1, 3, 4, 7, 64, 1001, 40000} {
		for _, specials := range []bool{false, true} {
			want := randomInput(r, n, specials)
			got := make([]float32, n)
			for i, w := range want {
				got[i] = w * (1 + float32(r.NormFloat64())/16)
				if specials && r.IntN(50) == 0 {
					got[i] = float32(math.NaN())
				}
			}
			ref := Compare(want, got)
			for _, piece := range []int{1, 5, 64, 4096, n + 1} {
				var total ErrorSum
				for lo := 0; lo < n; lo += piece {
					var p ErrorSum
					p.Add(want[lo:min(lo+piece, n)], got[lo:min(lo+piece, n)])
					total.Merge(p)
				}
				e := total.Errors()
				assert.Equal(t, ref.MaxAbs, e.MaxAbs, "n=%d piece=%d", n, piece)
				assert.Equal(t, ref.Lost, e.Lost, "n=%d piece=%d", n, piece)
				if ref.Lost > 0 { // infinite error
					assert.Equal(t, ref.MSE, e.MSE)
					assert.Equal(t, ref.SQNR, e.SQNR)
					continue
				}
				assert.InEpsilon(t, ref.MSE+1e-300, e.MSE+1e-300, 1e-9, "n=%d piece=%d", n, piece)
				if ref.SQNR == nil {
					assert.Nil(t, e.SQNR)
				} else {
					require.NotNil(t, e.SQNR)
					assert.InDelta(t, *ref.SQNR, *e.SQNR, 1e-9, "n=%d piece=%d", n, piece)
				}
			}
		}
	}
}

// BenchmarkErrorSum measures ErrorSum.Add on 64 Ki finite values (an L2
// chunk of the conversion pipeline).
func BenchmarkErrorSum(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	want := make([]float32, 64<<10)
	got := make([]float32, len(want))
	for i := range want {
		want[i] = float32(r.NormFloat64())
		got[i] = want[i] * 1.01
	}
	b.SetBytes(int64(4 * len(want)))
	for b.Loop() {
		var s ErrorSum
		s.Add(want, got)
	}
}
