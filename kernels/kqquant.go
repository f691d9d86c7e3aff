package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The quantizers of ggml's K-quant, legacy and IQ4 blocks. Each takes rows
// of float32 values and, optionally, an importance vector imp: one weight
// per column, len(imp) the row length (a multiple of the block), the rows
// being len(src)/len(imp). Element i then weighs imp[i % len(imp)], times
// its format's factor (kqweight.go: ggml's sqrt(σ² + x²) for some), in the
// squared error the searches minimise; without imp every element weighs
// 1 (|x| for Q2_K). NaN, infinite and negative weights count as 0, the
// others are held within [2^−100, 2^100], and a sub-block whose weights
// are all 0 is fitted as if they were all 1. NaN and infinite
// elements weigh 0 in the fits; a NaN is stored as the code nearest 0 and
// an infinity as the extreme code of its sign.

// checkImp panics unless imp is nil or a row length dividing n elements
// into whole rows of whole blocks.
func checkImp(kernel string, n, block int, imp []float32) {
	if imp == nil {
		return
	}
	if len(imp) == 0 || len(imp)%block != 0 || n%len(imp) != 0 {
		panic(fmt.Sprintf("kernels: %s: an importance vector of %d for %d elements: want a row length that is a multiple of %d and divides them",
			kernel, len(imp), n, block))
	}
}

// impAt returns the importance of the n elements from element off of a
// tensor whose rows have len(imp) elements, or nil for a nil imp.
func impAt(imp []float32, off, n int) []float32 {
	if imp == nil {
		return nil
	}
	o := off % len(imp)
	return imp[o : o+n]
}

// kqScratch is the per-call scratch of the quantizers.
type kqScratch struct {
	wt     [qkk]float32 // the weights under g
	xs, ws [qkk]float32 // the block's finite values and weights
	q      [qkk]uint8   // stored codes
	dq     [qkk]float32 // a packed block decoded (unbias, unbiasK)
	fl     fitLanes     // the fits' candidates
	tr     superScratch // the super-block kernels' scratch
	res    superRes     // a super-block search's result
	// impOK is set when every weight of the call's importance vector is
	// positive and at most 2^100, so that prep may use it as it is.
	impOK bool
	g     *weighting // the quantizer's rule of weights
	fin   bool       // prep's elements are the block's own: all finite
	amax  float32    // their largest magnitude when prepBase found it, else −1
	scale [8]float32 // the factor of the weights of each 32 elements (weigh)
	out   []float32  // where prep writes the block's weights, unscaled; nil: nowhere
}

// outAt points s.out at the n weights of w from element o, or at nothing
// when w is nil.
func (s *kqScratch) outAt(w []float32, o, n int) {
	s.out = nil
	if w != nil {
		s.out = w[o : o+n]
	}
}

// checkWeights panics unless w is nil or holds a weight for each of n
// elements.
func checkWeights(kernel string, n int, w []float32) {
	if w != nil && len(w) < n {
		panic(fmt.Sprintf("kernels: %s: %d weights for %d elements", kernel, len(w), n))
	}
}

// usableWeights reports whether every weight of w lies in [2^−100,
// 2^100]: then no weight needs replacing, and no sub-block's sum can be 0
// or overflow, under any rule's factor either.
func usableWeights(w []float32) bool {
	ok := true
	for _, v := range w {
		// Floats in [2^−100, 2^100] have bits in [0x0d800000, 0x71800000];
		// zero, negatives, NaNs and infinities fall outside.
		ok = ok && math.Float32bits(v)-0x0d800000 <= 0x71800000-0x0d800000
	}
	return ok
}

// prep returns the elements of src to fit (non-finite values as 0) and
// their weights under s.g (see weighting), sub-block by sub-block of
// s.g.sub elements, both len(src) long; s.fin tells whether the elements
// are src itself, and s.scale the weights' factor. The weights, their
// factor undone, go to s.out unless it is nil.
func (s *kqScratch) prep(src, imp []float32) (xs, ws []float32) {
	xs, ws = s.prepWeights(src, imp)
	if s.out != nil {
		s.unscale(s.out, ws)
	}
	return xs, ws
}

// unscale writes to dst the weights w with their factor s.scale undone.
func (s *kqScratch) unscale(dst, w []float32) {
	if s.scale == unitScale {
		copy(dst, w)
		return
	}
	for o := 0; o < len(w); {
		// The run of 32s that share a factor (a span's).
		f, e := s.scale[o/32], o+32
		for e < len(w) && s.scale[e/32] == f {
			e += 32
		}
		e = min(e, len(w))
		MulSlice(dst[o:e], w[o:e], 1/f) // powers of two: exact
		o = e
	}
}

// prepWeights is prep without writing s.out.
func (s *kqScratch) prepWeights(src, imp []float32) (xs, ws []float32) {
	g := s.g
	xs, ws = s.prepBase(src, imp, g.sub)
	s.fin = &xs[0] == &src[0]
	if g.plain == unitW && (imp == nil || g.k == 0) {
		s.scale = unitScale
		return xs, ws
	}
	w := s.wt[:len(src)]
	g.weigh(w, xs, ws, imp != nil, s)
	if imp == nil {
		// |x| weighs a sub-block of zeros 0; the importance rules keep
		// the positive sums of prepBase's weights positive and finite.
		fillZeroSubs(w, g.sub)
	}
	return xs, w
}

