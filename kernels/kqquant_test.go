package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kqCodec is one block type's quantizer and dequantizer.
type kqCodec struct {
	name      string
	block     int
	bytes     int
	quant     func(dst []byte, src, imp, w []float32)
	dequant   func(dst []float32, src []byte)
	minSQNR   float64 // on Gaussian data, without importance (plain SQNR)
	zeroValue bool    // a zero block decodes to exact zeros
}

var kqCodecs = []kqCodec{
	// Q2_K weighs errors by |x| (ggml's rule) and takes the unbiased gain
	// (unbiasK): 0.3 and 0.05 dB of plain SQNR less.
	{"Q2_K", qkk, q2_KBlockBytes, quantizeQ2_K, dequantizeQ2_K, 10.6, true},
	{"Q3_K", qkk, q3_KBlockBytes, quantizeQ3_K, dequantizeQ3_K, 16, true},
	{"Q4_K", qkk, q4_KBlockBytes, quantizeQ4_K, dequantizeQ4_K, 22, true},
	{"Q5_K", qkk, q5_KBlockBytes, quantizeQ5_K, dequantizeQ5_K, 28, true},
	{"Q6_K", qkk, q6_KBlockBytes, quantizeQ6_K, dequantizeQ6_K, 34, true},
	{"Q8_K", qkk, q8_KBlockBytes, quantizeQ8_K, dequantizeQ8_K, 40, true},
	{"IQ4_XS", qkk, iq4xsBlockBytes, quantizeIQ4XS, dequantizeIQ4XS, 21, true},
	{"IQ4_NL", ggmlBlock, iq4nlBlockBytes, quantizeIQ4NL, dequantizeIQ4NL, 21, true},
	{"Q4_1", ggmlBlock, q4_1BlockBytes, quantizeQ4_1, dequantizeQ4_1, 22, true},
	{"Q5_0", ggmlBlock, q5_0BlockBytes, quantizeQ5_0, dequantizeQ5_0, 26, true},
	{"Q5_1", ggmlBlock, q5_1BlockBytes, quantizeQ5_1, dequantizeQ5_1, 28, true},
	{"Q4_0w", ggmlBlock, q4_0BlockBytes, quantizeQ4_0Weighted, dequantizeQ4_0, 20, true},
	{"IQ2_XXS", qkk, iq2xxsBlockBytes, iqQuantizer("IQ2_XXS", &fmtIQ2XXS, iq2xxsBlockBytes),
		dequantizeIQ2XXS, 0, true},
	{"IQ2_XS", qkk, iq2xsBlockBytes, iqQuantizer("IQ2_XS", &fmtIQ2XS, iq2xsBlockBytes),
		dequantizeIQ2XS, 0, true},
	{"IQ2_S", qkk, iq2sBlockBytes, iqQuantizer("IQ2_S", &fmtIQ2S, iq2sBlockBytes),
		dequantizeIQ2S, 0, true},
	{"IQ3_XXS", qkk, iq3xxsBlockBytes, iqQuantizer("IQ3_XXS", &fmtIQ3XXS, iq3xxsBlockBytes),
		dequantizeIQ3XXS, 0, true},
	{"IQ3_S", qkk, iq3sBlockBytes, iqQuantizer("IQ3_S", &fmtIQ3S, iq3sBlockBytes),
		dequantizeIQ3S, 0, true},
	{"IQ1_S", qkk, iq1sBlockBytes, iqQuantizer("IQ1_S", &fmtIQ1S, iq1sBlockBytes),
		dequantizeIQ1S, 0, true},
	{"IQ1_M", qkk, iq1mBlockBytes, iqQuantizer("IQ1_M", &fmtIQ1M, iq1mBlockBytes),
		dequantizeIQ1M, 0, true},
}

// sqnr returns 10·log10(Σ w x² / Σ w (y−x)²) with w[i % len(w)] (nil: 1).
func sqnr(x, y, w []float32) float64 {
	var s, e float64
	for i, v := range x {
		c := 1.0
		if w != nil {
			c = float64(w[i%len(w)])
		}
		d := float64(y[i]) - float64(v)
		s += c * float64(v) * float64(v)
		e += c * d * d
	}
	return 10 * math.Log10(s/e)
}

func gaussian(rng *rand.Rand, n int, sigma float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * sigma)
	}
	return x
}

