package dtype

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
)

var long = flag.Bool("long", false, "run the exhaustive 2^32 float32 sweeps")

var allModes = []Rounding{RoundEven, RoundAway, RoundZero, RoundStochastic}

// TestDecodeMatchesReference checks every code of every format of up to 16 bits
// against the textbook formula.
func TestDecodeMatchesReference(t *testing.T) {
	for _, f := range testFormats(t, 16) {
		for c := 0; c < f.NumCodes(); c++ {
			code := uint32(c)
			got := f.Decode(code)
			nan, inf := refSpecial(f, code)
			want := refDecode(f, code)
			ok := true
			switch {
			case nan:
				ok = got != got && f.IsNaN(code)
			case inf:
				ok = math.IsInf(float64(got), int(math.Copysign(1, want))) && !f.IsNaN(code)
			default:
				ok = float64(got) == want && math.Signbit(want) == math.Signbit(float64(got)) && !f.IsNaN(code)
			}
			if !ok {
				t.Fatalf("%s code %#x: Decode = %g, want %g (NaN %v, Inf %v)", f, code, got, want, nan, inf)
			}
		}
	}
}

// TestRoundTripEveryCode: Decode then Encode returns every non-NaN code, in every
// rounding mode (exact values are never rounded).
func TestRoundTripEveryCode(t *testing.T) {
	for _, f := range testFormats(t, 16) {
		for _, mode := range allModes {
			o := Options{Rounding: mode, Overflow: OverflowIEEE, FullRange: true, Seed: 7}
			for c := 0; c < f.NumCodes(); c++ {
				code := uint32(c)
				if f.IsNaN(code) {
					continue
				}
				got := f.EncodeWith(f.Decode(code), o)
				if got != code {
					t.Fatalf("%s mode %d: code %#x decodes to %g, encodes to %#x", f, mode, code, f.Decode(code), got)
				}
			}
		}
	}
}

// TestMidpoints encodes the midpoint of every pair of neighbouring positive values,
// and the float32 values just below and above it.
func TestMidpoints(t *testing.T) {
	for _, f := range testFormats(t, 16) {
		l := newRefLine(f)
		for i := 1; i < len(l.vals); i++ {
			lo, hi := l.vals[i-1], l.vals[i]
			mid := float32(lo + (hi-lo)/2)
			if float64(mid) != lo+(hi-lo)/2 {
				continue // not a float32 (cannot happen below 24 significant bits)
			}
			below := math.Nextafter32(mid, 0)
			above := math.Nextafter32(mid, float32(math.Inf(1)))
			for _, mode := range []Rounding{RoundEven, RoundAway, RoundZero} {
				o := Options{Rounding: mode}
				tie := l.codes[i-1]
				switch {
				case mode == RoundAway, mode == RoundEven && refTieUp(f, lo, l.codes[i-1]):
					tie = l.codes[i]
				}
				if f.Kind() == Exponent && mode == RoundEven {
					tie = l.codes[i] // the implicit leading 1 is the kept (odd) digit
				}
				if f.Kind() == Int && mode == RoundEven {
					tie = l.codes[i-1]
					if int64(lo*math.Pow(2, float64(f.ManBits())))%2 == 1 {
						tie = l.codes[i]
					}
				}
				if got := f.EncodeWith(mid, o); got != tie {
					t.Fatalf("%s mode %d: midpoint %g of %g and %g: got %#x, want %#x", f, mode, mid, lo, hi, got, tie)
				}
				if got := f.EncodeWith(below, o); float64(below) > lo && got != l.codes[i-1] {
					t.Fatalf("%s mode %d: %g just below the midpoint: got %#x, want %#x", f, mode, below, got, l.codes[i-1])
				}
				if got := f.EncodeWith(above, o); float64(above) < hi && got != l.codes[i] {
					t.Fatalf("%s mode %d: %g just above the midpoint: got %#x, want %#x", f, mode, above, got, l.codes[i])
				}
			}
			// Stochastic rounding of a midpoint lands on one of the two neighbours.
			if got := f.EncodeWith(mid, Options{Rounding: RoundStochastic, Seed: uint64(i)}); got != l.codes[i-1] && got != l.codes[i] {
				t.Fatalf("%s: stochastic rounding of %g gave %#x, not a neighbour", f, mid, got)
			}
		}
	}
}

