package tcast

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/scale"
)

// castBoth casts x to the named datatype in the virtual and actual forms with
// opts (Form ignored) and returns the virtual values and the actual tensor.
func castBoth(t *testing.T, name string, x []float32, shape []int, opts Options) ([]float32, *Tensor) {
	t.Helper()
	dt, err := Lookup(name)
	require.NoError(t, err)
	opts.Form = Virtual
	v, err := Cast(x, shape, dt, &opts)
	require.NoError(t, err)
	opts.Form = Actual
	a, err := Cast(x, shape, dt, &opts)
	require.NoError(t, err)
	return v.Values, a
}

func pad32(xs ...float32) []float32 {
	out := make([]float32, 32)
	copy(out, xs)
	return out
}

// assertBits compares float32 slices bit for bit (so −0 ≠ +0), NaN matching any NaN.
func assertBits(t *testing.T, want, got []float32, msg ...any) {
	t.Helper()
	require.Len(t, got, len(want), msg...)
	for i := range want {
		if want[i] != want[i] {
			assert.True(t, got[i] != got[i], "element %d: want NaN, got %v %v", i, got[i], msg)
			continue
		}
		assert.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "element %d: want %v, got %v %v", i, want[i], got[i], msg)
	}
}

func neg0() float32 { return float32(math.Copysign(0, -1)) }

// G5: one MXFP4 block under three element rounding modes (TensorCast's golden
// values, docs/TENSORCAST.md §5).
func TestGoldenG5(t *testing.T) {
	in := []float32{0.1, -0.2, 0.3, 0.45, 0.5, -0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, -3.5, 4.0, 5.0,
		5.5, 6.0, neg0(), 0.0, 0.26, 0.24, 0.74, 0.76, 2.9, 3.1, 4.9, 5.1, -6.5, 0.01, 0.125, -0.125}
	n := neg0()
	want := map[dtype.Rounding][]float32{
		dtype.RoundEven: {0, n, 0.5, 0.5, 0.5, -1, 1, 1, 1.5, 2, 2, 2, 3, -4, 4, 4,
			6, 6, n, 0, 0.5, 0, 0.5, 1, 3, 3, 4, 6, -6, 0, 0, n},
		dtype.RoundAway: {0, n, 0.5, 0.5, 0.5, -1, 1, 1.5, 1.5, 2, 2, 3, 3, -4, 4, 6,
			6, 6, n, 0, 0.5, 0, 0.5, 1, 3, 3, 4, 6, -6, 0, 0, n},
		dtype.RoundZero: {0, n, 0.5, 0.5, 0.5, -0.5, 1, 1, 1.5, 1.5, 2, 2, 3, -3, 4, 4,
			6, 6, n, 0, 0.5, 0, 0.5, 1, 3, 3, 4, 6, -6, 0, 0, n},
	}
	for mode, w := range want {
		for _, sm := range []scale.Mode{scale.Floor, scale.Midmax} {
			opts := DefaultOptions()
			opts.Rounding, opts.Mode = mode, sm
			v, a := castBoth(t, "mxfp4e2", in, []int{32}, opts)
			assert.Equal(t, []byte{127}, a.Scale.Bytes, "rounding %v mode %v", mode, sm)
			assertBits(t, w, v, mode, sm)
		}
	}
}

// G6: the scale-selection modes on fp4 and fp8 blocks; cells are the scale byte
// and the first element's value.
func TestGoldenG6(t *testing.T) {
	modes := []scale.Mode{scale.Floor, scale.Ceil, scale.Midmax, scale.Option3, scale.TopBinade}
	type cell struct {
		s uint8
		v float32
	}
	tests := []struct {
		dt   string
		v    float32
		want []cell
	}{
		{"mxfp4", 4.0, []cell{{127, 4}, {127, 4}, {127, 4}, {127, 4}, {127, 4}}},
		{"mxfp4", 5.0, []cell{{127, 4}, {128, 4}, {127, 4}, {127, 4}, {127, 4}}},
		{"mxfp4", 6.0, []cell{{127, 6}, {128, 6}, {127, 6}, {127, 6}, {127, 6}}},
		{"mxfp4", 7.0, []cell{{127, 6}, {128, 8}, {127, 6}, {128, 8}, {128, 8}}},
		{"mxfp4", 7.5, []cell{{127, 6}, {128, 8}, {128, 8}, {128, 8}, {128, 8}}},
		{"mxfp8e4", 450, []cell{{127, 448}, {128, 448}, {127, 448}, {127, 448}, {128, 448}}},
		{"mxfp8e4", 470, []cell{{127, 448}, {128, 480}, {128, 480}, {127, 448}, {128, 480}}},
		{"mxfp8e4", 500, []cell{{127, 448}, {128, 512}, {128, 512}, {128, 512}, {128, 512}}},
	}
	for _, tc := range tests {
		x := pad32(tc.v, 1.0, -2.0, 0.3)
		if tc.dt == "mxfp8e4" {
			x = pad32(tc.v, 1.0, 17.5)
		}
		for i, m := range modes {
			opts := DefaultOptions()
			opts.Mode = m
			v, a := castBoth(t, tc.dt, x, []int{32}, opts)
			assert.Equal(t, tc.want[i].s, a.Scale.Bytes[0], "%s v=%v %v scale", tc.dt, tc.v, m)
			assert.Equal(t, tc.want[i].v, v[0], "%s v=%v %v value", tc.dt, tc.v, m)
			if tc.dt == "mxfp8e4" {
				assert.Equal(t, float32(18), v[2], "17.5 → 18 in every mode")
			}
			if tc.dt == "mxfp4" && tc.v == 7.5 && a.Scale.Bytes[0] == 128 {
				assert.Equal(t, []float32{8, 1, -2, 0}, v[:4])
			}
		}
	}
}

