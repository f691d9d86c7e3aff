package gguf

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// viewValues computes code·scale − min in float32 from UnpackBlocks' view.
func viewValues(t Type, codes []uint8, scales, mins []float32) []float32 {
	sub, bits := SubBlockSize(t), CodeBits(t)
	out := make([]float32, len(codes))
	for i, c := range codes {
		var q float32
		switch {
		case t == TypeIQ4_NL || t == TypeIQ4_XS:
			q = float32(IQ4NLValues[c])
		case IQValues(t) != nil:
			q = IQValues(t)[c]
		case SignedCodes(t):
			q = float32(int(c) - int(c)>>(bits-1)<<bits)
		default:
			q = float32(c)
		}
		v := float32(q * scales[i/sub])
		if HasMin(t) {
			v -= mins[i/sub]
		}
		out[i] = v
	}
	return out
}

// TestUnpackBlocksValues checks that code·scale − min of UnpackBlocks' view
// is exactly what the decoder gives, on random blocks and on our
// quantizers' blocks, and that PackBlocks lays the view out again as
// blocks that decode to the same floats.
func TestUnpackBlocksValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	x := make([]float32, 4*256)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for _, typ := range decodedTypes {
		t.Run(typ.String(), func(t *testing.T) {
			n := 4 * 256
			size, _ := typ.Size(int64(n))
			quantized := make([]byte, size)
			require.NoError(t, Quantize(typ, quantized, x, nil))
			for _, blocks := range [][]byte{randomBlocks(rng, typ, n/typ.BlockSize()), quantized} {
				want := make([]float32, n)
				require.NoError(t, Dequantize(typ, want, blocks))
				ns := n / SubBlockSize(typ)
				codes, scales, mins := make([]uint8, n), make([]float32, ns), make([]float32, ns)
				UnpackBlocks(typ, codes, scales, mins, blocks)
				got := viewValues(typ, codes, scales, mins)
				for i := range want {
					require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "element %d", i)
				}
				again := make([]byte, len(blocks))
				require.NoError(t, PackBlocks(typ, again, codes, scales, mins))
				back := make([]float32, n)
				require.NoError(t, Dequantize(typ, back, again))
				for i := range want {
					require.Equal(t, math.Float32bits(want[i]), math.Float32bits(back[i]), "repacked element %d", i)
				}
			}
			// Our quantizer's blocks come back byte for byte.
			ns := n / SubBlockSize(typ)
			codes, scales, mins := make([]uint8, n), make([]float32, ns), make([]float32, ns)
			UnpackBlocks(typ, codes, scales, mins, quantized)
			again := make([]byte, len(quantized))
			require.NoError(t, PackBlocks(typ, again, codes, scales, mins))
			assert.Equal(t, quantized, again)
		})
	}
}

// TestPackBlocksNonFinite unpacks and packs blocks whose float16 fields
// hold infinities and NaNs: each element decodes as before (a NaN as some
// NaN).
func TestPackBlocksNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, typ := range decodedTypes {
		for _, o := range f16Offsets(typ) {
			for _, h := range []uint16{0x7C00, 0xFC00, 0x7E00, 0xFD01} {
				blocks := randomBlocks(rng, typ, 1)
				binary.LittleEndian.PutUint16(blocks[o:], h)
				n, ns := typ.BlockSize(), typ.BlockSize()/SubBlockSize(typ)
				want, back := make([]float32, n), make([]float32, n)
				require.NoError(t, Dequantize(typ, want, blocks))
				codes, scales, mins := make([]uint8, n), make([]float32, ns), make([]float32, ns)
				UnpackBlocks(typ, codes, scales, mins, blocks)
				again := make([]byte, len(blocks))
				require.NoError(t, PackBlocks(typ, again, codes, scales, mins), "%v %#04x at %d", typ, h, o)
				require.NoError(t, Dequantize(typ, back, again))
				for i, w := range want {
					if w == w || back[i] == back[i] {
						require.Equal(t, math.Float32bits(w), math.Float32bits(back[i]),
							"%v with %#04x at byte %d: element %d", typ, h, o, i)
					}
				}
			}
		}
	}
}

func TestPackBlocksErrors(t *testing.T) {
	codes := make([]uint8, 256)
	scales, mins := make([]float32, 8), make([]float32, 8)
	var pe *PackError
	// A code wider than 4 bits.
	codes[5] = 16
	err := PackBlocks(TypeQ4_K, make([]byte, 144), codes, scales, mins)
	require.True(t, errors.As(err, &pe))
	assert.Contains(t, err.Error(), "element 5")
	codes[5] = 0
	// Sub-block scales that are no float16 times an integer of 0..63.
	scales[0], scales[1] = 1, float32(math.Pi)
	err = PackBlocks(TypeQ4_K, make([]byte, 144), codes, scales, mins)
	require.True(t, errors.As(err, &pe))
	assert.Contains(t, err.Error(), "not D·l")
	// A Q4_1 scale that is not a float16.
	err = PackBlocks(TypeQ4_1, make([]byte, 20), make([]uint8, 32), []float32{0.1}, []float32{0})
	require.True(t, errors.As(err, &pe))
	assert.Contains(t, err.Error(), "not a float16")
	assert.Panics(t, func() { UnpackBlocks(TypeQ4_K, codes, scales[:7], mins, make([]byte, 144)) })
	assert.Panics(t, func() { UnpackBlocks(TypeQ8_1, codes, scales, mins, make([]byte, 36)) })
}

// BenchmarkUnpackPackBlocks measures UnpackBlocks and PackBlocks on 64 Ki
// elements of our quantizer's blocks of each type they take.
func BenchmarkUnpackPackBlocks(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 64<<10)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for _, typ := range decodedTypes {
		n := len(x)
		size, _ := typ.Size(int64(n))
		blocks := make([]byte, size)
		require.NoError(b, Quantize(typ, blocks, x, nil))
		ns := n / SubBlockSize(typ)
		codes, scales, mins := make([]uint8, n), make([]float32, ns), make([]float32, ns)
		b.Run("unpack/"+typ.String(), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				UnpackBlocks(typ, codes, scales, mins, blocks)
			}
		})
		b.Run("pack/"+typ.String(), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if err := PackBlocks(typ, blocks, codes, scales, mins); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
