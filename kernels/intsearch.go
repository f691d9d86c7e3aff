package kernels

import "math"

// The scale search of symmetric integer groups (tcast's Options.ScaleSearch
// on int8 and int4 datatypes with float16 or float32 scales, docs/NUMERICS.md
// §11): quantizeIntSym with each finite, non-zero group's scale chosen among
// five candidates instead of the rule's alone.
//
// The candidates of a group whose largest magnitude is amax are the codes of
// amax·r/qmax for the clipping ratios r = 1 (the rule: amax/qmax), 0.95, 0.9,
// 0.85 and 0.8, each product and quotient rounded to float32 and the scale
// encoded as quantizeIntSym encodes the rule's (nearest even, saturating); a
// candidate whose scale decodes to 0, or whose code an earlier candidate
// already has, is left out. Each candidate's error is the squared error of
// the group encoded with it and decoded as dequantizeIntSym decodes it, summed
// in float64 in index order as sqErrInt sums it; the candidate of least error
// wins, the earlier one on a tie (so the rule wins every tie). A group
// holding a NaN or an infinity, an all-zero group, and a group whose rule
// scale decodes to 0 keep the rule's scale, as quantizeIntSym gives them.
//
// The assembly tier does not compute those float64 sums for every group: it
// sums float32 errors in 16 lanes (codes from a product by the reciprocal of
// the scale instead of the quotient), bounds how far those sums can be from
// the float64 ones, and computes the float64 sums of the groups whose choice
// the bound leaves open (see searchIntMargin). The chosen scale, and so
// every byte, is the same.

// searchIntRatios are the clipping ratios of the candidates after the rule's.
var searchIntRatios = [...]float32{0.95, 0.9, 0.85, 0.8}

// searchIntCands is the number of candidates of a group (the rule's first).
const searchIntCands = 1 + len(searchIntRatios)

// searchIntSym is quantizeIntSym with the scale search: it quantizes src
// symmetrically as g describes, each group with the candidate scale of least
// squared error (the candidates and the error are those of the comment at
// the top of this file and of docs/NUMERICS.md §11), into codes and scales
// of the lengths quantizeIntSym takes.
func searchIntSym(codes, scales []byte, src []float32, g IntGroups) {
	g.check("searchIntSym", len(src), len(codes), len(scales), 0, false)
	searchIntSymGroups(codes, scales, src, g)
}

// symCandidates returns the candidate scale codes and divisors of a group
// with largest magnitude amax (finite, not 0) whose rule scale is code, d
// (d not 0), and how many there are; the rule's is first.
func symCandidates(f ScaleFormat, amax float32, code uint32, d, qmax float32) (cs [searchIntCands]uint32, ds [searchIntCands]float32, n int) {
	cs[0], ds[0], n = code, d, 1
next:
	for _, r := range searchIntRatios {
		c, dc := f.encodeScale(amax * r / qmax)
		if !(dc > 0) {
			continue
		}
		for _, k := range cs[:n] {
			if k == c {
				continue next
			}
		}
		cs[n], ds[n] = c, dc
		n++
	}
	return cs, ds, n
}

// sqErrSym is sqErrInt of group x at divisor d for codes −qmax..qmax.
func sqErrSym(x []float32, d, qmax float32) float64 {
	b := SqErrBlock{V: x, Div: d, DMul: d, IntScale: 1, IntStep: 1, IntLo: -qmax, IntHi: qmax}
	return sqErrInt(&b)
}

// searchSymGroup returns the scale code and divisor of least error for group
// x (largest magnitude amax, finite and not 0; rule scale code, d with d not
// 0), the float64 sums of sqErrInt deciding.
func searchSymGroup(f ScaleFormat, x []float32, amax float32, code uint32, d, qmax float32) (uint32, float32) {
	cs, ds, n := symCandidates(f, amax, code, d, qmax)
	best, bestErr := 0, math.Inf(1)
	for i := range n {
		if e := sqErrSym(x, ds[i], qmax); e < bestErr {
			best, bestErr = i, e
		}
	}
	return cs[best], ds[best]
}

