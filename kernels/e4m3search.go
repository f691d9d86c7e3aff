package kernels

import (
	"encoding/binary"
	"math"
)

// The scale search of E4M3 (e4m3fn) elements (tcast's Options.ScaleSearch,
// docs/NUMERICS.md §11) fused with the quantizer: searchMXFP8 and
// searchE4M3 write what quantizeMXFP8 and quantizeE4M3 write, except that
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

// sqErrE4M3FNDecoded is the candidate error of E4M3 elements given the
// decoded elements: the squared errors (weighted by w, nil: 1) of v against
// float32(dec_i·dmul), over the kept elements (keep nil: all), summed as
// sqErrE4M3FN sums them. It is the error of the general path (encode,
// decode, sum), which sums E4M3 blocks in the same order as the one-pass
// and fused kernels.
func sqErrE4M3FNDecoded(v, dec []float32, dmul float32, keep []bool, w []float32) float64 {
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
		e := float64(v - float32(roundE4M3FN(v/div)*div))
		acc[(k0+i)%sqErrLanes] += float64(e * e)
	}
}

// searchMXFP8 is quantizeMXFP8 with the scale search: each block whose
// largest magnitude is finite and not zero gets, of the E8M0 codes k − 1
// (when k > 0), k and k + 1 around the rule's code k, the one whose block
// (encoded with the multiplier 2^(127−code), decoded as element × 2^(code−127))
// has the least squared error, summed as sqErrE4M3FN sums it; k wins ties,
// then k − 1. The elements are then encoded with that scale.
func searchMXFP8(codes []byte, scales []uint8, src []float32) {
	checkBlocks("searchMXFP8", len(src), mxBlock, len(codes), mxBlock, len(scales))
	searchMXFP8Blocks(codes, scales, src)
}