// TestEncodeMatchesReference compares Encode with the reference search on random
// values of every format of up to 12 bits, in every deterministic mode and both
// overflow policies, including values far outside the range.
func TestEncodeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range testFormats(t, 12) {
		l := newRefLine(f)
		maxv := l.vals[len(l.vals)-1]
		for range 3000 {
			var x float32
			switch rng.IntN(4) {
			case 0: // near a representable value
				x = float32(l.vals[rng.IntN(len(l.vals))] * (1 + (rng.Float64()-0.5)*0.3))
			case 1: // uniform over the range and a bit beyond
				x = float32(rng.Float64() * maxv * 1.3)
			case 2: // log-uniform over a wide range
				x = float32(math.Pow(2, rng.Float64()*80-40))
			default: // any finite float32
				x = math.Float32frombits(rng.Uint32() & 0x7f7fffff)
			}
			if f.Signed() && rng.IntN(2) == 0 {
				x = -x
			}
			if math.IsInf(float64(x), 0) {
				continue
			}
			for _, mode := range []Rounding{RoundEven, RoundAway, RoundZero} {
				for _, ov := range []Overflow{Saturate, OverflowIEEE} {
					want := refEncode(f, l, float64(x), mode, ov == Saturate)
					got := f.EncodeWith(x, Options{Rounding: mode, Overflow: ov})
					if got != want {
						t.Fatalf("%s: Encode(%g) mode %d overflow %d = %#x, want %#x", f, x, mode, ov, got, want)
					}
				}
			}
		}
	}
}