// prepBase fills s.xs with src (non-finite values as 0) and s.ws with the
// importance weights of its elements (1 without importance; 0 for bad
// weights and non-finite elements; 1 throughout a sub-block of sub
// elements whose weights are all 0), and returns both, len(src) long.
func (s *kqScratch) prepBase(src, imp []float32, sub int) (xs, ws []float32) {
	s.amax = -1
	if m := absMaxBits(src); (imp == nil || s.impOK) && m < 0x7f800000 {
		// The usual cases: finite elements as they are, weights 1 or the
		// importance vector's, none of which needs replacing.
		s.amax = math.Float32frombits(m)
		if imp == nil {
			return src, unitWeights[:len(src)]
		}
		return src, imp
	}
	xs, ws = s.xs[:len(src)], s.ws[:len(src)]
	for i, v := range src {
		w := float32(1)
		if imp != nil {
			w = imp[i]
			if !(w > 0) || !finite(w) {
				w = 0
			} else {
				w = min(max(w, 0x1p-100), 0x1p100)
			}
		}
		if !finite(v) {
			v, w = 0, 0
		}
		xs[i], ws[i] = v, w
	}
	fillUnit(ws, sub)
	return xs, ws
}

// unitWeights weighs every element of a block 1.
var unitWeights = func() (w [qkk]float32) {
	for i := range w {
		w[i] = 1
	}
	return w
}()

// storeX returns the value the final codes are computed from: the element
// itself, with a NaN as 0.
func storeX(v float32) float32 {
	if v != v {
		return 0
	}
	return v
}

// f16Round returns the float16 code of v (nearest even, saturating to
// ±65504, a NaN as 0) and its value.
func f16Round(v float32) (uint16, float32) {
	if v != v {
		v = 0
	}
	h := float32ToFloat16(v, true)
	return h, float16To32(h)
}

// neighbours returns the integers below and above v (both round(v) when v
// is an integer), clamped to [lo, hi]; v = NaN gives lo.
func neighbours(v, lo, hi float32) (a, b float32) {
	if !(v >= lo) {
		return lo, lo
	}
	if v > hi {
		return hi, hi
	}
	f := rnd(v)
	if f > v {
		f--
	}
	return f, min(f+1, hi)
}

// inv returns 1/d, or 0 for d = 0.
func inv(d float32) float32 {
	if d == 0 {
		return 0
	}
	return 1 / d
}

// firstPicks are the 8 pick pairs of the narrowed affine searches: the two
// integer scales next to the fit, each with the 4 mins.
var firstPicks = []uint8{0, 1, 2, 3, 4, 5, 6, 7}

