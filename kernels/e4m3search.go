package kernels

import (
	"encoding/binary"
	"math"
)

// The scale search of E4M3 (e4m3fn) elements (tcast's Options.ScaleSearch,
// docs/NUMERICS.md §11) fused with the quantizer: SearchMXFP8 and
// SearchE4M3 write what QuantizeMXFP8 and QuantizeE4M3 write, except that
// each block's scale is the candidate of least squared error.
//
// The error of a candidate is summed in sixteen float64 lanes: the term of
// the block's element i (row-major within a 2-D tile) is added to lane
// i mod 16, the lanes in index order, and the lanes are then reduced by a
// fixed tree (sumLanes16). A term is float64(x − x̂)², the difference a
// float32 subtraction (exact wherever x̂ is 0 or within a factor of two of
// x, which is everywhere but at float32 underflow) and its square exact in
// float64 (24 significant bits squared), so only the additions round, in
// an order a vector unit follows as well as a scalar loop.

// sqErrLanes is the number of lanes the E4M3 candidate errors sum in.
const sqErrLanes = 16

// sumLanes16 reduces the lane sums of an E4M3 candidate error: b_j =
// a_j + a_{j+8}, c_j = b_j + b_{j+4}, d_j = c_j + c_{j+2}, d_0 + d_1.
func sumLanes16(a *[sqErrLanes]float64) float64 {
	var b [8]float64
	for j := range b {
		b[j] = a[j] + a[j+8]
	}
	c0, c1, c2, c3 := b[0]+b[4], b[1]+b[5], b[2]+b[6], b[3]+b[7]
	return (c0 + c2) + (c1 + c3)
}

// SqErrE4M3FNDecoded is the candidate error of E4M3 elements given the
// decoded elements: the squared errors (weighted by w, nil: 1) of v against
// float32(dec_i·dmul), over the kept elements (keep nil: all), summed as
// SqErrE4M3FN sums them. It is the error of the general path (encode,
// decode, sum), which sums E4M3 blocks in the same order as the one-pass
// and fused kernels.
func SqErrE4M3FNDecoded(v, dec []float32, dmul float32, keep []bool, w []float32) float64 {
	var acc [sqErrLanes]float64
	for i, x := range v {
		if keep != nil && !keep[i] {
			continue
		}
		d := float64(x - float32(dec[i]*dmul))
		e := float64(d * d)
		if w != nil {
			e = float64(e * float64(w[i]))
		}
		acc[i%sqErrLanes] += e
	}
	return sumLanes16(&acc)
}

// sqErrE4M3Acc adds the error terms of x encoded as x/div and decoded as
// element × div to the lanes of acc, element i to lane (k0+i) mod 16.
func sqErrE4M3Acc(acc *[sqErrLanes]float64, x []float32, k0 int, div float32) {
	for i, v := range x {
		e := float64(v - float32(RoundE4M3FN(v/div)*div))
		acc[(k0+i)%sqErrLanes] += float64(e * e)
	}
}

// SearchMXFP8 is QuantizeMXFP8 with the scale search: each block whose
// largest magnitude is finite and not zero gets, of the E8M0 codes k − 1
// (when k > 0), k and k + 1 around the rule's code k, the one whose block
// (encoded with the multiplier 2^(127−code), decoded as element × 2^(code−127))
// has the least squared error, summed as SqErrE4M3FN sums it; k wins ties,
// then k − 1. The elements are then encoded with that scale.
func SearchMXFP8(codes []byte, scales []uint8, src []float32) {
	checkBlocks("SearchMXFP8", len(src), MXBlock, len(codes), MXBlock, len(scales))
	searchMXFP8(codes, scales, src)
}

// searchMXFP8Go is SearchMXFP8 in Go, the reference of its assembly.
func searchMXFP8Go(codes []byte, scales []uint8, src []float32) {
	for b := range len(src) / MXBlock {
		v := (*[MXBlock]float32)(src[b*MXBlock:])
		out := (*[MXBlock]byte)(codes[b*MXBlock:])
		amax := amaxBits(v[:])
		sc, ok := mxScale(amax, 8)
		if !ok {
			scales[b] = sc
			for j := range out {
				out[j] = e4m3NaN
			}
			continue
		}
		if amax != 0 {
			sc = searchMXFP8Block(v, sc)
		}
		scales[b] = sc
		mul := mx.recip[sc]
		for j, x := range v {
			out[j] = e4m3fnCode(x * mul)
		}
	}
}

