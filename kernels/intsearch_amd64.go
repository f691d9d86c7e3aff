//go:build amd64 && !purego

package kernels

import "math"

// The scale search of symmetric integer groups on amd64 (AVX-512): a chunk
// of whole groups at a time (groups of a multiple of 16 elements), the
// amaxes by absMaxBlocks, the five candidates by symCands{F16,F32}AVX512,
// their float32 errors by sqErrSym{F16,}AVX512 (which prefetch the next
// chunk), the choice by pickSym{F16,F32}AVX512, which also stores the
// chosen scales (the float64 sums of sqErrInt decide where its margin
// leaves the choice open), then the codes by the quantizer of
// quantizeIntSym. Other groups go through the Go reference, as does
// everything below the AVX-512 tier.

// searchChunk is about how many elements a chunk of the search holds.
const searchChunk = 8192

// intSearchScratch holds a chunk's per-group working arrays; the
// candidates' arrays hold candidate c of group j at c·chunkGroups+j.
type intSearchScratch struct {
	amax  [chunkGroups]uint32
	div   [chunkGroups]float32
	pick  [chunkGroups]uint32
	cand  [searchIntCands * chunkGroups]float32 // the candidates' divisors
	rdiv  [searchIntCands * chunkGroups]float32
	dmul  [searchIntCands * chunkGroups]float32
	errs  [searchIntCands * chunkGroups]float32
	codes [searchIntCands * chunkGroups]uint32
	lanes [16 * 16 * searchIntCands]float32 // the error kernels' scratch
}

func searchIntSymGroups(codes, scales []byte, src []float32, g IntGroups) {
	if active < tierAVX512 {
		searchIntSymGo(codes, scales, src, g)
		clearLastNibble(codes, len(src), g.Bits)
		return
	}
	cols, group, _ := g.geometry("searchIntSym", len(src))
	qmax := qmaxSym(g.Bits)
	s := new(intSearchScratch)
	lo, hi := marginFactors(searchIntMargin(group, qmax))
	groupRuns(len(src), cols, group, searchChunk, func(a, b, k0 int) {
		full := 0
		if group%16 == 0 && (g.Bits == 8 || a%2 == 0) {
			full = (b - a) / group
		}
		if full > 0 {
			s.chunk(codes[g.codeBytes(a):], scales[k0*g.Scale.Bytes():], src[a:a+full*group], group, full, qmax, lo, hi, g)
		}
		for a, k := a+full*group, k0+full; a < b; a, k = a+group, k+1 {
			searchSymGroupGo(codes, scales, src, k, a, min(a+group, b), qmax, g)
		}
	})
	clearLastNibble(codes, len(src), g.Bits)
}

// chunk searches and quantizes nb whole groups of glen elements (a multiple
// of 16) of x, writing their codes from codes[0] and scales from scales[0].
func (s *intSearchScratch) chunk(codes, scales []byte, x []float32, glen, nb int, qmax, lo, hi float32, g IntGroups) {
	f := g.Scale
	const cg = chunkGroups
	amax := s.amax[:nb]
	absMaxBlocks(amax, x, glen)
	m := nb &^ 15
	if f == ScaleFloat16 {
		symCandsF16AVX512(s.codes[:], s.cand[:], s.rdiv[:], s.dmul[:], amax[:m], cg, qmax)
	} else {
		symCandsF32AVX512(s.codes[:], s.cand[:], s.rdiv[:], s.dmul[:], amax[:m], cg, qmax)
	}
	if m < nb {
		symCandsGo(s.codes[m:], s.cand[m:], s.rdiv[m:], s.dmul[m:], amax[m:], cg, qmax, f)
	}
	if f == ScaleFloat16 {
		sqErrSymF16AVX512(s.errs[:], x, s.rdiv[:], s.dmul[:], s.lanes[:], glen, cg, nb, qmax, 4*len(x))
		pickSymF16AVX512(s.pick[:m], scales, s.div[:], s.errs[:], s.rdiv[:], s.cand[:], s.codes[:], cg, lo, hi)
	} else {
		sqErrSymAVX512(s.errs[:], x, s.rdiv[:], s.dmul[:], s.lanes[:], glen, cg, nb, qmax, 4*len(x))
		pickSymF32AVX512(s.pick[:m], scales, s.div[:], s.errs[:], s.rdiv[:], s.cand[:], s.codes[:], cg, lo, hi)
	}
	if m < nb {
		pickSymGo(s.pick[m:nb], scales[m*f.Bytes():], s.div[m:], s.errs[m:], s.rdiv[m:], s.cand[m:], s.codes[m:], cg, lo, hi, f)
	}
	for j, p := range s.pick[:nb] {
		switch p {
		case noSearch:
			// The rule's scale.
			code, d := symScale(f, amax[j], qmax)
			f.put(scales, j, code)
			s.div[j] = d
		case noPick:
			o := int(s.exactPick(x[j*glen:(j+1)*glen], j, qmax, lo, hi))*cg + j
			f.put(scales, j, s.codes[o])
			s.div[j] = s.cand[o]
		}
	}
	if g.Bits == 8 {
		quantSym8AVX512(codes, x, s.div[:nb], glen, qmax)
	} else {
		quantSym4AVX512(codes, x, s.div[:nb], glen, qmax)
	}
}

// exactPick returns the candidate of group j (elements x) of least float64
// error, the earlier on a tie, among those taking part. Only the candidates
// whose float32 error is within the margin of the least one are summed in
// float64: the others' float64 errors exceed that one's.
func (s *intSearchScratch) exactPick(x []float32, j int, qmax, lo, hi float32) uint32 {
	least := float32(math.Inf(1))
	for c := range searchIntCands {
		if o := c*chunkGroups + j; s.rdiv[o] != 0 && s.errs[o] < least {
			least = s.errs[o]
		}
	}
	h := float32(least * hi)
	best, bestErr := uint32(0), math.Inf(1)
	for c := range searchIntCands {
		o := c*chunkGroups + j
		if s.rdiv[o] == 0 || float32(s.errs[o]*lo) > h && least >= marginTiny && least <= marginHuge {
			continue // left out, or clearly worse than the least
		}
		if e := sqErrSym(x, s.cand[o], qmax); e < bestErr {
			best, bestErr = uint32(c), e
		}
	}
	return best
}