func TestSpecialInputs(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	negNaN := math.Float32frombits(0xffc00000)
	cases := []struct {
		format          string
		x               float32
		overflow        Overflow
		want            uint32
		comment         string
		wantIsNaNResult bool
	}{
		// docs/NUMERICS.md §2 (saturation, NaN): Inf inputs and the saturation flag.
		{"e4m3fn", inf, Saturate, 0x7e, "+Inf saturates to 448", false},
		{"e4m3fn", inf, OverflowIEEE, 0x7f, "+Inf → NaN", true},
		{"e4m3fn", -inf, OverflowIEEE, 0xff, "-Inf → -NaN", true},
		{"e5m2", inf, Saturate, 0x7b, "+Inf → 57344", false},
		{"e5m2", inf, OverflowIEEE, 0x7c, "+Inf stays Inf", false},
		{"e5m2", -inf, OverflowIEEE, 0xfc, "-Inf stays -Inf", false},
		{"float8_e4m3fnuz", inf, Saturate, 0x7f, "FNUZ saturates to 240", false},
		{"float8_e4m3fnuz", inf, OverflowIEEE, 0x80, "FNUZ NaN", true},
		{"e4m3fn", 1000, OverflowIEEE, 0x7f, "finite overflow → NaN", true},
		{"e5m2", 1e6, OverflowIEEE, 0x7c, "finite overflow → Inf", false},
		{"e2m1", inf, OverflowIEEE, 0x7, "FP4 always saturates", false},
		{"e2m1", -100, OverflowIEEE, 0xf, "FP4 always saturates", false},
		{"e2m1", nan, Saturate, 0x8, "+NaN → -0 code (ml_dtypes rule)", false},
		{"e2m1", negNaN, Saturate, 0x0, "-NaN → +0 code (ml_dtypes rule)", false},
		{"e3m2", nan, Saturate, 0x20, "+NaN → -0 code", false},
		{"e4m3fn", nan, Saturate, 0x7f, "NaN", true},
		{"e4m3fn", negNaN, Saturate, 0xff, "-NaN keeps its sign", true},
		{"e5m2", nan, Saturate, 0x7e, "quiet NaN", true},
		{"float8_e4m3fnuz", negNaN, Saturate, 0x80, "single NaN", true},
		{"float8_e4m3fnuz", float32(math.Copysign(0, -1)), Saturate, 0x00, "FNUZ has no -0", false},
		{"e4m3fn", float32(math.Copysign(0, -1)), Saturate, 0x80, "-0 kept", false},
		{"e4m3fn", -1e-30, Saturate, 0x80, "underflow keeps the sign", false},
		{"float16", nan, Saturate, 0x7e00, "canonical quiet NaN", true},
		{"bfloat16", nan, Saturate, 0x7fc0, "canonical quiet NaN", true},
		{"bfloat16", inf, OverflowIEEE, 0x7f80, "Inf", false},
		{"bfloat16", inf, Saturate, 0x7f7f, "saturated Inf", false},
		{"float16", 65520, OverflowIEEE, 0x7c00, "65520 overflows", false},
		{"float16", 65519.996, OverflowIEEE, 0x7bff, "just below 65520", false},
		{"binary8p4", inf, OverflowIEEE, 0x7f, "P3109 +Inf", false},
		{"binary8p4", -inf, OverflowIEEE, 0xff, "P3109 -Inf", false},
		{"binary8p4", nan, Saturate, 0x80, "P3109 NaN", true},
		{"ue4m3", -3, Saturate, 0x00, "negative scale → 0", false},
		{"ue4m3", -3, OverflowIEEE, 0x7f, "negative scale → NaN without saturation", true},
		{"ue4m3", nan, Saturate, 0x7f, "NaN", true},
		{"int8", nan, Saturate, 0, "NaN → 0", false},
		{"int8", -inf, Saturate, 0x81, "-Inf → -127", false},
		{"uint4", -3, Saturate, 0, "clamped at 0", false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s", c.format, c.comment), func(t *testing.T) {
			f := MustParse(c.format)
			got := f.EncodeWith(c.x, Options{Overflow: c.overflow})
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.wantIsNaNResult, f.IsNaN(got))
		})
	}
}

// TestOverflowThresholds: the first overflowing value under RNE (docs/NUMERICS.md
// §2, overflow).
func TestOverflowThresholds(t *testing.T) {
	cases := []struct {
		format    string
		lastKept  float32 // the largest input that still encodes to max finite
		firstOver float32 // the smallest input that overflows
	}{
		{"e4m3fn", 464, math.Nextafter32(464, 1000)},
		{"e5m2", math.Nextafter32(61440, 0), 61440},
		{"float16", math.Nextafter32(65520, 0), 65520},
		{"float8_e4m3fnuz", math.Nextafter32(248, 0), 248},
		{"e4m3fnuz", math.Nextafter32(496, 0), 496},
	}
	for _, c := range cases {
		f := MustParse(c.format)
		o := Options{Overflow: OverflowIEEE}
		assert.Equal(t, f.MaxCode(), f.EncodeWith(c.lastKept, o), "%s keeps %g", c.format, c.lastKept)
		over := f.EncodeWith(c.firstOver, o)
		assert.True(t, f.IsNaN(over) || math.IsInf(float64(f.Decode(over)), 1), "%s overflows at %g", c.format, c.firstOver)
		assert.Equal(t, f.MaxCode(), f.Encode(c.firstOver), "%s saturates", c.format)
	}
	// Formats without Inf/NaN: the ties 30, 7.75 and 7 round up to the virtual next
	// value and saturate (docs/NUMERICS.md §2), just below them stays on the grid.
	for _, c := range []struct {
		format string
		tie    float32
		below  float32
	}{{"e3m2", 30, 28}, {"e2m3", 7.75, 7.5}, {"e2m1", 7, 6}} {
		f := MustParse(c.format)
		assert.Equal(t, c.below, f.Decode(f.Encode(c.tie)))
		assert.Equal(t, c.below, f.Decode(f.Encode(math.Nextafter32(c.tie, 0))))
	}
}