func roundTrip(c kqCodec, x, imp []float32) []float32 {
	b := make([]byte, len(x)/c.block*c.bytes)
	c.quant(b, x, imp, nil)
	y := make([]float32, len(x))
	c.dequant(y, b)
	return y
}

// TestKQuantSQNR checks each quantizer's signal-to-noise ratio on Gaussian
// data against a floor a little below what the format's bits allow.
func TestKQuantSQNR(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := gaussian(rng, 16*qkk, 0.02)
	for _, c := range kqCodecs {
		got := sqnr(x, roundTrip(c, x, nil), nil)
		assert.Greater(t, got, c.minSQNR, c.name)
	}
}

// TestKQuantImportance checks that weighting a few columns heavily lowers
// their error: the importance-weighted SQNR beats the unweighted
// quantizer's, measured with the same weights.
func TestKQuantImportance(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const cols = 512
	x := gaussian(rng, 8*cols, 1)
	imp := make([]float32, cols)
	for i := range imp {
		imp[i] = float32(math.Exp(2 * rng.NormFloat64()))
	}
	for _, c := range kqCodecs {
		plain := sqnr(x, roundTrip(c, x, nil), imp)
		weighted := sqnr(x, roundTrip(c, x, imp), imp)
		assert.Greater(t, weighted, plain, c.name)
	}
}

// TestKQuantExact quantizes blocks that hold only values the format
// represents exactly and requires them back exactly: every element is an
// integer multiple k·s of one step s, k a random code of the type, each
// sub-block holding the lowest and the highest code, and s is a power of
// two times the level the super-block's largest sub-block scale takes (so
// the float16 super-block scale is exact).
func TestKQuantExact(t *testing.T) {
	cases := map[string]struct {
		lo, hi int     // the codes, relative to the step
		step   float32 // the step s
	}{
		"Q2_K": {0, 3, 15.0 / 128}, "Q3_K": {-4, 3, 32.0 / 128}, "Q4_K": {0, 15, 63.0 / 128},
		"Q5_K": {0, 31, 63.0 / 128}, "Q6_K": {-32, 31, 128.0 / 512}, "Q8_K": {-127, 127, 0.125},
		"Q4_1": {0, 15, 0.125}, "Q5_0": {-16, 15, 0.125}, "Q5_1": {0, 31, 0.125}, "Q4_0w": {-8, 7, 0.125},
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range kqCodecs {
		if strings.HasPrefix(c.name, "IQ") && c.name[2] <= '3' {
			continue // the grid types: TestIQExact
		}
		x := make([]float32, 2*qkk)
		if tc, ok := cases[c.name]; ok {
			for i := range x {
				k := tc.lo + rng.IntN(tc.hi-tc.lo+1)
				switch i % 16 {
				case 0:
					k = tc.lo
				case 1:
					k = tc.hi
				}
				x[i] = float32(k) * tc.step
			}
		} else { // IQ4_NL and IQ4_XS: the table's values times 2^-3
			for i := range x {
				k := rng.IntN(16)
				switch i % 16 {
				case 0:
					k = 0
				case 1:
					k = 15
				}
				x[i] = float32(IQ4NLValues[k]) * 0.125
			}
		}
		y := roundTrip(c, x, nil)
		for i := range x {
			if c.name == "Q2_K" {
				// Weighing |x| (ggml's rule), Q2_K's search leaves a 0
				// free (within a step), and need not find the exact fit
				// of the others (within 0.1 % of the step).
				tol := 1e-3
				if x[i] == 0 {
					tol = 1
				}
				require.InDelta(t, x[i], y[i], tol*float64(cases[c.name].step), "%s element %d", c.name, i)
				continue
			}
			require.Equal(t, x[i], y[i], "%s element %d", c.name, i)
		}
	}
}

// TestKQuantSpecialValues quantizes blocks with NaN, infinite and zero
// elements and bad importance weights: nothing panics, no decoded value is
// NaN, an all-zero block decodes to zeros, +Inf and −Inf decode to the
// largest and smallest value of their sub-block, and a NaN element
// (weighing nothing, as a 0 of weight 0 does) is stored as the code of 0.
func TestKQuantSpecialValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := gaussian(rng, 4*qkk, 1)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	x[3], x[300], x[301] = nan, inf, -inf
	for i := 2 * qkk; i < 3*qkk; i++ {
		x[i] = 0 // an all-zero super-block
	}
	imp := make([]float32, 2*qkk)
	for i := range imp {
		imp[i] = 1
	}
	imp[0], imp[1], imp[2], imp[3] = nan, -1, inf, 0
	for i := 32; i < 64; i++ {
		imp[i] = 0 // a sub-block of zero weights
	}
	zeroed := append([]float32(nil), x...)
	zeroed[3] = 0
	for _, c := range kqCodecs {
		for _, w := range [][]float32{nil, imp} {
			y := roundTrip(c, x, w)
			for i, v := range y {
				require.False(t, v != v, "%s element %d is NaN", c.name, i)
			}
			for i := 2 * qkk; i < 3*qkk; i++ {
				require.Zero(t, y[i], "%s element %d of a zero block", c.name, i)
			}
			sub, n := 256+32, 16 // the sub-block of 16 holding elements 300 and 301
			if c.name == "IQ1_M" {
				// Its shift of ±1/8 per 8 elements: the extremes are those
				// of their 8.
				sub, n = 256+40, 8
			}
			for _, v := range y[sub : sub+n] {
				assert.GreaterOrEqual(t, y[300], v, "%s +Inf", c.name)
				assert.LessOrEqual(t, y[301], v, "%s -Inf", c.name)
			}
		}
		b1 := make([]byte, len(x)/c.block*c.bytes)
		b2 := make([]byte, len(b1))
		c.quant(b1, x, imp, nil)
		c.quant(b2, zeroed, imp, nil)
		assert.Equal(t, b2[:c.bytes], b1[:c.bytes], "%s: a NaN of weight 0 is stored as a 0 of weight 0", c.name)
	}
}