// The searches of each type, and the levels superScale tries for the
// largest sub-block scale.
var (
	// With importance the pick tries 8 pairs (the two integer scales next
	// to the fit, each with the 4 mins): ggml's sqrt(σ² + x²) costs a square
	// root per element, and the narrower pick gives that time back (AVX2:
	// 363 → 411 MB/s, Q5_K 437 → 518), at 0.03 dB (Q5_K 0.09 dB) of the
	// golden tensors' weighted SQNR, 0.15 dB (0.53) above ggml's.
	searchQ4K = affine{n: 15, deltas: levelsFrom(-1, 0.25, 8), shifts: []float32{0.5}, minBelow: true, refine: 0, picks: firstPicks}
	// Without importance Q4_K's search is narrowed for speed (1.07 → 1.5
	// GB/s on AVX-512): 8 first candidates (4 deltas, each with and without
	// the half-step shift) and 8 pick pairs (the two integer scales next to
	// the fit, each with the 4 mins). Over the golden tensors its SQNR is
	// then 0.186 dB above ggml's on average and 0.091 dB at the least
	// (the full search: 0.234 and 0.129). With importance the full search
	// keeps the 16 first candidates (12 alone cost 0.04 dB there).
	searchQ4KPlain = affine{n: 15, deltas: levelsFrom(-0.75, 0.375, 4), shifts: []float32{0.5}, minBelow: true, refine: 0, picks: firstPicks}
	// Q5_K picks 8 pairs with importance, as Q4_K, and all 16 without.
	searchQ5K      = affine{n: 31, deltas: levelsFrom(-0.5, 0.25, 4), shifts: []float32{0.5}, minBelow: true, refine: 0, picks: firstPicks}
	searchQ5KPlain = affine{n: 31, deltas: levelsFrom(-0.5, 0.25, 4), shifts: []float32{0.5}, minBelow: true, refine: 0}
	// With importance Q2_K's pick tries 8 pairs (each of the 4 integer
	// scales with the 2 mins next to the fit): the square roots of ggml's
	// rule cost the 16 pairs' time (AVX2: 311 → 357 MB/s; the golden
	// tensors' weighted SQNR 0.06 dB lower, 0.45 dB above ggml's, and on
	// every tensor as the 16 pairs, unlike Q4_K's 8).
	searchQ2K = affine{n: 3, deltas: levelsFrom(-0.9, 0.125, 16), minBelow: true, refine: 0, picks: []uint8{0, 1, 4, 5, 8, 9, 12, 13}}
	// Without importance Q2_K's fit needs half the candidates for the same
	// error (with it, the finer set keeps ~0.1 dB), and its pick 4 pairs
	// (the integer scales and mins next to the fit's): weighing |x| takes
	// the weighted kernels, and the narrower pick keeps their speed (0.65
	// → 0.95 GB/s on AVX-512, the golden tensors' weighted SQNR 0.03 dB
	// lower, 0.53 dB above ggml's).
	searchQ2KPlain = affine{n: 3, deltas: levelsFrom(-0.9, 0.25, 8), picks: []uint8{0, 1, 4, 5}, minBelow: true, refine: 0}
	searchQ41      = affine{n: 15, deltas: levelsFrom(-1, 0.25, 8), shifts: []float32{0.5}, refine: 1, local: []float32{0.98, 0.99, 1, 1.01, 1.02}, offs: []float32{-0.25, 0, 0.25}}
	searchQ51      = affine{n: 31, deltas: levelsFrom(-1, 0.25, 8), shifts: []float32{0.5}, refine: 1, local: []float32{0.98, 0.99, 1, 1.01, 1.02}, offs: []float32{-0.25, 0, 0.25}}
	// With importance Q3_K's fit takes 5 candidates (δ = −0.9, −0.3, 0.3,
	// 0.9 and the positive end's): weighing the importance by ggml's rule
	// costs a square root per element, and the 8 candidates before cost 30
	// % of the speed for 0.01 dB of the golden tensors' weighted SQNR.
	searchQ3K = symmetric{neg: 4, pos: 3, deltas: levelsFrom(-0.9, 0.6, 4), posDelta: []float32{-0.5}, refine: 0}
	// Without importance Q3_K's fit takes 2 candidates, t = −4.2/max and
	// 3.25/max, for speed (3.27 → 3.7 GB/s on AVX-512): over the golden
	// tensors its SQNR is then 0.33 dB above ggml's on average and 0.07 dB
	// at the least (the 4 candidates δ = −0.5, 0, 0.5 and +2.5/max before:
	// 0.39 and 0.08).
	searchQ3KPlain = symmetric{neg: 4, pos: 3, deltas: []float32{0.2}, posDelta: []float32{0.25}, refine: 0}
	searchQ6K      = symmetric{neg: 32, pos: 31, deltas: levelsFrom(-1, 0.125, 15), posDelta: []float32{0}, refine: 0}
	// Without importance Q6_K's fit needs half the candidates for the same
	// error (with it, the finer set keeps ~0.02 dB).
	searchQ6KPlain = symmetric{neg: 32, pos: 31, deltas: levelsFrom(-0.875, 0.25, 7), posDelta: []float32{0}, refine: 0}
	searchQ50      = symmetric{neg: 16, pos: 15, deltas: levelsFrom(-1, 0.125, 15), posDelta: []float32{0}, refine: 1, local: []float32{0.97, 0.98, 0.99, 1, 1.01, 1.02, 1.03}}
	searchIQ4      = newTable(IQ4NLValues, levelsFrom(-7, 1, 15), []float32{0}, 1, []float32{0.97, 0.98, 0.99, 1, 1.01, 1.02, 1.03})
	searchIQ4XS    = newTable(IQ4NLValues, levelsFrom(-7, 1, 15), []float32{0}, 0, nil)

	levels63  = levelsFrom(63, -1, 4)
	levels15  = levelsFrom(15, -0.5, 7)
	levels32  = append(levelsFrom(-32, 0.5, 5), levelsFrom(31, -0.5, 3)...)
	levels128 = append(levelsFrom(-128, 1, 4), levelsFrom(127, -1, 2)...)

	// The super-block searches of the K-quants.
	superQ3K, superQ3KPlain, superQ6K, superQ6KPlain, superQ2K, superQ2KPlain, superQ4K, superQ4KPlain, superQ5K, superQ5KPlain, superIQ4XS, superIQ4NL superCfg
)

func init() {
	for _, a := range []*affine{&searchQ4K, &searchQ4KPlain, &searchQ5K, &searchQ5KPlain, &searchQ2K, &searchQ2KPlain, &searchQ41, &searchQ51} {
		a.init()
	}
	for _, s := range []*symmetric{&searchQ3K, &searchQ3KPlain, &searchQ6K, &searchQ6KPlain, &searchQ50} {
		s.init()
	}
	superQ3K = newSuperCfg(&searchQ3K, -32, 31, levels32)
	superQ3KPlain = newSuperCfg(&searchQ3KPlain, -32, 31, levels32)
	superQ6K = newSuperCfg(&searchQ6K, -128, 127, levels128)
	superQ6KPlain = newSuperCfg(&searchQ6KPlain, -128, 127, levels128)
	superQ2K = newAffineSuperCfg(&searchQ2K, 15, levels15)
	superQ2KPlain = newAffineSuperCfg(&searchQ2KPlain, 15, levels15)
	superQ4K = newAffineSuperCfg(&searchQ4K, 63, levels63)
	superQ4KPlain = newAffineSuperCfg(&searchQ4KPlain, 63, levels63)
	superQ5K = newAffineSuperCfg(&searchQ5K, 63, levels63)
	superQ5KPlain = newAffineSuperCfg(&searchQ5KPlain, 63, levels63)
	superIQ4XS = newTableSuperCfg(searchIQ4XS, -32, 31, levels32)
	superIQ4NL = newTableSuperCfg(searchIQ4, 0, 0, nil)
}

