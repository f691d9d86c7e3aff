package kernels

import "math"

// The candidate errors of a scale search (tcast's Options.ScaleSearch): for
// one block v and one candidate scale, the squared error of the block encoded
// at that scale and decoded as a loader decodes it, in one pass and without
// the general-purpose element encoder. Each function computes, in float64
// (in index order; E4M3 in sixteen lanes from float32 differences, see
// sqErrE4M3FN),
//
//	Σ w_i · (x_i − float32(r(q_i)·dmul))²,  q_i = x_i/div (x_i·mul when div is 0),
//
// over the kept elements (keep nil: all; w nil: weights 1), r(q) being the
// element value that q encodes to by round-to-nearest-even with saturation:
// the decoder's value of the encoder's code, bit for bit. Every operation is
// rounded where the general path (encode a slice, decode it, sum) rounds it,
// so the sums, and the candidate a search picks, are the same.

// SqErrBlock is one candidate of a scale search: v/Div (v·Mul when Div is
// 0) is encoded and each element decodes as element × DMul. When Dec is
// not nil it holds the decoded elements (before DMul) of a candidate
// encoded elsewhere, and the error is that of V against float32(Dec_i·DMul),
// summed in the same order.
type SqErrBlock struct {
	V        []float32
	W        []float32 // weights, or nil for 1
	Keep     []bool    // kept elements, or nil for all
	Dec      []float32 // decoded elements, or nil to encode V
	Mul, Div float32
	DMul     float32
	IntScale float32 // integers: 2^FracBits, the code of a value q is RNE(q·IntScale)
	IntStep  float32 // integers: 2^−FracBits, the value of code 1
	IntLo    float32 // integers: the smallest code's integer
	IntHi    float32 // integers: the largest code's integer
}

// roundE2M1 returns the E2M1 value that q encodes to (nearest even,
// saturating at ±6, −0 for negative values that round to zero).
func roundE2M1(q float32) float32 {
	b := math.Float32bits(q)
	c := e2m1Code(min(int32(b&0x7fffffff), e2m1KeyHi), &mx.e2m1Key) | b>>31<<3
	return mx.e2m1[c&15]
}

// roundE4M3FN returns the E4M3 (e4m3fn) value that the non-NaN q encodes to
// (nearest even, saturating at ±448, −0 for negative values that round to
// zero).
func roundE4M3FN(q float32) float32 {
	return mx.e4m3fn[e4m3RNE(q)]
}

// e4m3fnCode is the E4M3 code of the non-NaN q, nearest even, saturating:
// quantizeMXFP8Go's rounding of one value (e4m3RNE).
func e4m3fnCode(q float32) uint8 { return e4m3RNE(q) }

// roundInt returns the value that the non-NaN q encodes to in an integer
// format whose codes run from lo to hi (integers, |lo|, |hi| < 2^21) and
// whose code k has the value k·step, step = 1/scale a power of two: q·scale
// rounded to the nearest integer, ties to even, clamped to [lo, hi], times
// step.
func roundInt(q, scale, step, lo, hi float32) float32 {
	y := min(max(float32(q*scale), lo-1), hi+1)
	return min(max(float32(roundEven32(y)), lo), hi) * step
}

// sqErrE2M1 is the candidate error of E2M1 elements (MXFP4, NVFP4).
func sqErrE2M1(b *SqErrBlock) float64 {
	if b.Dec != nil {
		return sqErrDecoded(b)
	}
	var sum float64
	if b.Keep == nil && b.W == nil {
		dm := b.DMul
		if d := b.Div; d != 0 {
			for _, x := range b.V {
				e := float64(x) - float64(float32(roundE2M1(x/d)*dm))
				sum += float64(e * e)
			}
			return sum
		}
		m := b.Mul
		for _, x := range b.V {
			e := float64(x) - float64(float32(roundE2M1(float32(x*m))*dm))
			sum += float64(e * e)
		}
		return sum
	}
	if b.Div != 0 {
		for i, x := range b.V {
			if b.Keep != nil && !b.Keep[i] {
				continue
			}
			sum += errTerm(b, i, x, float32(roundE2M1(x/b.Div)*b.DMul))
		}
		return sum
	}
	for i, x := range b.V {
		if b.Keep != nil && !b.Keep[i] {
			continue
		}
		sum += errTerm(b, i, x, float32(roundE2M1(float32(x*b.Mul))*b.DMul))
	}
	return sum
}

