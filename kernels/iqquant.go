package kernels

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// The quantizers of the IQ grid types. Each super-block of 256 goes in
// four steps: every sub-block (the elements under one small scale) finds
// its best scale, trying a few and refining the best by least squares,
// with each element's sign taken apart (IQ2, IQ3) or its level's shift
// chosen (IQ1); the largest sets the float16 d; then each sub-block tries
// the scale codes around its own scale, each with its points found again
// at that very scale, and keeps the one of least error; last, d takes the
// unbiased gain (unbias). The error is the squared error weighed as Weigh
// gives (the weighting of the codec table).

// iqFormat is what a quantizer needs of an IQ type.
type iqFormat struct {
	grid  *iqGrid
	sub   int       // elements under one scale code
	dgrp  int       // elements under one shift sign (IQ1); 0: no shift
	unit  float32   // scale code l scales the grid's values by d·(2l+1)·unit
	lmax  int       // the largest scale code
	signs int       // sign bits per 8 elements: 7 (an even count), 8, or 0
	fits  []float32 // the fits tried (iqFits, iq1Fits)
	pack  func(y []byte, r *iqRes)
	parse func(x []byte, r *iqRes)        // the inverse of pack
	deq   func(dst []float32, src []byte) // the type's decoder
}

// iqRes is a quantized super-block.
type iqRes struct {
	hd   uint16       // d, float16
	l    [16]uint8    // each sub-block's scale code
	p    [64]uint16   // each point's index in the grid
	neg  [32]uint8    // each 8 elements' signs: bit j for element j
	dneg [32]bool     // each 8 elements' shift: −1/8 when set (IQ1)
	a    [qkk]float32 // the magnitudes the points fit (or the elements)
}

// iqFits are the numbers of grid levels the largest magnitude of a
// sub-block is tried at, relative to the grid's largest level; iq1Fits
// those of the ternary grid, whose best scale often leaves the largest
// elements far above its top level.
var (
	iqFits  = []float32{0.85, 1, 1.15}
	iq1Fits = []float32{1.1, 1.6, 2.3}
)

// quantIQ quantizes one super-block of f.
func quantIQ(f *iqFormat, y []byte, x, imp []float32, s *kqScratch) {
	xs, ws := s.prep(x, imp)
	var r iqRes
	f.targets(&r, x, xs, ws)
	nsub := qkk / f.sub
	var sc [16]float32
	smax := float32(0)
	for b := range nsub {
		o := b * f.sub
		sc[b] = f.fit(&r, o, ws[o:o+f.sub])
		smax = max(smax, sc[b])
	}
	unitD := f.unit * float32(2*f.lmax+1)
	r.hd = float32ToFloat16(smax/unitD, true)
	if d := float16To32(r.hd); d > 0 && smax > 0 {
		for b := range nsub {
			f.choose(&r, b, ws[b*f.sub:(b+1)*f.sub], sc[b], d)
		}
		if !s.fin {
			f.saturate(&r, x, ws, d)
		}
		f.unbias(&r, y, xs, ws, d, &s.dq)
	} else {
		r = iqRes{neg: r.neg}
	}
	f.pack(y, &r)
}

// unbias sets r.hd, the super-block's d, to the scale whose reconstruction
// of xs has the weighted projection on xs of xs itself: Σw·x·x̂ = Σw·x² (the
// non-finite elements weigh 0). The
// least-squares choices before it shrink the reconstruction (Σw·x·x̂ is
// 0.8–0.9 of Σw·x² for IQ1 and IQ2); the model's output is far closer to
// the original's with this unbiased gain than with the least error (see
// docs/GGUF.md, "IQ grid types"). y is scratch for the packed block, q
// for its decoded values.
func (f *iqFormat) unbias(r *iqRes, y []byte, x, w []float32, d float32, q *[qkk]float32) {
	f.pack(y, r)
	f.deq(q[:], y)
	if g, ok := unbiasedGain(x, w, q[:]); ok {
		r.hd = float32ToFloat16(float32(float64(d)*g), true)
	}
}

