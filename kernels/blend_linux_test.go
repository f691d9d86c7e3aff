//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestBlendStaysInBounds runs the blend kernels of every tier on slices (and
// masks) that end at an inaccessible page, at every length up to three
// AVX-512 groups and a bit.
func TestBlendStaysInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	forEachTier(t, func(t *testing.T) {
		for n := 1; n <= 3*64+3; n++ {
			a := guardedCopy(t, edgeFloats(r, n))
			b := guardedCopy(t, edgeFloats(r, n))
			mask := guardedTail[byte](t, PackedLen(n, 1))
			for i := range mask {
				mask[i] = byte(r.Uint32())
			}
			want := make([]float32, n)
			blendMaskedGo(want, a, b, mask)
			dst := guardedTail[float32](t, n)
			BlendMasked(dst, a, b, mask)
			requireSame(t, floatBits(want), floatBits(dst), "blend %d", n)
			zeroMaskedGo(want, a, mask)
			ZeroMasked(dst, a, mask)
			requireSame(t, floatBits(want), floatBits(dst), "zero %d", n)
		}
	})
}