// G7: other MX and BFP blocks (RNE, floor).
func TestGoldenG7(t *testing.T) {
	fp := pad32(1.1, 2.2, 3.3, 4.4, 5.5, 6.6, 7.7, 0.05)
	ints := pad32(1.0, 0.5, 0.333, -0.7, 0.01, 1.99, 0.0078125, -1.5)
	tests := []struct {
		dt    string
		x     []float32
		scale uint8
		want  []float32
	}{
		{"mxfp6e2", fp, 127, []float32{1.125, 2.25, 3.25, 4.5, 5.5, 6.5, 7.5, 0}},
		{"mxfp6e3", fp, 125, []float32{1, 2, 3.5, 4, 6, 7, 7, 0.046875}},
		{"mxfp8e5", fp, 114, []float32{1, 2, 3.5, 4, 6, 7, 7, 0.046875}},
		{"mxint8", ints, 127, []float32{1, 0.5, 0.328125, -0.703125, 0.015625, 1.984375, 0, -1.5}},
		{"mxint4", ints, 127, []float32{1, 0.5, 0.25, -0.75, 0, 1.75, 0, -1.5}},
		{"bfp16", ints[:8], 127, []float32{1, 0.5, 0.328125, -0.703125, 0.015625, 1.984375, 0, -1.5}},
	}
	for _, tc := range tests {
		v, a := castBoth(t, tc.dt, tc.x, []int{len(tc.x)}, DefaultOptions())
		assert.Equal(t, tc.scale, a.Scale.Bytes[0], tc.dt)
		assertBits(t, tc.want, v[:8], tc.dt)
	}
}

// G8: edge blocks of MXFP4 under our policy (docs/NUMERICS.md §4.2), which
// departs from TensorCast for zero and NaN/Inf blocks.
func TestGoldenG8(t *testing.T) {
	fill := func(x float32) []float32 {
		out := make([]float32, 32)
		for i := range out {
			out[i] = x
		}
		return out
	}
	v, a := castBoth(t, "mxfp4", fill(0), []int{32}, DefaultOptions())
	assert.Equal(t, uint8(0), a.Scale.Bytes[0], "all-zero block: scale code 0 (TensorCast: 102 or 255)")
	assertBits(t, fill(0), v)

	v, a = castBoth(t, "mxfp4", fill(1e-30), []int{32}, DefaultOptions())
	assert.Equal(t, uint8(25), a.Scale.Bytes[0])
	assertBits(t, fill(float32(math.Ldexp(6, -102))), v)

	v, a = castBoth(t, "mxfp4", fill(3e38), []int{32}, DefaultOptions())
	assert.Equal(t, uint8(252), a.Scale.Bytes[0])
	assertBits(t, fill(float32(math.Ldexp(6, 125))), v)

	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	x := fill(0.5)
	x[0], x[1], x[2], x[3] = nan, 1, 2, inf
	v, a = castBoth(t, "mxfp4", x, []int{32}, DefaultOptions())
	assert.Equal(t, uint8(0xff), a.Scale.Bytes[0], "a NaN or Inf makes the scale NaN (TensorCast: 126)")
	assertBits(t, fill(nan), v)
}

