package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-derived blocks for the scaled-datatype kernels. Expected codes come
// from the format tables (E2M1 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 are codes
// 0..7, the sign is bit 3; E4M3 1.0 is 0x38 and 2^−9 is 0x01) and the rules of
// docs/NUMERICS.md §2 and §4–§7; the tcast package checks the kernels against
// its block-by-block path on many more inputs.

// block pads xs with zeros to n values.
func block(n int, xs ...float32) []float32 {
	b := make([]float32, n)
	copy(b, xs)
	return b
}

func negZero() float32 { return float32(math.Copysign(0, -1)) }

func TestQuantizeMXFP4(t *testing.T) {
	nan, below8 := float32(math.NaN()), math.Nextafter32(8, 0)
	ties := []float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 7, negZero(), -0.25, 0.3, -2.9, 6, -4, 0.5, 1}
	// Ties go to the even code: 0.25→0, 0.75→1 (2), 1.25→1 (2), 1.75→2 (4),
	// 2.5→2 (4), 3.5→4 (6), 5→4 (6); 7 saturates to 6 (7); −0 and −0.25 give
	// −0 (8); 0.3→0.5 (1), −2.9→−3 (0xD), −4 (0xE).
	tieCodes := []byte{0x20, 0x42, 0x64, 0x76, 0x88, 0xD1, 0xE7, 0x21}
	scaled := make([]float32, len(ties))
	for i, x := range ties {
		scaled[i] = x * 0x1p-10
	}
	tests := []struct {
		name  string
		x     []float32
		scale uint8
		codes []byte // leading bytes; the rest are 0
	}{
		// amax 7: floor(log2 7) = 2 = emax, so the scale is 2^0 (code 127).
		{"ties", block(32, ties...), 127, tieCodes},
		{"ties scaled by 2^-10", block(32, scaled...), 117, tieCodes},
		// amax one ulp below 8 keeps scale 2^0 and saturates; 8 takes 2^1.
		{"below 8", block(32, below8, 1), 127, []byte{0x27}},
		{"8", block(32, 8, 1), 128, []byte{0x16}},
		// The largest float32: exponent 127, scale 2^125 (code 252).
		{"max float32", block(32, math.MaxFloat32, -0x1p125), 252, []byte{0xA7}},
		// Subnormal amax 3·2^−128: the scale clamps to code 0 (2^−127), and
		// subnormals are elements like any other: 2^−149 → 0, 3·2^−128 → 1.5
		// (3), −2^−128 → −0.5 (9).
		{"subnormal block", block(32, 0x1p-149, 3*0x1p-128, -0x1p-128), 0, []byte{0x30, 0x09}},
		{"zeros", block(32, negZero()), 0, []byte{0x08}},
		{"NaN", block(32, 1, nan, 2), 0xFF, nil},
		{"Inf", block(32, float32(math.Inf(-1)), 3), 0xFF, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			codes, scales := make([]byte, 16), make([]byte, 1)
			quantizeMXFP4(codes, scales, tc.x)
			assert.Equal(t, tc.scale, scales[0])
			want := make([]byte, 16)
			copy(want, tc.codes)
			assert.Equal(t, want, codes)
		})
	}
}

func TestDequantizeMXFP4(t *testing.T) {
	inf := float32(math.Inf(1))
	// Bytes hold elements 2k (low nibble) and 2k+1: 0x71 is 0.5, 6; 0xF9 is
	// −0.5, −6; 0x08 is −0, 0; 0x5A is −1, 3.
	codes := []byte{0x71, 0xF9, 0x08, 0x5A}
	tests := []struct {
		scale uint8
		want  []float32
	}{
		{127, []float32{0.5, 6, -0.5, -6, negZero(), 0, -1, 3}},
		{130, []float32{4, 48, -4, -48, negZero(), 0, -8, 24}},
		{2, []float32{0x1p-126, 6 * 0x1p-125, -0x1p-126, -6 * 0x1p-125, negZero(), 0, -0x1p-125, 3 * 0x1p-125}},
		// Below the normal range: float32 subnormals.
		{0, []float32{0x1p-128, 6 * 0x1p-127, -0x1p-128, -6 * 0x1p-127, negZero(), 0, -0x1p-127, 3 * 0x1p-127}},
		// Above it: 6·2^127 and 6·2^126 overflow to Inf.
		{254, []float32{0x1p126, inf, -0x1p126, -inf, negZero(), 0, -0x1p127, inf}},
		{252, []float32{0x1p124, 6 * 0x1p125, -0x1p124, -6 * 0x1p125, negZero(), 0, -0x1p125, 3 * 0x1p125}},
	}
	for _, tc := range tests {
		in := make([]byte, 16)
		copy(in, codes)
		got := make([]float32, 32)
		dequantizeMXFP4(got, in, []byte{tc.scale})
		for i, w := range tc.want {
			assert.Equal(t, math.Float32bits(w), math.Float32bits(got[i]), "scale %d element %d: %v", tc.scale, i, got[i])
		}
		for i := len(tc.want); i < 32; i++ {
			assert.Equal(t, uint32(0), math.Float32bits(got[i]), "scale %d element %d", tc.scale, i)
		}
	}
	got := make([]float32, 32)
	dequantizeMXFP4(got, make([]byte, 16), []byte{0xFF})
	for _, v := range got {
		assert.True(t, v != v, "a NaN scale decodes to NaN")
	}
}