// unbiasedGain returns the factor g that gives g·q, the decoded block of
// x, the weighted projection on x of x itself: Σw·x·(g·q) = Σw·x². It is
// false when either sum is not positive or g is not finite. The sums (gainSums) are of x and
// q scaled by a power of two near 1/max|x|, which leaves g as it is.
func unbiasedGain(x, w, q []float32) (float64, bool) {
	ia := float32(1)
	if a := math.Float32frombits(absMaxBits(x)); a > 0 {
		ia = pow2Inv(a)
	}
	xx, xq := gainSums(w, x, q, ia)
	g := float64(xx) / float64(xq)
	return g, xq > 0 && xx > 0 && !math.IsInf(g, 0) && g == g
}

// gainSumsGo returns Σw·(x·ia)² and Σw·(x·ia)·(q·ia), each summed in 16
// lanes (element i in lane i%16) added in meanSquareGo's tree: the order
// of the AVX-512 kernel.
func gainSumsGo(w, x, q []float32, ia float32) (xx, xq float32) {
	var a, b [16]float32
	for i, v := range x {
		v *= ia
		wv := w[i] * v
		a[i%16] += float32(wv * v)
		b[i%16] += float32(wv * (q[i] * ia))
	}
	for h := 8; h >= 1; h /= 2 {
		for l := range h {
			a[l] += a[l+h]
			b[l] += b[l+h]
		}
	}
	return a[0], b[0]
}

// unbiasK gives the packed K-quant super-block y of the finite elements x,
// weighed by w, the unbiased gain (see unbias): it multiplies each float16
// scale at the byte offsets offs of y (d, and dmin where the type has
// one) by unbiasedGain. deq decodes y, into q.
func unbiasK(y []byte, x, w []float32, q *[qkk]float32, deq func(dst []float32, src []byte),
	offs ...int) {
	deq(q[:], y)
	g, ok := unbiasedGain(x, w, q[:])
	if !ok {
		return
	}
	for _, o := range offs {
		d := float16To32(binary.LittleEndian.Uint16(y[o:]))
		binary.LittleEndian.PutUint16(y[o:], float32ToFloat16(float32(float64(d)*g), true))
	}
}

// targets fills r.a with what the grid's points fit: the magnitudes of
// xs, the finite elements, with r.neg the signs of the elements x, or the
// finite elements themselves for a signed grid. With 7 sign bits, a group
// of 8 of an odd count of negative elements has the sign of its finite
// element of least weighed square flipped.
func (f *iqFormat) targets(r *iqRes, x, xs, w []float32) {
	if f.signs == 0 {
		copy(r.a[:], xs)
		return
	}
	for g := range qkk / 8 {
		var neg uint8
		for j := range 8 {
			if x[8*g+j] < 0 {
				neg |= 1 << j
			}
			r.a[8*g+j] = abs32(xs[8*g+j])
		}
		if f.signs == 7 && bits.OnesCount8(neg)&1 != 0 {
			jmin, emin := 0, float32(math.Inf(1))
			for j := range 8 {
				v := r.a[8*g+j]
				if e := w[8*g+j] * v * v; e < emin && finite(x[8*g+j]) {
					jmin, emin = j, e
				}
			}
			neg ^= 1 << jmin
			r.a[8*g+jmin] = -r.a[8*g+jmin]
		}
		r.neg[g] = neg
	}
}

// fit returns the best scale of the sub-block of r.a from o, of weights
// w: of the scales iqFits gives, the least-squares scale of the points
// found at the best one, refined twice.
func (f *iqFormat) fit(r *iqRes, o int, w []float32) float32 {
	a := r.a[o : o+f.sub]
	amax := float32(0)
	for _, v := range a {
		amax = max(amax, abs32(v))
	}
	if amax == 0 {
		return 0
	}
	lmax := max(-f.grid.lev[0], f.grid.lev[len(f.grid.lev)-1])
	best, bestScore := float32(0), float32(-1)
	try := func(s float32) {
		_, sxe, see := f.assign(r, o, w, s)
		if sc := sxe * sxe / see; sxe > 0 && see > 0 && finite(sc) && finite(sxe/see) && sc > bestScore {
			best, bestScore = sxe/see, sxe*sxe/see
		}
	}
	for _, k := range f.fits {
		try(amax / (lmax * k))
	}
	for range 2 {
		prev := best
		if try(best); best <= 0 || best == prev {
			break
		}
	}
	return best
}

