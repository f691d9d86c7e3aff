package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMXFP4GGUF checks the ggml block kernels on a hand-derived block: amax
// 7 gives scale 2^0 (E8M0 127); the codes are those of TestQuantizeMXFP4's
// ties (0.25→0, 0.75→2, 1.25→2, 1.75→4, 2.5→4, 3.5→6, 5→6, 7→7, −0→8,
// −0.25→8, 0.3→1, −2.9→0xD, 6→7, −4→0xE, 0.5→1, 1→2) for elements 0..15 and
// −0.5→9, 3→5, −6→0xF, 1.5→3 for elements 16..19; byte j holds element j in
// its low nibble and element j+16 in its high nibble.
func TestMXFP4GGUF(t *testing.T) {
	x := block(32, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 7, negZero(), -0.25, 0.3, -2.9, 6, -4, 0.5, 1,
		-0.5, 3, -6, 1.5)
	want := []byte{127, 0x90, 0x52, 0xF2, 0x34, 4, 6, 6, 7, 8, 8, 1, 0xD, 7, 0xE, 1, 2}
	forEachTier(t, func(t *testing.T) {
		got := make([]byte, mxfp4GGUFBlockBytes)
		quantizeMXFP4GGUF(got, x)
		assert.Equal(t, want, got)
		v := make([]float32, mxBlock)
		dequantizeMXFP4GGUF(v, want)
		wantV := block(32, 0, 1, 1, 2, 2, 4, 4, 6, negZero(), negZero(), 0.5, -3, 6, -4, 0.5, 1,
			-0.5, 3, -6, 1.5)
		for i := range v {
			assert.Equal(t, math.Float32bits(wantV[i]), math.Float32bits(v[i]), "element %d", i)
		}
		// Scale 0xFF is NaN; scale 130 multiplies by 8.
		dequantizeMXFP4GGUF(v, append([]byte{0xFF}, want[1:]...))
		for i := range v {
			assert.True(t, v[i] != v[i], "element %d of a NaN block: %v", i, v[i])
		}
		dequantizeMXFP4GGUF(v, append([]byte{130}, want[1:]...))
		assert.Equal(t, []float32{-4, 24, -48, 12}, v[16:20])
	})
}

func TestMXFP4GGUFRejectsPartialBlocks(t *testing.T) {
	require.Panics(t, func() { quantizeMXFP4GGUF(make([]byte, 17), make([]float32, 31)) })
	require.Panics(t, func() { quantizeMXFP4GGUF(make([]byte, 16), make([]float32, 32)) })
	require.Panics(t, func() { dequantizeMXFP4GGUF(make([]float32, 64), make([]byte, 33)) })
	require.NotPanics(t, func() { quantizeMXFP4GGUF(nil, nil) })
}

func TestPackMXFP4GGUF(t *testing.T) {
	// Two blocks: codes 0..15 then 15..0 in the first half, 1 and 2 in the
	// second; scales 120 and 130.
	codes := make([]byte, 64)
	for j := range 16 {
		codes[j], codes[16+j] = byte(j), 1
		codes[32+j], codes[48+j] = byte(15-j), 2
	}
	want := []byte{120}
	for j := range 16 {
		want = append(want, byte(j)|1<<4)
	}
	want = append(want, 130)
	for j := range 16 {
		want = append(want, byte(15-j)|2<<4)
	}
	got := make([]byte, 34)
	require.True(t, packMXFP4GGUF(got, codes, []byte{120, 130}))
	assert.Equal(t, want, got)
	c, s := make([]byte, 64), make([]byte, 2)
	unpackMXFP4GGUF(c, s, got)
	assert.Equal(t, codes, c)
	assert.Equal(t, []byte{120, 130}, s)
	codes[40] = 16
	assert.False(t, packMXFP4GGUF(got, codes, []byte{120, 130}))
	require.Panics(t, func() { packMXFP4GGUF(got, codes, []byte{1}) })
	require.Panics(t, func() { unpackMXFP4GGUF(c, s, got[:33]) })
}
