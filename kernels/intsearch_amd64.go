//go:build amd64 && !purego

package kernels

import "math"

// The scale search of symmetric integer groups on amd64 (AVX-512): a chunk
// of whole groups at a time, the amaxes by absMaxBlocks, the five
// candidates' scale codes and divisors by the rule's scale kernel (on amax
// and on amax·r for each ratio r), the candidates' float32 errors by
// sqErrSymAVX512, the choice in Go (pickIntCand, or the float64 sums where its
// margin leaves the choice open), then the codes by the quantizer of
// QuantizeIntSym. Groups that are not whole vectors go through the Go
// reference, as does everything below the AVX-512 tier.

// intSearchScratch holds a chunk's per-group working arrays; the
// candidates' arrays hold candidate c of group j at c·chunkGroups+j.
type intSearchScratch struct {
	amax  [chunkGroups]uint32
	amaxR [chunkGroups]uint32
	div   [chunkGroups]float32
	cand  [searchIntCands * chunkGroups]float32 // the candidates' divisors
	rdiv  [searchIntCands * chunkGroups]float32
	dmul  [searchIntCands * chunkGroups]float32
	errs  [searchIntCands * chunkGroups]float32
	codes [searchIntCands * chunkGroups]uint32
	tmp   [4 * chunkGroups]byte // scale codes of one candidate
}

func searchIntSym(codes, scales []byte, src []float32, g IntGroups) {
	if active < tierAVX512 {
		searchIntSymGo(codes, scales, src, g)
		clearLastNibble(codes, len(src), g.Bits)
		return
	}
	cols, group, _ := g.geometry("SearchIntSym", len(src))
	qmax := qmaxSym(g.Bits)
	s := new(intSearchScratch)
	margin := searchIntMargin(group, qmax)
	groupRuns(len(src), cols, group, func(lo, hi, k0 int) {
		full := 0
		if group%16 == 0 && (g.Bits == 8 || lo%2 == 0) {
			full = (hi - lo) / group
		}
		if full > 0 {
			s.chunk(codes[g.codeBytes(lo):], scales[k0*g.Scale.Bytes():], src[lo:lo+full*group], group, full, qmax, margin, g)
		}
		for a, k := lo+full*group, k0+full; a < hi; a, k = a+group, k+1 {
			b := min(a+group, hi)
			code, d := searchSymScale(g.Scale, src[a:b], absMaxBitsGo(src[a:b]), qmax)
			g.Scale.put(scales, k, code)
			quantSymGroup(codes, src[a:b], a, d, qmax, g.Bits)
		}
	})
	clearLastNibble(codes, len(src), g.Bits)
}

// scalesOf stores the rule's scale codes (into scales) and divisors of the
// groups whose amax bits are amax, through the assembly and the Go rest.
func scalesOf(scales []byte, div []float32, amax []uint32, qmax float32, f ScaleFormat) {
	for j := symScales(scales, div, amax, qmax, f); j < len(amax); j++ {
		code, d := symScale(f, amax[j], qmax)
		f.put(scales, j, code)
		div[j] = d
	}
}

// chunk searches and quantizes nb whole groups of glen elements (a multiple
// of 16) of x, writing their codes from codes[0] and scales from scales[0].
func (s *intSearchScratch) chunk(codes, scales []byte, x []float32, glen, nb int, qmax float32, margin float64, g IntGroups) {
	f := g.Scale
	const cg = chunkGroups
	amax := s.amax[:nb]
	absMaxBlocks(amax, x, glen)
	scalesOf(scales, s.cand[:nb], amax, qmax, f)
	for j := range nb {
		s.codes[j] = f.get(scales, j)
	}
	for c, r := range searchIntRatios {
		for j, a := range amax {
			s.amaxR[j] = math.Float32bits(math.Float32frombits(a) * r)
		}
		o := (c + 1) * cg
		scalesOf(s.tmp[:], s.cand[o:o+nb], s.amaxR[:nb], qmax, f)
		for j := range nb {
			s.codes[o+j] = f.get(s.tmp[:], j)
		}
	}
	// The candidates' multipliers and decode factors: 0 for a candidate
	// left out (and for every candidate of a group not searched).
	var exact [chunkGroups]bool
	for j, a := range amax {
		d := s.cand[j]
		search := a != 0 && a < 0x7f800000 && d != 0
		for c := range searchIntCands {
			o := c*cg + j
			dc := s.cand[o]
			ok := search && dc > 0
			if c > 0 && ok {
				ok = math.Float32frombits(a)*searchIntRatios[c-1] != 0
				for k := range c {
					if s.codes[k*cg+j] == s.codes[o] && s.rdiv[k*cg+j] != 0 {
						ok = false
					}
				}
			}
			s.rdiv[o], s.dmul[o] = 0, 0
			if ok {
				s.rdiv[o], s.dmul[o] = 1/dc, dc
				// Outside float32's normal range the product by the
				// reciprocal is not within 2^−23 of the quotient.
				exact[j] = exact[j] || dc < 0x1p-126 || s.rdiv[o] < 0x1p-126
			}
		}
	}
	sqErrSymStride(s.errs[:], x, s.rdiv[:], s.dmul[:], glen, nb, qmax)
	for j := range nb {
		s.div[j] = s.cand[j]
		if s.rdiv[j] == 0 {
			continue // not searched: the rule's scale, already stored
		}
		var errs [searchIntCands]float32
		var idx [searchIntCands]int
		n := 0
		for c := range searchIntCands {
			if o := c*cg + j; s.rdiv[o] != 0 {
				errs[n], idx[n] = s.errs[o], o
				n++
			}
		}
		best, ok := pickIntCand(&errs, n, margin)
		if !ok || exact[j] {
			best = 0
			bestErr := math.Inf(1)
			for i := range n {
				if e := sqErrSym(x[j*glen:(j+1)*glen], s.cand[idx[i]], qmax); e < bestErr {
					best, bestErr = i, e
				}
			}
		}
		o := idx[best]
		f.put(scales, j, s.codes[o])
		s.div[j] = s.cand[o]
	}
	if g.Bits == 8 {
		quantSym8AVX512(codes, x, s.div[:nb], glen, qmax)
	} else {
		quantSym4AVX512(codes, x, s.div[:nb], glen, qmax)
	}
}

// sqErrSymStride runs sqErrSymAVX512 on nb groups whose candidates lie
// chunkGroups apart in errs, rdiv and dmul.
func sqErrSymStride(errs, x, rdiv, dmul []float32, glen, nb int, qmax float32) {
	sqErrSymAVX512(errs, x, rdiv, dmul, glen, chunkGroups, nb, qmax)
}