// TestQ8_KSums checks the sums of each 16 codes of a Q8_K block.
func TestQ8_KSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	x := gaussian(rng, 2*qkk, 3)
	b := make([]byte, 2*q8_KBlockBytes)
	quantizeQ8_K(b, x, nil, nil)
	for blk := range 2 {
		y := b[blk*q8_KBlockBytes:]
		for j := range 16 {
			sum := 0
			for i := range 16 {
				sum += int(int8(y[4+16*j+i]))
			}
			assert.Equal(t, int16(sum), int16(binary.LittleEndian.Uint16(y[260+2*j:])))
		}
	}
}

func TestKQuantPanicsOnMisuse(t *testing.T) {
	x := make([]float32, qkk)
	assert.Panics(t, func() { quantizeQ4_K(make([]byte, 143), x, nil, nil) })
	assert.Panics(t, func() { quantizeQ4_K(make([]byte, 144), x[:255], nil, nil) })
	assert.Panics(t, func() { quantizeQ4_K(make([]byte, 144), x, make([]float32, 128), nil) })
	assert.Panics(t, func() { quantizeIQ4NL(make([]byte, 8*18), x, make([]float32, 48), nil) })
	assert.NotPanics(t, func() { quantizeQ6_K(nil, nil, nil, nil) })
	assert.NotPanics(t, func() { quantizeQ4_1(make([]byte, 8*20), x, make([]float32, 64), nil) })
	assert.Panics(t, func() { quantizeQ4_K(make([]byte, 144), x, nil, make([]float32, 255)) })
}

// FuzzKQuantize quantizes the fuzzer's bytes, read as float32 values (and,
// when the input is long enough, its first row's worth as importance
// weights), with every quantizer: nothing panics, finite input decodes to
// no NaN, and quantizing again gives the same bytes.
func FuzzKQuantize(f *testing.F) {
	f.Add(bytesOf(1, -2, 0.5, float32(math.NaN()), float32(math.Inf(1)), 3e38, -1e-40))
	f.Add(make([]byte, 4*qkk*2))
	f.Fuzz(func(t *testing.T, data []byte) {
		vals := floatsOf(data)
		src := make([]float32, (len(vals)+qkk-1)/qkk*qkk)
		copy(src, vals)
		var imp []float32
		if len(vals) >= 2*qkk {
			imp = vals[:qkk]
			src = src[:len(src)/qkk*qkk]
		}
		finiteIn := true
		for _, v := range src {
			finiteIn = finiteIn && finite(v)
		}
		for _, c := range kqCodecs {
			b := make([]byte, len(src)/c.block*c.bytes)
			c.quant(b, src, imp, nil)
			b2 := make([]byte, len(b))
			c.quant(b2, src, imp, nil)
			if string(b) != string(b2) {
				t.Fatalf("%s: two runs differ", c.name)
			}
			y := make([]float32, len(src))
			c.dequant(y, b)
			if !finiteIn {
				continue
			}
			for i, v := range y {
				if v != v && abs32(src[i]) < 1e30 {
					t.Fatalf("%s: element %d (%v) decodes to NaN", c.name, i, src[i])
				}
			}
		}
	})
}