func TestStochasticRounding(t *testing.T) {
	f := MustParse("e2m1")
	src := make([]float32, 100000)
	for i := range src {
		src[i] = 2.5 // halfway between 2 and 3
	}
	a := make([]uint8, len(src))
	b := make([]uint8, len(src))
	EncodeSlice(f, a, src, Options{Rounding: RoundStochastic, Seed: 42})
	EncodeSlice(f, b, src, Options{Rounding: RoundStochastic, Seed: 42})
	require.Equal(t, a, b, "same seed, same codes")
	EncodeSlice(f, b, src, Options{Rounding: RoundStochastic, Seed: 43})
	require.NotEqual(t, a, b, "another seed, other codes")
	ups := 0
	for _, c := range a {
		require.Contains(t, []uint8{0x4, 0x5}, c)
		if c == 0x5 {
			ups++
		}
	}
	// P(up) = 0.5; 100000 draws put the count within ±1% with overwhelming probability.
	assert.InDelta(t, 0.5, float64(ups)/float64(len(a)), 0.01)

	// 2.25 lies a quarter of the way from 2 to 3: up with probability 1/4.
	for i := range src {
		src[i] = -2.25
	}
	EncodeSlice(f, a, src, Options{Rounding: RoundStochastic, Seed: 1})
	ups = 0
	for _, c := range a {
		if c == 0xd {
			ups++
		}
	}
	assert.InDelta(t, 0.25, float64(ups)/float64(len(a)), 0.01)
	// The scalar call is element 0 of a slice.
	assert.Equal(t, uint32(a[0]), f.EncodeWith(-2.25, Options{Rounding: RoundStochastic, Seed: 1}))
}

// TestFloat16MatchesX448 uses x448/float16 as the oracle: every float16 code, and
// random float32 bit patterns (NaNs and infinities included).
func TestFloat16MatchesX448(t *testing.T) {
	f := MustParse("float16")
	o := Options{Overflow: OverflowIEEE}
	for c := range 1 << 16 {
		want := float16.Frombits(uint16(c)).Float32()
		got := f.Decode(uint32(c))
		require.Equal(t, math.Float32bits(want), math.Float32bits(got), "decode %#04x", c)
		if !math.IsNaN(float64(want)) {
			require.Equal(t, uint32(c), f.EncodeWith(want, o), "encode %g", want)
		}
	}
	n := 10_000_000
	if testing.Short() {
		n = 1_000_000
	}
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]float32, n)
	for i := range src {
		src[i] = math.Float32frombits(rng.Uint32())
		if i%4 == 0 { // concentrate a quarter on float16's range, subnormals included
			src[i] = math.Float32frombits(rng.Uint32N(0x48000000) | rng.Uint32()&0x80000000)
		}
	}
	got := make([]uint16, n)
	EncodeSlice(f, got, src, o)
	for i, x := range src {
		if w := float16.Fromfloat32(x).Bits(); got[i] != w {
			t.Fatalf("Fromfloat32(%g = %#08x) = %#04x, got %#04x", x, math.Float32bits(x), w, got[i])
		}
	}
}

// bf16Ref is the bit formula of docs/NUMERICS.md §9 for non-NaN values.
func bf16Ref(u uint32) uint16 { return uint16((u + 0x7fff + (u>>16)&1) >> 16) }