// assign finds the points (and shifts) of the sub-block of r.a from o at
// scale s, writes them to r, and returns the weighed squared error and
// the sums Σ w·a·e and Σ w·e² over the levels e the points give.
func (f *iqFormat) assign(r *iqRes, o int, w []float32, s float32) (err, sxe, see float32) {
	g, n := f.grid, f.grid.width
	dg := f.dgrp
	if dg == 0 {
		dg = f.sub
	}
	for d := o; d < o+f.sub; d += dg {
		bestE, bestNeg := float32(-1), false
		var pts [8]uint16
		for _, neg := range f.shifts(r.a[d:d+dg], w[d-o:d-o+dg], s) {
			delta := f.shift(neg)
			var e float32
			var ps [8]uint16
			for k := 0; k < dg; k += n {
				p, pe := g.pick(r.a[d+k:d+k+n], w[d-o+k:d-o+k+n], s, delta)
				ps[k/n], e = uint16(p), e+pe
			}
			if bestE < 0 || e < bestE {
				bestE, bestNeg, pts = e, neg, ps
			}
		}
		err += bestE
		delta := f.shift(bestNeg)
		for k := 0; k < dg; k += n {
			p := int(pts[k/n])
			r.p[(d+k)/n] = uint16(p)
			for j, l := range g.vals[p*n : (p+1)*n] {
				e, wj := l+delta, w[d-o+k+j]
				sxe += wj * r.a[d+k+j] * e
				see += wj * e * e
			}
		}
		for k := d / 8; k < (d+dg+7)/8; k++ {
			r.dneg[k] = bestNeg
		}
	}
	return err, sxe, see
}

// shifts returns the shift signs f tries for the elements a of one shift
// group at scale s: none but 0 without shifts; for IQ1 the sign whose
// nearest levels, on the grid or not, err less (a cheap guess of the
// grid's choice).
func (f *iqFormat) shifts(a, w []float32, s float32) []bool {
	if f.dgrp == 0 {
		return noShift[:]
	}
	if neg, pos := f.latticeErrs(a, w, s); neg < pos {
		return negShift[:]
	}
	return noShift[:]
}

// latticeErrs returns Σ w·(a − s·(L+delta))² over the nearest levels L of
// the 3 of the IQ1 grid, for the shift delta = −1/8 and for +1/8.
func (f *iqFormat) latticeErrs(a, w []float32, s float32) (neg, pos float32) {
	g := f.grid
	inv := 1 / s
	mn := [2]float32{g.mid[0] - iq1Delta, g.mid[1] - iq1Delta}
	mp := [2]float32{g.mid[0] + iq1Delta, g.mid[1] + iq1Delta}
	var vn, vp [4]float32
	for k, l := range g.lev[:3] {
		vn[k], vp[k] = float32(s*(l-iq1Delta)), float32(s*(l+iq1Delta))
	}
	for j, v := range a {
		t := v * inv
		ln := vn[(above(t, mn[0])+above(t, mn[1]))&3]
		lp := vp[(above(t, mp[0])+above(t, mp[1]))&3]
		neg += float32(w[j] * (v - ln) * (v - ln))
		pos += float32(w[j] * (v - lp) * (v - lp))
	}
	return neg, pos
}

var (
	noShift  = [...]bool{false}
	negShift = [...]bool{true}
)

// shift returns the shift of the levels of sign neg: ±1/8 for IQ1, else 0.
func (f *iqFormat) shift(neg bool) float32 {
	switch {
	case f.dgrp == 0:
		return 0
	case neg:
		return -iq1Delta
	}
	return iq1Delta
}

