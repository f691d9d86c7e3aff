package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// iqCodecs are the IQ grid types' formats with their block sizes.
var iqCodecs = []struct {
	name string
	f    *iqFormat
	bb   int
}{
	{"IQ2_XXS", &fmtIQ2XXS, iq2xxsBlockBytes}, {"IQ2_XS", &fmtIQ2XS, iq2xsBlockBytes},
	{"IQ2_S", &fmtIQ2S, iq2sBlockBytes}, {"IQ3_XXS", &fmtIQ3XXS, iq3xxsBlockBytes},
	{"IQ3_S", &fmtIQ3S, iq3sBlockBytes}, {"IQ1_S", &fmtIQ1S, iq1sBlockBytes},
	{"IQ1_M", &fmtIQ1M, iq1mBlockBytes},
}

// topPoints returns the points of g holding its top level.
func topPoints(g *iqGrid) []uint16 {
	var out []uint16
	for p := range g.codes {
		if slices.Contains(g.vals[p*g.width:(p+1)*g.width], g.lev[len(g.lev)-1]) {
			out = append(out, uint16(p))
		}
	}
	return out
}

// randomIQBlock returns a block of f with random points, signs and shifts,
// every scale code the largest and d = 2^-6. The first point of each
// sub-block holds the grid's top level: a sub-block of low levels alone is
// also the same levels' multiples at a scale no scale code gives, and so
// is quantized to other floats.
func randomIQBlock(rng *rand.Rand, f *iqFormat, bb int) []byte {
	r := iqRes{hd: float32ToFloat16(0x1p-6, false)}
	for b := range qkk / f.sub {
		r.l[b] = uint8(f.lmax)
	}
	top := topPoints(f.grid)
	for k := range qkk / f.grid.width {
		r.p[k] = uint16(rng.IntN(len(f.grid.codes)))
		if k*f.grid.width%f.sub == 0 {
			r.p[k] = top[rng.IntN(len(top))]
		}
	}
	for g := range qkk / 8 {
		switch f.signs {
		case 7:
			r.neg[g] = iqSigns[rng.IntN(128)]
		case 8:
			r.neg[g] = uint8(rng.IntN(256))
		}
	}
	dg := max(f.dgrp, 8)
	for g := 0; g < qkk; g += dg {
		neg := rng.IntN(2) == 1
		for k := g / 8; k < (g+dg)/8; k++ {
			r.dneg[k] = neg
		}
	}
	y := make([]byte, bb)
	f.pack(y, &r)
	return y
}

// TestIQExact checks that each IQ quantizer gives back the floats of a
// block exactly: random blocks, decoded by ggml's rules (TestGGMLDecode in
// package gguf checks those), quantize to blocks that decode to the same
// floats.
func TestIQExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range iqCodecs {
		codec, ok := LookupBlock(c.name)
		require.True(t, ok, c.name)
		var src []byte
		for range 4 {
			src = append(src, randomIQBlock(rng, c.f, c.bb)...)
		}
		x := make([]float32, 4*qkk)
		codec.Dequantize(x, src)
		got := make([]byte, len(src))
		codec.Quantize(got, x, nil, nil)
		y := make([]float32, len(x))
		codec.Dequantize(y, got)
		bad := 0
		for i := range x {
			if x[i] != y[i] {
				bad++
			}
		}
		assert.Zero(t, bad, "%s: %d of %d elements differ", c.name, bad, len(x))
	}
}

// TestIQView checks the view of each IQ type: scale·Values[code] is the
// decoder's float, bit for bit, and packing the view gives blocks that
// decode to the same floats; a view off the grid is refused.
func TestIQView(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, c := range iqCodecs {
		codec, _ := LookupBlock(c.name)
		v := codec.View
		require.NotNil(t, v, c.name)
		for range 8 {
			x := randomIQBlock(rng, c.f, c.bb)
			x[0], x[1] = byte(rng.IntN(256)), byte(rng.IntN(0x7b)) // any finite d
			want := make([]float32, qkk)
			codec.Dequantize(want, x)
			q, s := make([]int, qkk), make([]float32, qkk/v.Sub)
			v.Unpack(x, q, s)
			for i := range qkk {
				require.Equal(t, want[i], s[i/v.Sub]*v.Values[q[i]], "%s element %d", c.name, i)
			}
			y := make([]byte, c.bb)
			require.Empty(t, v.Pack(y, q, s), c.name)
			got := make([]float32, qkk)
			codec.Dequantize(got, y)
			require.Equal(t, want, got, c.name)
		}
		q, s := make([]int, qkk), make([]float32, qkk/v.Sub)
		v.Unpack(randomIQBlock(rng, c.f, c.bb), q, s)
		q[0] = len(v.Values)
		assert.NotEmpty(t, v.Pack(make([]byte, c.bb), q, s), c.name)
	}
}