func TestQuantizeMXFP8(t *testing.T) {
	// amax 1: floor(log2 1) − 8 = −8, scale 2^−8 (code 119); 1 → 256 (0x78),
	// 0.5 → 0x70, −1 → 0xF8; 2^−17 → 2^−9, the smallest subnormal (0x01);
	// 3·2^−19 → 0.75·2^−9 → 0x01; 2^−18 → 0.5·2^−9, a tie, to 0; −2^−18 → −0.
	codes, scales := make([]byte, 64), make([]byte, 2)
	x := append(block(32, 1, 0.5, -1, 0x1p-17, 3*0x1p-19, 0x1p-18, -0x1p-18),
		// amax just below 512: scale 2^0; 500 rounds to 512 and saturates to
		// 448 (0x7E), 464 ties to 448, 465 rounds to 480 and saturates.
		block(32, math.Nextafter32(512, 0), 500, 464, 465, -3)...)
	quantizeMXFP8(codes, scales, x)
	assert.Equal(t, []byte{119, 127}, scales)
	assert.Equal(t, []byte{0x78, 0x70, 0xF8, 0x01, 0x01, 0x00, 0x80, 0}, codes[:8])
	assert.Equal(t, []byte{0x7E, 0x7E, 0x7E, 0x7E, 0xC4, 0}, codes[32:38])
	quantizeMXFP8(codes[:32], scales[:1], block(32, 2, float32(math.NaN())))
	assert.Equal(t, byte(0xFF), scales[0])
	for _, c := range codes[:32] {
		assert.Equal(t, byte(0x7F), c, "E4M3 NaN")
	}
	got := make([]float32, 64)
	codes[0], scales[0] = 0x38, 120 // 1.0 × 2^−7
	dequantizeMXFP8(got, codes, scales)
	assert.Equal(t, float32(0x1p-7), got[0])
	assert.Equal(t, float32(448), got[32])
	assert.Equal(t, float32(-3), got[36])
}

func TestQuantizeMXINT8(t *testing.T) {
	// amax in [1, 2): scale 2^0 (code 127); elements round(64·x), ties to
	// even, within −127..127.
	codes, scales := make([]byte, 64), make([]byte, 2)
	x := append(block(32, math.Nextafter32(2, 0), -1, 1.0/128, 3.0/128, -3.0/128, negZero()),
		block(32, 2, -2, 1)...) // amax 2: scale 2^1
	quantizeMXINT8(codes, scales, x)
	assert.Equal(t, []byte{127, 128}, scales)
	assert.Equal(t, []byte{0x7F, 0xC0, 0x00, 0x02, 0xFE, 0x00}, codes[:6])
	assert.Equal(t, []byte{0x40, 0xC0, 0x20}, codes[32:35])
	got := make([]float32, 64)
	dequantizeMXINT8(got, codes, scales)
	assert.Equal(t, []float32{127.0 / 64, -1, 0, 2.0 / 64, -2.0 / 64, 0}, got[:6])
	assert.Equal(t, []float32{2, -2, 1}, got[32:35])
}

func TestQuantizeNVFP4(t *testing.T) {
	// docs/NUMERICS.md §7's worked cast: tensor amax 1344, s_t = 0.5; block 0
	// has amax 1344, s_b = 1344/3 = 448 (0x7E), d = 224: 1344 → 6 (7), 100 →
	// 0.446 → 0.5 (1), −700 → −3.125 → −3 (0xD). Block 1 has amax 3: s_b = 1
	// (0x38), d = 0.5: 3 → 6 (7), −1 → −2 (0xC), 0.25 → 0.5 (1).
	x := append(block(16, 1344, 100, -700), block(16, 3, -1, 0.25)...)
	x = append(x, block(16)...)                          // all zero: s_b = 1
	x = append(x, block(16, 5, float32(math.Inf(1)))...) // NaN scale
	x = append(x, block(16, 0x1p-20, -0x1p-20)...)       // s_b rounds to 0
	codes, scales := make([]byte, len(x)/2), make([]byte, len(x)/16)
	quantizeNVFP4(codes, scales, x, 0.5)
	assert.Equal(t, []byte{0x7E, 0x38, 0x38, 0x7F, 0x00}, scales)
	assert.Equal(t, []byte{0x17, 0x0D}, codes[:2])
	assert.Equal(t, []byte{0xC7, 0x01}, codes[8:10])
	for _, c := range codes[16:] {
		assert.Equal(t, byte(0), c)
	}
	got := make([]float32, len(x))
	dequantizeNVFP4(got, codes, scales, 0.5)
	assert.Equal(t, []float32{1344, 112, -672}, got[:3])
	assert.Equal(t, []float32{3, -1, 0.25}, got[16:19])
	assert.True(t, got[48] != got[48], "a NaN scale decodes to NaN")
	assert.Equal(t, []float32{0, 0}, got[64:66])
}

func TestKernelsRejectPartialBlocks(t *testing.T) {
	require.Panics(t, func() { quantizeMXFP4(make([]byte, 16), make([]byte, 1), make([]float32, 31)) })
	require.Panics(t, func() { quantizeMXFP4(make([]byte, 15), make([]byte, 1), make([]float32, 32)) })
	require.Panics(t, func() { dequantizeMXFP4(make([]float32, 32), make([]byte, 16), nil) })
	require.Panics(t, func() { quantizeNVFP4(make([]byte, 8), make([]byte, 1), make([]float32, 8), 1) })
	require.NotPanics(t, func() { quantizeMXINT8(nil, nil, nil) })
}