// searchMXFP8Go is searchMXFP8 in Go, the reference of its assembly.
func searchMXFP8Go(codes []byte, scales []uint8, src []float32) {
	for b := range len(src) / mxBlock {
		v := (*[mxBlock]float32)(src[b*mxBlock:])
		out := (*[mxBlock]byte)(codes[b*mxBlock:])
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
func searchMXFP8Block(v *[mxBlock]float32, rule uint8) uint8 {
	errOf := func(code uint8) float64 {
		m, dm := mx.recip[code], mx.e8m0[code]
		var acc [sqErrLanes]float64
		for i, x := range v {
			e := float64(x - float32(roundE4M3FN(float32(x*m))*dm))
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
// searchE4M3 tries.
var e4m3SearchRatios = [...]float32{0.95, 0.9, 0.85, 0.8}

// maxE4M3Cands is the most candidates searchE4M3 tries per tile.
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

// searchE4M3 is quantizeE4M3 with the scale search: each tile whose largest
// magnitude amax is finite, not zero, and gives a rule divisor
// s = float32(amax/448) that is not 0 gets, of the divisors s and
// float32(float32(amax·r)/448) for r = 0.95, 0.9, 0.85, 0.8 (zeros,
// infinities and repeats left out), the one whose tile (encoded as x/d,
// decoded as element × d) has the least squared error, the tile's elements
// in row-major order summed as sqErrE4M3FN sums them; the earliest wins
// ties. Its float32 bits are the tile's scale, and the elements are encoded
// with it.
func searchE4M3(codes, scales []byte, src []float32, t FP8Tiles) {
	t.check("searchE4M3", len(src), len(codes), len(scales))
	searchE4M3Tiles(codes, scales, src, t)
}

// searchE4M3Go is the reference of searchE4M3.
func searchE4M3Go(codes, scales []byte, src []float32, t FP8Tiles) {
	rows, cols, tr, tc, _, _ := t.geometry("searchE4M3", len(src))
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

// The fast pass of searchE4M3 (the AVX-512 tier; the Go reference and the
// other tiers sum in float64 alone): each candidate divisor d's terms are
// (|x| − float32(E4M3(float32(|x|·ρ))·d))² with ρ = float32(1/d), the
// product with the reciprocal standing for the quotient x/d, summed by
// fused multiply-adds in sixteen float32 lanes (element i of the tile in
// lane i mod 16) that are added to float64 lanes every e4m3RcpFlush steps of
// 16 elements; the float64 lanes are reduced by sumLanes16's tree and the
// result rounded to float32. marginLeast then takes the least of those sums
// if it undercuts every other candidate's by searchE4M3Margin, and the tile's
// float64 sums decide otherwise. The divisors must lie in [2^−116, 2^125]
// (e4m3RcpRange), so that ρ and every product the bound below meets are
// normal floats; tiles with a candidate outside take the float64 sums.

// e4m3RcpFlush is how many steps of 16 elements the fast pass sums in
// float32 lanes before adding them to its float64 lanes.
const e4m3RcpFlush = 64

// e4m3RcpRange reports whether the divisor d may take part in the fast
// pass: 2^−116 ≤ d ≤ 2^125.
func e4m3RcpRange(d float32) bool {
	return d >= 0x1p-116 && d <= 0x1p125
}

// searchE4M3Margin is the relative margin m = 2ε of marginLeast for the
// fast pass over tiles of at most n elements (see searchmargin.go), ε the
// sum of
//
//   - 2^−15 for the codes: float32(|x|·ρ) and the quotient
//     q = float32(|x|/d) both lie within 2^−23·v of v = |x|/d, so their
//     E4M3 roundings differ only when a midpoint h between consecutive
//     E4M3 magnitudes A < B (step g = B − A) lies within 2^−23·v of v;
//     h ≤ 15.5·g (432 between 416 and 448 at the top, no midpoint above,
//     where both saturate to 448), so |v − h| ≤ 2^−19·g and the exact errors
//     |x| − A·d and B·d − |x| both lie within g·d·(1/2 ± 2^−19), a ratio
//     within 1 ± 2^−17 (1 ± 2^−16 squared); the rounding of the product
//     A·d or B·d (at most 2^−24·16.5·g·d, a normal float32 for d ≥ 2^−116)
//     and of the difference move each error by at most 35·2^−24 of itself,
//     2^−17.9 more in the ratio; so a term whose code differs lies within
//     1 ± 2^−15 of the defining term (the squared ratio lies within
//     1 ± (2^−16 + 2^−16.9)); the other terms are equal;
//   - 64·2^−24·(1 + 2^−10) for the float32 lanes: between two additions to
//     the float64 lanes a lane adds at most 64 terms, each addition
//     rounding by at most 2^−24 of a partial sum no larger than the lane's
//     sum, as long as that is normal; below, a rounding is at most 2^−150,
//     n·2^−150 in all, at most n·2^−50 of a least sum of at least 2^−100;
//   - 2^−21 for rounding the sum to float32 (2^−24) and marginLeast's two
//     float32 products (a relative 2^−23 between them, which m absorbs
//     when ε holds 2^−22 for it);
//   - (n + 64)·2^−52 for the float64 additions, the defining sums' (n/16
//     per lane and the tree's 4) and the fast pass's;
//
// all the terms being non-negative, the bounds of the terms bound the sums.
// For tiles of 128 × 128 elements m ≈ 6.9·10^−5.
func searchE4M3Margin(n int) float64 {
	eps := 0x1p-15 + e4m3RcpFlush*0x1p-24*(1+0x1p-10) + 0x1p-21 + float64(n)*0x1p-50 + float64(n+64)*0x1p-52
	return 2 * eps
}

// e4m3SatBound returns a magnitude up to which no element's product with
// any reciprocal of the divisors div exceeds 464, so that its E4M3 rounding
// stays at most 448 without the clamp: 464·min(div)·(1 − 2^−18) in float32
// (at most 464·d·(1 − 2^−19) for every divisor d, and the product with
// float32(1/d) at most 464·(1 − 2^−19)·(1 + 2^−24) < 464), or 0 when that
// overflows.
func e4m3SatBound(div *[maxE4M3Cands]float32) float32 {
	d := div[0]
	for _, v := range div[1:] {
		d = min(d, v)
	}
	t := float32(float32(464*d) * (1 - 0x1p-18))
	if t > math.MaxFloat32 {
		return 0
	}
	return t
}

// sqErrE4M3RcpGo is the reference of sqErrE4M3RcpAVX512: for each of the
// maxE4M3Cands candidates c (reciprocal rcp[c], divisor div[c]) it adds to
// acc[16c : 16c+16] the fast pass's terms of the rows runs of width elements
// (a multiple of 16) starting every stride elements of x, element i of the
// runs (counted from 0 over all rows) in float32 lane i mod 16, the float32
// lanes added to acc and cleared after every e4m3RcpFlush steps of 16
// elements and at the end.
func sqErrE4M3RcpGo(acc *[maxE4M3Cands * sqErrLanes]float64, x []float32, rcp, div *[maxE4M3Cands]float32, width, rows, stride int) {
	for c := range maxE4M3Cands {
		var lane [sqErrLanes]float32
		flush := func() {
			for l, s := range lane {
				acc[c*sqErrLanes+l] += float64(s)
			}
			clear(lane[:])
		}
		steps := 0
		for r := range rows {
			run := x[r*stride : r*stride+width]
			for i := 0; i+sqErrLanes <= len(run); i += sqErrLanes {
				for l, v := range run[i : i+sqErrLanes] {
					a := math.Float32frombits(math.Float32bits(v) &^ (1 << 31))
					e := a - float32(roundE4M3FN(float32(a*rcp[c]))*div[c])
					lane[l] = fma32(e, e, lane[l])
				}
				if steps++; steps == e4m3RcpFlush {
					flush()
					steps = 0
				}
			}
		}
		flush()
	}
}

// e4m3ForceExact, set by tests, makes the fast tier's tile search take the
// float64 sums for every tile.
var e4m3ForceExact bool