// quantBlocks runs quant on every block of bs elements and bb bytes.
// quant weighs the errors by the rule of the block codec ggml names format,
// and the weights go to w unless it is nil (see BlockCodec.Quantize).
func quantBlocks(kernel, format string, dst []byte, src, imp, w []float32, bs, bb int,
	quant func(y []byte, x, imp []float32, s *kqScratch)) {
	nb := checkBlocksOf(kernel, len(src), bs, len(dst), bb)
	checkImp(kernel, len(src), bs, imp)
	checkWeights(kernel, len(src), w)
	var s kqScratch
	s.impOK, s.g = usableWeights(imp), blockRule(format)
	for b := range nb {
		s.outAt(w, b*bs, bs)
		quant(dst[b*bb:(b+1)*bb], src[b*bs:(b+1)*bs], impAt(imp, b*bs, bs), &s)
	}
}

// quantizeQ4_K quantizes src, rows of len(imp) values or, with a nil imp,
// any whole number of super-blocks of 256, into Q4_K blocks of 144 bytes in
// dst (len(src)/256·144 bytes at least). See dequantizeQ4_K for the layout.
func quantizeQ4_K(dst []byte, src, imp, w []float32) {
	quantBlocks("quantizeQ4_K", "Q4_K", dst, src, imp, w, qkk, q4_KBlockBytes, func(y []byte, x, imp []float32, s *kqScratch) {
		quantK45(y, x, imp, s, &searchQ4K, &superQ4K, &searchQ4KPlain, &superQ4KPlain)
	})
}

// quantizeQ5_K quantizes src into Q5_K blocks of 176 bytes, as quantizeQ4_K.
func quantizeQ5_K(dst []byte, src, imp, w []float32) {
	quantBlocks("quantizeQ5_K", "Q5_K", dst, src, imp, w, qkk, q5_KBlockBytes, func(y []byte, x, imp []float32, s *kqScratch) {
		quantK45(y, x, imp, s, &searchQ5K, &superQ5K, &searchQ5KPlain, &superQ5KPlain)
	})
}

// quantK45 quantizes one Q4_K (search.n = 15) or Q5_K (31) super-block: 8
// sub-blocks of 32 with 6-bit scales and mins under float16 d and dmin,
// searched by search (cfg), or by plain (plainCfg) without weights.
func quantK45(y []byte, x, imp []float32, s *kqScratch, search *affine, cfg *superCfg, plain *affine, plainCfg *superCfg) {
	xs, ws := s.prep(x, imp)
	n := search.n
	var r affineRes
	if imp == nil {
		search, cfg = plain, plainCfg
	}
	affineSuper(xs, ws, search, 32, cfg, &r, &s.tr)
	var ls, lm [8]uint8
	var mi [16]float32
	for j := range 8 {
		ls[j], lm[j] = uint8(r.l[j]), uint8(r.m[j])
		mi[2*j], mi[2*j+1] = r.mn[j], r.ids[j]
	}
	binary.LittleEndian.PutUint16(y[0:], uint16(r.hd))
	binary.LittleEndian.PutUint16(y[2:], uint16(r.hm))
	putKScales(y[4:16], &ls, &lm)
	if n == 15 {
		q4kNibbles((*[128]byte)(y[16:144]), (*[qkk]float32)(x), &mi, &s.q, s.fin)
		return
	}
	affineCodes(x, mi[:], n, s.q[:qkk])
	packKNibbles(y[48:176], &s.q)
	le := binary.LittleEndian
	for l := 0; l < 32; l += 8 {
		var hb uint64
		for c := range 4 {
			lo, hi := le.Uint64(s.q[64*c+l:]), le.Uint64(s.q[64*c+32+l:])
			hb |= (lo>>4&bytes01)<<(2*c) | (hi>>4&bytes01)<<(2*c+1)
		}
		le.PutUint64(y[16+l:], hb)
	}
}

// q4kNibblesGo writes Q4_K's codes of x under mi (offsets and inverse
// scales of its 8 sub-blocks of 32, as affineCodes takes them), packed two
// to a byte (packKNibbles), into y; q is scratch.
func q4kNibblesGo(y *[128]byte, x *[qkk]float32, mi *[16]float32, q *[qkk]uint8) {
	affineCodesGo(x[:], mi[:], 15, q[:])
	packKNibbles(y[:], q)
}

// packKNibbles writes the low nibbles of 256 codes as Q4_K and Q5_K keep
// them: byte 32c+l of y holds codes 64c+l (low) and 64c+32+l (high).
func packKNibbles(y []byte, q *[qkk]uint8) {
	le := binary.LittleEndian
	for c := range 4 {
		for l := 0; l < 32; l += 8 {
			lo, hi := le.Uint64(q[64*c+l:]), le.Uint64(q[64*c+32+l:])
			le.PutUint64(y[32*c+l:], lo&bytes0f|(hi&bytes0f)<<4)
		}
	}
}

