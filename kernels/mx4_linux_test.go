//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestMX4StayInBounds runs the E2M1 kernels of every tier on inputs and
// outputs that end at an inaccessible page, for every number of blocks up to
// past an AVX-512 chunk: no kernel may read or write past a slice.
func TestMX4StayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	counts := []int{}
	for n := 1; n <= 70; n++ {
		counts = append(counts, n)
	}
	counts = append(counts, 128, 129, 257)
	forEachTier(t, func(t *testing.T) {
		forEachStore(t, func(t *testing.T) {
			for _, nb := range counts {
				n := nb * mxBlock
				src := guardedCopy(t, fp4Input(r, nb, mxBlock))
				codes := guardedTail[byte](t, n/2)
				scales := guardedTail[byte](t, nb)
				quantizeMXFP4(codes, scales, src)
				g := guardedTail[byte](t, nb*mxfp4GGUFBlockBytes)
				quantizeMXFP4GGUF(g, src)
				dst := guardedTail[float32](t, n)
				dequantizeMXFP4(dst, codes, scales)
				dequantizeMXFP4GGUF(dst, g)

				nscales := guardedTail[byte](t, 2*nb)
				quantizeNVFP4(codes, nscales, src, 0.25)
				dequantizeNVFP4(dst, codes, nscales, 0.25)
				// One block of 16 more than a whole number of 32s.
				m := n - nvfp4Block
				quantizeNVFP4(codes[len(codes)-m/2:], nscales[len(nscales)-m/nvfp4Block:], src[nvfp4Block:], 0.25)
				dequantizeNVFP4(dst[nvfp4Block:], codes[len(codes)-m/2:], nscales[len(nscales)-m/nvfp4Block:], 0.25)
			}
		})
	})
}
