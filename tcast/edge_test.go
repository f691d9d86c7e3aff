package tcast

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/scale"
)

func nextBelow(x float32) float32 { return math.Nextafter32(x, 0) }

// TestMXEdgeBlocks checks hand-derived blocks at every edge of docs/NUMERICS.md §4.2
// for MXFP8, MXFP6, MXFP4 and MXINT8: the scale byte, element codes where they
// matter, and the decoded values.
func TestMXEdgeBlocks(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	sub := float32(math.Ldexp(1.5, -127)) // 3·2^−128, a float32 subnormal
	tests := []struct {
		name  string
		dt    string
		x     []float32 // padded with zeros to 32
		scale uint8
		want  []float32 // leading decoded values
		codes []uint8   // leading element codes, when checked
	}{
		// amax just below a power of two keeps its binade (a float log2 would not).
		{"fp8 below 512", "mxfp8e4", []float32{nextBelow(512), 1}, 127, []float32{448, 1}, nil},
		{"fp6e2 below 8", "mxfp6e2", []float32{nextBelow(8), -1}, 127, []float32{7.5, -1}, nil},
		{"fp6e3 below 32", "mxfp6e3", []float32{nextBelow(32)}, 127, []float32{28}, nil},
		{"fp4 below 8", "mxfp4e2", []float32{nextBelow(8), 0.5}, 127, []float32{6, 0.5}, nil},
		{"int8 below 2", "mxint8", []float32{nextBelow(2), -1}, 127, []float32{127.0 / 64, -1}, []uint8{127, 0xC0}},
		// All-zero blocks: scale code 0, zeros kept with their signs.
		{"fp8 zeros", "mxfp8e4", []float32{neg0(), 0}, 0, []float32{neg0(), 0}, []uint8{0x80, 0}},
		{"fp4 zeros", "mxfp4e2", []float32{neg0(), 0}, 0, []float32{neg0(), 0}, []uint8{0x8, 0}},
		{"int8 zeros", "mxint8", []float32{neg0(), 0}, 0, []float32{0, 0}, []uint8{0, 0}},
		// NaN or Inf anywhere: NaN scale, element NaN codes (or 0), all NaN.
		{"fp8 nan", "mxfp8e4", []float32{1, nan}, 0xff, []float32{nan, nan}, []uint8{0x7f, 0x7f}},
		{"fp8 inf", "mxfp8e4", []float32{-inf, 1}, 0xff, []float32{nan, nan}, []uint8{0x7f, 0x7f}},
		{"fp6 inf", "mxfp6e2", []float32{2, inf}, 0xff, []float32{nan, nan}, []uint8{0, 0}},
		{"fp4 nan", "mxfp4e2", []float32{nan}, 0xff, []float32{nan, nan}, []uint8{0, 0}},
		{"int8 inf", "mxint8", []float32{inf}, 0xff, []float32{nan, nan}, []uint8{0, 0}},
		// float32 subnormals are quantized like any value: the scale clamps at
		// 2^−127 (code 0) and 1.5 is exact in every element format.
		{"fp8 subnormal", "mxfp8e4", []float32{sub, -sub}, 0, []float32{sub, -sub}, nil},
		{"fp4 subnormal", "mxfp4e2", []float32{sub}, 0, []float32{sub}, []uint8{0x3}},
		{"int8 subnormal", "mxint8", []float32{sub}, 0, []float32{sub}, []uint8{96}},
		{"fp8 tiny", "mxfp8e4", []float32{math.SmallestNonzeroFloat32}, 0, []float32{0}, nil},
		// −0 beside non-zero values keeps its code in FP elements.
		{"fp4 neg zero", "mxfp4e2", []float32{neg0(), 3}, 126, []float32{neg0(), 3}, []uint8{0x8, 0x7}},
		{"fp6 neg zero", "mxfp6e3", []float32{neg0(), 3}, 124, []float32{neg0(), 3}, []uint8{0x20, 0x1e}},
		// Saturation in the top binade under the floor rule.
		{"fp8 top binade", "mxfp8e4", []float32{500, 464, 463}, 127, []float32{448, 448, 448}, []uint8{0x7e, 0x7e, 0x7e}},
		{"fp6e2 top binade", "mxfp6e2", []float32{7.9}, 127, []float32{7.5}, nil},
		{"fp4 top binade", "mxfp4e2", []float32{7, -7.5}, 127, []float32{6, -6}, []uint8{0x7, 0xf}},
		{"int8 top binade", "mxint8", []float32{1.999, -1.999}, 127, []float32{127.0 / 64, -127.0 / 64}, []uint8{127, 0x81}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, a := castBoth(t, tc.dt, pad32(tc.x...), []int{32}, DefaultOptions())
			assert.Equal(t, tc.scale, a.Scale.Bytes[0], "scale byte")
			assertBits(t, tc.want, v[:len(tc.want)])
			if tc.codes != nil {
				assert.Equal(t, tc.codes, a.Data.Bytes[:len(tc.codes)], "element codes")
			}
		})
	}
}