// G9: float, int and uint scaled datatypes on x = [[0.5, −1, 2, 0.25], [3, 0.1, −0.2, 0]].
func TestGoldenG9(t *testing.T) {
	x := []float32{0.5, -1, 2, 0.25, 3, 0.1, -0.2, 0}
	tests := []struct {
		dt     string
		scales []float32
		zeros  []float32
		want   []float32
	}{
		{"int8_f", []float32{0.02362060546875}, nil,
			[]float32{0.49603271484375, -0.9920654296875, 2.00775146484375, 0.25982666015625, 2.99981689453125, 0.094482421875, -0.18896484375, 0}},
		{"int8_e", []float32{2}, nil, []float32{0.5, -1, 2, 0.25, 3, 0.09375, -0.1875, 0}},
		{"int8_fc", []float32{0.0157470703125, 0.02362060546875}, nil,
			[]float32{0.50390625, -1.0078125, 1.9998779296875, 0.251953125, 2.99981689453125, 0.094482421875, -0.18896484375, 0}},
		{"uint8_ff", []float32{0.01568603515625}, []float32{1},
			[]float32{0.505859375, -1, 1.99603271484375, 0.2548828125, 2.99993896484375, 0.0980224609375, -0.20001220703125, 0.00390625}},
		{"uint8_fi", []float32{0.01568603515625}, []float32{64},
			[]float32{0.501953125, -1.00390625, 2.0078125, 0.2509765625, 2.99603271484375, 0.0941162109375, -0.20391845703125, 0}},
		{"uint4_bfloat16_int8_t4", []float32{0.2001953125, 0.212890625}, []float32{5, 1},
			[]float32{0.400390625, -1.0009765625, 2.001953125, 0.2001953125, 2.98046875, 0, -0.212890625, 0}},
		{"uint4_float16_float16_t4", []float32{0.199951171875, 0.21337890625}, []float32{1, 0.199951171875},
			[]float32{0.599609375, -1, 1.999267578125, 0.19970703125, 3.000732421875, 0.013427734375, -0.199951171875, 0.013427734375}},
		{"fp8_F", []float32{0.0066964286}, nil,
			[]float32{0.48214287, -0.96428573, 1.9285715, 0.24107143, 3.0, 0.10044643, -0.20089287, 0}},
		{"e2m1_e5m3_t4", []float32{0.34375, 0.5}, nil, []float32{0.515625, -1.03125, 2.0625, 0.171875, 3, 0, -0.25, 0}},
		{"fp8_e", []float32{1.0 / 128}, nil, []float32{0.5, -1, 2, 0.25, 3, 0.1015625, -0.203125, 0}},
	}
	for _, tc := range tests {
		v, a := castBoth(t, tc.dt, x, []int{2, 4}, DefaultOptions())
		assert.Equal(t, tc.want, v, tc.dt)
		codes, err := a.Scale.Codes()
		require.NoError(t, err)
		for i, s := range tc.scales {
			assert.Equal(t, s, a.Scale.Format.Decode(codes[i]), "%s scale %d", tc.dt, i)
		}
		if tc.zeros != nil {
			zc, err := a.Zero.Codes()
			require.NoError(t, err)
			for i, z := range tc.zeros {
				assert.Equal(t, z, a.Zero.Format.Decode(zc[i]), "%s zero %d", tc.dt, i)
			}
		}
	}
}

// G10: subtile exponent offsets.
func TestGoldenG10(t *testing.T) {
	x := []float32{4, 3, 0.4, 0.3, 0.2, 0.1, 0.05, 0.07, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01}
	tests := []struct {
		dt    string
		scale uint8
		offs  []uint8
		want  []float32
	}{
		{"mx6", 129, []uint8{0, 1, 1, 1, 1, 1, 1, 1}, []float32{4, 3, 0.5, 0.25, 0.25, 0, 0, 0, 0}},
		{"e2m1_e8m0_t16s2o2", 127, []uint8{0, 3, 3, 3, 3, 3, 3, 3}, []float32{4, 3, 0.375, 0.25, 0.1875, 0.125, 0.0625, 0.0625, 0}},
	}
	for _, tc := range tests {
		v, a := castBoth(t, tc.dt, x, []int{16}, DefaultOptions())
		assert.Equal(t, tc.scale, a.Scale.Bytes[0], tc.dt)
		assert.Equal(t, tc.offs, a.Meta.Bytes, tc.dt)
		assert.Equal(t, tc.want, v[:9], tc.dt)
	}
}

// G13: bits per value as TensorCast v2 reports them, and our per-subtile count.
func TestGoldenG13(t *testing.T) {
	want := map[string]float64{
		"mxfp8e4": 8.25, "mxfp6e2": 6.25, "mxfp4e2": 4.25, "mxint8": 8.25, "mxint4": 4.25, "bfp16": 9.0,
		"mx9": 8.5625, "mx6": 5.5625, "mx4": 3.5625, "e2m1_e32s8o1": 4.28125, "e2m1_e32s4o2": 4.3125,
		"uint4_ff32": 5.0, "uint4_fi32": 4.75, "int4_f32": 4.28125,
	}
	// Offsets counted per subtile: T/S subtiles of O bits instead of O bits per tile.
	ours := map[string]float64{
		"mx9": 9.0, "mx6": 6.0, "mx4": 4.0, "e2m1_e32s8o1": 4.375, "e2m1_e32s4o2": 4.75,
	}
	for name, w := range want {
		dt := MustLookup(name)
		assert.Equal(t, w, dt.TensorCastBitsPerValue(), name)
		if o, ok := ours[name]; ok {
			w = o
		}
		assert.Equal(t, w, dt.BitsPerValue(), name)
	}
	assert.Equal(t, 4.5, MustLookup("nvfp4").BitsPerValue())
}
