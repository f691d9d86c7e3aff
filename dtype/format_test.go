package dtype

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func p2(e int) float64 { return math.Ldexp(1, e) }

// TestConstantsG1 reproduces TensorCast's derived constants, computed by running
// its NumberSpec (golden set G1, docs/TENSORCAST.md §5). The int rows are TensorCast's intK, which is our fixed point q1.(K-2) and
// the grammar float e1m(K-2)b1fnuz with the same value set.
func TestConstantsG1(t *testing.T) {
	cases := []struct {
		name             string
		bits, emax, emin int
		max, midmax      float64
		minNorm, minSub  float64
	}{
		{"e4m3fn", 8, 8, -6, 448, 464, p2(-6), p2(-9)},
		{"e4m3fnuz", 8, 8, -6, 480, 496, p2(-6), p2(-9)},
		{"float8_e4m3fnuz", 8, 7, -7, 240, 248, p2(-7), p2(-10)},
		{"e4m3", 8, 7, -6, 240, 248, p2(-6), p2(-9)},
		{"e5m2", 8, 15, -14, 57344, 61440, p2(-14), p2(-16)},
		{"e5m2fnuz", 8, 16, -14, 114688, 122880, p2(-14), p2(-16)},
		{"float8_e5m2fnuz", 8, 15, -15, 57344, 61440, p2(-15), p2(-17)},
		{"e3m2fnuz", 6, 4, -2, 28, 30, 0.25, 0.0625},
		{"e2m3fnuz", 6, 2, 0, 7.5, 7.75, 1, 0.125},
		{"e2m2fnuz", 5, 2, 0, 7, 7.5, 1, 0.25},
		{"e2m1fnuz", 4, 2, 0, 6, 7, 1, 0.5},
		{"e2m1ieee", 4, 1, 0, 3, 3.5, 1, 0.5},
		{"e2m0fnuz", 3, 2, 0, 4, 6, 1, 1},
		{"e3m3fnuz", 7, 4, -2, 30, 31, 0.25, 0.03125},
		{"e5m3", 9, 15, -14, 61440, 63488, p2(-14), p2(-17)},
		{"binary8p4", 8, 7, -7, 224, 232, p2(-7), p2(-10)},
		{"binary8p3", 8, 15, -15, 49152, 53248, p2(-15), p2(-17)},
		{"e1m6b1fnuz", 8, 0, 0, 1.984375, 1.9921875, 1, 1.0 / 64},
		{"q1.6", 8, 0, 0, 1.984375, 1.9921875, 1, 1.0 / 64},
		{"e1m2b1fnuz", 4, 0, 0, 1.75, 1.875, 1, 0.25},
		{"q1.2", 4, 0, 0, 1.75, 1.875, 1, 0.25},
		{"e1m1b1fnuz", 3, 0, 0, 1.5, 1.75, 1, 0.5},
		{"q1.1", 3, 0, 0, 1.5, 1.75, 1, 0.5},
		{"bfloat16", 16, 127, -126, 255 * p2(120), 0, p2(-126), p2(-133)},
		{"float16", 16, 15, -14, 65504, 65520, p2(-14), p2(-24)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := MustParse(c.name)
			assert.Equal(t, c.bits, f.Bits(), "bits")
			assert.Equal(t, c.emax, f.Emax(), "emax")
			assert.Equal(t, c.emin, f.Emin(), "emin")
			assert.Equal(t, c.max, float64(f.MaxFinite()), "max finite")
			if c.midmax != 0 {
				assert.Equal(t, c.midmax, f.Midmax(), "midmax")
			}
			assert.Equal(t, c.minNorm, float64(f.MinNormal()), "min normal")
			assert.Equal(t, c.minSub, float64(f.MinSubnormal()), "min subnormal")
		})
	}
	assert.Equal(t, float32(255), MustParse("uint8").MaxFinite())
	assert.Equal(t, float32(15), MustParse("uint4").MaxFinite())
	assert.Equal(t, float32(0.125), MustParse("e4m3fn").Eps())
	assert.Equal(t, float32(1.0/64), MustParse("q1.6").Eps())
}