// TestUnbiasedGain checks the gain of the IQ, Q2_K and Q3_K quantizers: in
// each super-block of Gaussian values, with and without an importance
// vector, the weighed projection of the reconstruction on the values is
// the values' weighed square, to the rounding of the float16 scales
// (2^-11), where the least error leaves it short (10-20 % at 1-2 bits).
func TestUnbiasedGain(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 16 * qkk
	x, imp := make([]float32, n), make([]float32, 2*qkk)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for i := range imp {
		imp[i] = float32(rng.ExpFloat64())
	}
	type codec struct {
		name  string
		bb    int
		quant func(dst []byte, src, imp, w []float32)
		deq   func(dst []float32, src []byte)
	}
	codecs := []codec{{"Q2_K", q2_KBlockBytes, quantizeQ2_K, dequantizeQ2_K},
		{"Q3_K", q3_KBlockBytes, quantizeQ3_K, dequantizeQ3_K}}
	for _, c := range iqCodecs {
		codecs = append(codecs, codec{c.name, c.bb, iqQuantizer(c.name, c.f, c.bb), c.f.deq})
	}
	for _, c := range codecs {
		for _, im := range [][]float32{nil, imp} {
			y, w, q := make([]byte, n/qkk*c.bb), make([]float32, n), make([]float32, n)
			c.quant(y, x, im, w)
			c.deq(q, y)
			for o := 0; o < n; o += qkk {
				var xx, xq float64
				for i := o; i < o+qkk; i++ {
					xx += float64(w[i]) * float64(x[i]) * float64(x[i])
					xq += float64(w[i]) * float64(x[i]) * float64(q[i])
				}
				assert.InDelta(t, 1, xq/xx, 0x1p-10, "%s importance=%v super-block %d", c.name, im != nil, o/qkk)
			}
		}
	}
}

// TestIQLevel checks the IQ3 grids' nearest level against a search of all
// eight: on a fine sweep, at every midpoint and the floats beside it, and
// far outside the levels.
func TestIQLevel(t *testing.T) {
	for _, g := range []*iqGrid{iq3xxsGrid, iq3sGrid} {
		// level's rounding is exact only for a spacing of a power of two.
		frac, _ := math.Frexp(float64(g.istep))
		require.Equal(t, 0.5, frac, "grid %v: 1/spacing %v", g.lev, g.istep)
		nearest := func(v float32) int {
			k := 0
			for i, l := range g.lev {
				if math.Abs(float64(v)-float64(l)) < math.Abs(float64(v)-float64(g.lev[k])) {
					k = i
				}
			}
			return k
		}
		ts := []float32{-5, 0, 1000}
		for _, m := range g.mid {
			ts = append(ts, m, math.Nextafter32(m, -1), math.Nextafter32(m, 100))
		}
		top := g.lev[len(g.lev)-1]
		for v := g.lev[0] - 4; v < top+4; v += 1.0 / 64 {
			ts = append(ts, v)
		}
		for _, v := range ts {
			require.Equal(t, nearest(v), g.level(v), "grid %v, t = %v", g.lev, v)
		}
		assert.Equal(t, 7, g.level(1e30))
		assert.Equal(t, 0, g.level(-1e30))
		assert.Equal(t, 7, g.level(float32(math.Inf(1))))
		assert.Equal(t, 0, g.level(float32(math.Inf(-1))))
		assert.Equal(t, 0, g.level(float32(math.NaN())))
	}
}
