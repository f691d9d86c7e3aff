package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// weightedInputs returns n weights, wanted values and got values: normal
// values mostly, with NaNs, infinities, −0, subnormals and huge values
// sprinkled in each.
func weightedInputs(r *rand.Rand, n int) (w, want, got []float32) {
	edge := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)),
		0, 1e-45, -1e-40, 3e38, -3e38, 1}
	pick := func(scale float64) float32 {
		if r.IntN(16) == 0 {
			return edge[r.IntN(len(edge))]
		}
		return float32(r.NormFloat64() * scale)
	}
	w, want, got = make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range n {
		w[i] = float32(math.Abs(float64(pick(3))))
		want[i] = pick(1)
		got[i] = want[i] + float32(r.NormFloat64()*0.01)
		if r.IntN(16) == 0 {
			got[i] = pick(1)
		}
	}
	return w, want, got
}

// TestWeightedErrorSumsTiers compares every tier with the Go reference bit
// for bit, at every length up to 100 and at unaligned addresses.
func TestWeightedErrorSumsTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	w, want, got := weightedInputs(r, 5000)
	forEachTier(t, func(t *testing.T) {
		for n := 0; n <= 100; n++ {
			for off := range 2 {
				ws, xs, ys := w[off:off+n], want[off+3:off+3+n], got[off+1:off+1+n+off]
				var s0, n0, s1, n1 [ErrorLanes]float64
				s0[3], s1[3] = 1.5, 1.5 // sums continue from what the lanes hold
				weightedErrorSumsGo(&s0, &n0, ws, xs, ys)
				canonicalNaNs(&s0, &n0)
				WeightedErrorSums(&s1, &n1, ws, xs, ys)
				require.Equal(t, f64Bits(s0[:]), f64Bits(s1[:]), "sig, %d elements", n)
				require.Equal(t, f64Bits(n0[:]), f64Bits(n1[:]), "noise, %d elements", n)
			}
		}
		var s0, n0, s1, n1 [ErrorLanes]float64
		weightedErrorSumsGo(&s0, &n0, w, want, got)
		canonicalNaNs(&s0, &n0)
		WeightedErrorSums(&s1, &n1, w, want, got)
		require.Equal(t, f64Bits(s0[:]), f64Bits(s1[:]))
		require.Equal(t, f64Bits(n0[:]), f64Bits(n1[:]))
	})
}

// TestWeightedErrorSumsHandDerived checks sums worked out by hand: w = 2,
// want = 3, got = 1 gives 2·9 = 18 and 2·4 = 8 in lane 0; an infinite
// error (lane 1) and a NaN one (lane 2) add nothing.
func TestWeightedErrorSumsHandDerived(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	forEachTier(t, func(t *testing.T) {
		w := []float32{2, 1, 1, 0.5, 0, 0, 0, 0, 4}
		want := []float32{3, inf, nan, -2, 0, 0, 0, 0, 1}
		got := []float32{1, 0, 0, -2, 0, 0, 0, 0, 0.5}
		var sig, noise [ErrorLanes]float64
		WeightedErrorSums(&sig, &noise, w, want, got)
		require.Equal(t, [ErrorLanes]float64{18 + 4, 0, 0, 2}, sig)
		require.Equal(t, [ErrorLanes]float64{8 + 1}, noise)
	})
}

// FuzzWeightedErrorSums compares every tier with the Go reference on the
// fuzzer's bytes read as float32 triples (weight, want, got).
func FuzzWeightedErrorSums(f *testing.F) {
	f.Add(bytesOf(1, 2, 3, float32(math.NaN()), 1, 0, 2, float32(math.Inf(1)), 1))
	f.Add(make([]byte, 12*17))
	f.Fuzz(func(t *testing.T, data []byte) {
		v := floatsOf(data)
		n := len(v) / 3
		w, want, got := v[:n], v[n:2*n], v[2*n:3*n]
		var s0, n0 [ErrorLanes]float64
		weightedErrorSumsGo(&s0, &n0, w, want, got)
		canonicalNaNs(&s0, &n0)
		for _, tr := range tiers() {
			restore := useTier(tr)
			var s1, n1 [ErrorLanes]float64
			WeightedErrorSums(&s1, &n1, w, want, got)
			restore()
			require.Equal(t, f64Bits(s0[:]), f64Bits(s1[:]), "%v sig", tr)
			require.Equal(t, f64Bits(n0[:]), f64Bits(n1[:]), "%v noise", tr)
		}
	})
}

// f64Bits returns the bits of x, so that NaNs compare by payload.
func f64Bits(x []float64) []uint64 {
	b := make([]uint64, len(x))
	for i, v := range x {
		b[i] = math.Float64bits(v)
	}
	return b
}

// BenchmarkWeightedErrorSums measures rows of 4096 in L1/L2, beside
// ErrorSums on the same rows.
func BenchmarkWeightedErrorSums(b *testing.B) {
	r := rand.New(rand.NewPCG(53, 54))
	w, want, got := weightedInputs(r, 4096)
	for _, tr := range tiers() {
		b.Run(tr.String(), func(b *testing.B) {
			defer useTier(tr)()
			b.SetBytes(4 * 4096)
			var s, n [ErrorLanes]float64
			for b.Loop() {
				WeightedErrorSums(&s, &n, w, want, got)
			}
		})
		b.Run("ErrorSums/"+tr.String(), func(b *testing.B) {
			defer useTier(tr)()
			b.SetBytes(4 * 4096)
			var s, n [ErrorLanes]float64
			for b.Loop() {
				ErrorSums(&s, &n, want, got)
			}
		})
	}
}