// TestFormatTable reproduces docs/NUMERICS.md §1: max normal and its code, min normal,
// max subnormal, min subnormal, Inf, NaN and −0 of every element format.
func TestFormatTable(t *testing.T) {
	cases := []struct {
		name                    string
		bits                    int
		max                     float64
		maxCode                 uint32
		minNorm, maxSub, minSub float64
		inf                     bool
		nanCount                int
		negZero                 bool
	}{
		{"e4m3fn", 8, 448, 0x7e, p2(-6), 0.875 * p2(-6), p2(-9), false, 2, true},
		{"e5m2", 8, 57344, 0x7b, p2(-14), 0.75 * p2(-14), p2(-16), true, 6, true},
		{"float8_e4m3fnuz", 8, 240, 0x7f, p2(-7), 0.875 * p2(-7), p2(-10), false, 1, false},
		{"float8_e5m2fnuz", 8, 57344, 0x7f, p2(-15), 0.75 * p2(-15), p2(-17), false, 1, false},
		{"float8_e4m3", 8, 240, 0x77, p2(-6), 0.875 * p2(-6), p2(-9), true, 14, true},
		{"float8_e3m4", 8, 15.5, 0x6f, p2(-2), 15 * p2(-6), p2(-6), true, 30, true},
		{"float8_e4m3b11fnuz", 8, 30, 0x7f, p2(-10), 0.875 * p2(-10), p2(-13), false, 1, false},
		{"e3m2", 6, 28, 0x1f, 0.25, 0.1875, 0.0625, false, 0, true},
		{"e2m3", 6, 7.5, 0x1f, 1.0, 0.875, 0.125, false, 0, true},
		{"e2m1", 4, 6, 0x7, 1.0, 0.5, 0.5, false, 0, true},
		{"float16", 16, 65504, 0x7bff, p2(-14), 1023 * p2(-24), p2(-24), true, 2046, true},
		{"bfloat16", 16, 255 * p2(120), 0x7f7f, p2(-126), 127 * p2(-133), p2(-133), true, 254, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := MustParse(c.name)
			assert.Equal(t, c.bits, f.Bits())
			assert.Equal(t, c.max, float64(f.MaxFinite()))
			assert.Equal(t, c.maxCode, f.MaxCode())
			assert.Equal(t, c.minNorm, float64(f.MinNormal()))
			maxSubCode := uint32(1)<<f.ManBits() - 1
			assert.Equal(t, c.maxSub, float64(f.Decode(maxSubCode)), "max subnormal")
			assert.Equal(t, c.minSub, float64(f.MinSubnormal()))
			assert.Equal(t, c.inf, f.HasInf())
			assert.Equal(t, c.nanCount, f.NaNCount())
			assert.Equal(t, c.negZero, f.HasNegZero())
		})
	}
	// E2M1 magnitudes for codes 0..7, negatives at 8..15, code 8 is −0.
	fp4 := MustParse("e2m1")
	for c, v := range []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6} {
		assert.Equal(t, v, fp4.Decode(uint32(c)))
		assert.Equal(t, -v, fp4.Decode(uint32(c+8)))
	}
	assert.True(t, math.Signbit(float64(fp4.Decode(8))))
	// E8M0: 2^(code−127), code 0 is 2^−127, 0xFF NaN.
	e8 := MustParse("e8m0")
	assert.Equal(t, float32(1), e8.Decode(127))
	assert.Equal(t, float32(p2(127)), e8.Decode(254))
	assert.Equal(t, 1, e8.NaNCount())
	// UE4M3: e4m3fn codes for positive values, 2^−9..448, sign bit ignored.
	ue := MustParse("ue4m3")
	assert.Equal(t, float32(448), ue.MaxFinite())
	assert.Equal(t, float32(p2(-9)), ue.MinSubnormal())
	assert.Equal(t, ue.Decode(0x38), ue.Decode(0xb8))
	assert.Equal(t, 128, ue.NumCodes())
}

