package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQ8_0HandDerived checks quantizeQ8_0 on blocks whose codes follow from
// the rule by hand: amax 127 gives d = 1 (float16 0x3c00) and id = 1, so
// every element rounds on its own, ties away from zero; amax 254 gives d = 2
// (0x4000) and id = 0.5; a NaN element is code 0 and does not count in amax.
func TestQ8_0HandDerived(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name  string
		x     []float32 // the first elements; the rest are 0
		d     uint16
		codes []int8
	}{
		{"ties away", []float32{127, 0.5, -0.5, 1.5, 2.5, -2.5, 63.49, 63.5, -126.5, 0.49999997}, 0x3c00,
			[]int8{127, 1, -1, 2, 3, -3, 63, 64, -127, 0}},
		{"scale 2", []float32{-254, 3, 1, -1, 253}, 0x4000, []int8{-127, 2, 1, -1, 127}},
		{"NaN ignored", []float32{nan, 127, -nan, 1}, 0x3c00, []int8{0, 127, 0, 1}},
		{"all zero", []float32{negZero()}, 0x0000, []int8{0}},
		{"infinity", []float32{float32(math.Inf(-1)), 5}, 0x7c00, []int8{0, 0}},
	}
	forEachTier(t, func(t *testing.T) {
		for _, tc := range tests {
			x := make([]float32, ggmlBlock)
			copy(x, tc.x)
			got := make([]byte, q8_0BlockBytes)
			quantizeQ8_0(got, x)
			assert.Equal(t, tc.d, binary.LittleEndian.Uint16(got), tc.name)
			for j, c := range tc.codes {
				assert.Equal(t, c, int8(got[2+j]), "%s element %d", tc.name, j)
			}
		}
	})
}

// TestQ4_0HandDerived checks quantizeQ4_0 by hand: the element of largest
// magnitude m, with its sign, gives d = m/−8, so m itself gets code 0; the
// others are trunc(x/d + 8.5), clamped to 0..15, and NaN gets 8.
func TestQ4_0HandDerived(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name  string
		x     []float32
		d     uint16
		codes []byte // nibbles of elements 0.. (the rest of the block is 0)
	}{
		// m = −16: d = 2, id = 0.5; 16 → 16.5 → 15, 1 → 9, −1 → 8 (8.0), 3 → 10.
		{"negative max", []float32{-16, 16, 1, -1, 3, 0}, 0x4000, []byte{0, 15, 9, 8, 10, 8}},
		// m = 16 (first of ±16): d = −2, id = −0.5; −16 → 16.5 → 15, 1 → 8, −1 → 9.
		{"positive max first", []float32{16, -16, 1, -1, nan}, 0xc000, []byte{0, 15, 8, 9, 8}},
		// All zero: m = +0, d = −0 (0x8000), id = 0: code 8.
		{"all zero", []float32{negZero()}, 0x8000, []byte{8, 8}},
	}
	forEachTier(t, func(t *testing.T) {
		for _, tc := range tests {
			x := make([]float32, ggmlBlock)
			copy(x, tc.x)
			got := make([]byte, q4_0BlockBytes)
			quantizeQ4_0(got, x)
			assert.Equal(t, tc.d, binary.LittleEndian.Uint16(got), tc.name)
			for j, c := range tc.codes {
				assert.Equal(t, c, got[2+j%16]>>(4*(j/16))&15, "%s element %d", tc.name, j)
			}
		}
	})
}

// ggmlBlocks returns n blocks of 32 floats on the edges of the ggml rules:
// random magnitudes over the whole float32 range, NaN and ±Inf elements,
// all-zero and all-NaN blocks, ±m ties for Q4_0's signed maximum, elements on
// the rounding ties of both codecs, and subnormal blocks.
func ggmlBlocks(r *rand.Rand, n int) []float32 {
	x := make([]float32, n*ggmlBlock)
	for b := range n {
		v := x[b*ggmlBlock : (b+1)*ggmlBlock]
		switch r.IntN(10) {
		case 0:
			for i := range v {
				v[i] = math.Float32frombits(edgeBits(r))
			}
		case 1: // all zero, or zeros and NaNs
			for i := range v {
				if r.IntN(3) == 0 {
					v[i] = float32(math.NaN())
				} else if r.IntN(2) == 0 {
					v[i] = negZero()
				}
			}
		case 2: // ties of Q8_0 (amax 127: elements k + 0.5) and Q4_0
			v[0] = 127
			for i := 1; i < len(v); i++ {
				v[i] = float32(r.IntN(255)-127) + 0.5
			}
			if r.IntN(2) == 0 {
				v[r.IntN(len(v))] = -127
			}
		case 3: // Q4_0: −8·d = m exact, elements at (k − 8.5)·d
			d := float32(math.Ldexp(1, r.IntN(40)-20))
			for i := range v {
				v[i] = (float32(r.IntN(17)) - 8.5) * d
			}
			v[r.IntN(len(v))] = 8 * d
			v[r.IntN(len(v))] = -8 * d
		case 4: // subnormal blocks: d underflows, or 1/d overflows
			for i := range v {
				v[i] = math.Float32frombits(r.Uint32N(1<<r.IntN(24)) | r.Uint32()&0x80000000)
			}
		default:
			e := r.IntN(300) - 150
			for i := range v {
				v[i] = float32(math.Ldexp(r.NormFloat64(), e))
			}
		}
	}
	return x
}

