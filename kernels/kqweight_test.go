package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// weighInput returns n finite values of mixed scales (Gaussians of 2^−20
// to 2^20, zeros, some of 10^30) and n weights as prepBase leaves them
// (log-normal, some 0).
func weighInput(r *rand.Rand, n int) (x, base []float32) {
	x, base = make([]float32, n), make([]float32, n)
	scale := math.Ldexp(1, r.IntN(41)-20)
	for i := range x {
		switch r.IntN(16) {
		case 0:
			x[i] = 0
		case 1:
			x[i] = float32(r.NormFloat64() * 1e30)
		default:
			x[i] = float32(r.NormFloat64() * scale)
		}
		if r.IntN(8) > 0 {
			base[i] = float32(math.Exp(2 * r.NormFloat64()))
		}
	}
	return x, base
}

// requireWeighTiers requires every tier's weight kernels to give the Go
// references' bits for x and base, at the inverse amax of x.
func requireWeighTiers(t *testing.T, x, base []float32, msg string) {
	t.Helper()
	ia := float32(1)
	if a := math.Float32frombits(absMaxBitsGo(x)); a > 0 {
		ia = pow2Inv(a)
	}
	wantMS := float32(0)
	if len(x) > 0 && len(x)%16 == 0 {
		wantMS = meanSquareGo(x, ia)
	}
	s2 := 2 * wantMS
	wantS, wantA := make([]float32, len(x)), make([]float32, len(x))
	sigmaWeightsGo(wantS, x, base, ia, s2)
	absWeightsGo(wantA, x, base, ia)
	// The gain sums of x against a reconstruction: x with base added.
	q := make([]float32, len(x))
	for i := range q {
		q[i] = x[i] + base[i]
	}
	wantXX, wantXQ := gainSumsGo(base, x, q, ia)
	for _, tr := range tiers() {
		restore := useTier(tr)
		gotS, gotA := make([]float32, len(x)), make([]float32, len(x))
		sigmaWeights(gotS, x, base, ia, s2)
		absWeights(gotA, x, base, ia)
		gotXX, gotXQ := gainSums(base, x, q, ia)
		require.Equal(t, math.Float32bits(wantXX), math.Float32bits(gotXX), "%s %v: gain sum xx", msg, tr)
		require.Equal(t, math.Float32bits(wantXQ), math.Float32bits(gotXQ), "%s %v: gain sum xq", msg, tr)
		var gotMS float32
		if len(x) > 0 && len(x)%16 == 0 {
			gotMS = meanSquare(x, ia)
		}
		restore()
		require.Equal(t, math.Float32bits(wantMS), math.Float32bits(gotMS), "%s %v: mean square", msg, tr)
		for i := range x {
			require.Equal(t, math.Float32bits(wantS[i]), math.Float32bits(gotS[i]), "%s %v: sigma weight %d", msg, tr, i)
			require.Equal(t, math.Float32bits(wantA[i]), math.Float32bits(gotA[i]), "%s %v: |x| weight %d", msg, tr, i)
		}
	}
}

// TestWeighKernels compares every tier's weight kernels with the Go
// references, bit for bit, at every length of testLengths.
func TestWeighKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, n := range testLengths() {
		x, base := weighInput(r, n)
		requireWeighTiers(t, x, base, "random")
	}
}

