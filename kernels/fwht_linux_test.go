//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestFWHTStaysInBounds runs FWHTRows of every tier on slices (values,
// results and scratch) that end at an inaccessible page, for every block up
// to 2048 and one to three blocks, and more blocks than one step of the
// small blocks takes.
func TestFWHTStaysInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	forEachTier(t, func(t *testing.T) {
		for block := 2; block <= 2048; block *= 2 {
			for _, nb := range []int{1, 2, 3, 128/block + 1, 3*128/block + 3} {
				n := nb * block
				src := guardedCopy(t, fwhtInputs(r, n, true))
				want := make([]float32, n)
				fwhtRowsGo(want, src, block, make([]float64, block))
				dst := guardedTail[float32](t, n)
				buf := guardedTail[float64](t, block)
				FWHTRows(dst, src, block, buf)
				requireSameFloats(t, want, dst, "block %d, %d blocks", block, nb)
				FWHTRows(src, src, block, buf)
				requireSameFloats(t, want, src, "in place: block %d, %d blocks", block, nb)
			}
		}
	})
}
