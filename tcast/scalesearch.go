package tcast

import (
	"math"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
)

// The data-free scale search (Options.ScaleSearch, docs/NUMERICS.md §11):
// per block, a few candidate scale codes around the one the rule chose are
// tried, each block is encoded and decoded as it would be stored, and the
// code of least (importance-weighted) squared error is kept; the rule's code
// wins ties. Only the stored scale code changes, so every decoder reads the
// result unchanged.

// searchRatios are the clipping ratios of a block's amax that the search
// tries for float scales wider than 8 bits (integer groups, FP8 with float32
// scales): the scale amax·r / max element for each r, r = 1 being the rule.
var searchRatios = [...]float32{0.95, 0.9, 0.85, 0.8}

// fourOverSix is the factor of the NVFP4 "4/6" candidate: the scale that maps
// the block's amax onto the E2M1 value 4 instead of 6 (6/4 = 1.5 times the
// rule's scale).
const fourOverSix = 1.5

// searchScratch holds the buffers of one block's search.
type searchScratch struct {
	scaled []float32
	codes  []uint32
	dec    []float32
	w      []float32
	cands  []uint32
	blk    kernels.SqErrBlock // the fast path's argument (its Int fields set once)
}

// The one-pass candidate errors of the element formats that have one (the
// SqErr of the kernels' codecs): E2M1 (MXFP4's and NVFP4's elements), E4M3
// (MXFP8's and the FP8 tiles'), integers (the integer groups').
var (
	sqErrE2M1 = kernelMXFP4.codec().SqErr
	sqErrE4M3 = kernelMXFP8.codec().SqErr
	sqErrInt  = kernelIntSym.codec().SqErr
)

// setSearchFast chooses the one-pass candidate error of the element format
// (sqErrE2M1 and its kin) when it computes exactly what
// candidateErr's general path (encode, decode, sum) computes: round to
// nearest even with saturation, and E2M1, E4M3 or an integer format of at
// most 16 bits. It leaves c.ssFast nil otherwise.
func (c *caster) setSearchFast() {
	if c.opts.Rounding != kernels.RoundEven || c.eopts.Overflow != dtype.Saturate {
		return
	}
	switch {
	case c.elem == fmtE2M1 && !c.opts.FullRange:
		c.ssFast = sqErrE2M1
	case c.elem == fmtE4M3FN && !c.opts.FullRange:
		c.ssFast = sqErrE4M3
	case c.elem.Kind() == dtype.Int && c.elem.Bits() <= 16:
		step := c.elem.Decode(1) // 2^−FracBits
		c.ss.blk = kernels.SqErrBlock{IntScale: 1 / step, IntStep: step, IntLo: float32(c.qmin), IntHi: float32(c.qmax)}
		c.ssFast = sqErrInt
	}
}

// grow returns the buffers resized to n elements.
func (s *searchScratch) grow(n int) {
	if cap(s.scaled) < n {
		s.scaled = make([]float32, n)
		s.codes = make([]uint32, n)
		s.dec = make([]float32, n)
		s.w = make([]float32, n)
	}
	s.scaled, s.codes, s.dec, s.w = s.scaled[:n], s.codes[:n], s.dec[:n], s.w[:n]
}

// searchWeights returns the weights of block b's n values (nil: all 1).
func (c *caster) searchWeights(b block, n int) []float32 {
	if c.ssImp.v == nil {
		return nil
	}
	c.ss.grow(n)
	w := c.ss.w
	c.ssImp.gather(w, b)
	return w
}