// sqErrE4M3FN is the candidate error of E4M3 elements (MXFP8, FP8 blocks).
// Unlike the other formats' sums, a term is float64(x − x̂)² with x − x̂ a
// float32 subtraction, and the terms are summed in sixteen float64 lanes,
// element i into lane i mod 16 and the lanes reduced by a fixed tree (see
// searchMXFP8), which the fused search kernels follow.
func sqErrE4M3FN(b *SqErrBlock) float64 {
	if b.Dec != nil {
		return sqErrE4M3FNDecoded(b.V, b.Dec, b.DMul, b.Keep, b.W)
	}
	var acc [sqErrLanes]float64
	if b.Keep == nil && b.W == nil {
		dm := b.DMul
		if d := b.Div; d != 0 {
			for i, x := range b.V {
				e := float64(x - float32(roundE4M3FN(x/d)*dm))
				acc[i%sqErrLanes] += float64(e * e)
			}
			return sumLanes16(&acc)
		}
		m := b.Mul
		for i, x := range b.V {
			e := float64(x - float32(roundE4M3FN(float32(x*m))*dm))
			acc[i%sqErrLanes] += float64(e * e)
		}
		return sumLanes16(&acc)
	}
	for i, x := range b.V {
		if b.Keep != nil && !b.Keep[i] {
			continue
		}
		q := x / b.Div
		if b.Div == 0 {
			q = float32(x * b.Mul)
		}
		e := float64(x - float32(roundE4M3FN(q)*b.DMul))
		e = float64(e * e)
		if b.W != nil {
			e = float64(e * float64(b.W[i]))
		}
		acc[i%sqErrLanes] += e
	}
	return sumLanes16(&acc)
}

// sqErrInt is the candidate error of integer elements (MXINT8, integer
// groups) described by b's Int fields.
func sqErrInt(b *SqErrBlock) float64 {
	if b.Dec != nil {
		return sqErrDecoded(b)
	}
	var sum float64
	s, st, lo, hi := b.IntScale, b.IntStep, b.IntLo, b.IntHi
	if b.Keep == nil && b.W == nil {
		dm := b.DMul
		if d := b.Div; d != 0 {
			for _, x := range b.V {
				e := float64(x) - float64(float32(roundInt(x/d, s, st, lo, hi)*dm))
				sum += float64(e * e)
			}
			return sum
		}
		m := b.Mul
		for _, x := range b.V {
			e := float64(x) - float64(float32(roundInt(float32(x*m), s, st, lo, hi)*dm))
			sum += float64(e * e)
		}
		return sum
	}
	if b.Div != 0 {
		for i, x := range b.V {
			if b.Keep != nil && !b.Keep[i] {
				continue
			}
			sum += errTerm(b, i, x, float32(roundInt(x/b.Div, s, st, lo, hi)*b.DMul))
		}
		return sum
	}
	for i, x := range b.V {
		if b.Keep != nil && !b.Keep[i] {
			continue
		}
		sum += errTerm(b, i, x, float32(roundInt(float32(x*b.Mul), s, st, lo, hi)*b.DMul))
	}
	return sum
}

// sqErrDecoded is the error of b.V against its given decoded elements
// b.Dec, summed in index order.
func sqErrDecoded(b *SqErrBlock) float64 {
	var sum float64
	for i, x := range b.V {
		if b.Keep != nil && !b.Keep[i] {
			continue
		}
		sum += errTerm(b, i, x, float32(b.Dec[i]*b.DMul))
	}
	return sum
}

// errTerm is w_i·(x − dec)² in float64.
func errTerm(b *SqErrBlock, i int, x, dec float32) float64 {
	d := float64(x) - float64(dec)
	e := float64(d * d)
	if b.W != nil {
		e = float64(e * float64(b.W[i]))
	}
	return e
}