// choose sets sub-block b's scale code under d: of the codes around its
// scale sc, the one whose points, found again at its scale, err least.
func (f *iqFormat) choose(r *iqRes, b int, w []float32, sc, d float32) {
	u, o, n := d*f.unit, b*f.sub, f.grid.width
	l0 := int(math.Round(float64((sc/u - 1) / 2)))
	bestL, bestE := -1, float32(0)
	var pts [8]uint16
	var dneg [4]bool
	for l := min(max(l0-1, 0), f.lmax); l <= min(max(l0+1, 0), f.lmax); l++ {
		e, _, _ := f.assign(r, o, w, u*float32(2*l+1))
		if bestL < 0 || e < bestE {
			bestL, bestE = l, e
			copy(pts[:], r.p[o/n:(o+f.sub)/n])
			copy(dneg[:], r.dneg[o/8:(o+f.sub)/8])
		}
	}
	copy(r.p[o/n:(o+f.sub)/n], pts[:])
	copy(r.dneg[o/8:(o+f.sub)/8], dneg[:])
	r.l[b] = uint8(bestL)
}

// saturate gives each infinite element of x the grid's extreme level of
// its sign: the points holding one are found again with those targets,
// weighed above the rest of the point.
func (f *iqFormat) saturate(r *iqRes, x, w []float32, d float32) {
	g, n := f.grid, f.grid.width
	for k := 0; k < qkk; k += n {
		var pw [8]float32
		sum, inf := float32(1), false
		for j := range n {
			pw[j] = w[k+j]
			sum += w[k+j]
			inf = inf || !finite(x[k+j]) && x[k+j] == x[k+j]
		}
		if !inf {
			continue
		}
		s := d * f.unit * float32(2*int(r.l[k/f.sub])+1)
		delta := f.shift(r.dneg[k/8])
		for j, v := range x[k : k+n] {
			if finite(v) || v != v {
				continue
			}
			top := g.lev[len(g.lev)-1]
			if f.signs == 0 && v < 0 {
				top = g.lev[0]
			}
			r.a[k+j], pw[j] = s*(top+delta), sum
		}
		p, _ := g.pick(r.a[k:k+n], pw[:n], s, delta)
		r.p[k/n] = uint16(p)
	}
}

// iqFormats are the quantizers' descriptions of the IQ types.
var (
	fmtIQ2XXS = iqFormat{fits: iqFits, grid: iq2xxsGrid, sub: 32, unit: 1.0 / 8, lmax: 15, signs: 7,
		pack: packIQ2XXS, parse: parseIQ2XXS, deq: dequantizeIQ2XXS}
	fmtIQ2XS = iqFormat{fits: iqFits, grid: iq2xsGrid, sub: 16, unit: 1.0 / 8, lmax: 15, signs: 7,
		pack: packIQ2XS, parse: parseIQ2XS, deq: dequantizeIQ2XS}
	fmtIQ2S = iqFormat{fits: iqFits, grid: iq2sGrid, sub: 16, unit: 1.0 / 8, lmax: 15, signs: 8,
		pack: packIQ2S, parse: parseIQ2S, deq: dequantizeIQ2S}
	fmtIQ3XXS = iqFormat{fits: iqFits, grid: iq3xxsGrid, sub: 32, unit: 1.0 / 4, lmax: 15, signs: 7,
		pack: packIQ3XXS, parse: parseIQ3XXS, deq: dequantizeIQ3XXS}
	fmtIQ3S = iqFormat{fits: iqFits, grid: iq3sGrid, sub: 32, unit: 1, lmax: 15, signs: 8,
		pack: packIQ3S, parse: parseIQ3S, deq: dequantizeIQ3S}
	fmtIQ1S = iqFormat{fits: iq1Fits, grid: iq1sGrid, sub: 32, dgrp: 32, unit: 1, lmax: 7, pack: packIQ1S, parse: parseIQ1S, deq: dequantizeIQ1S}
	fmtIQ1M = iqFormat{fits: iq1Fits, grid: iq1sGrid, sub: 16, dgrp: 8, unit: 1, lmax: 7, pack: packIQ1M, parse: parseIQ1M, deq: dequantizeIQ1M}
)