// pickAffine returns the integer scale l and min m in [0, top] of a
// sub-block with fit f (scale f.d, offset f.m = −min, and its sums) under
// the super-block scales D and Dm: of the integers next to f.d/D and
// −f.m/Dm, and one further out on each side, the pair with the least error
// (the first in this order on ties), each pair's error computed from the
// sums of its codes (affinePairErrsGo). An error that is NaN or +Inf (sums
// that overflow float32) never wins; when no pair's error is below +Inf
// the first pair is taken. picks are the pairs tried, indices 4i+j of
// (ls[i], ms[j]) for ls = {l0, l1, l0−1, l1+1} and ms likewise, in order.
func pickAffine(x, w []float32, f fit, D, Dm, top, n float32, picks []uint8) (l, m float32) {
	l0, l1 := neighbours(f.d*inv(D), 0, top)
	m0, m1 := neighbours(-f.m*inv(Dm), 0, top)
	ls := [4]float32{l0, l1, max(l0-1, 0), min(l1+1, top)}
	ms := [4]float32{m0, m1, max(m0-1, 0), min(m1+1, top)}
	var d, mv, id, e lanes
	for c, p := range picks {
		a, b := ls[p/4], ms[p%4]
		d[c], mv[c], id[c] = D*a, -(Dm * b), inv(D*a)
	}
	st := affineStats{n: n, sw: f.cw, sx: f.sx, sxx: f.sxx}
	affinePairErrsGo(x, w, len(picks), &d, &mv, &id, &st, &e)
	best, bestErr := 0, float32(math.Inf(1))
	for c := range picks {
		if e[c] < bestErr {
			best, bestErr = c, e[c]
		}
	}
	return ls[picks[best]/4], ms[picks[best]%4]
}

// pickSym returns the integer scale l in [lo, hi] of a sub-block of codes
// −neg..pos (or, with tab, of table values) with fitted scale sc under the
// super-block scale D: of the integers next to sc/D, the one with the least
// error (the lower on ties).
func pickSym(x, w []float32, sc, D, lo, hi, neg, pos float32, tab *table) float32 {
	l0, l1 := neighbours(sc*inv(D), lo, hi)
	if l0 == l1 {
		return l0
	}
	var d, id, e lanes
	d[0], d[1] = D*l0, D*l1
	id[0], id[1] = inv(d[0]), inv(d[1])
	if tab != nil {
		tableErrs(x, w, 2, &d, &id, tab, &e)
	} else {
		symErrs(x, w, 2, &d, &id, neg, pos, &e)
	}
	if e[1] < e[0] {
		return l1
	}
	return l0
}

// putKScales packs the 6-bit scales and mins of Q4_K and Q5_K (see
// kScaleMin).
func putKScales(sc []byte, ls, lm *[8]uint8) {
	for j := range 4 {
		sc[j] = ls[j] | (ls[j+4]>>4)<<6
		sc[j+4] = lm[j] | (lm[j+4]>>4)<<6
		sc[j+8] = ls[j+4]&15 | (lm[j+4]&15)<<4
	}
}

// quantizeQ2_K quantizes src into Q2_K blocks of 84 bytes, as quantizeQ4_K.
// See dequantizeQ2_K for the layout.
func quantizeQ2_K(dst []byte, src, imp, w []float32) {
	quantBlocks("quantizeQ2_K", "Q2_K", dst, src, imp, w, qkk, q2_KBlockBytes, quantQ2K)
}

// quantQ2K quantizes one Q2_K super-block: 16 sub-blocks of 16 with 4-bit
// scales and mins under float16 d and dmin, which then take the unbiased
// gain (unbiasK; see docs/GGUF.md, "Q2_K and Q3_K").
func quantQ2K(y []byte, x, imp []float32, s *kqScratch) {
	xs, ws := s.prep(x, imp)
	var r affineRes
	if imp == nil {
		affineSuper(xs, ws, &searchQ2KPlain, 16, &superQ2KPlain, &r, &s.tr)
	} else {
		affineSuper(xs, ws, &searchQ2K, 16, &superQ2K, &r, &s.tr)
	}
	var mi [32]float32
	for j := range 16 {
		y[j] = uint8(r.l[j]) | uint8(r.m[j])<<4
		mi[2*j], mi[2*j+1] = r.mn[j], r.ids[j]
	}
	affineCodes(x, mi[:], 3, s.q[:qkk])
	le := binary.LittleEndian
	for h := range 2 {
		for l := 0; l < 32; l += 8 {
			e := 128*h + l
			le.PutUint64(y[16+32*h+l:], le.Uint64(s.q[e:])|le.Uint64(s.q[e+32:])<<2|
				le.Uint64(s.q[e+64:])<<4|le.Uint64(s.q[e+96:])<<6)
		}
	}
	binary.LittleEndian.PutUint16(y[80:], uint16(r.hd))
	binary.LittleEndian.PutUint16(y[82:], uint16(r.hm))
	unbiasK(y, xs, ws, &s.dq, dequantizeQ2_K, 80, 82)
}

// quantizeQ3_K quantizes src into Q3_K blocks of 110 bytes, as quantizeQ4_K.
// See dequantizeQ3_K for the layout.
func quantizeQ3_K(dst []byte, src, imp, w []float32) {
	quantBlocks("quantizeQ3_K", "Q3_K", dst, src, imp, w, qkk, q3_KBlockBytes, quantQ3K)
}