func TestBFloat16(t *testing.T) {
	f := MustParse("bfloat16")
	o := Options{Overflow: OverflowIEEE}
	check := func(u uint32) {
		x := math.Float32frombits(u)
		got := f.EncodeWith(x, o)
		if x != x {
			require.True(t, f.IsNaN(got), "NaN %#x stays NaN", u)
			require.Equal(t, u>>31, got>>15, "NaN sign %#x", u)
			require.NotZero(t, got&0x40, "quiet")
			return
		}
		if want := uint32(bf16Ref(u)); got != want {
			t.Fatalf("bfloat16(%#08x) = %#04x, want %#04x", u, got, want)
		}
	}
	if *long {
		for u := uint64(0); u < 1<<32; u++ {
			check(uint32(u))
		}
		return
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2_000_000 {
		check(rng.Uint32())
	}
	for c := range 1 << 16 { // every bf16 value and its neighbours
		u := uint32(c) << 16
		check(u)
		check(u + 0x8000)
		check(u + 0x7fff)
		check(u + 0x8001)
	}
}

func TestE8M0(t *testing.T) {
	f := MustParse("e8m0")
	cases := []struct {
		x    float32
		mode Rounding
		want uint32
	}{
		{1, RoundEven, 127},
		{1.5, RoundEven, 128}, // ties go up (ml_dtypes)
		{1.5, RoundAway, 128},
		{1.5, RoundZero, 127},
		{1.4999999, RoundEven, 127},
		{3, RoundEven, 129},
		{0.75, RoundEven, 127},
		{float32(math.Ldexp(1, -127)), RoundEven, 0},
		{float32(math.Ldexp(1, -140)), RoundEven, 0}, // below the range: the smallest code
		{float32(math.Ldexp(1, 127)), RoundEven, 254},
		{math.MaxFloat32, RoundEven, 254}, // would round to 2^128: saturates
		{0, RoundEven, 0},
		{-1, RoundEven, 255},
		{float32(math.NaN()), RoundEven, 255},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, f.EncodeWith(c.x, Options{Rounding: c.mode}), "e8m0(%g) mode %d", c.x, c.mode)
	}
	assert.Equal(t, uint32(255), f.EncodeWith(math.MaxFloat32, Options{Overflow: OverflowIEEE}))
	assert.Equal(t, uint32(255), f.EncodeWith(0, Options{Overflow: OverflowIEEE}))
	assert.True(t, math.IsNaN(float64(f.Decode(255))))
	assert.Equal(t, float32(math.Ldexp(1, -127)), f.Decode(0))
}

func TestIntegers(t *testing.T) {
	i8 := MustParse("int8")
	assert.Equal(t, uint32(0x81), i8.Encode(-200), "symmetric: -127")
	assert.Equal(t, uint32(0x80), i8.EncodeWith(-200, Options{FullRange: true}), "full range: -128")
	assert.Equal(t, uint32(0x7f), i8.Encode(1e30))
	assert.Equal(t, uint32(2), i8.Encode(2.5))
	assert.Equal(t, uint32(3), i8.EncodeWith(2.5, Options{Rounding: RoundAway}))
	assert.Equal(t, uint32(0xfe), i8.Encode(-2.5))
	assert.Equal(t, float32(-128), i8.Decode(0x80))
	u4 := MustParse("uint4")
	assert.Equal(t, uint32(15), u4.Encode(99))
	assert.Equal(t, uint32(8), u4.Encode(8.5))
	// MXINT8 element (q1.6): the mxint8 column of TensorCast's golden set G7
	// (docs/TENSORCAST.md §5; block scale 1).
	q := MustParse("q1.6")
	in := []float32{1.0, 0.5, 0.333, -0.7, 0.01, 1.99, 0.0078125, -1.5}
	want := []float32{1, 0.5, 0.328125, -0.703125, 0.015625, 1.984375, 0, -1.5}
	for i, x := range in {
		assert.Equal(t, want[i], q.Decode(q.Encode(x)), "q1.6(%g)", x)
	}
	// mxint4 element (q1.2), G7's mxint4 column.
	q4 := MustParse("q1.2")
	want4 := []float32{1, 0.5, 0.25, -0.75, 0, 1.75, 0, -1.5}
	for i, x := range in {
		assert.Equal(t, want4[i], q4.Decode(q4.Encode(x)), "q1.2(%g)", x)
	}
	assert.Equal(t, uint32(0x80), q.EncodeWith(-1.9999, Options{FullRange: true}), "−2.0 with full range")
}