// iqQuantizer returns the Quantize of the codec table for f, of ggml's
// name name.
func iqQuantizer(name string, f *iqFormat, bb int) func(dst []byte, src, imp, w []float32) {
	return func(dst []byte, src, imp, w []float32) {
		f.grid.prepare()
		quantBlocks("quantize"+name, name, dst, src, imp, w, qkk, bb,
			func(y []byte, x, imp []float32, s *kqScratch) { quantIQ(f, y, x, imp, s) })
	}
}

// signs7 returns the 7 stored sign bits of 8 elements' signs neg.
func signs7(neg uint8) uint32 { return uint32(neg & 127) }

func packIQ2XXS(y []byte, r *iqRes) {
	binary.LittleEndian.PutUint16(y, r.hd)
	for ib := range 8 {
		q := y[2+8*ib:]
		aux := uint32(r.l[ib]) << 28
		for l := range 4 {
			q[l] = byte(r.p[4*ib+l])
			aux |= signs7(r.neg[4*ib+l]) << (7 * l)
		}
		binary.LittleEndian.PutUint32(q[4:], aux)
	}
}

func packIQ2XS(y []byte, r *iqRes) {
	binary.LittleEndian.PutUint16(y, r.hd)
	for k := range 32 {
		binary.LittleEndian.PutUint16(y[2+2*k:], r.p[k]|uint16(signs7(r.neg[k]))<<9)
	}
	for ib := range 8 {
		y[66+ib] = r.l[2*ib] | r.l[2*ib+1]<<4
	}
}

func packIQ2S(y []byte, r *iqRes) {
	binary.LittleEndian.PutUint16(y, r.hd)
	clear(y[66:74])
	for k := range 32 {
		y[2+k] = byte(r.p[k])
		y[34+k] = r.neg[k]
		y[66+k/4] |= byte(r.p[k]>>8) << (2 * (k % 4))
	}
	for ib := range 8 {
		y[74+ib] = r.l[2*ib] | r.l[2*ib+1]<<4
	}
}

func packIQ3XXS(y []byte, r *iqRes) {
	binary.LittleEndian.PutUint16(y, r.hd)
	for k := range 64 {
		y[2+k] = byte(r.p[k])
	}
	for ib := range 8 {
		aux := uint32(r.l[ib]) << 28
		for l := range 4 {
			aux |= signs7(r.neg[4*ib+l]) << (7 * l)
		}
		binary.LittleEndian.PutUint32(y[66+4*ib:], aux)
	}
}

func packIQ3S(y []byte, r *iqRes) {
	binary.LittleEndian.PutUint16(y, r.hd)
	clear(y[66:74])
	for k := range 64 {
		y[2+k] = byte(r.p[k])
		y[66+k/8] |= byte(r.p[k]>>8) << (k % 8)
	}
	copy(y[74:106], r.neg[:])
	for i := range 4 {
		y[106+i] = r.l[2*i] | r.l[2*i+1]<<4
	}
}

func packIQ1S(y []byte, r *iqRes) {
	binary.LittleEndian.PutUint16(y, r.hd)
	for ib := range 8 {
		qh := uint16(r.l[ib]) << 12
		if r.dneg[4*ib] {
			qh |= 0x8000
		}
		for l := range 4 {
			p := r.p[4*ib+l]
			y[2+4*ib+l] = byte(p)
			qh |= p >> 8 << (3 * l)
		}
		binary.LittleEndian.PutUint16(y[34+2*ib:], qh)
	}
}

func packIQ1M(y []byte, r *iqRes) {
	clear(y[32:56])
	for k := range 32 {
		p := r.p[k]
		y[k] = byte(p)
		h := byte(p >> 8)
		if r.dneg[k] {
			h |= 8
		}
		y[32+k/2] |= h << (4 * (k % 2))
	}
	var sc [4]uint16
	for b := range 16 {
		sc[b/4] |= uint16(r.l[b]) << (3 * (b % 4))
	}
	for k := range 4 {
		sc[k] |= r.hd >> (4 * k) << 12
		binary.LittleEndian.PutUint16(y[48+2*k:], sc[k])
	}
}