// TestWorkedExampleAmax7 is docs/NUMERICS.md §4.3's MXFP4 block with amax 7 under
// every mode.
func TestWorkedExampleAmax7(t *testing.T) {
	want := map[scale.Mode]struct {
		x float32
		v float32
	}{
		scale.Floor: {1, 6}, scale.Ceil: {2, 8}, scale.Even: {2, 8}, scale.RCeil: {2, 8},
		scale.Midmax: {1, 6}, scale.Option3: {2, 8}, scale.TopBinade: {2, 8},
	}
	require.Len(t, want, len(scale.Modes()))
	for m, w := range want {
		opts := DefaultOptions()
		opts.Mode = m
		v, a := castBoth(t, "mxfp4", pad32(7, 1), []int{32}, opts)
		assert.Equal(t, w.x, dtype.MustParse("e8m0").Decode(uint32(a.Scale.Bytes[0])), "%v scale", m)
		assert.Equal(t, w.v, v[0], "%v value of 7", m)
	}
}

// TestWorkedExampleNVFP4 follows docs/NUMERICS.md §7 by hand: s_t = amax_t / 2688,
// s_b = e4m3(amax_b / (6·s_t)), x / (s_b·s_t) rounded in E2M1.
func TestWorkedExampleNVFP4(t *testing.T) {
	x := make([]float32, 64)
	// Block 0 holds the tensor amax 1344: s_t = 1344/2688 = 0.5, s_b = 1344/3 = 448.
	x[0], x[1], x[2] = 1344, 100, -700
	// Block 1: amax 3 → s_b = 3/3 = 1 (code 0x38); decode multiplier 0.5.
	x[16], x[17], x[18] = 3, 0.3, -1.1
	// Block 2: all zero → s_b = 1.0 (ModelOpt), elements 0.
	// Block 3: amax 1e−6 → s_b = e4m3(3.3e−7) rounds to 0 → codes 0.
	x[48] = 1e-6
	v, a := castBoth(t, "nvfp4", x, []int{64}, DefaultOptions())
	assert.Equal(t, []byte{0, 0, 0, 0x3f}, a.TensorScale.Bytes, "tensor scale 0.5 as float32")
	assert.Equal(t, []byte{0x7e, 0x38, 0x38, 0x00}, a.Scale.Bytes)
	// 1344/224 = 6 → 0x7; 100/224 = 0.446 → 0.5 (0x1); −700/224 = −3.125 → −3 (0xd).
	assert.Equal(t, []byte{0x7, 0x1, 0xd}, a.Data.Bytes[:3])
	assert.Equal(t, []float32{1344, 112, -672}, v[:3])
	// 3/0.5 = 6; 0.3/0.5 = 0.6 → 0.5; −1.1/0.5 = −2.2 → −2.
	assert.Equal(t, []float32{3, 0.25, -1}, v[16:19])
	assert.Equal(t, float32(0), v[32])
	assert.Equal(t, byte(0), a.Data.Bytes[48])
	assert.Equal(t, float32(0), v[48])
}

// TestWorkedExampleMXINT8 is docs/NUMERICS.md §5: code/64 elements, symmetric by
// default, −128 only with FullRange and only from (−2, −127.5/64].
func TestWorkedExampleMXINT8(t *testing.T) {
	x := pad32(-1.9921875, 1, 0.5/64, -1.5/64) // −127.5/64, a tie
	v, a := castBoth(t, "mxint8", x, []int{32}, DefaultOptions())
	assert.Equal(t, byte(127), a.Scale.Bytes[0])
	assert.Equal(t, []byte{0x81, 64, 0, 0xfe}, a.Data.Bytes[:4]) // −127, 64, 0 (tie to even), −2
	assert.Equal(t, []float32{-127.0 / 64, 1, 0, -2.0 / 64}, v[:4])
	opts := DefaultOptions()
	opts.FullRange = true
	v, a = castBoth(t, "mxint8", x, []int{32}, opts)
	assert.Equal(t, byte(0x80), a.Data.Bytes[0], "−127.5 ties to the even −128")
	assert.Equal(t, float32(-2), v[0])
}