// quantQ3K quantizes one Q3_K super-block: 16 sub-blocks of 16, codes
// −4..3, signed 6-bit scales −32..31 under a float16 d, which then takes
// the unbiased gain (unbiasK).
func quantQ3K(y []byte, x, imp []float32, s *kqScratch) {
	xs, ws := s.prep(x, imp)
	r := &s.res
	if imp == nil {
		symSuper16(xs, ws, &searchQ3KPlain, &superQ3KPlain, r, &s.tr)
	} else {
		symSuper16(xs, ws, &searchQ3K, &superQ3K, r, &s.tr)
	}
	q3kPack((*[q3_KBlockBytes]byte)(y), (*[qkk]float32)(x), r, &s.q, s.fin)
	unbiasK(y, xs, ws, &s.dq, dequantizeQ3_K, 108)
}

// q3kPackGo writes the Q3_K block y of the elements x from their search's
// result r: the codes of x under r.ids (symCodes), packed (packQ3K) with
// the 6-bit scales l+32 and the float16 d; q is scratch.
func q3kPackGo(y *[q3_KBlockBytes]byte, x *[qkk]float32, r *superRes, q *[qkk]uint8) {
	q3kPackWith(y, x, r, q, symCodesGo)
}

// q3kPackWith is q3kPackGo with the code kernel codes (symCodesGo or its
// dispatcher).
func q3kPackWith(y *[q3_KBlockBytes]byte, x *[qkk]float32, r *superRes, q *[qkk]uint8,
	codes func(x, ids []float32, neg, pos float32, codes []uint8)) {
	// The 6-bit scales l+32: low nibbles of j and j+8 in byte 96+j, the
	// top two bits of j, j+4, j+8, j+12 in byte 104+j.
	var v [16]uint8
	for j := range v {
		v[j] = uint8(int(r.l[j]) + 32)
	}
	for j := range 8 {
		y[96+j] = v[j]&15 | (v[j+8]&15)<<4
	}
	for j := range 4 {
		y[104+j] = v[j]>>4 | (v[j+4]>>4)<<2 | (v[j+8]>>4)<<4 | (v[j+12]>>4)<<6
	}
	codes(x[:], r.ids[:], 4, 3, q[:])
	packQ3K(y[:], q)
	binary.LittleEndian.PutUint16(y[108:], uint16(r.hd))
}

// quantizeQ6_K quantizes src into Q6_K blocks of 210 bytes, as quantizeQ4_K.
// See dequantizeQ6_K for the layout.
func quantizeQ6_K(dst []byte, src, imp, w []float32) {
	quantBlocks("quantizeQ6_K", "Q6_K", dst, src, imp, w, qkk, q6_KBlockBytes, quantQ6K)
}

// quantQ6K quantizes one Q6_K super-block: 16 sub-blocks of 16, codes
// −32..31, int8 scales under a float16 d.
func quantQ6K(y []byte, x, imp []float32, s *kqScratch) {
	xs, ws := s.prep(x, imp)
	r := &s.res
	if imp == nil {
		symSuper16(xs, ws, &searchQ6KPlain, &superQ6KPlain, r, &s.tr)
	} else {
		symSuper16(xs, ws, &searchQ6K, &superQ6K, r, &s.tr)
	}
	clear(y[:210])
	for j := range 16 {
		y[192+j] = byte(int8(r.l[j]))
	}
	symCodes(x, r.ids[:], 32, 31, s.q[:qkk])
	packQ6K(y, &s.q)
	binary.LittleEndian.PutUint16(y[208:], uint16(r.hd))
}

// The packers work on 8 codes at a time in a uint64 (codes below 64, so
// that no shift carries into the next byte).
const (
	bytes01 = 0x0101010101010101
	bytes03 = 0x0303030303030303
	bytes0f = 0x0f0f0f0f0f0f0f0f
)

// packQ3K writes the 256 codes 0..7 of a Q3_K super-block into its high-bit
// mask (y[0:32]: bit 4h+k of byte l is bit 2 of code 128h+32k+l) and its
// low bits (y[32:96]: bits 2k..2k+1 of byte 32h+l are code 128h+32k+l's
// low two), which must be clear.
func packQ3K(y []byte, q *[qkk]uint8) {
	le := binary.LittleEndian
	for l := 0; l < 32; l += 8 {
		var hm uint64
		for h := range 2 {
			var lo uint64
			for k := range 4 {
				c := le.Uint64(q[128*h+32*k+l:])
				lo |= (c & bytes03) << (2 * k)
				hm |= (c >> 2 & bytes01) << (4*h + k)
			}
			le.PutUint64(y[32+32*h+l:], lo)
		}
		le.PutUint64(y[l:], hm)
	}
}

// packQ6K writes the 256 codes 0..63 of a Q6_K super-block into its low
// nibbles (y[0:128]: byte 64h+l holds codes 128h+l and 128h+64+l) and high
// bits (y[128:192]: bits 2k..2k+1 of byte 128+32h+l are code 128h+32k+l's
// top two).
func packQ6K(y []byte, q *[qkk]uint8) {
	le := binary.LittleEndian
	for h := range 2 {
		for l := 0; l < 64; l += 8 {
			a, b := le.Uint64(q[128*h+l:]), le.Uint64(q[128*h+64+l:])
			le.PutUint64(y[64*h+l:], a&bytes0f|(b&bytes0f)<<4)
		}
		for l := 0; l < 32; l += 8 {
			var hi uint64
			for k := range 4 {
				hi |= (le.Uint64(q[128*h+32*k+l:]) >> 4 & bytes03) << (2 * k)
			}
			le.PutUint64(y[128+32*h+l:], hi)
		}
	}
}

