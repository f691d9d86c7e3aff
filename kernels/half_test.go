package kernels

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
)

// quiet sets the float32 quiet bit of a NaN: the bfloat16 decoder's one
// departure from a plain bit widening.
func quiet(b uint32) uint32 {
	if b&0x7fffffff > 0x7f800000 {
		b |= 0x00400000
	}
	return b
}

// TestHalfDecodersAllCodes checks every float16 code against x448/float16
// (which quiets signalling NaNs too) and
// every bfloat16 code against its definition (the top half of a float32), and
// the byte decoders against the code decoders.
func TestHalfDecodersAllCodes(t *testing.T) {
	const n = 1 << 16
	codes := make([]uint16, n)
	raw := make([]byte, 2*n)
	for i := range codes {
		codes[i] = uint16(i)
		binary.LittleEndian.PutUint16(raw[2*i:], uint16(i))
	}
	f16, bf16 := make([]float32, n), make([]float32, n)
	Float16ToFloat32(f16, codes)
	BFloat16ToFloat32(bf16, codes)
	for i, h := range codes {
		want := math.Float32bits(float16.Frombits(h).Float32())
		require.Equal(t, want, math.Float32bits(f16[i]), "float16 %#04x", h)
		require.Equal(t, quiet(uint32(h)<<16), math.Float32bits(bf16[i]), "bfloat16 %#04x", h)
	}
	fb, bb := make([]float32, n), make([]float32, n)
	Float16BytesToFloat32(fb, raw)
	BFloat16BytesToFloat32(bb, raw)
	for i := range fb {
		require.Equal(t, math.Float32bits(f16[i]), math.Float32bits(fb[i]))
		require.Equal(t, math.Float32bits(bf16[i]), math.Float32bits(bb[i]))
	}

	// Hand-derived values: float16 0x3c00 = 1, 0x0001 = 2⁻²⁴, 0x8400 = −2⁻¹⁴,
	// 0x7bff = 65504, 0xfc00 = −Inf, 0x7c01 (signalling) → quiet 0x7fc02000;
	// bfloat16 0x3f80 = 1, 0x0001 = 2⁻¹³³, 0x7f81 → quiet 0x7fc10000.
	v := make([]float32, 6)
	Float16ToFloat32(v, []uint16{0x3c00, 0x0001, 0x8400, 0x7bff, 0xfc00, 0x7c01})
	assert.Equal(t, []float32{1, 0x1p-24, -0x1p-14, 65504, float32(math.Inf(-1))}, v[:5])
	assert.Equal(t, uint32(0x7fc02000), math.Float32bits(v[5]))
	BFloat16ToFloat32(v[:3], []uint16{0x3f80, 0x0001, 0x7f81})
	assert.Equal(t, []float32{1, 0x1p-133}, v[:2])
	assert.Equal(t, uint32(0x7fc10000), math.Float32bits(v[2]))
}