// TestUsableWeights checks the importance vectors prep may use as they
// are: weights in [2^−100, 2^100] only.
func TestUsableWeights(t *testing.T) {
	for _, c := range []struct {
		w    []float32
		want bool
	}{
		{nil, true},
		{[]float32{1, 2, 0x1p-100, 0x1p100}, true},
		{[]float32{1, 1e-45}, false},
		{[]float32{0x1p-101}, false},
		{[]float32{1, 0}, false},
		{[]float32{1, float32(math.Copysign(0, -1))}, false},
		{[]float32{-1}, false},
		{[]float32{0x1p101}, false},
		{[]float32{float32(math.Inf(1))}, false},
		{[]float32{float32(math.NaN())}, false},
	} {
		assert.Equal(t, c.want, usableWeights(c.w), "%v", c.w)
	}
}

// TestPrepUsableWeights checks that prepBase's shortcut for usable weights
// gives the values and weights of its general path.
func TestPrepUsableWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	src, imp := make([]float32, qkk), make([]float32, qkk)
	for i := range src {
		src[i] = float32(r.NormFloat64())
		imp[i] = float32(r.ExpFloat64()) + 1e-30
	}
	for _, sub := range []int{16, 32, qkk} {
		fast := &kqScratch{impOK: usableWeights(imp)}
		require.True(t, fast.impOK)
		var slow kqScratch
		xf, wf := fast.prepBase(src, imp, sub)
		xs, ws := slow.prepBase(src, imp, sub)
		require.Equal(t, xs, xf)
		require.Equal(t, ws, wf)
	}
}

// TestPickAffineSkipsNaNErrors: a sub-block of Q4_K (32 elements) whose
// weights add up past float32 (twelve of 3e37), under super-block scales of
// 65504. Its fit's integer scales are l ∈ {0, 1}, mins m ∈ {0, 1, 2}; every
// pair with l = 0 has d = 0 and the error sxx − 2m·sx + m²·sw with sw = +Inf,
// NaN; the pairs with l = 1 have float32 errors 2.1161812e38 (m = 0),
// 2.1154099e38 (m = 1) and 2.1244193e38 (m = 2). The pick is the least
// of those, (1, 1), not the NaN of the first pair listed: the kernels
// (FuzzSuperKernels/nan-first-pair) and the fits (+Inf to beat) rank errors
// so.
func TestPickAffineSkipsNaNErrors(t *testing.T) {
	x := []float32{0.1151471, 0, 0.31780118, 0.061411593, -0.33579206, -0.45242226, -0.36637852, 0.25008157,
		0, -1.538167, -0.59838957, 0.27423197, 0.4037561, -0.46133286, -1.000235, 1.4494444,
		2.0788336, -0.40909147, -0.703996, -0.9444332, -1.4507967, -0.99112165, 0.8687683, 0.31943116,
		0.8242663, 0.19716975, 1.6669313, 2.9358084, -0.68442523, 0.9938513, -0.499219, 0}
	w := make([]float32, 32)
	for _, i := range []int{1, 3, 6, 8, 9, 10, 11, 17, 20, 22, 23, 29} {
		w[i] = 3e37
	}
	var fl fitLanes
	f := searchQ4KPlain.fitWith(x, w, &fl)
	require.True(t, math.IsInf(float64(f.cw), 1), "Σw = %v, want +Inf", f.cw)
	l, m := pickAffine(x, w, f, 65504, 65504, 63, searchQ4KPlain.n, searchQ4KPlain.picks)
	assert.Equal(t, [2]float32{1, 1}, [2]float32{l, m})
}
