//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestE4M3SearchStayInBounds runs the fused E4M3 searches of every tier on
// slices that end at an inaccessible page (values, codes and scales), for
// lengths around whole blocks, tiles and vectors.
func TestE4M3SearchStayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 45))
	forEachTier(t, func(t *testing.T) {
		for nb := 0; nb <= 20; nb++ {
			src := guardedCopy(t, searchInput(r, nb*mxBlock))
			codes := guardedTail[byte](t, nb*mxBlock)
			scales := guardedTail[byte](t, nb)
			wc, ws := make([]byte, nb*mxBlock), make([]byte, nb)
			searchMXFP8Go(wc, ws, src)
			searchMXFP8(codes, scales, src)
			requireBytes(t, wc, codes, "%d blocks", nb)
			requireBytes(t, ws, scales, "%d blocks", nb)
		}
		for _, tl := range []FP8Tiles{{}, {Cols: 0, TileCols: 16}, {Cols: 0, TileCols: 64}, {Cols: 48, TileRows: 2, TileCols: 16}} {
			for n := 0; n <= 200; n += 1 + r.IntN(5) {
				if tl.Cols > 0 {
					n = (n/tl.Cols + 1) * tl.Cols
				}
				_, _, _, _, _, tiles := tl.geometry("test", n)
				src := guardedCopy(t, searchInput(r, n))
				codes := guardedTail[byte](t, n)
				scales := guardedTail[byte](t, 4*tiles)
				wc, ws := make([]byte, n), make([]byte, 4*tiles)
				searchE4M3Go(wc, ws, src, tl)
				searchE4M3(codes, scales, src, tl)
				requireBytes(t, wc, codes, "n %d %+v", n, tl)
				requireBytes(t, ws, scales, "n %d %+v", n, tl)
			}
		}
	})
}