// searchMXFP8Block returns the E8M0 code of least error for block v around
// the rule's code rule (≤ 246, so rule + 1 is a code).
func searchMXFP8Block(v *[MXBlock]float32, rule uint8) uint8 {
	errOf := func(code uint8) float64 {
		m, dm := mx.recip[code], mx.e8m0[code]
		var acc [sqErrLanes]float64
		for i, x := range v {
			e := float64(x - float32(RoundE4M3FN(float32(x*m))*dm))
			acc[i%sqErrLanes] += float64(e * e)
		}
		return sumLanes16(&acc)
	}
	best, bestErr := rule, errOf(rule)
	if rule > 0 {
		if e := errOf(rule - 1); e < bestErr {
			best, bestErr = rule-1, e
		}
	}
	if e := errOf(rule + 1); e < bestErr {
		best = rule + 1
	}
	return best
}

// e4m3SearchRatios are the clipping ratios after the rule's 1 that
// SearchE4M3 tries.
var e4m3SearchRatios = [...]float32{0.95, 0.9, 0.85, 0.8}

// maxE4M3Cands is the most candidates SearchE4M3 tries per tile.
const maxE4M3Cands = 1 + len(e4m3SearchRatios)

// e4m3Candidates sets div to the candidate divisors of a tile whose
// largest magnitude amax is finite and positive and whose rule divisor
// float32(amax/448) is not 0: the rule's, then float32(float32(amax·r)/448)
// for each ratio r, leaving out zeros, non-finite values and repeats. It
// returns how many there are.
func e4m3Candidates(div *[maxE4M3Cands]float32, amax float32) int {
	div[0] = amax / 448
	n := 1
next:
	for _, r := range e4m3SearchRatios {
		d := float32(amax*r) / 448
		if !(d > 0) || d > math.MaxFloat32 {
			continue
		}
		for _, p := range div[:n] {
			if p == d {
				continue next
			}
		}
		div[n] = d
		n++
	}
	return n
}

// bestE4M3 returns the index of the least of the candidate errors, the
// first of equal ones.
func bestE4M3(errs []float64) int {
	best := 0
	for k, e := range errs[1:] {
		if e < errs[best] {
			best = k + 1
		}
	}
	return best
}

// SearchE4M3 is QuantizeE4M3 with the scale search: each tile whose largest
// magnitude amax is finite, not zero, and gives a rule divisor
// s = float32(amax/448) that is not 0 gets, of the divisors s and
// float32(float32(amax·r)/448) for r = 0.95, 0.9, 0.85, 0.8 (zeros,
// infinities and repeats left out), the one whose tile (encoded as x/d,
// decoded as element × d) has the least squared error, the tile's elements
// in row-major order summed as SqErrE4M3FN sums them; the earliest wins
// ties. Its float32 bits are the tile's scale, and the elements are encoded
// with it.
func SearchE4M3(codes, scales []byte, src []float32, t FP8Tiles) {
	t.check("SearchE4M3", len(src), len(codes), len(scales))
	searchE4M3Tiles(codes, scales, src, t)
}

// searchE4M3Go is the reference of SearchE4M3.
func searchE4M3Go(codes, scales []byte, src []float32, t FP8Tiles) {
	rows, cols, tr, tc, _, _ := t.geometry("SearchE4M3", len(src))
	forTiles(rows, cols, tr, tc, func(k, r0, r1, c0, c1 int) {
		var amax uint32
		for r := r0; r < r1; r++ {
			amax = max(amax, absMaxBitsGo(src[r*cols+c0:r*cols+c1]))
		}
		code, d := fp8Scale(amax)
		if amax != 0 && d == d && d != 0 {
			var div [maxE4M3Cands]float32
			var errs [maxE4M3Cands]float64
			n := e4m3Candidates(&div, math.Float32frombits(amax))
			for c := range n {
				var acc [sqErrLanes]float64
				for r := r0; r < r1; r++ {
					sqErrE4M3Acc(&acc, src[r*cols+c0:r*cols+c1], (r-r0)*(c1-c0), div[c])
				}
				errs[c] = sumLanes16(&acc)
			}
			d = div[bestE4M3(errs[:n])]
			code = math.Float32bits(d)
		}
		binary.LittleEndian.PutUint32(scales[4*k:], code)
		for r := r0; r < r1; r++ {
			quantE4M3Tile(codes, src[r*cols+c0:r*cols+c1], r*cols+c0, d)
		}
	})
}
