package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFloatBytes decodes hand-written little-endian bytes (1.0 is
// 00 00 80 3f in binary32 and 00 00 00 00 00 00 f0 3f in binary64; −2 is
// 00 00 00 c0 and 00 .. 00 c0; a NaN payload stays), from unaligned
// offsets, and rounds float64 to nearest even float32.
func TestFloatBytes(t *testing.T) {
	b32 := []byte{0xee, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0x01, 0x00, 0xc0, 0x7f}
	got := make([]float32, 3)
	Float32BytesToFloat32(got, b32[1:])
	assert.Equal(t, []uint32{0x3f800000, 0xc0000000, 0x7fc00001}, []uint32{
		math.Float32bits(got[0]), math.Float32bits(got[1]), math.Float32bits(got[2])})
	assert.Panics(t, func() { Float32BytesToFloat32(got, b32[:11:11]) })
	Float32BytesToFloat32(nil, nil)

	b64 := []byte{0xee, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0xc0,
		// 1 + 2^-24, exactly between two float32 values: ties to even gives 1.
		0, 0, 0, 0x10, 0, 0, 0xf0, 0x3f}
	Float64BytesToFloat32(got, b64[1:])
	assert.Equal(t, []float32{1, -2, 1}, got)
	assert.Panics(t, func() { Float64BytesToFloat32(got, b64[:20:20]) })
}