// TestNumberLineG2 reproduces the positive halves of TensorCast's number lines
// (golden set G2, docs/TENSORCAST.md §5).
func TestNumberLineG2(t *testing.T) {
	positive := func(name string) []float32 {
		var out []float32
		for _, p := range MustParse(name).NumberLine() {
			if p.Value > 0 || (p.Value == 0 && !math.Signbit(float64(p.Value))) {
				out = append(out, p.Value)
			}
		}
		return out
	}
	assert.Equal(t, []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}, positive("e2m1fnuz"))
	assert.Equal(t, []float32{0, .25, .5, .75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6, 7}, positive("e2m2fnuz"))
	assert.Equal(t, []float32{0, .0625, .125, .1875, .25, .3125, .375, .4375, .5, .625, .75, .875, 1, 1.25, 1.5, 1.75,
		2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28}, positive("e3m2fnuz"))
	assert.Equal(t, []float32{0, .25, .5, .75, 1, 1.25, 1.5, 1.75}, positive("e1m2b1fnuz"))
	e2m3 := positive("e2m3fnuz")
	require.Len(t, e2m3, 32)
	for i, v := range e2m3 {
		switch {
		case i < 16:
			assert.Equal(t, float32(i)*0.125, v)
		case i < 24:
			assert.Equal(t, 2+float32(i-16)*0.25, v)
		default:
			assert.Equal(t, 4+float32(i-24)*0.5, v)
		}
	}
	e4m3 := positive("e4m3fn")
	assert.Equal(t, []float32{0, float32(p2(-9))}, e4m3[:2])
	assert.Equal(t, []float32{288, 320, 352, 384, 416, 448}, e4m3[len(e4m3)-6:])
	// The whole line is sorted, holds −0 before +0 and has no NaN.
	line := MustParse("e2m1").NumberLine()
	require.Len(t, line, 16)
	assert.Equal(t, float32(-6), line[0].Value)
	assert.Equal(t, uint32(0xf), line[0].Code)
	assert.Equal(t, uint32(0x8), line[7].Code)
	assert.Equal(t, uint32(0x0), line[8].Code)
	assert.Len(t, MustParse("float16").NumberLine(), 65536-2046-2)
	assert.Nil(t, MustParse("float32").NumberLine(), "no line above 16 bits")
}

// TestUnscaledCastG3 reproduces TensorCast's golden set G3 (docs/TENSORCAST.md §5):
// unscaled casts with RNE.
func TestUnscaledCastG3(t *testing.T) {
	in := []float32{0.1, 0.25, 0.3, 0.75, 1.25, 2.5, 5.0, 7.0, 100.0, -0.2, 0.0625, 0.05}
	cols := map[string][]float64{
		"e2m1fnuz":    {0, 0, 0.5, 1, 1, 2, 4, 6, 6, 0, 0, 0},
		"e2m3fnuz":    {0.125, 0.25, 0.25, 0.75, 1.25, 2.5, 5, 7, 7.5, -0.25, 0, 0},
		"e3m2fnuz":    {0.125, 0.25, 0.3125, 0.75, 1.25, 2.5, 5, 7, 28, -0.1875, 0.0625, 0.0625},
		"e4m3fn":      {0.1015625, 0.25, 0.3125, 0.75, 1.25, 2.5, 5, 7, 96, -0.203125, 0.0625, 0.05078125},
		"e4m3b8fnuz":  {0.1015625, 0.25, 0.3125, 0.75, 1.25, 2.5, 5, 7, 96, -0.203125, 0.0625, 0.05078125},
		"e5m2":        {0.09375, 0.25, 0.3125, 0.75, 1.25, 2.5, 5, 7, 96, -0.1875, 0.0625, 0.046875},
		"bfloat16":    {0.10009765625, 0.25, 0.30078125, 0.75, 1.25, 2.5, 5, 7, 100, -0.2001953125, 0.0625, 0.050048828125},
		"float16":     {0.0999755859375, 0.25, 0.300048828125, 0.75, 1.25, 2.5, 5, 7, 100, -0.199951171875, 0.0625, 0.04998779296875},
		"float4_e2m1": {0, 0, 0.5, 1, 1, 2, 4, 6, 6, 0, 0, 0},
	}
	for name, want := range cols {
		f, err := Parse(name)
		if name == "float4_e2m1" {
			require.Error(t, err) // not a name; the OCP type is float4_e2m1fn
			f = MustParse("float4_e2m1fn")
		}
		for i, x := range in {
			assert.Equal(t, want[i], float64(f.Decode(f.Encode(x))), "%s(%g)", name, x)
		}
	}
	// G3 prints −0 for e2m1fnuz(−0.2): TensorCast computes in float where −0 exists;
	// the FNUZ code space has no −0, so the code is 0. The OCP type keeps −0.
	assert.True(t, math.Signbit(float64(MustParse("e2m1").Decode(MustParse("e2m1").Encode(-0.2)))))
}

