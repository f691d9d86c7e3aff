//go:build amd64 && !purego

package kernels

import (
	"encoding/binary"
	"math"
)

// The fused E4M3 searches on amd64 (AVX-512; below it the Go reference):
// searchMXFP8 runs whole in assembly; searchE4M3 follows quantE4M3Tiles,
// a tile row at a time in chunks of tiles, the tiles' amaxes from the
// reduction kernels, each tile's candidate errors from the fast pass
// (sqErrE4M3RcpAVX512: reciprocals, float32 lanes) and, where marginLeast
// leaves the choice open, from the float64 pass (sqErrE4M3DivAVX512), the
// assembly over runs of a multiple of 16 elements that start at lane 0 and
// the Go loop for the rest, the choice in Go, then the elements through
// quantE4M3AVX512.

func searchMXFP8Blocks(codes []byte, scales []uint8, src []float32) {
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
	rows, cols, tr, tc, across, _ := t.geometry("searchE4M3", len(src))
	ct := max(1, min(across, chunkGroups, fp8ChunkBytes/(4*tr*tc)))
	var amax, tmp [chunkGroups]uint32
	var div [chunkGroups]float32
	var s e4m3TileSearch
	s.lo, s.hi = marginFactors(searchE4M3Margin(tr * tc))
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
				lo := c0 + j*tc
				d, _ = s.choose(src, cols, r0, r1, lo, min(lo+tc, c1), math.Float32frombits(amax[j]))
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

// e4m3TileSearch holds a tile search's candidates and lanes, and the
// margin factors of its tile size.
type e4m3TileSearch struct {
	cand, rcp [maxE4M3Cands]float32
	acc       [maxE4M3Cands * sqErrLanes]float64
	fast      [maxE4M3Cands]float32
	errs      [maxE4M3Cands]float64
	sat       float32 // e4m3SatBound(&cand)
	lo, hi    float32
}

// choose returns the divisor of least error of the tile of rows r0..r1−1
// and columns lo..hi−1 of src (rows of cols elements) whose largest
// magnitude amax is finite and gives a rule divisor that is not 0, and
// whether the float64 sums decided: the fast pass's sums when marginLeast
// lets them, else the float64 sums (none for a lone candidate).
func (s *e4m3TileSearch) choose(src []float32, cols, r0, r1, lo, hi int, amax float32) (float32, bool) {
	n := e4m3Candidates(&s.cand, amax)
	if n == 1 {
		return s.cand[0], false // the rule's, with nothing to compare
	}
	for c := n; c < maxE4M3Cands; c++ {
		s.cand[c] = s.cand[0]
	}
	fast := !e4m3ForceExact
	for c := range n {
		fast = fast && e4m3RcpRange(s.cand[c])
		s.rcp[c] = 1 / s.cand[c]
	}
	if fast {
		for c := n; c < maxE4M3Cands; c++ {
			s.rcp[c] = s.rcp[0]
		}
		s.sat = e4m3SatBound(&s.cand)
		clear(s.acc[:])
		s.lanes(src, cols, r0, r1, lo, hi, n, true)
		for c := range n {
			s.fast[c] = float32(sumLanes16((*[sqErrLanes]float64)(s.acc[c*sqErrLanes:])))
		}
		if b, ok := marginLeast(s.fast[:n], s.lo, s.hi); ok {
			return s.cand[b], false
		}
	}
	clear(s.acc[:])
	s.lanes(src, cols, r0, r1, lo, hi, n, false)
	for c := range n {
		s.errs[c] = sumLanes16((*[sqErrLanes]float64)(s.acc[c*sqErrLanes:]))
	}
	return s.cand[bestE4M3(s.errs[:n])], true
}

// lanes adds the tile's error lanes of the candidates to s.acc: the fast
// pass's (fast) or the float64 terms, by the assembly over runs of a
// multiple of 16 elements that start at lane 0, the float64 terms of
// sqErrE4M3Acc for the rest.
func (s *e4m3TileSearch) lanes(src []float32, cols, r0, r1, lo, hi, n int, fast bool) {
	run := func(x []float32, width, rows, stride int) {
		if fast {
			sqErrE4M3RcpAVX512(&s.acc, x, &s.rcp, &s.cand, s.sat, width, rows, stride)
		} else {
			sqErrE4M3DivAVX512(&s.acc, x, &s.cand, width, rows, stride)
		}
	}
	w := hi - lo
	if w%sqErrLanes == 0 {
		// Every row's elements start at lane 0: the whole tile in one call.
		run(src[r0*cols+lo:(r1-1)*cols+hi], w, r1-r0, cols)
		return
	}
	for r := r0; r < r1; r++ {
		seg := src[r*cols+lo : r*cols+hi]
		k := (r - r0) * w
		m := 0
		if k%sqErrLanes == 0 {
			m = len(seg) &^ (sqErrLanes - 1)
			run(seg[:m], m, 1, 0)
		}
		for c := range n {
			sqErrE4M3Acc((*[sqErrLanes]float64)(s.acc[c*sqErrLanes:]), seg[m:], k+m, s.cand[c])
		}
	}
}
