//go:build amd64 && !purego

package kernels

import "encoding/binary"

// The E4M3 kernels on amd64: one tile row at a time, in chunks of tiles of
// at most a quarter MiB (so that the second pass over a chunk reads from the
// cache): the tiles' amaxes from the reduction kernels, their scales in Go
// with the reference's function, then each row's elements through the
// assembly of the active tier (tiles of a multiple of 16 columns; the Go
// reference for the rest).

// fp8ChunkBytes bounds the float32 bytes of a chunk of tiles.
const fp8ChunkBytes = 256 << 10

// fp8Ahead is how many bytes ahead the E4M3 element kernels prefetch over
// rows of whole tiles.
const fp8Ahead = 16 << 10

func quantE4M3Tiles(codes, scales []byte, src []float32, t FP8Tiles) {
	if active == tierGeneric {
		quantE4M3Go(codes, scales, src, t)
		return
	}
	rows, cols, tr, tc, across, _ := t.geometry("quantizeE4M3", len(src))
	ct := max(1, min(across, chunkGroups, fp8ChunkBytes/(4*tr*tc)))
	var amax, tmp [chunkGroups]uint32
	var div [chunkGroups]float32
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
			binary.LittleEndian.PutUint32(scales[4*(k0+j):], code)
			div[j] = d
		}
		// Prefetch the next chunk: the same rows further right, or (rows
		// of whole tiles) the rows that follow.
		ahead := 4 * (c1 - c0)
		if tr == 1 {
			ahead = fp8Ahead
		}
		for r := r0; r < r1; r++ {
			base := r * cols
			runsOf(base+c0, base+c1, 0, tc, 8, func(a, b, k, gl int) {
				d := div[k : k+(b-a)/gl]
				if active == tierAVX512 {
					quantE4M3AVX512(codes[a:], src[a:b], d, gl, ahead)
				} else {
					quantE4M3AVX2(codes[a:], src[a:b], d, gl, ahead)
				}
			}, func(a, b, k int) {
				quantE4M3Tile(codes, src[a:b], a, div[k])
			})
		}
	})
}

func dequantE4M3Tiles(dst []float32, codes, scales []byte, t FP8Tiles) {
	if active == tierGeneric {
		dequantE4M3Go(dst, codes, scales, t)
		return
	}
	rows, cols, tr, tc, across, _ := t.geometry("dequantizeE4M3", len(dst))
	var mul [chunkGroups]float32
	forTileChunks(rows, cols, tr, tc, min(across, chunkGroups), func(k0, nt, r0, r1, c0, c1 int) {
		for j := range nt {
			mul[j] = ScaleFloat32.decodeScale(binary.LittleEndian.Uint32(scales[4*(k0+j):]))
		}
		for r := r0; r < r1; r++ {
			base := r * cols
			runsOf(base+c0, base+c1, 0, tc, 8, func(a, b, k, gl int) {
				m := mul[k : k+(b-a)/gl]
				if active == tierAVX512 {
					dequantE4M3AVX512(dst[a:b], codes[a:], m, gl)
				} else {
					dequantE4M3AVX2(dst[a:b], codes[a:], m, gl)
				}
			}, func(a, b, k int) {
				dequantE4M3Run(dst, codes, a, b, mul[k])
			})
		}
	})
}