// TestTiesG4 reproduces TensorCast's golden set G4 (docs/TENSORCAST.md §5): tie
// handling on unscaled e2m1.
func TestTiesG4(t *testing.T) {
	in := []float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.25, -0.75, -2.5, -5.0}
	want := map[Rounding][]float32{
		RoundEven: {0, 1, 1, 2, 2, 4, 4, 0, -1, -2, -4},
		RoundAway: {0.5, 1, 1.5, 2, 3, 4, 6, -0.5, -1, -3, -6},
		RoundZero: {0, 0.5, 1, 1.5, 2, 3, 4, 0, -0.5, -2, -4},
	}
	for _, name := range []string{"e2m1fnuz", "e2m1"} {
		f := MustParse(name)
		for mode, w := range want {
			for i, x := range in {
				assert.Equal(t, w[i], f.Decode(f.EncodeWith(x, Options{Rounding: mode})), "%s mode %d (%g)", name, mode, x)
			}
		}
	}
}

func TestParseNames(t *testing.T) {
	cases := map[string]string{
		"e4m3fn":              "float8_e4m3fn",
		"FP8":                 "float8_e4m3fn",
		"torch.float8_e4m3fn": "float8_e4m3fn",
		"e5m2":                "float8_e5m2",
		"e5m2ieee":            "float8_e5m2",
		"e3m2":                "float6_e3m2fn",
		"e2m3finite":          "float6_e2m3fn",
		"e2m1":                "float4_e2m1fn",
		"fp4":                 "float4_e2m1fn",
		"e8m0":                "float8_e8m0fnu",
		"e8m0b127":            "float8_e8m0fnu",
		"e4m3b8fnuz":          "float8_e4m3fnuz",
		"e5m2b16fnuz":         "float8_e5m2fnuz",
		"e4m3b8inuz":          "binary8p4",
		"e7m0b63inuz":         "binary8p1",
		"bf16":                "bfloat16",
		"e8m7":                "bfloat16",
		"half":                "float16",
		"float32":             "float32",
		"e8m23":               "float32",
		"float12":             "e5m6",
		"bfloat12":            "e8m3",
		"float24":             "e8m15",
		"e4m3fnuz":            "e4m3fnuz",
		"e2m1fnuz":            "e2m1fnuz",
		"e2m1ieee":            "e2m1ieee",
		"e3m3":                "e3m3",
		"e3m3finite":          "e3m3",
		"e4m3finite":          "e4m3finite",
		"e5m0":                "e5m0",
		"e5m0b20":             "e5m0b20",
		"e4m0fn":              "e4m0fn",
		"int8":                "int8",
		"torch.int8":          "int8",
		"uint4":               "uint4",
		"q1.6":                "q1.6",
		"e5m3b12":             "e5m3b12",
		"e1m6b1fnuz":          "e1m6b1fnuz",
	}
	for in, want := range cases {
		f, err := Parse(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, f.Name(), in)
		again, err := Parse(f.Name())
		require.NoError(t, err)
		assert.Same(t, f, again, "canonical name %q parses to the same format", f.Name())
	}
	assert.Contains(t, MustParse("e4m3fnuz").Note(), "bias")
	assert.Contains(t, MustParse("e2m1fnuz").Note(), "NaN")
	assert.Contains(t, MustParse("e4m3").Note(), "448")
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, reason, closest string
	}{
		{"e4m4fm", "unknown", "e4m3fn"},
		{"bfloat17x", "unknown", ""},
		{"flaot16", "unknown", "float16"},
		{"e9m2", "exponent bits 9", ""},
		{"e4m24", "mantissa bits 24", ""},
		{"e2m1b200", "below float32", ""},
		{"e8m7b1", "beyond float32", ""},
		{"int1", "2..16", ""},
		{"uint17", "2..16", ""},
		{"q8.8", "2..16", ""},
		{"float8", "9..32", "float16"},
		{"e1m0fn", "no positive finite value", ""},
		{"e1m0", "2..8 exponent bits", ""},
		{"", "unknown", ""},
		{"mxfp4", "unknown", ""},
	}
	for _, c := range cases {
		_, err := Parse(c.name)
		require.Error(t, err, c.name)
		var pe *ParseError
		require.True(t, errors.As(err, &pe))
		assert.Contains(t, err.Error(), c.reason, c.name)
		assert.Contains(t, err.Error(), "\""+c.name+"\"")
		if c.closest != "" {
			assert.Contains(t, pe.Closest, c.closest, c.name)
		}
	}
}