// quantizeQ8_K quantizes src into Q8_K blocks of 292 bytes, as
// quantizeQ4_K: per super-block a float32 scale d, codes −127..127 and the
// sums of each 16 codes. See dequantizeQ8_K for the layout.
func quantizeQ8_K(dst []byte, src, imp, w []float32) {
	quantBlocks("quantizeQ8_K", "Q8_K", dst, src, imp, w, qkk, q8_KBlockBytes, quantQ8K)
}

// quantQ8K quantizes one Q8_K super-block.
func quantQ8K(y []byte, x, imp []float32, s *kqScratch) {
	xs, ws := s.prep(x, imp)
	d := fitQ8K(xs, ws)
	binary.LittleEndian.PutUint32(y, math.Float32bits(d))
	id := inv(d)
	for j := range 16 {
		var sum int
		for i := 16 * j; i < 16*j+16; i++ {
			q := int(clampRound(storeX(x[i])*id, -127, 127))
			y[4+i] = byte(int8(q))
			sum += q
		}
		binary.LittleEndian.PutUint16(y[260+2*j:], uint16(int16(sum)))
	}
}

// quantizeIQ4XS quantizes src into IQ4_XS blocks of 136 bytes, as
// quantizeQ4_K. See dequantizeIQ4XS for the layout.
func quantizeIQ4XS(dst []byte, src, imp, w []float32) {
	quantBlocks("quantizeIQ4XS", "IQ4_XS", dst, src, imp, w, qkk, iq4xsBlockBytes, quantIQ4XS)
}

// quantIQ4XS quantizes one IQ4_XS super-block: 8 sub-blocks of 32 table
// indices, signed 6-bit scales −32..31 under a float16 d.
func quantIQ4XS(y []byte, x, imp []float32, s *kqScratch) {
	xs, ws := s.prep(x, imp)
	r := &s.res
	tableSuper8(xs, ws, searchIQ4XS, &superIQ4XS, r, &s.tr)
	clear(y[:8])
	var sh uint16
	for j := range 8 {
		v := uint8(int(r.l[j]) + 32)
		y[4+j/2] |= (v & 15) << (4 * (j % 2))
		sh |= uint16(v>>4) << (2 * j)
	}
	tableCodes(x, r.ids[:8], searchIQ4XS, s.q[:qkk])
	for j := range 8 {
		splitNibbles(y[8+16*j:8+16*j+16], s.q[32*j:32*j+32])
	}
	binary.LittleEndian.PutUint16(y[0:], uint16(r.hd))
	binary.LittleEndian.PutUint16(y[2:], sh)
}

// splitNibbles packs 32 4-bit codes in ggml's split order: byte j holds
// code j in its low nibble and code j+16 in its high nibble.
func splitNibbles(y []byte, q []uint8) {
	for j := range 16 {
		y[j] = q[j] | q[j+16]<<4
	}
}

// quantizeIQ4NL quantizes src into IQ4_NL blocks of 18 bytes (a float16 d,
// then 16 bytes of table indices), as quantizeQ4_K with blocks of 32.
func quantizeIQ4NL(dst []byte, src, imp, w []float32) {
	const bs, bb = ggmlBlock, iq4nlBlockBytes
	nb := checkBlocksOf("quantizeIQ4NL", len(src), bs, len(dst), bb)
	checkImp("quantizeIQ4NL", len(src), bs, imp)
	checkWeights("quantizeIQ4NL", len(src), w)
	var s kqScratch
	s.impOK, s.g = usableWeights(imp), blockRule("IQ4_NL")
	for b := 0; b < nb; {
		// Eight blocks at once where they lie in one row of imp.
		if o := b * bs; b+8 <= nb && (imp == nil || o%len(imp)+8*bs <= len(imp)) {
			s.outAt(w, o, 8*bs)
			quantIQ4NL8(dst[b*bb:(b+8)*bb], src[o:o+8*bs], impAt(imp, o, 8*bs), &s)
			b += 8
			continue
		}
		s.outAt(w, b*bs, bs)
		quantIQ4NL(dst[b*bb:(b+1)*bb], src[b*bs:(b+1)*bs], impAt(imp, b*bs, bs), &s)
		b++
	}
}

// quantIQ4NL8 quantizes 8 IQ4_NL blocks, as quantIQ4NL does each.
func quantIQ4NL8(y []byte, x, imp []float32, s *kqScratch) {
	xs, ws := s.prep(x, imp)
	var r nlRes
	tableBlocks8(xs, ws, searchIQ4, &superIQ4NL, &r, &s.tr)
	tableCodes(x, r.ids[:8], searchIQ4, s.q[:qkk])
	for j := range 8 {
		binary.LittleEndian.PutUint16(y[18*j:], uint16(r.hd[j]))
		splitNibbles(y[18*j+2:18*j+18], s.q[32*j:32*j+32])
	}
}