// TestPackingBytes checks compressed layouts byte by byte against streams
// worked out by hand (and docs/NUMERICS.md §10's HIP pairs for FP4 and FP6).
func TestPackingBytes(t *testing.T) {
	tests := []struct {
		name string
		dt   string
		x    []float32
		want []byte
	}{
		// 2-bit int2 codes 1, 3, 0, 1, 3 → 01 11 00 01 | 11.
		{"2-bit", "int2_float32", []float32{1, -1, 0, 1, -1}, []byte{0x4d, 0x03}},
		// 3-bit int3 codes 3, 5, 1, 2: bits 011 101 001 010 from bit 0.
		{"3-bit", "int3_float32", []float32{3, -3, 1, 2}, []byte{0x6b, 0x04}},
		// 4-bit: (+1, −1) → A2 and (+6, −6) → F7.
		{"4-bit", "mxfp4", pad32(1, -1, 6, -6), append([]byte{0xa2, 0xf7}, make([]byte, 14)...)},
		// 5-bit int5 codes 15, 17, 1.
		{"5-bit", "int5_float32", []float32{15, -15, 1}, []byte{0x2f, 0x06}},
		// 6-bit: e2m3 (+7.5, −7.5) → DF 0F.
		{"6-bit", "mxfp6e2", pad32(7.5, -7.5), append([]byte{0xdf, 0x0f}, make([]byte, 22)...)},
		// 7-bit int7 codes 63, 65.
		{"7-bit", "int7_float32", []float32{63, -63}, []byte{0xbf, 0x20}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dt, err := Lookup(tc.dt)
			require.NoError(t, err)
			opts := DefaultOptions()
			opts.Form = Compressed
			c, err := Cast(tc.x, []int{len(tc.x)}, dt, &opts)
			require.NoError(t, err)
			assert.True(t, c.Data.Packed)
			assert.Equal(t, tc.want, c.Data.Bytes)
		})
	}
	// e3m2 (+28, −28) → DF 0F as well, and the mx6 offsets 0,1,1,1,1,1,1,1 pack
	// LSB first into 0xFE.
	opts := DefaultOptions()
	opts.Form = Compressed
	c, err := Cast(pad32(28, -28), []int{32}, MustLookup("mxfp6e3"), &opts)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xdf, 0x0f}, c.Data.Bytes[:2])
	x := []float32{4, 3, 0.4, 0.3, 0.2, 0.1, 0.05, 0.07, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01}
	c, err = Cast(x, []int{16}, MustLookup("mx6"), &opts)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xfe}, c.Meta.Bytes)
	// A mask packs 8 flags per byte, element 8k+i in bit i of byte k.
	opts.Keep = keepMask(t, []int{9}, []bool{true, false, true, true, false, false, false, false, true})
	c, err = Cast(make([]float32, 9), []int{9}, MustLookup("e4m3fn"), &opts)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x0d, 0x01}, c.Mask.Bytes())
	for _, p := range c.Parts() {
		if p.Name == "mask" {
			assert.Equal(t, []byte{0x0d, 0x01}, p.Bytes)
			assert.True(t, p.Packed)
		}
	}
}

// TestOffsetsAtTheBottomOfE8M0 covers subtile scales below 2^-127: the block
// scale is clamped to code 0 and a subtile offset lowers it further, which
// must not overflow the reciprocal (found in review).
func TestOffsetsAtTheBottomOfE8M0(t *testing.T) {
	x := make([]float32, 16)
	for i := range x {
		x[i] = 1e-38
	}
	x[2], x[3] = 1e-39, -1e-39
	v, a := castBoth(t, "mx9", x, []int{16}, DefaultOptions())
	assert.Equal(t, byte(0), a.Scale.Bytes[0])
	assert.Equal(t, uint8(1), a.Meta.Bytes[1], "the small subtile gets an offset")
	// 1e-39 / 2^-128 = 0.3402…, in q1.6: round(21.77) = 22 → 22/64 · 2^-128.
	assert.Equal(t, float32(math.Ldexp(22.0/64, -128)), v[2])
	assert.Equal(t, -float32(math.Ldexp(22.0/64, -128)), v[3])
}

// TestNVFP4NaNStaysInItsBlock checks that a NaN in one block leaves the tensor
// scale, and so every other block, as without it (found in review).
func TestNVFP4NaNStaysInItsBlock(t *testing.T) {
	x := make([]float32, 32)
	for i := range x {
		x[i] = 1e-4 * float32(i+1)
	}
	clean, _ := castBoth(t, "nvfp4", x, []int{32}, DefaultOptions())
	x[20] = float32(math.NaN())
	v, a := castBoth(t, "nvfp4", x, []int{32}, DefaultOptions())
	assertBits(t, clean[:16], v[:16], "block 0 unchanged")
	for _, e := range v[16:] {
		assert.True(t, e != e, "block 1 is NaN")
	}
	assert.Equal(t, byte(0x7f), a.Scale.Bytes[1])
}

// TestRankZeroShape checks that a 0-d input keeps its shape.
func TestRankZeroShape(t *testing.T) {
	for _, form := range []Form{Virtual, Actual, Compressed} {
		opts := DefaultOptions()
		opts.Form = form
		c, err := Cast([]float32{1.5}, []int{}, MustLookup("fp8e4_tensor"), &opts)
		require.NoError(t, err)
		assert.Equal(t, []int{}, c.Shape, form)
		v, err := Decompress(c)
		require.NoError(t, err)
		assert.Equal(t, []float32{1.5}, v)
	}
}

// keepMask returns the mask of the given shape holding keep.
func keepMask(t *testing.T, shape []int, keep []bool) *mask.Mask {
	t.Helper()
	m, err := mask.FromBools(shape, keep)
	require.NoError(t, err)
	return m
}
