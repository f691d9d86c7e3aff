package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBlendHandDerived checks the bit order and polarity by hand on 9
// elements (mask 0x0d 0x01: elements 0, 2, 3 and 8 kept), with a NaN payload
// and −0 copied exactly.
func TestBlendHandDerived(t *testing.T) {
	nan := math.Float32frombits(0x7fa00001)
	negZero := math.Float32frombits(0x80000000)
	a := []float32{1, 2, nan, 4, 5, 6, 7, 8, negZero}
	b := []float32{-1, -2, -3, -4, -5, -6, -7, -8, -9}
	mask := []byte{0x0d, 0x01}
	forEachTier(t, func(t *testing.T) {
		dst := make([]float32, 9)
		BlendMasked(dst, a, b, mask)
		assert.Equal(t, floatBits([]float32{1, -2, nan, 4, -5, -6, -7, -8, negZero}), floatBits(dst))
		ZeroMasked(dst, a, mask)
		assert.Equal(t, floatBits([]float32{1, 0, nan, 4, 0, 0, 0, 0, negZero}), floatBits(dst))
	})
}

// TestBlendTiers compares every tier with the Go references at every length
// up to 300 and two long ones, at odd addresses, with dense, sparse, empty
// and full masks, edge-case floats, and in place (dst = a, dst = b, dst = src).
func TestBlendTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	lengths := []int{}
	for n := 0; n <= 300; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 4099, 65536+13)
	for _, n := range lengths {
		density := []int{0, 1, 2, 5}[r.IntN(4)]
		mask := make([]byte, PackedLen(n, 1)+1)[1:]
		for i := range n {
			if density == 1 || density > 1 && r.IntN(density) == 0 {
				mask[i>>3] |= 1 << (i & 7)
			}
		}
		if n%8 != 0 && r.IntN(2) == 0 {
			mask[len(mask)-1] |= 0xff << (n % 8) // bits past n are ignored
		}
		a := make([]float32, n+1)[1:]
		b := make([]float32, n+3)[3:]
		for i := range a {
			a[i], b[i] = math.Float32frombits(edgeBits(r)), math.Float32frombits(edgeBits(r))
		}
		wantBlend := make([]float32, n)
		blendMaskedGo(wantBlend, a, b, mask)
		wantZero := make([]float32, n)
		zeroMaskedGo(wantZero, a, mask)
		for i := range n {
			keep := mask[i>>3]>>(i&7)&1 == 1
			w := b[i]
			z := float32(0)
			if keep {
				w, z = a[i], a[i]
			}
			require.Equal(t, math.Float32bits(w), math.Float32bits(wantBlend[i]))
			require.Equal(t, math.Float32bits(z), math.Float32bits(wantZero[i]))
		}
		forEachTier(t, func(t *testing.T) {
			dst := make([]float32, n+2)[2:]
			BlendMasked(dst, a, b, mask)
			requireSame(t, floatBits(wantBlend), floatBits(dst), "blend %d", n)
			ZeroMasked(dst, a, mask)
			requireSame(t, floatBits(wantZero), floatBits(dst), "zero %d", n)
			inA, inB := append([]float32(nil), a...), append([]float32(nil), b...)
			BlendMasked(inA, inA, b, mask)
			requireSame(t, floatBits(wantBlend), floatBits(inA), "blend into a %d", n)
			BlendMasked(inB, a, inB, mask)
			requireSame(t, floatBits(wantBlend), floatBits(inB), "blend into b %d", n)
			inA = append(inA[:0], a...)
			ZeroMasked(inA, inA, mask)
			requireSame(t, floatBits(wantZero), floatBits(inA), "zero in place %d", n)
		})
	}
}

func TestBlendPanics(t *testing.T) {
	mask := []byte{0xff}
	assert.Panics(t, func() { BlendMasked(make([]float32, 8), make([]float32, 7), make([]float32, 8), mask) })
	assert.Panics(t, func() { BlendMasked(make([]float32, 8), make([]float32, 8), make([]float32, 7), mask) })
	assert.Panics(t, func() { BlendMasked(make([]float32, 9), make([]float32, 9), make([]float32, 9), mask) })
	assert.Panics(t, func() { ZeroMasked(make([]float32, 8), make([]float32, 7), mask) })
	assert.NotPanics(t, func() { ZeroMasked(nil, nil, nil) })
}

// FuzzBlend compares every tier's blend kernels with the Go references on
// the fuzzer's bytes: the first third a mask, the rest two float vectors.
func FuzzBlend(f *testing.F) {
	f.Add([]byte{0x0d, 0x01, 0, 0, 0x80, 0x7f, 1, 2, 3, 4})
	f.Add(make([]byte, 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 9 // mask n/8 bytes, floats 2·4n bytes
		mask := make([]byte, PackedLen(n, 1))
		copy(mask, data)
		fl := data[len(data)-8*n:]
		a, b := make([]float32, n), make([]float32, n)
		for i := range n {
			a[i] = math.Float32frombits(uint32(fl[4*i]) | uint32(fl[4*i+1])<<8 | uint32(fl[4*i+2])<<16 | uint32(fl[4*i+3])<<24)
			j := 4 * (n + i)
			b[i] = math.Float32frombits(uint32(fl[j]) | uint32(fl[j+1])<<8 | uint32(fl[j+2])<<16 | uint32(fl[j+3])<<24)
		}
		wantB, wantZ := make([]float32, n), make([]float32, n)
		blendMaskedGo(wantB, a, b, mask)
		zeroMaskedGo(wantZ, a, mask)
		for _, tr := range tiers() {
			restore := useTier(tr)
			gotB, gotZ := make([]float32, n), make([]float32, n)
			BlendMasked(gotB, a, b, mask)
			ZeroMasked(gotZ, a, mask)
			restore()
			requireSame(t, floatBits(wantB), floatBits(gotB), "%v blend", tr)
			requireSame(t, floatBits(wantZ), floatBits(gotZ), "%v zero", tr)
		}
	})
}

func BenchmarkBlendMasked(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		other, dst := make([]float32, len(src)), make([]float32, len(src))
		mask := benchMask(len(src))
		return func() { BlendMasked(dst, src, other, mask) }
	})
}

func BenchmarkZeroMasked(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		dst := make([]float32, len(src))
		mask := benchMask(len(src))
		return func() { ZeroMasked(dst, src, mask) }
	})
}

// BenchmarkCountMask counts the set bits of a mask of 64 MiB (DRAM) and 64
// KiB (L2); its MB/s are mask bytes (one byte covers eight elements).
func BenchmarkCountMask(b *testing.B) {
	for _, sz := range []struct {
		name  string
		bytes int
	}{{"DRAM", 64 << 20}, {"L2", 64 << 10}} {
		b.Run(sz.name, func(b *testing.B) {
			mask := benchMask(8 * sz.bytes)
			b.SetBytes(int64(sz.bytes))
			for b.Loop() {
				simdSink += uint64(CountMask(mask, 8*sz.bytes))
			}
		})
	}
}

// benchMask returns a mask of n bits, about half of them set, no pattern a
// branch predictor learns.
func benchMask(n int) []byte {
	r := rand.New(rand.NewPCG(3, 4))
	m := make([]byte, PackedLen(n, 1))
	for i := range m {
		m[i] = byte(r.Uint32())
	}
	return m
}