// searchSymScale is symScale with the search: the scale code and divisor of
// group x whose largest magnitude has the bits amax.
func searchSymScale(f ScaleFormat, x []float32, amax uint32, qmax float32) (uint32, float32) {
	code, d := symScale(f, amax, qmax)
	if amax == 0 || amax >= 0x7f800000 || d == 0 {
		return code, d
	}
	return searchSymGroup(f, x, math.Float32frombits(amax), code, d, qmax)
}

// searchIntSymGo is the reference of searchIntSym.
func searchIntSymGo(codes, scales []byte, src []float32, g IntGroups) {
	cols, group, _ := g.geometry("searchIntSym", len(src))
	qmax := qmaxSym(g.Bits)
	forGroups(len(src), cols, group, func(k, lo, hi int) {
		searchSymGroupGo(codes, scales, src, k, lo, hi, qmax, g)
	})
}

// searchSymGroupGo searches the scale of group k, the elements lo..hi of
// src, stores it and quantizes the group with it, in Go.
func searchSymGroupGo(codes, scales []byte, src []float32, k, lo, hi int, qmax float32, g IntGroups) {
	x := src[lo:hi]
	code, d := searchSymScale(g.Scale, x, absMaxBitsGo(x), qmax)
	g.Scale.put(scales, k, code)
	quantSymGroup(codes, x, lo, d, qmax, g.Bits)
}

// sqErrSymLanesGo is the reference of the assembly's float32 candidate
// errors (sqErrSymAVX512): for each of nb groups of glen elements (glen a
// multiple of 16) and each of the searchIntCands candidates c (multiplier
// rdiv[c·stride+j], decode factor dmul[c·stride+j]), errs[c·stride+j] is the sum of
// e² with e = x − float32(q·dmul), q = x·rdiv rounded to an integer (nearest
// even) with its magnitude clamped to qmax (±qmax for a NaN): fused multiply-adds into 16
// lanes (element i into lane i mod 16), then the lanes added in a tree
// (lane l + lane l+8, then l+4, l+2, l+1).
func sqErrSymLanesGo(errs, src, rdiv, dmul []float32, glen, stride, nb int, qmax float32) {
	for j := range nb {
		x := src[j*glen : (j+1)*glen]
		for c := range searchIntCands {
			r, d := rdiv[c*stride+j], dmul[c*stride+j]
			var acc [16]float32
			for i, v := range x {
				q := float32(math.RoundToEven(float64(float32(v * r))))
				if q == q {
					q = float32(math.Copysign(float64(min(float32(math.Abs(float64(q))), qmax)), float64(q)))
				} else {
					q = float32(math.Copysign(float64(qmax), float64(q))) // VRANGEPS gives qmax
				}
				e := v - float32(q*d)
				acc[i%16] = fma32(e, e, acc[i%16])
			}
			for w := 8; w > 0; w /= 2 {
				for l := range w {
					acc[l] += acc[l+w]
				}
			}
			errs[c*stride+j] = acc[0]
		}
	}
}

// searchIntMargin is the relative margin by which the assembly's float32
// error of a group's best candidate must undercut every other candidate's
// for its choice to stand without the float64 sums, for groups of glen
// elements and codes up to qmax. It bounds, with a factor 2 to spare, the
// relative distance of a float32 sum from the float64 sum of the same
// candidate (both from the exact sum of the terms):
//
//   - rounding: each term's difference e rounds once (2·2^−24 in e²), a
//     lane's fused multiply-adds round glen/16 times and the tree four
//     more; the float64 sum's glen roundings of 2^−53 are far below;
//   - codes: x·rdiv and the quotient x/dmul differ by at most 2^−23 of
//     x/dmul, so they round to different integers only within 2^−23·qmax of
//     a half-integer h with |h| < qmax; there both codes' errors are
//     dmul·(1/2 ± δ) with |δ| ≤ 2^−23·qmax, whose squares differ by 2δ·dmul²,
//     less than 8δ ≤ 4·2^−22·qmax of either, and the rounding of q·dmul
//     (none for float16 divisors) adds at most 2·2^−22·qmax;
//
// all terms being non-negative, the relative bounds of the terms bound the
// sums. A best sum outside [2^−100, 2^100] (underflowing terms, all-zero
// errors, overflow) is never trusted.
func searchIntMargin(glen int, qmax float32) float64 {
	terms := float64(glen/16+4+2) * 0x1p-24
	codes := 6 * float64(qmax) * 0x1p-22
	return 2 * (terms + codes + float64(glen)*0x1p-52)
}