// TestWeighRules checks the weights against ggml's rules computed in
// float64 from their definitions (quantize_row_*_impl): qw·sqrt(σ² + x²)
// with σ² = 2·Σx²/256 per super-block (Q3_K, Q4_K), Σx²/256 (Q2_K); |x|
// (Q2_K without importance); qw alone (Q6_K, IQ4_XS, Q4_1, and Q8_0, which
// does not search); 1 without importance (Q4_K). A
// sub-block whose importance is all 0 weighs as if it were 1 (Q4_K).
func TestWeighRules(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	const cols = 512
	x := gaussian(r, 2*cols, 0.03)
	imp := make([]float32, cols)
	for i := range imp {
		imp[i] = float32(math.Exp(r.NormFloat64()))
	}
	holed := append([]float32(nil), imp...)
	for i := 32; i < 64; i++ {
		holed[i] = 0
	}
	sumSq := func(lo, hi int) float64 {
		var s float64
		for _, v := range x[lo:hi] {
			s += float64(v) * float64(v)
		}
		return s
	}
	sigma := func(qw []float32, k float64, span int) func(int) float64 {
		return func(i int) float64 {
			o := i / span * span
			w := float64(qw[i%cols])
			if i%cols >= 32 && i%cols < 64 && qw[40] == 0 {
				w = 1
			}
			return w * math.Sqrt(k*sumSq(o, o+span)/float64(span)+float64(x[i])*float64(x[i]))
		}
	}
	alone := func(i int) float64 { return float64(imp[i%cols]) }
	rules := []struct {
		codec string
		imp   []float32
		want  func(i int) float64
	}{
		{"Q3_K", imp, sigma(imp, 2, qkk)},
		{"Q4_K", imp, sigma(imp, 2, qkk)},
		{"Q4_K", holed, sigma(holed, 2, qkk)},
		{"Q2_K", imp, sigma(imp, 1, qkk)},
		{"Q4_1", imp, alone},
		{"Q2_K", nil, func(i int) float64 { return math.Abs(float64(x[i])) }},
		{"Q6_K", imp, alone},
		{"IQ4_XS", imp, alone},
		{"Q8_0", imp, alone},
		{"Q4_K", nil, func(int) float64 { return 1 }},
	}
	for _, ru := range rules {
		c, ok := LookupBlock(ru.codec)
		require.True(t, ok)
		w := make([]float32, len(x))
		c.Weigh(w, x, ru.imp)
		for i := range x {
			require.InEpsilon(t, ru.want(i), float64(w[i]), 1e-5, "%s element %d", ru.codec, i)
		}
	}
}

// TestWeighRulesTable requires every block codec that searches to have an
// error rule, and the others none.
func TestWeighRulesTable(t *testing.T) {
	for _, c := range blockCodecs {
		assert.Equal(t, c.Weighted, c.weighting != nil, c.Name)
	}
}

// TestQuantizeGivesWeigh requires every block codec's Quantize, asked for
// its weights, to write the blocks it writes without and, in each element,
// Weigh's weight: rows of several blocks, with and without importance,
// with non-finite elements, a sub-block of zeros and importance of 0,
// 10^−35 and 10^35 (outside the range the quantizers hold weights to).
func TestQuantizeGivesWeigh(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	for _, c := range blockCodecs {
		if c.Quantize == nil {
			continue
		}
		// Q4_0 … IQ4_NL: 12 blocks a row (IQ4_NL: 8 at once, then 4 one by one).
		cols := 384
		if c.BlockLen == qkk {
			cols = 2 * qkk
		}
		x := gaussian(r, 3*cols, 0.02)
		x[5], x[cols+7], x[2*cols+9] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
		clear(x[cols+64 : cols+96])
		imp := make([]float32, cols)
		for i := range imp {
			imp[i] = float32(math.Exp(r.NormFloat64()))
		}
		imp[3], imp[40], imp[300] = 0, 1e-35, 1e35
		// Importance that fits no row panics even where the quantizer
		// ignores it, once weights are asked for.
		assert.Panics(t, func() {
			c.Quantize(make([]byte, len(x)/c.BlockLen*c.BlockBytes), x, []float32{}, make([]float32, len(x)))
		}, c.Name)
		for _, iv := range [][]float32{nil, imp} {
			nb := len(x) / c.BlockLen * c.BlockBytes
			want, got := make([]byte, nb), make([]byte, nb)
			c.Quantize(want, x, iv, nil)
			wantW, gotW := make([]float32, len(x)), make([]float32, len(x)+1)
			for i := range gotW {
				gotW[i] = float32(math.NaN()) // every weight must be written
			}
			gotW[len(x)] = -1
			c.Weigh(wantW, x, iv)
			c.Quantize(got, x, iv, gotW)
			require.Equal(t, want, got, "%s (importance %v): blocks", c.Name, iv != nil)
			require.Equal(t, float32(-1), gotW[len(x)], "%s: past the end", c.Name)
			for i := range x {
				require.Equal(t, math.Float32bits(wantW[i]), math.Float32bits(gotW[i]),
					"%s (importance %v): weight %d", c.Name, iv != nil, i)
			}
			if c.Name == "Q2_K" && iv == nil {
				// |x| would weigh the sub-blocks of zeros 0: they weigh 1
				// (in the block's units, 1/ia).
				z := gotW[cols+64 : cols+96]
				assert.Positive(t, z[0], "Q2_K: zeros")
				assert.Equal(t, slices.Repeat(z[:1], 32), z, "Q2_K: zeros")
			}
		}
	}
}
