//go:build amd64 && !purego

package kernels

import (
	"encoding/binary"
	"math"
)

// The fused E4M3 searches on amd64 (AVX-512; below it the Go reference):
// SearchMXFP8 runs whole in assembly; SearchE4M3 follows quantE4M3Tiles,
// a tile row at a time in chunks of tiles, the tiles' amaxes from the
// reduction kernels, each tile's candidate errors from the assembly
// (tiles whose width is a multiple of 16; the Go loop for the rest), the
// choice in Go, then the elements through quantE4M3AVX512.

func searchMXFP8(codes []byte, scales []uint8, src []float32) {
	if active < tierAVX512 {
		searchMXFP8Go(codes, scales, src)
		return
	}
	searchMXFP8AVX512(codes, scales, src, &mx.recip, &mx.e8m0)
}

func searchE4M3Tiles(codes, scales []byte, src []float32, t FP8Tiles) {
	if active < tierAVX512 {
		searchE4M3Go(codes, scales, src, t)
		return
	}
	rows, cols, tr, tc, across, _ := t.geometry("SearchE4M3", len(src))
	ct := max(1, min(across, chunkGroups, fp8ChunkBytes/(4*tr*tc)))
	var amax, tmp [chunkGroups]uint32
	var div [chunkGroups]float32
	var cand [maxE4M3Cands]float32
	var acc [maxE4M3Cands * sqErrLanes]float64
	var errs [maxE4M3Cands]float64
	forTileChunks(rows, cols, tr, tc, ct, func(k0, nt, r0, r1, c0, c1 int) {
		clear(amax[:nt])
		for r := r0; r < r1; r++ {
			absMaxBlocks(tmp[:nt], src[r*cols+c0:r*cols+c1], tc)
			for j, a := range tmp[:nt] {
				amax[j] = max(amax[j], a)
			}
		}
		for j := range nt {
			code, d := fp8Scale(amax[j])
			if amax[j] != 0 && d == d && d != 0 {
				n := e4m3Candidates(&cand, math.Float32frombits(amax[j]))
				for c := n; c < maxE4M3Cands; c++ {
					cand[c] = cand[0]
				}
				clear(acc[:])
				lo := c0 + j*tc
				hi := min(lo+tc, c1)
				if w := hi - lo; w%sqErrLanes == 0 {
					// Every row's elements start at lane 0: the whole
					// tile in one call.
					sqErrE4M3DivAVX512(&acc, src[r0*cols+lo:(r1-1)*cols+hi], &cand, w, r1-r0, cols)
				} else {
					for r := r0; r < r1; r++ {
						seg := src[r*cols+lo : r*cols+hi]
						k := (r - r0) * (hi - lo)
						m := 0
						if k%sqErrLanes == 0 {
							m = len(seg) &^ 15
							sqErrE4M3DivAVX512(&acc, seg[:m], &cand, m, 1, 0)
						}
						for c := range n {
							sqErrE4M3Acc((*[sqErrLanes]float64)(acc[c*sqErrLanes:]), seg[m:], k+m, cand[c])
						}
					}
				}
				for c := range n {
					errs[c] = sumLanes16((*[sqErrLanes]float64)(acc[c*sqErrLanes:]))
				}
				d = cand[bestE4M3(errs[:n])]
				code = math.Float32bits(d)
			}
			binary.LittleEndian.PutUint32(scales[4*(k0+j):], code)
			div[j] = d
		}
		ahead := 4 * (c1 - c0)
		if tr == 1 {
			ahead = fp8Ahead
		}
		for r := r0; r < r1; r++ {
			base := r * cols
			runsOf(base+c0, base+c1, 0, tc, 8, func(a, b, k, gl int) {
				quantE4M3AVX512(codes[a:], src[a:b], div[k:k+(b-a)/gl], gl, ahead)
			}, func(a, b, k int) {
				quantE4M3Tile(codes, src[a:b], a, div[k])
			})
		}
	})
}