// candidateErr returns the squared error, weighted by w (nil: 1) and
// skipping dropped elements, of block v encoded as v·mul (v/div when div is
// not 0) and decoded as element × dmul, as the decoder does. A dmul of 0 is a
// block stored as zeros.
func (c *caster) candidateErr(v []float32, keep []bool, w []float32, mul, div, dmul float32, b block) float64 {
	s := &c.ss
	n := len(v)
	var sum float64
	if dmul == 0 {
		for i, x := range v {
			if keep != nil && !keep[i] {
				continue
			}
			e := float64(x) * float64(x)
			if w != nil {
				e *= float64(w[i])
			}
			sum += e
		}
		return sum
	}
	if c.ssFast != nil {
		s.blk.V, s.blk.W, s.blk.Keep = v, w, keep
		s.blk.Mul, s.blk.Div, s.blk.DMul = mul, div, dmul
		return c.ssFast(&s.blk)
	}
	scaled, codes, dec := s.scaled[:n], s.codes[:n], s.dec[:n]
	if div != 0 {
		for i, x := range v {
			scaled[i] = x / div
		}
	} else {
		for i, x := range v {
			scaled[i] = x * mul
		}
	}
	dtype.EncodeSlice(c.elem, codes, scaled, c.eoptsFor(b))
	dtype.DecodeSlice(c.elem, dec, codes)
	if c.elem == fmtE4M3FN {
		// E4M3 errors sum in lanes, as the one-pass and fused kernels sum
		// them (docs/NUMERICS.md §11): the candidate error of the decoded
		// elements.
		s.blk.V, s.blk.W, s.blk.Keep, s.blk.Dec, s.blk.DMul = v, w, keep, dec, dmul
		e := sqErrE4M3(&s.blk)
		s.blk.Dec = nil
		return e
	}
	for i, x := range v {
		if keep != nil && !keep[i] {
			continue
		}
		d := float64(x) - float64(dec[i]*dmul)
		e := d * d
		if w != nil {
			e *= float64(w[i])
		}
		sum += e
	}
	return sum
}

// searchExponent returns the power-of-two scale code of least error among
// the rule's code and its two neighbours (exponent −1, +1) in the scale
// format's range; the block is finite and not all zero.
func (c *caster) searchExponent(rule uint32, v []float32, keep []bool, b block) uint32 {
	c.ss.grow(len(v))
	w := c.searchWeights(b, len(v))
	errOf := func(code uint32) float64 {
		s := c.dec.byteScale[code]
		return c.candidateErr(v, keep, w, 1/s, 0, s, b)
	}
	best, bestErr := rule, errOf(rule)
	for _, k := range [2]int{int(rule) - 1, int(rule) + 1} {
		if k < 0 || k > int(c.sf.MaxCode()) {
			continue
		}
		if e := errOf(uint32(k)); e < bestErr {
			best, bestErr = uint32(k), e
		}
	}
	return best
}

// floatCandidates returns the candidate codes of a float-scaled block whose
// finite positive amax gave the rule's code rule, the rule's first.
func (c *caster) floatCandidates(rule uint32, amax float32) []uint32 {
	cands := append(c.ss.cands[:0], rule)
	add := func(code uint32) {
		s := c.dec.scale(code)
		if !(s > 0) || isNonFinite(s) {
			return
		}
		for _, k := range cands {
			if k == code {
				return
			}
		}
		cands = append(cands, code)
	}
	switch {
	case c.opts.PowerOfTwoScales:
		e := c.sel.Exponent(amax)
		for _, k := range [2]int{e - 1, e + 1} {
			add(c.sf.Encode(float32(math.Ldexp(1, k)) / c.tensorMul))
		}
	case c.sf.Bits() <= 8:
		// A narrow scale (NVFP4's UE4M3): the neighbouring codes, and for
		// E2M1 elements the 4/6 variant.
		if rule > 0 {
			add(rule - 1)
		}
		if rule < c.sf.MaxCode() {
			add(rule + 1)
		}
		if c.elem == fmtE2M1 {
			add(c.sf.Encode(amax / (c.elemMax * c.tensorMul) * fourOverSix))
		}
	default:
		for _, r := range searchRatios {
			add(c.sf.Encode(amax * r / (c.elemMax * c.tensorMul)))
		}
	}
	c.ss.cands = cands
	return cands
}

// searchFloat returns the float scale code of least error among
// floatCandidates; the block is finite and not all zero.
func (c *caster) searchFloat(rule uint32, amax float32, v []float32, keep []bool, b block) uint32 {
	c.ss.grow(len(v))
	w := c.searchWeights(b, len(v))
	best, bestErr := rule, math.Inf(1)
	for _, code := range c.floatCandidates(rule, amax) {
		d := c.dec.scale(code) * c.tensorMul
		if e := c.candidateErr(v, keep, w, 0, d, d, b); e < bestErr {
			best, bestErr = code, e
		}
	}
	return best
}

// noSearchFast, set by tests, makes the scale search take candidateErr's
// general path for every element format (the differential tests compare
// the two).
var noSearchFast bool