// noPick and noSearch are pickSymGo's answers for a group whose choice the
// float32 errors leave open and for a group not searched.
const (
	noPick   = ^uint32(0)
	noSearch = ^uint32(1)
)

// pickSymGo is the reference of pickSymF16AVX512 and pickSymF32AVX512: for
// each group j, the index b of the candidate of least float32 error
// errs[c·stride+j] (candidates whose rdiv is 0 left out; the earlier on a
// tie) if its error lies in [2^−100, 2^100] and, multiplied by hi, is below
// every other candidate's times lo (float32 products), and then the
// candidate's scale code codes[b·stride+j] as scale j and its divisor
// cand[b·stride+j] as div[j]; noPick if not; noSearch for a group whose rule
// candidate is left out (a group not searched).
func pickSymGo(pick []uint32, scales []byte, div, errs, rdiv, cand []float32, codes []uint32, stride int, lo, hi float32, f ScaleFormat) {
	inf := float32(math.Inf(1))
	for j := range pick {
		if rdiv[j] == 0 {
			pick[j] = noSearch
			continue
		}
		var e [searchIntCands]float32
		for c := range e {
			e[c] = errs[c*stride+j]
			if rdiv[c*stride+j] == 0 {
				e[c] = inf
			}
		}
		b, ok := marginLeast(e[:], lo, hi)
		pick[j] = noPick
		if ok {
			pick[j] = uint32(b)
			f.put(scales, j, codes[b*stride+j])
			div[j] = cand[b*stride+j]
		}
	}
}

// symCandsGo is the reference of symCandsF16AVX512 and symCandsF32AVX512:
// for each group j with largest magnitude bits a, candidate c's scale code
// and divisor (codes[c·stride+j], cand[c·stride+j]) and, where the
// candidate takes part in the search, its multiplier 1/d and decode factor
// d (rdiv, dmul; 0 and 0 where it does not). A candidate takes part when the
// group is searched (a finite and not 0), its amax·r is not 0, its divisor
// is above 0 and its code is not the previous candidate's (the codes do not
// increase from one candidate to the next, so an equal code is a repeat of
// an earlier candidate). With float32 scales a candidate whose d or 1/d is
// below 2^−126 gets the decode factor NaN. codes and cand are unspecified
// where rdiv is 0.
func symCandsGo(codes []uint32, cand, rdiv, dmul []float32, amax []uint32, stride int, qmax float32, f ScaleFormat) {
	for j, a := range amax {
		search := a != 0 && a < 0x7f800000
		var prev uint32
		for c := range searchIntCands {
			o := c*stride + j
			v := math.Float32frombits(a)
			if c > 0 {
				v *= searchIntRatios[c-1]
			}
			code, d := f.encodeScale(min(v/qmax, 65504))
			if f == ScaleFloat32 {
				code, d = math.Float32bits(v/qmax), v/qmax
			}
			ok := search && v != 0 && d > 0 && (c == 0 || code != prev)
			prev = code
			codes[o], cand[o], rdiv[o], dmul[o] = code, d, 0, 0
			if ok {
				rdiv[o], dmul[o] = 1/d, d
				if f == ScaleFloat32 && (d < 0x1p-126 || rdiv[o] < 0x1p-126) {
					dmul[o] = float32(math.NaN())
				}
			}
		}
	}
}