// TestGGMLTiers compares every tier's Q8_0 and Q4_0 kernels with the Go
// references on edge blocks, at every block count up to 40 and at unaligned
// addresses.
func TestGGMLTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	src := ggmlBlocks(r, 4000)
	want8, want4 := make([]byte, 4000*q8_0BlockBytes), make([]byte, 4000*q4_0BlockBytes)
	quantQ8_0Go(want8, src)
	quantQ4_0Go(want4, src)
	wantD8, wantD4 := make([]float32, len(src)), make([]float32, len(src))
	dequantQ8_0Go(wantD8, want8)
	dequantQ4_0Go(wantD4, want4)
	forEachTier(t, func(t *testing.T) {
		got8, got4 := make([]byte, len(want8)), make([]byte, len(want4))
		quantizeQ8_0(got8, src)
		quantizeQ4_0(got4, src)
		require.Equal(t, want8, got8, "quantizeQ8_0")
		require.Equal(t, want4, got4, "quantizeQ4_0")
		d8, d4 := make([]float32, len(src)), make([]float32, len(src))
		dequantizeQ8_0(d8, want8)
		dequantizeQ4_0(d4, want4)
		requireSame(t, floatBits(wantD8), floatBits(d8), "dequantizeQ8_0")
		requireSame(t, floatBits(wantD4), floatBits(d4), "dequantizeQ4_0")
		// Short runs at odd addresses: src one float in, dst one byte in.
		for nb := 0; nb <= 40; nb++ {
			buf := make([]float32, nb*ggmlBlock+1)
			s := buf[1:]
			copy(s, src[nb*ggmlBlock:])
			out := make([]byte, nb*q8_0BlockBytes+1)
			quantizeQ8_0(out[1:], s)
			require.Equal(t, want8[nb*q8_0BlockBytes:2*nb*q8_0BlockBytes], out[1:], "Q8_0 %d blocks", nb)
			out = out[:nb*q4_0BlockBytes+1]
			quantizeQ4_0(out[1:], s)
			require.Equal(t, want4[nb*q4_0BlockBytes:2*nb*q4_0BlockBytes], out[1:], "Q4_0 %d blocks", nb)
			back := make([]float32, nb*ggmlBlock+1)
			dequantizeQ8_0(back[1:], want8[nb*q8_0BlockBytes:])
			requireSame(t, floatBits(wantD8[nb*ggmlBlock:2*nb*ggmlBlock]), floatBits(back[1:]), "dequantizeQ8_0 %d blocks", nb)
		}
	})
}

// TestGGMLDecodersExhaustive decodes every float16 scale with every code
// byte under every tier and compares with the references.
func TestGGMLDecodersExhaustive(t *testing.T) {
	const scales = 1 << 16
	// Block s has scale code s and code bytes s·32 + j (mod 256), so every
	// code byte meets every eighth scale; blocks of the special scales (±0,
	// subnormals, ±Inf, NaNs) get every code byte.
	var blocks8, blocks4 []byte
	add := func(s uint16, first byte) {
		b8 := make([]byte, q8_0BlockBytes)
		b4 := make([]byte, q4_0BlockBytes)
		binary.LittleEndian.PutUint16(b8, s)
		binary.LittleEndian.PutUint16(b4, s)
		for j := range 32 {
			b8[2+j] = first + byte(j)
		}
		for j := range 16 {
			b4[2+j] = first + byte(j)
		}
		blocks8 = append(blocks8, b8...)
		blocks4 = append(blocks4, b4...)
	}
	for s := range scales {
		add(uint16(s), byte(s*32))
	}
	for _, s := range []uint16{0, 0x8000, 1, 0x83ff, 0x3c00, 0x7bff, 0x7c00, 0xfc00, 0x7c01, 0xfe00, 0x7fff} {
		for first := 0; first < 256; first += 16 {
			add(s, byte(first))
		}
	}
	n := len(blocks8) / q8_0BlockBytes * ggmlBlock
	want8, want4 := make([]float32, n), make([]float32, n)
	dequantQ8_0Go(want8, blocks8)
	dequantQ4_0Go(want4, blocks4)
	forEachTier(t, func(t *testing.T) {
		got8, got4 := make([]float32, n), make([]float32, n)
		dequantizeQ8_0(got8, blocks8)
		dequantizeQ4_0(got4, blocks4)
		requireSame(t, floatBits(want8), floatBits(got8), "dequantizeQ8_0")
		requireSame(t, floatBits(want4), floatBits(got4), "dequantizeQ4_0")
	})
}

func TestGGMLPanics(t *testing.T) {
	assert.Panics(t, func() { quantizeQ8_0(make([]byte, 34), make([]float32, 31)) })
	assert.Panics(t, func() { quantizeQ8_0(make([]byte, 33), make([]float32, 32)) })
	assert.Panics(t, func() { quantizeQ4_0(make([]byte, 17), make([]float32, 32)) })
	assert.Panics(t, func() { dequantizeQ8_0(make([]float32, 32), make([]byte, 33)) })
	assert.Panics(t, func() { dequantizeQ4_0(make([]float32, 33), make([]byte, 36)) })
	assert.NotPanics(t, func() { quantizeQ4_0(nil, nil) })
}