// quantIQ4NL quantizes one IQ4_NL block.
func quantIQ4NL(y []byte, x, imp []float32, s *kqScratch) {
	xs, ws := s.prep(x, imp)
	f := searchIQ4.fit(xs, ws)
	hd, d := f16Round(f.d)
	binary.LittleEndian.PutUint16(y, hd)
	ids := [1]float32{inv(d)}
	tableCodes(x, ids[:], searchIQ4, s.q[:32])
	splitNibbles(y[2:18], s.q[:32])
}

// quantizeQ4_1 quantizes src into Q4_1 blocks of 20 bytes (float16 d and
// m, 16 bytes of codes), as quantizeQ4_K with blocks of 32.
func quantizeQ4_1(dst []byte, src, imp, w []float32) {
	quantBlocks("quantizeQ4_1", "Q4_1", dst, src, imp, w, ggmlBlock, q4_1BlockBytes, func(y []byte, x, imp []float32, s *kqScratch) {
		quantLegacyAffine(y, x, imp, s, &searchQ41)
	})
}

// quantizeQ5_1 quantizes src into Q5_1 blocks of 24 bytes, as quantizeQ4_1.
func quantizeQ5_1(dst []byte, src, imp, w []float32) {
	quantBlocks("quantizeQ5_1", "Q5_1", dst, src, imp, w, ggmlBlock, q5_1BlockBytes, func(y []byte, x, imp []float32, s *kqScratch) {
		quantLegacyAffine(y, x, imp, s, &searchQ51)
	})
}

// quantLegacyAffine quantizes one Q4_1 (search.n = 15) or Q5_1 (31) block.
func quantLegacyAffine(y []byte, x, imp []float32, s *kqScratch, search *affine) {
	xs, ws := s.prep(x, imp)
	f := search.fitWith(xs, ws, &s.fl)
	hd, d := f16Round(f.d)
	hm, m := f16Round(f.m)
	binary.LittleEndian.PutUint16(y[0:], hd)
	binary.LittleEndian.PutUint16(y[2:], hm)
	mi := [2]float32{m, inv(d)}
	affineCodes(x, mi[:], search.n, s.q[:32])
	if search.n == 15 {
		splitNibbles(y[4:20], s.q[:32])
		return
	}
	putQ5(y[4:], s.q[:32])
}

// putQ5 writes 32 5-bit codes as the uint32 of fifth bits and 16 bytes of
// low nibbles of Q5_0 and Q5_1.
func putQ5(y []byte, q []uint8) {
	var qh uint32
	for j := range 16 {
		lo, hi := q[j], q[j+16]
		y[4+j] = lo&15 | (hi&15)<<4
		qh |= uint32(lo>>4)<<j | uint32(hi>>4)<<(j+16)
	}
	binary.LittleEndian.PutUint32(y, qh)
}

// quantizeQ5_0 quantizes src into Q5_0 blocks of 22 bytes (a float16 d, the
// fifth bits, 16 bytes of low nibbles), as quantizeQ4_K with blocks of 32.
func quantizeQ5_0(dst []byte, src, imp, w []float32) {
	quantBlocks("quantizeQ5_0", "Q5_0", dst, src, imp, w, ggmlBlock, q5_0BlockBytes, quantQ5_0)
}

// quantQ5_0 quantizes one Q5_0 block.
func quantQ5_0(y []byte, x, imp []float32, s *kqScratch) {
	putQ5(y[2:], quantSym32(y, x, imp, s, &searchQ50))
}

// quantSym32 fits one block of 32 by the symmetric search, writes its
// float16 scale d to y[:2] and returns its codes q + neg (in s.q), for
// value = (code − neg)·d: Q5_0's and, with importance, Q4_0's.
func quantSym32(y []byte, x, imp []float32, s *kqScratch, search *symmetric) []uint8 {
	xs, ws := s.prep(x, imp)
	f := search.fit(xs, ws)
	hd, d := f16Round(f.d)
	binary.LittleEndian.PutUint16(y, hd)
	ids := [1]float32{inv(d)}
	symCodes(x, ids[:], search.neg, search.pos, s.q[:32])
	return s.q[:32]
}

// fitQ8K returns the scale of a Q8_K super-block: the candidates
// t = 127+δ over the element of largest magnitude, each refitted by least
// squares, with float64 sums (at 40 dB and more, float32 sums over 256
// elements blur the differences between candidates).
func fitQ8K(x, w []float32) float32 {
	var amax, m float32
	var sxx float64
	for i, v := range x {
		if a := abs32(v); a > amax {
			amax, m = a, v
		}
		sxx += float64(w[i]) * float64(v) * float64(v)
	}
	if amax < groupEps {
		return 0
	}
	var best float64
	var d float32
	try := func(t float32) {
		var sxq, sqq float64
		for i, v := range x {
			q := float64(clampRound(t*v, -127, 127))
			wq := float64(w[i]) * q
			sxq += wq * float64(v)
			sqq += wq * q
		}
		if sqq > 0 && sxq*sxq > best*sqq {
			best, d = sxq*sxq/sqq, float32(sxq/sqq)
		}
	}
	for _, dl := range [...]float32{-1, -0.5, 0, 0.5, 1} {
		try((127 + dl) / m)
	}
	for range 2 {
		if d == 0 {
			break
		}
		try(1 / d)
	}
	if !finite(d) {
		return 0
	}
	return d
}
