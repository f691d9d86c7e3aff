package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

// The AVX2 super-block kernels (AVX2, FMA and F16C): the same searches with
// 8 lanes, one sub-block per lane and one candidate per register; the 16
// sub-blocks of 16 are two halves of 8, searched one after the other.
// Masks are vectors (VCMPPS, VBLENDVPS), and with 16 registers the state
// of a search lives in the scratch between candidates.
//
// Scratch layout: element i of the sub-blocks of half h at trX + 512·h +
// 32·i (8 sub-blocks of 32: element i at trX + 32·i), their weights at trW
// likewise; the per-sub-block results at trSc, trAs, ... (lane j of half h
// at + 32·h + 4·j, as the AVX-512 kernels); working vectors from trP.

// tmp2 is working vector k of the AVX2 kernels' scratch.
func tmp2(k int) Mem { return Mem{Base: R9, Disp: trP + 32*k} }

// transpose8 transposes the 8×8 floats of rows row(0..7) into the 8
// vectors col(0..7), through Y0..Y15.
func transpose8(row, col func(k int) Mem) {
	r := []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7}
	t := []VecPhysical{Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15}
	for j := range 8 {
		VMOVUPS(row(j), r[j])
	}
	for p := range 4 {
		VUNPCKLPS(r[2*p+1], r[2*p], t[2*p])
		VUNPCKHPS(r[2*p+1], r[2*p], t[2*p+1])
	}
	u := r
	for p := range 2 {
		VSHUFPS(U8(0x44), t[4*p+2], t[4*p], u[4*p])
		VSHUFPS(U8(0xee), t[4*p+2], t[4*p], u[4*p+1])
		VSHUFPS(U8(0x44), t[4*p+3], t[4*p+1], u[4*p+2])
		VSHUFPS(U8(0xee), t[4*p+3], t[4*p+1], u[4*p+3])
	}
	for k := range 4 {
		VPERM2F128(U8(0x20), u[4+k], u[k], t[k])
		VPERM2F128(U8(0x31), u[4+k], u[k], t[4+k])
	}
	for k := range 8 {
		VMOVUPS(t[k], col(k))
	}
}

// layout2 describes the sub-blocks of an AVX2 kernel: G of them, L
// elements each, in H halves of 8.
type layout2 struct{ G, L, H int }

// xe and we address element i of half h and its weight.
func (l layout2) xe(h, i int) Mem { return Mem{Base: R9, Disp: trX + 512*h + 32*i} }
func (l layout2) we(h, i int) Mem { return Mem{Base: R9, Disp: trW + 512*h + 32*i} }

// transposeIn transposes the block at base (x or w) into the scratch at
// off (trX or trW).
func (l layout2) transposeIn(base GPPhysical, off int) {
	for h := range l.H {
		for b := range l.L / 8 {
			// Rows: sub-blocks 8h..8h+7, elements 8b..8b+7.
			row := func(j int) Mem { return Mem{Base: base, Disp: 4 * (l.L*(8*h+j) + 8*b)} }
			col := func(k int) Mem { return Mem{Base: R9, Disp: off + 512*h + 32*(8*b+k)} }
			transpose8(row, col)
		}
	}
}

// begin2 opens an AVX2 super-block kernel: its frame and the transposed
// elements (and weights when w is not nil).
func begin2(name, sig string, l layout2, doc ...string) {
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(doc...)
	Load(Param("tr"), R9)
	Load(Param("cfg"), R10)
	Load(Param("res"), R11)
	Load(Param("x"), RSI)
	Load(Param("w"), RDI)
	TESTQ(RDI, RDI)
	JZ(LabelRef(name + "_unit"))
	l.transposeIn(RDI, trW)
	Label(name + "_unit")
	l.transposeIn(RSI, trX)
}

// bcast2 broadcasts the float32 at m into v.
func bcast2(m Mem, v VecPhysical) { VBROADCASTSS(m, v) }

// blend2 sets dst to a where mask, else leaves it (VBLENDVPS).
func blend2(mask VecPhysical, a Op, dst VecPhysical) { VBLENDVPS(mask, a, dst, dst) }

// superScale2 is superScaleLanes with 8 lanes (at most 8 levels): the
// super-block scale of the G scales at scOff with curvatures at asOff,
// rounded to float16, stored to res at dOff and hdOff. It uses Y0..Y15.
func superScale2(name string, G, scOff, asOff, dOff, hdOff int) {
	var (
		absM, amx, m, p = Y15, Y14, Y13, Y12
		id, sl, ll, dd  = Y0, Y1, Y2, Y3
		s, a, l, e      = Y4, Y5, Y6, Y7
		lo, hi          = Y8, Y9
		t               = Y10
	)
	gen.Broadcast32(0x7fffffff, absM, RAX, X11)
	VANDPS(Mem{Base: R9, Disp: scOff}, absM, amx)
	if G == 16 {
		VANDPS(Mem{Base: R9, Disp: scOff + 32}, absM, p)
		VMAXPS(p, amx, amx)
	}
	gen.HReduce(amx, p, VMAXPS, true)
	VBROADCASTSS(amx.AsX(), amx)
	VXORPS(X9, X9, X9) // d = 0 when every scale is 0
	VXORPS(p, p, p)
	VUCOMISS(amx.AsX(), p.AsX())
	JE(LabelRef(name + "_f16"))
	// m: the first scale of largest magnitude.
	VANDPS(Mem{Base: R9, Disp: scOff}, absM, p)
	VCMPPS(U8(cmpEQOQ), amx, p, p)
	VMOVMSKPS(p, EAX)
	if G == 16 {
		VANDPS(Mem{Base: R9, Disp: scOff + 32}, absM, p)
		VCMPPS(U8(cmpEQOQ), amx, p, p)
		VMOVMSKPS(p, ECX)
		SHLL(U8(8), ECX)
		ORL(ECX, EAX)
	}
	TZCNTL(EAX, EAX)
	VBROADCASTSS(Mem{Base: R9, Index: RAX, Scale: 4, Disp: scOff}, m)
	bcast2(Mem{Base: R10, Disp: cfgLo}, lo)
	bcast2(Mem{Base: R10, Disp: cfgHi}, hi)
	VMOVUPS(Mem{Base: R10, Disp: cfgLevels}, id)
	VDIVPS(m, id, id) // t/m
	VXORPS(sl, sl, sl)
	VXORPS(ll, ll, ll)
	for j := range G {
		bcast2(Mem{Base: R9, Disp: scOff + 4*j}, s)
		bcast2(Mem{Base: R9, Disp: asOff + 4*j}, a)
		VMULPS(id, s, l)
		VMAXPS(lo, l, l)
		VMINPS(hi, l, l)
		VROUNDPS(U8(0), l, l)
		VMULPS(s, a, p) // a·v
		VMULPS(l, p, p) // ·l
		VADDPS(p, sl, sl)
		VMULPS(l, a, p) // a·l
		VMULPS(l, p, p) // ·l
		VADDPS(p, ll, ll)
	}
	VDIVPS(ll, sl, dd) // D = sl/ll
	VXORPS(e, e, e)
	for j := range G {
		bcast2(Mem{Base: R9, Disp: scOff + 4*j}, s)
		bcast2(Mem{Base: R9, Disp: asOff + 4*j}, a)
		VMULPS(id, s, l)
		VMAXPS(lo, l, l)
		VMINPS(hi, l, l)
		VROUNDPS(U8(0), l, l)
		VMULPS(l, dd, p)
		VSUBPS(p, s, p) // r = v − D·l
		VMULPS(p, a, l) // a·r
		VMULPS(p, l, l) // ·r
		VADDPS(l, e, e)
	}
	// The lanes that count: below nlev, ll > 0 and e < +Inf.
	bcast2(Mem{Base: R10, Disp: cfgNLev}, t)
	VPCMPGTD(consts2.lane, t, t) // lane < nlev
	VXORPS(p, p, p)
	VCMPPS(U8(cmpGTOQ), p, ll, p)
	VANDPS(p, t, t)
	gen.Broadcast32(0x7f800000, p, RAX, X11)
	VCMPPS(U8(cmpLTOQ), p, e, l)
	VANDPS(l, t, t) // the valid lanes
	VBLENDVPS(t, e, p, p)
	gen.HReduce(p, l, VMINPS, true)
	VBROADCASTSS(p.AsX(), l) // the least error
	VMOVSS(Mem{Base: R10, Disp: cfgLevels}, X11)
	VDIVSS(X11, m.AsX(), X9) // m/levels[0]
	VMOVMSKPS(t, EAX)
	TESTL(EAX, EAX)
	JZ(LabelRef(name + "_f16"))
	VCMPPS(U8(cmpEQOQ), l, e, p)
	VANDPS(t, p, p)
	VMOVMSKPS(p, EAX)
	TZCNTL(EAX, EAX)
	VMOVUPS(dd, tmp2(0))
	VMOVSS(Mem{Base: R9, Index: RAX, Scale: 4, Disp: trP}, X9)
	Label(name + "_f16")
	// f16Round: NaN → 0, saturate to ±65504, round to nearest even.
	VCMPPS(U8(cmpORD), X9, X9, X11)
	VANDPS(X11, X9, X9)
	gen.Broadcast32(0x477fe000, Y11, RAX, X12) // 65504
	VMINSS(X11, X9, X9)
	gen.Broadcast32(0xc77fe000, Y11, RAX, X12) // −65504
	VMAXSS(X11, X9, X9)
	VCVTPS2PH(U8(0), X9, X11)
	VMOVD(X11, EAX)
	ANDL(U32(0xffff), EAX)
	MOVL(EAX, Mem{Base: R11, Disp: hdOff})
	VCVTPH2PS(X11, X9)
	VMOVSS(X9, Mem{Base: R11, Disp: dOff})
}

// Negated VCMPPS predicates (true for a NaN).
const (
	cmpNGEUQ = 0x19
	cmpNGTUQ = 0x1a
)

// consts2 are the AVX2 kernels' tables.
var consts2 struct{ lane, int1, int2, int3, int4, int8 Mem }

// neighbours2 sets a, b to neighbours(v, lo, hi) (lanes), with one and the
// magic constant in registers and t as scratch.
func neighbours2(v, a, b, lo, hi, one, mg, t VecPhysical) {
	VADDPS(mg, v, a)
	VSUBPS(mg, a, a) // rnd(v)
	VCMPPS(U8(cmpGTOQ), v, a, t)
	VSUBPS(one, a, b)
	blend2(t, b, a) // a > v: a − 1
	VADDPS(one, a, b)
	VMINPS(hi, b, b)
	VCMPPS(U8(cmpGTOQ), hi, v, t)
	blend2(t, hi, a)
	blend2(t, hi, b)
	VCMPPS(U8(cmpNGEUQ), lo, v, t) // !(v >= lo)
	blend2(t, lo, a)
	blend2(t, lo, b)
}

// inv2 sets d to 1/v, or 0 where v is ±0, with t as scratch.
func inv2(v, d, one, t VecPhysical) {
	VDIVPS(v, one, d)
	VXORPS(t, t, t)
	VCMPPS(U8(cmpEQOQ), t, v, t)
	VANDNPS(d, t, d)
}

// affineSuper2 emits kqAffineSuper{G}AVX2, affineSuper's AVX2 kernel.
func affineSuper2(G int) {
	l := layout2{G: G, L: 256 / G, H: G / 8}
	name := "kqAffineSuper" + itoa(G) + "AVX2"
	begin2(name, "func(x, w *[256]float32, tr *[1920]float32, cfg *[104]float32, res *[68]float32)", l,
		name+" is the AVX2 kernel of affineSuperGo for "+itoa(G)+" sub-blocks of "+itoa(l.L)+",",
		"as the AVX-512 kernel (cfg, res, a nil w), with one candidate per register",
		"and at most 8 levels.")
	for h := range l.H {
		affineFits2(name+"_h"+itoa(h), l, h)
	}
	superScale2(name+"_ssd", G, trSc, trAs, ares1D, ares1HD)
	superScale2(name+"_ssm", G, trMn, trAm, ares1Dm, ares1HM)
	for h := range l.H {
		affinePicks2(name+"_p"+itoa(h), l, h)
	}
	VZEROUPPER()
	RET()
}

// Working vectors of affineFits2 (tmp2 indexes).
const (
	f2Lo, f2Span, f2R, f2Sw, f2Sx, f2Sxx, f2BE, f2BD, f2BM, f2BB, f2Inf = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
)

// affineSums2 adds up a = Σwq, b = Σwq² and f = Σwqx (the last two fused)
// of the codes q = clamp(round(t·(x − o)), 0, n) over the elements of half
// h, as affineSums; t and o may be memory.
func affineSums2(name string, l layout2, h int, weights, lowClamp bool, t, o Op, a, b, f, xv, v, q, wv, n, zero VecPhysical) {
	VXORPS(a, a, a)
	VXORPS(b, b, b)
	VXORPS(f, f, f)
	for i := range l.L {
		VMOVUPS(l.xe(h, i), xv)
		VSUBPS(o, xv, v) // v − o
		VMULPS(t, v, v)  // t·(v − o)
		if lowClamp {
			VMAXPS(zero, v, v)
		}
		VMINPS(n, v, v)
		VROUNDPS(U8(0), v, v)
		qq := v
		if weights {
			VMULPS(l.we(h, i), v, q) // wq
			qq = q
		}
		VADDPS(qq, a, a)
		VFMADD231PS(v, qq, b)  // b += wq·q, fused
		VFMADD231PS(xv, qq, f) // f += wq·v, fused
	}
	_ = wv
}

// affineErr2 sets e to the error of the codes with sums a, b, f under the
// scale d and offset m, the sub-blocks' Σw, Σwx, Σwx² in memory (as
// affineErr), using t1 and t2.
func affineErr2(sw, sx, sxx Mem, a, b, f, d, m, e, t1, t2 VecPhysical) {
	VADDPS(d, d, t1) // 2·d
	VMULPS(f, t1, t2)
	VMOVUPS(sxx, e)
	VSUBPS(t2, e, e)
	VADDPS(m, m, t2) // 2·m
	VMULPS(sx, t2, t2)
	VSUBPS(t2, e, e)
	VMULPS(d, d, t2)
	VMULPS(b, t2, t2)
	VADDPS(t2, e, e)
	VMULPS(m, t1, t2) // 2d·m
	VMULPS(a, t2, t2)
	VADDPS(t2, e, e)
	VMULPS(m, m, t2)
	VMULPS(sw, t2, t2)
	VADDPS(t2, e, e)
}

// affineFits2 fits the 8 sub-blocks of half h (as affine.fitWith with
// minBelow and no refits) and stores their d, −m, Σwq², Σw, m, Σwx and
// Σwx² to the scratch.
func affineFits2(name string, l layout2, h int) {
	var (
		t, o, a, b, f, xv, v, q, wv = Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8
		n, one, zero                = Y9, Y10, Y11
		t1, t2                      = Y12, Y13
		lo, hi                      = Y14, Y15
	)
	VXORPS(zero, zero, zero)
	gen.Broadcast32(0x3f800000, one, RAX, X12)
	gen.Broadcast32(0x7f800000, t1, RAX, X12)
	VMOVUPS(t1, tmp2(f2Inf))
	bcast2(Mem{Base: R10, Disp: cfgPos}, n)
	// lo, hi (each + 0, lo at most 0), Σw, Σwx, Σ(wx)x.
	VMOVUPS(l.xe(h, 0), lo)
	VMOVAPS(lo, hi)
	for i := 1; i < l.L; i++ {
		VMINPS(l.xe(h, i), lo, lo)
		VMAXPS(l.xe(h, i), hi, hi)
	}
	VADDPS(zero, lo, lo)
	VADDPS(zero, hi, hi)
	VMINPS(zero, lo, lo)
	VMOVUPS(lo, tmp2(f2Lo))
	VSUBPS(lo, hi, t1)
	VMOVUPS(t1, tmp2(f2Span))
	VDIVPS(t1, one, t1)
	VMOVUPS(t1, tmp2(f2R))
	VXORPS(a, a, a)
	VXORPS(b, b, b)
	VXORPS(f, f, f)
	twoWays(name+"_sums", func() {
		for i := range l.L {
			VMOVUPS(l.xe(h, i), xv)
			VMOVUPS(l.we(h, i), wv)
			VADDPS(wv, a, a)
			VMULPS(xv, wv, v) // wx
			VADDPS(v, b, b)
			VMULPS(xv, v, v) // wx·v
			VADDPS(v, f, f)
		}
	}, func() {
		for i := range l.L {
			VMOVUPS(l.xe(h, i), xv)
			VADDPS(one, a, a)
			VADDPS(xv, b, b)
			VMULPS(xv, xv, v)
			VADDPS(v, f, f)
		}
	})
	VMOVUPS(a, tmp2(f2Sw))
	VMOVUPS(b, tmp2(f2Sx))
	VMOVUPS(f, tmp2(f2Sxx))
	// The candidates.
	gen.Broadcast32(0x7f800000, t1, RAX, X12)
	VMOVUPS(t1, tmp2(f2BE))
	VMOVUPS(zero, tmp2(f2BD))
	VMOVUPS(zero, tmp2(f2BM))
	VMOVUPS(zero, tmp2(f2BB))
	cands := func(weights bool, lbl string) {
		XORQ(RDX, RDX)
		MOVL(Mem{Base: R10, Disp: cfgK}, ECX)
		TESTL(ECX, ECX)
		JZ(LabelRef(lbl + "_done"))
		Label(lbl + "_loop")
		VBROADCASTSS(Mem{Base: R10, Index: RDX, Scale: 4, Disp: cfgNumer}, t)
		VMULPS(tmp2(f2R), t, t) // t = nd·r
		VBROADCASTSS(Mem{Base: R10, Index: RDX, Scale: 4, Disp: cfgShift}, o)
		VMULPS(tmp2(f2Span), o, o)
		VMOVUPS(tmp2(f2Lo), t1)
		VSUBPS(o, t1, o) // o = lo − shift·span
		// With weights the lower clamp stays, as in the AVX-512 kernel: a
		// span that overflows to +Inf makes t = 0 and t·(x − o) NaN, which
		// clampRoundPass takes to 0 and VMINPS alone to n; unit weights
		// give every code alike then, so det = 0 either way.
		affineSums2(lbl, l, h, weights, weights, t, o, a, b, f, xv, v, q, wv, n, zero)
		// The least squares (as affineFitGo, minBelow).
		det, dc, mc, e := xv, v, q, wv
		VMULPS(tmp2(f2Sw), b, t1)
		VMULPS(a, a, t2)
		VSUBPS(t2, t1, det) // sw·b − a·a
		VMULPS(tmp2(f2Sw), f, t1)
		VMULPS(tmp2(f2Sx), a, t2)
		VSUBPS(t2, t1, dc)
		VDIVPS(det, dc, dc) // (sw·f − sx·a)/det
		VMULPS(tmp2(f2Sx), b, t1)
		VMULPS(f, a, t2)
		VSUBPS(t2, t1, mc)
		VDIVPS(det, mc, mc) // (b·sx − a·f)/det
		VCMPPS(U8(cmpGTOQ), zero, mc, t1)
		VDIVPS(b, f, t2)
		blend2(t1, t2, dc)
		blend2(t1, zero, mc)
		affineErr2(tmp2(f2Sw), tmp2(f2Sx), tmp2(f2Sxx), a, b, f, dc, mc, e, t1, t2)
		VCMPPS(U8(cmpGTOQ), zero, det, t1)
		VCMPPS(U8(cmpGTOQ), zero, dc, t2)
		VANDPS(t2, t1, t1)
		VMOVUPS(tmp2(f2Inf), t2)
		VBLENDVPS(t1, e, t2, e) // +Inf unless det > 0 and dc > 0
		// The first of least error.
		VCMPPS(U8(cmpLTOQ), tmp2(f2BE), e, t1)
		for _, c := range []struct {
			z VecPhysical
			k int
		}{{e, f2BE}, {dc, f2BD}, {mc, f2BM}, {b, f2BB}} {
			VMOVUPS(tmp2(c.k), t2)
			blend2(t1, c.z, t2)
			VMOVUPS(t2, tmp2(c.k))
		}
		INCQ(RDX)
		CMPQ(RDX, RCX)
		JB(LabelRef(lbl + "_loop"))
		Label(lbl + "_done")
	}
	twoWays(name+"_cands", func() { cands(true, name+"_cw") }, func() { cands(false, name+"_cu") })
	// No candidate: the min-max scale; a constant: d = 0, m = Σwx/Σw (≤ 0).
	bD, bM, bB := a, b, f
	VMOVUPS(tmp2(f2BD), bD)
	VMOVUPS(tmp2(f2BM), bM)
	VMOVUPS(tmp2(f2BB), bB)
	VCMPPS(U8(cmpEQOQ), zero, bD, t1)
	VMOVUPS(tmp2(f2Span), t2)
	VDIVPS(n, t2, t2)
	blend2(t1, t2, bD)
	blend2(t1, tmp2(f2Lo), bM)
	blend2(t1, zero, bB)
	VBROADCASTSS(consts.Word(0x26901d7d), t1) // 1e-15
	VMOVUPS(tmp2(f2Span), v)
	VCMPPS(U8(cmpNGTUQ), t1, v, t1)
	VMOVUPS(tmp2(f2Sx), t2)
	VDIVPS(tmp2(f2Sw), t2, t2)
	VCMPPS(U8(cmpGTOQ), zero, t2, v)
	blend2(v, zero, t2) // m > 0: 0
	blend2(t1, zero, bD)
	blend2(t1, t2, bM)
	blend2(t1, zero, bB)
	off := 32 * h
	VMOVUPS(bD, Mem{Base: R9, Disp: trSc + off})
	VMOVUPS(bB, Mem{Base: R9, Disp: trAs + off})
	VMOVUPS(bM, Mem{Base: R9, Disp: trFM + off})
	gen.Broadcast32(0x80000000, t1, RAX, X12)
	VXORPS(t1, bM, t2) // −m
	VMOVUPS(t2, Mem{Base: R9, Disp: trMn + off})
	for _, c := range []struct{ from, to int }{{f2Sw, trAm}, {f2Sx, trSx}, {f2Sxx, trSxx}} {
		VMOVUPS(tmp2(c.from), t1)
		VMOVUPS(t1, Mem{Base: R9, Disp: c.to + off})
	}
}

// affinePicks2 picks the integer scales and mins of the sub-blocks of half
// h as pickAffine, from the 16 pairs around each fit, and stores l, m,
// −(Dm·m) and inv(D·l) to res.
func affinePicks2(name string, l layout2, h int) {
	off := 32 * h
	var (
		zero, one, mg, top, n = Y0, Y1, Y2, Y3, Y4
		v, l0, l1, m0, m1     = Y5, Y6, Y7, Y8, Y9
		D, Dm, t1, t2         = Y10, Y11, Y12, Y13
		x1, x2                = Y14, Y15
	)
	VXORPS(zero, zero, zero)
	gen.Broadcast32(0x3f800000, one, RAX, X12)
	gen.Broadcast32(magic, mg, RAX, X12)
	bcast2(Mem{Base: R10, Disp: cfgHi}, top)
	bcast2(Mem{Base: R10, Disp: cfgPos}, n)
	bcast2(Mem{Base: R11, Disp: ares1D}, D)
	bcast2(Mem{Base: R11, Disp: ares1Dm}, Dm)
	inv2(D, t1, one, t2)
	VMULPS(Mem{Base: R9, Disp: trSc + off}, t1, v) // f.d·inv(D)
	neighbours2(v, l0, l1, zero, top, one, mg, t2)
	inv2(Dm, t1, one, t2)
	VMULPS(Mem{Base: R9, Disp: trMn + off}, t1, v) // −f.m·inv(Dm)
	neighbours2(v, m0, m1, zero, top, one, mg, t2)
	// ls = l0, l1, max(l0−1, 0), min(l1+1, top); ms likewise. Pair 4i+j:
	// d = D·ls[i], mv = −(Dm·ms[j]), id = inv(d), ls[i], ms[j] at
	// tmp2(5·(4i+j) + 0..4).
	VSUBPS(one, l0, x1)
	VMAXPS(zero, x1, x1)
	VADDPS(one, l1, x2)
	VMINPS(top, x2, x2)
	ls := []VecPhysical{l0, l1, x1, x2}
	for i, li := range ls {
		VMULPS(li, D, t1)
		inv2(t1, t2, one, v)
		for j := range 4 {
			c := 4*i + j
			VMOVUPS(t1, tmp2(5*c))
			VMOVUPS(t2, tmp2(5*c+2))
			VMOVUPS(li, tmp2(5*c+3))
		}
	}
	VSUBPS(one, m0, x1)
	VMAXPS(zero, x1, x1)
	VADDPS(one, m1, x2)
	VMINPS(top, x2, x2)
	gen.Broadcast32(0x80000000, t2, RAX, X12)
	for j, mj := range []VecPhysical{m0, m1, x1, x2} {
		VMULPS(mj, Dm, t1)
		VXORPS(t2, t1, t1) // −(Dm·m)
		for i := range 4 {
			c := 4*i + j
			VMOVUPS(t1, tmp2(5*c+1))
			VMOVUPS(mj, tmp2(5*c+4))
		}
	}
	// The errors of the pairs cfg lists (pairs[:np]), pair by pair, in
	// code steps (as affinePicks); the first listed of least error. RBX
	// points at pairs[RDX]'s parameters (R9 + 160·pairs[RDX]).
	var (
		a, b, f, xv, vv, q, wv = Y5, Y6, Y7, Y8, Y9, Y10, Y11
		bE, bL, bM             = Y12, Y13, Y14
		d                      = Y15
		s, kk, pid, sign       = Y5, Y6, Y7, Y2
	)
	gen.Broadcast32(0x7f800000, bE, RAX, X2)
	pairAt := func() {
		MOVL(Mem{Base: R10, Index: RDX, Scale: 4, Disp: cfgPairs}, EBX)
		LEAQ(Mem{Base: RBX, Index: RBX, Scale: 4}, RBX)
		SHLQ(U8(5), RBX)
		ADDQ(R9, RBX)
	}
	XORQ(RDX, RDX)
	pairAt()
	VMOVUPS(Mem{Base: RBX, Disp: trP + 96}, bL)
	VMOVUPS(Mem{Base: RBX, Disp: trP + 128}, bM)
	sw, sx, sxx := Mem{Base: R9, Disp: trAm + off}, Mem{Base: R9, Disp: trSx + off}, Mem{Base: R9, Disp: trSxx + off}
	errs := func(weights bool, lbl string) {
		XORQ(RDX, RDX)
		MOVL(Mem{Base: R10, Disp: cfgNP}, ECX)
		Label(lbl + "_loop")
		pairAt()
		pm := Mem{Base: RBX, Disp: trP + 32}
		VMOVUPS(Mem{Base: RBX, Disp: trP + 64}, pid)
		VMULPS(pm, pid, kk)
		VXORPS(sign, kk, kk) // κ = −(m·id)
		VXORPS(s, s, s)
		for i := range l.L {
			VMOVUPS(l.xe(h, i), xv)
			VFMADD213PS(kk, pid, xv) // u = id·x + κ, fused
			VMAXPS(zero, xv, q)
			VMINPS(n, q, q)
			VROUNDPS(U8(0), q, q)
			VSUBPS(q, xv, vv) // r = u − q
			if weights {
				VMULPS(l.we(h, i), vv, q) // w·r
				VFMADD231PS(vv, q, s)     // s += w·r·r, fused
			} else {
				VFMADD231PS(vv, vv, s)
			}
		}
		VMOVUPS(Mem{Base: RBX, Disp: trP}, d)
		VMULPS(d, d, q)
		VMULPS(s, q, xv) // e = (d·d)·s
		VMOVUPS(pm, vv)
		VADDPS(vv, vv, q)
		VMULPS(sx, q, q)
		VMOVUPS(sxx, wv)
		VSUBPS(q, wv, wv) // sxx − 2m·sx
		VMULPS(vv, vv, q)
		VMULPS(sw, q, q)
		VADDPS(q, wv, wv) // + m·m·sw
		VCMPPS(U8(cmpEQOQ), zero, d, q)
		blend2(q, wv, xv) // d = 0
		VCMPPS(U8(cmpLTOQ), bE, xv, q)
		blend2(q, xv, bE)
		blend2(q, Mem{Base: RBX, Disp: trP + 96}, bL)
		blend2(q, Mem{Base: RBX, Disp: trP + 128}, bM)
		INCQ(RDX)
		CMPQ(RDX, RCX)
		JB(LabelRef(lbl + "_loop"))
	}
	gen.Broadcast32(0x80000000, sign, RAX, X9)
	VXORPS(zero, zero, zero)
	bcast2(Mem{Base: R10, Disp: cfgPos}, n)
	twoWays(name+"_errs", func() { errs(true, name+"_ew") }, func() { errs(false, name+"_eu") })
	VMOVUPS(bL, Mem{Base: R11, Disp: ares1L + off})
	VMOVUPS(bM, Mem{Base: R11, Disp: ares1M + off})
	bcast2(Mem{Base: R11, Disp: ares1Dm}, d)
	VMULPS(bM, d, a)
	gen.Broadcast32(0x80000000, b, RAX, X2)
	VXORPS(b, a, a)
	VMOVUPS(a, Mem{Base: R11, Disp: ares1Mn + off})
	bcast2(Mem{Base: R11, Disp: ares1D}, d)
	VMULPS(bL, d, a)
	gen.Broadcast32(0x3f800000, f, RAX, X2)
	inv2(a, b, f, xv)
	VMOVUPS(b, Mem{Base: R11, Disp: ares1IDs + off})
}

// symSuper2 emits kqSymSuper16AVX2, symSuper16's AVX2 kernel.
func symSuper2() {
	l := layout2{G: 16, L: 16, H: 2}
	name := "kqSymSuper16AVX2"
	begin2(name, "func(x, w *[256]float32, tr *[1920]float32, cfg *[56]float32, res *[36]float32)", l,
		name+" is the AVX2 kernel of symSuper16Go, as the AVX-512 kernel (cfg,",
		"res, a nil w), with one candidate per register and at most 8 levels.")
	for h := range 2 {
		symFits2(name+"_h"+itoa(h), l, h)
	}
	superScale2(name+"_ss", 16, trSc, trAs, resD, resHD)
	for h := range 2 {
		symPicks2(name+"_p"+itoa(h), l, h)
	}
	VZEROUPPER()
	RET()
}

// symFits2 fits the 8 sub-blocks of half h as symmetric.fit (no refits)
// and stores their d and Σwq² to the scratch.
func symFits2(name string, l layout2, h int) {
	var (
		t, a, b, x, v, q = Y0, Y1, Y2, Y3, Y4, Y5
		lo, hi, zero, p  = Y6, Y7, Y8, Y9
		bS, bA, bB       = Y10, Y11, Y12
		amax, m, absM    = Y13, Y14, Y15
	)
	gen.Broadcast32(0x7fffffff, absM, RAX, X0)
	VXORPS(amax, amax, amax)
	VMOVUPS(l.xe(h, 0), m)
	for i := range 16 {
		VMOVUPS(l.xe(h, i), x)
		VANDPS(x, absM, v)
		VCMPPS(U8(cmpGTOQ), amax, v, p)
		blend2(p, v, amax)
		blend2(p, x, m)
	}
	// t = numer[c]/m of every candidate.
	MOVL(Mem{Base: R10, Disp: cfgK}, ECX)
	XORQ(RDX, RDX)
	MOVQ(R9, RBX)
	TESTL(ECX, ECX)
	JZ(LabelRef(name + "_tdone"))
	Label(name + "_tloop")
	VBROADCASTSS(Mem{Base: R10, Index: RDX, Scale: 4, Disp: cfgNumer}, t)
	VDIVPS(m, t, t)
	VMOVUPS(t, Mem{Base: RBX, Disp: trP})
	ADDQ(U32(32), RBX)
	INCQ(RDX)
	CMPQ(RDX, RCX)
	JB(LabelRef(name + "_tloop"))
	Label(name + "_tdone")
	bcast2(Mem{Base: R10, Disp: cfgNeg}, lo)
	VXORPS(zero, zero, zero)
	VSUBPS(lo, zero, lo)
	bcast2(Mem{Base: R10, Disp: cfgPos}, hi)
	VXORPS(bS, bS, bS)
	VXORPS(bA, bA, bA)
	VXORPS(bB, bB, bB)
	cands := func(weights bool, lbl string) {
		MOVQ(R9, RBX)
		MOVL(ECX, EDX)
		TESTL(EDX, EDX)
		JZ(LabelRef(lbl + "_done"))
		Label(lbl + "_loop")
		VMOVUPS(Mem{Base: RBX, Disp: trP}, t)
		VXORPS(a, a, a)
		VXORPS(b, b, b)
		for i := range 16 {
			VMOVUPS(l.xe(h, i), x)
			VMULPS(x, t, v) // t·v
			VMAXPS(lo, v, v)
			VMINPS(hi, v, v)
			VROUNDPS(U8(0), v, v)
			qq := v
			if weights {
				VMULPS(l.we(h, i), v, q) // wq
				qq = q
			}
			VFMADD231PS(x, qq, a) // a += wq·v, fused
			VFMADD231PS(v, qq, b) // b += wq·q, fused
		}
		// score = a·a/b (−Inf unless b > 0); the first best.
		VMULPS(a, a, v)
		VDIVPS(b, v, v)
		VCMPPS(U8(cmpNGTUQ), zero, b, p)
		gen.Broadcast32(0xff800000, q, RAX, X5) // q's xmm
		blend2(p, q, v)
		VCMPPS(U8(cmpGTOQ), bS, v, p)
		blend2(p, v, bS)
		blend2(p, a, bA)
		blend2(p, b, bB)
		ADDQ(U32(32), RBX)
		DECL(EDX)
		JNZ(LabelRef(lbl + "_loop"))
		Label(lbl + "_done")
	}
	twoWays(name+"_cands", func() { cands(true, name+"_cw") }, func() { cands(false, name+"_cu") })
	// d = a/b of the best, 0 when none scored above 0 or below groupEps.
	VDIVPS(bB, bA, bA)
	VCMPPS(U8(cmpNGTUQ), zero, bS, p)
	VBROADCASTSS(consts.Word(0x26901d7d), v) // 1e-15
	VCMPPS(U8(cmpLTOQ), v, amax, v)
	VORPS(v, p, p)
	blend2(p, zero, bA)
	blend2(p, zero, bB)
	VMOVUPS(bA, Mem{Base: R9, Disp: trSc + 32*h})
	VMOVUPS(bB, Mem{Base: R9, Disp: trAs + 32*h})
}

// symPicks2 picks the integer scales of the sub-blocks of half h as
// pickSym and stores l and inv(d·l) to res.
func symPicks2(name string, l layout2, h int) {
	var (
		slo, shi, one, mg = Y0, Y1, Y2, Y3
		v, la, lb, t      = Y4, Y5, Y6, Y7
		d, d0, d1         = Y8, Y9, Y10
		i0, i1, e0, e1    = Y11, Y12, Y13, Y14
		x                 = Y15
	)
	gen.Broadcast32(0x3f800000, one, RAX, X15)
	gen.Broadcast32(magic, mg, RAX, X15)
	bcast2(Mem{Base: R10, Disp: cfgLo}, slo)
	bcast2(Mem{Base: R10, Disp: cfgHi}, shi)
	bcast2(Mem{Base: R11, Disp: resD}, d)
	inv2(d, v, one, t)
	VMULPS(Mem{Base: R9, Disp: trSc + 32*h}, v, v) // sc·inv(d)
	neighbours2(v, la, lb, slo, shi, one, mg, t)
	VMULPS(d, la, d0)
	VMULPS(d, lb, d1)
	inv2(d0, i0, one, t)
	inv2(d1, i1, one, t)
	VXORPS(consts.Vec(0x80000000), d0, d0) // −d (a NaN d gives −NaN, as fma32(−d, q, v))
	VXORPS(consts.Vec(0x80000000), d1, d1)
	// The codes' range, in the scales' registers (free now).
	lo, hi := slo, shi
	bcast2(Mem{Base: R10, Disp: cfgNeg}, lo)
	VXORPS(t, t, t)
	VSUBPS(lo, t, lo)
	bcast2(Mem{Base: R10, Disp: cfgPos}, hi)
	VXORPS(e0, e0, e0)
	VXORPS(e1, e1, e1)
	p := mg
	errs := func(weights bool) {
		for i := range 16 {
			VMOVUPS(l.xe(h, i), x)
			for _, c := range []struct{ id, d, e VecPhysical }{{i0, d0, e0}, {i1, d1, e1}} {
				VMULPS(c.id, x, t) // v·id
				VMAXPS(lo, t, t)
				VMINPS(hi, t, t)
				VROUNDPS(U8(0), t, t)
				VFMADD213PS(x, c.d, t) // r = (−d)·q + v, fused
				if weights {
					VMULPS(l.we(h, i), t, p) // w·r
					VFMADD231PS(t, p, c.e)   // + w·r·r, fused
				} else {
					VFMADD231PS(t, t, c.e)
				}
			}
		}
	}
	twoWays(name+"_errs", func() { errs(true) }, func() { errs(false) })
	VCMPPS(U8(cmpLTOQ), e0, e1, t)
	blend2(t, lb, la)
	VMOVUPS(la, Mem{Base: R11, Disp: resL + 32*h})
	VMULPS(d, la, v)
	inv2(v, i0, one, t)
	VMOVUPS(i0, Mem{Base: R11, Disp: resIDs + 32*h})
}

// chunks2 runs body once per 8 elements of x: the elements in Y3 with NaNs
// as 0, the sub-block index (chunk >> (shift+1)) in BX. x's base is in SI,
// the codes' in DI, the shift + 1 in CX, the chunks left in R10, the chunk
// number in DX.
func chunks2(name string, body func()) {
	Load(Param("x").Base(), RSI)
	Load(Param("x").Len(), R10)
	Load(Param("codes").Base(), RDI)
	Load(Param("shift"), RCX)
	INCQ(RCX)
	SHRQ(Imm(3), R10)
	XORQ(RDX, RDX)
	TESTQ(R10, R10)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	VMOVUPS(Mem{Base: RSI}, Y3)
	VCMPPS(U8(cmpORD), Y3, Y3, Y6)
	VANDPS(Y6, Y3, Y3) // NaN → 0
	MOVQ(RDX, RBX)
	SHRQ(CL, RBX)
	body()
	ADDQ(Imm(32), RSI)
	ADDQ(Imm(8), RDI)
	INCQ(RDX)
	DECQ(R10)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// storeCodes2 converts the 8 integer-valued floats of v (0..255) to bytes
// at DI, using Y7.
func storeCodes2(v VecPhysical) {
	VCVTPS2DQ(v, v)
	VEXTRACTI128(U8(1), v, X7)
	VPACKSSDW(X7, v.AsX(), v.AsX())
	VPACKUSWB(v.AsX(), v.AsX(), v.AsX())
	VMOVQ(v.AsX(), Mem{Base: RDI})
}

func affineCodes2() {
	name := "kqAffineCodesAVX2"
	TEXT(name, NOSPLIT, "func(x, mi []float32, shift uint64, n float32, codes []uint8)")
	Pragma("noescape")
	Doc(name+" is the AVX2 kernel of affineCodesGo, with len(x) a multiple",
		"of 16, len(codes) ≥ len(x) and the sub-block of element i being",
		"(i/16) >> shift:",
		"",
		"\tfor i, v := range x {",
		"\t\tj := i / 16 >> shift",
		"\t\tcodes[i] = uint8(clampRoundPass((storeX(v)-mi[2*j])*mi[2*j+1], 0, n))",
		"\t}")
	VXORPS(Y1, Y1, Y1)
	Load(Param("n"), X2)
	VBROADCASTSS(X2, Y2)
	Load(Param("mi").Base(), R9)
	chunks2(name, func() {
		VBROADCASTSS(Mem{Base: R9, Index: RBX, Scale: 8}, Y4)          // m
		VBROADCASTSS(Mem{Base: R9, Index: RBX, Scale: 8, Disp: 4}, Y5) // id
		VSUBPS(Y4, Y3, Y0)
		VMULPS(Y5, Y0, Y0)
		VMAXPS(Y1, Y0, Y0)
		VMINPS(Y2, Y0, Y0)
		VROUNDPS(U8(0), Y0, Y0)
		storeCodes2(Y0)
	})
}

func symCodes2() {
	name := "kqSymCodesAVX2"
	TEXT(name, NOSPLIT, "func(x, ids []float32, shift uint64, neg, pos float32, codes []uint8)")
	Pragma("noescape")
	Doc(name+" is the AVX2 kernel of symCodesGo, with len(x) a multiple of",
		"16, len(codes) ≥ len(x) and the sub-block of element i being",
		"(i/16) >> shift:",
		"",
		"\tfor i, v := range x {",
		"\t\tj := i / 16 >> shift",
		"\t\tcodes[i] = uint8(clampRoundPass(storeX(v)*ids[j], -neg, pos) + neg)",
		"\t}")
	Load(Param("neg"), X8)
	VBROADCASTSS(X8, Y8)
	VXORPS(Y1, Y1, Y1)
	VSUBPS(Y8, Y1, Y1) // −neg
	Load(Param("pos"), X2)
	VBROADCASTSS(X2, Y2)
	Load(Param("ids").Base(), R9)
	chunks2(name, func() {
		VBROADCASTSS(Mem{Base: R9, Index: RBX, Scale: 4}, Y5) // id
		VMULPS(Y5, Y3, Y0)
		VMAXPS(Y1, Y0, Y0)
		VMINPS(Y2, Y0, Y0)
		VROUNDPS(U8(0), Y0, Y0)
		VADDPS(Y8, Y0, Y0)
		storeCodes2(Y0)
	})
}

// tableIndex2 sets the int32 lanes of i to the table index of the values u
// (table.index: a binary search over the 15 midpoints of cfg, a NaN giving
// 0) and q to the table value, with 8 lanes: the midpoints and values
// (mids, vals) as two halves of 8 in memory (VPERMPS on each, the half chosen by the first
// step, which fixes it), mid7 holding the midpoint mid[7] broadcast, and
// m1, j, p, r as scratch. The steps' constants come from consts2.
func tableIndex2(u, i, q, mid7, m1, j, p, r VecPhysical, mids, vals Mem) {
	VCMPPS(U8(cmpGTOQ), mid7, u, m1) // u > mid[7]
	VANDPS(consts2.int8, m1, i)      // i = 8 or 0
	lookup := func(idx VecPhysical, tab Mem, dst VecPhysical) {
		VPERMPS(tab, idx, dst)
		VPERMPS(tab.Offset(32), idx, r)
		VBLENDVPS(m1, r, dst, dst)
	}
	for _, st := range []struct{ off, add Mem }{{consts2.int3, consts2.int4}, {consts2.int1, consts2.int2}} {
		VPADDD(st.off, i, j)
		lookup(j, mids, p)
		VCMPPS(U8(cmpGTOQ), p, u, p)
		VANDPS(st.add, p, p)
		VPADDD(p, i, i)
	}
	lookup(i, mids, p)
	VCMPPS(U8(cmpGTOQ), p, u, p)
	VANDPS(consts2.int1, p, p)
	VPADDD(p, i, i)
	lookup(i, vals, q)
}

// tableFits2 fits the 8 sub-blocks of 32 as table.fit (with refine, its one
// refit round of the local factors in cfg.shift) and leaves each one's
// scale (0 below groupEps or when no candidate scored) in Y12 and its Σwq²
// in Y13.
func tableFits2(name string, refine bool) {
	l := layout2{G: 8, L: 32, H: 1}
	mids, vals := Mem{Base: R10, Disp: cfgMids}, Mem{Base: R10, Disp: cfgVals}
	var (
		x, u, i, q, mid7, m1, j, p, r = Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8
		a, b, bS, bA, bB              = Y9, Y10, Y11, Y12, Y13
		amax, m                       = Y14, Y15
	)
	const tAmax, tValid, tT = 31, 30, 0 // working vectors: amax, the refit lanes, t
	gen.Broadcast32(0x7fffffff, p, RAX, X7)
	VXORPS(amax, amax, amax)
	VMOVUPS(l.xe(0, 0), m)
	for k := range l.L {
		VMOVUPS(l.xe(0, k), x)
		VANDPS(x, p, u)
		VCMPPS(U8(cmpGTOQ), amax, u, r)
		blend2(r, u, amax)
		blend2(r, x, m)
	}
	VMOVUPS(amax, tmp2(tAmax))
	// t = numer[c]/m of every candidate.
	MOVL(Mem{Base: R10, Disp: cfgK}, ECX)
	XORQ(RDX, RDX)
	MOVQ(R9, RBX)
	TESTL(ECX, ECX)
	JZ(LabelRef(name + "_tdone"))
	Label(name + "_tloop")
	VBROADCASTSS(Mem{Base: R10, Index: RDX, Scale: 4, Disp: cfgNumer}, u)
	VDIVPS(m, u, u)
	VMOVUPS(u, Mem{Base: RBX, Disp: trP + 32*tT})
	ADDQ(U32(32), RBX)
	INCQ(RDX)
	CMPQ(RDX, RCX)
	JB(LabelRef(name + "_tloop"))
	Label(name + "_tdone")
	VBROADCASTSS(mids.Offset(28), mid7)
	VXORPS(bS, bS, bS)
	VXORPS(bA, bA, bA)
	VXORPS(bB, bB, bB)
	// rounds measures the candidates t at tmp2(tT..), EDX of them; with
	// valid, only in the lanes of tmp2(tValid).
	rounds := func(weights, valid bool, lbl string) {
		MOVQ(R9, RBX)
		TESTL(EDX, EDX)
		JZ(LabelRef(lbl + "_done"))
		Label(lbl + "_loop")
		VXORPS(a, a, a)
		VXORPS(b, b, b)
		for k := range l.L {
			VMOVUPS(l.xe(0, k), x)
			VMULPS(Mem{Base: RBX, Disp: trP + 32*tT}, x, u) // t·v
			tableIndex2(u, i, q, mid7, m1, j, p, r, mids, vals)
			qq := q
			if weights {
				VMULPS(l.we(0, k), q, j) // wq
				qq = j
			}
			VFMADD231PS(x, qq, a) // a += wq·v, fused
			VFMADD231PS(q, qq, b) // b += wq·q, fused
		}
		// score = a·a/b (−Inf unless b > 0); the first best.
		VMULPS(a, a, u)
		VDIVPS(b, u, u)
		VXORPS(p, p, p)
		VCMPPS(U8(cmpNGTUQ), p, b, p)
		gen.Broadcast32(0xff800000, r, RAX, X8)
		blend2(p, r, u)
		VCMPPS(U8(cmpGTOQ), bS, u, p)
		if valid {
			VANDPS(tmp2(tValid), p, p)
		}
		blend2(p, u, bS)
		blend2(p, a, bA)
		blend2(p, b, bB)
		ADDQ(U32(32), RBX)
		DECL(EDX)
		JNZ(LabelRef(lbl + "_loop"))
		Label(lbl + "_done")
	}
	MOVL(ECX, EDX)
	twoWays(name+"_cands", func() { rounds(true, false, name+"_cw") }, func() { rounds(false, false, name+"_cu") })
	if refine {
		// One refit round where a candidate scored and d ≠ 0: t = (1/d)·f
		// for the local factors f of cfg.shift.
		VDIVPS(bB, bA, u) // d
		VXORPS(p, p, p)
		VCMPPS(U8(cmpGTOQ), p, bS, r)
		VCMPPS(U8(0x0c), p, u, p) // d ≠ 0 (NEQ_OQ)
		VANDPS(r, p, p)
		VMOVUPS(p, tmp2(tValid))
		gen.Broadcast32(0x3f800000, r, RAX, X8)
		VDIVPS(u, r, u) // 1/d
		for k := range 7 {
			VBROADCASTSS(Mem{Base: R10, Disp: cfgShift + 4*k}, r)
			VMULPS(r, u, r) // id·f
			VMOVUPS(r, tmp2(tT+k))
		}
		MOVL(U32(7), EDX)
		twoWays(name+"_refit", func() { rounds(true, true, name+"_rw") }, func() { rounds(false, true, name+"_ru") })
	}
	// d = a/b of the best, 0 when none scored above 0 or below groupEps.
	VDIVPS(bB, bA, bA)
	VXORPS(p, p, p)
	VCMPPS(U8(cmpNGTUQ), p, bS, r)
	VBROADCASTSS(consts.Word(0x26901d7d), u) // 1e-15
	VMOVUPS(tmp2(tAmax), x)
	VCMPPS(U8(cmpLTOQ), u, x, u)
	VORPS(u, r, r)
	blend2(r, p, bA)
	blend2(r, p, bB)
}

// tableSuper2 emits kqTableSuper8AVX2, tableSuper8's AVX2 kernel.
func tableSuper2() {
	l := layout2{G: 8, L: 32, H: 1}
	name := "kqTableSuper8AVX2"
	begin2(name, "func(x, w *[256]float32, tr *[1920]float32, cfg *[88]float32, res *[36]float32)", l,
		name+" is the AVX2 kernel of tableSuper8Go, as the AVX-512 kernel (cfg,",
		"res, a nil w), with one candidate per register and at most 8 levels.")
	tableFits2(name, false)
	VMOVUPS(Y12, Mem{Base: R9, Disp: trSc})
	VMOVUPS(Y13, Mem{Base: R9, Disp: trAs})
	superScale2(name+"_ss", 8, trSc, trAs, resD, resHD)
	// The picks: the errors of d·l0 and d·l1 (tableErrsGo), the lower wins
	// l1 only when below.
	mids, vals := Mem{Base: R10, Disp: cfgMids}, Mem{Base: R10, Disp: cfgVals}
	var (
		slo, shi, one, mg = Y0, Y1, Y2, Y3
		v, la, lb, t      = Y4, Y5, Y6, Y7
		d                 = Y8
	)
	const tLa, tLb, tD0, tD1, tI0, tI1 = 0, 1, 2, 3, 4, 5
	gen.Broadcast32(0x3f800000, one, RAX, X15)
	gen.Broadcast32(magic, mg, RAX, X15)
	bcast2(Mem{Base: R10, Disp: cfgLo}, slo)
	bcast2(Mem{Base: R10, Disp: cfgHi}, shi)
	bcast2(Mem{Base: R11, Disp: resD}, d)
	inv2(d, v, one, t)
	VMULPS(Mem{Base: R9, Disp: trSc}, v, v) // sc·inv(d)
	neighbours2(v, la, lb, slo, shi, one, mg, t)
	VMOVUPS(la, tmp2(tLa))
	VMOVUPS(lb, tmp2(tLb))
	for _, c := range []struct {
		l     VecPhysical
		dk, i int
	}{{la, tD0, tI0}, {lb, tD1, tI1}} {
		VMULPS(d, c.l, v)
		VMOVUPS(v, tmp2(c.dk))
		inv2(v, slo, one, t)
		VMOVUPS(slo, tmp2(c.i))
	}
	var (
		x, u, i, q, mid7, m1, j, p, r = Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8
		e0, e1                        = Y9, Y10
	)
	VBROADCASTSS(mids.Offset(28), mid7)
	VXORPS(e0, e0, e0)
	VXORPS(e1, e1, e1)
	errs := func(weights bool) {
		for k := range l.L {
			VMOVUPS(l.xe(0, k), x)
			for _, c := range []struct {
				e      VecPhysical
				dk, ik int
			}{{e0, tD0, tI0}, {e1, tD1, tI1}} {
				VMULPS(tmp2(c.ik), x, u) // id·v
				tableIndex2(u, i, q, mid7, m1, j, p, r, mids, vals)
				VMULPS(tmp2(c.dk), q, q) // d·q
				VSUBPS(q, x, q)          // r
				if weights {
					VMULPS(l.we(0, k), q, p) // w·r
					VMULPS(q, p, p)          // ·r
				} else {
					VMULPS(q, q, p)
				}
				VADDPS(p, c.e, c.e)
			}
		}
	}
	twoWays(name+"_errs", func() { errs(true) }, func() { errs(false) })
	VCMPPS(U8(cmpLTOQ), e0, e1, p)
	VMOVUPS(tmp2(tLa), q)
	blend2(p, tmp2(tLb), q)
	VMOVUPS(q, Mem{Base: R11, Disp: resL})
	bcast2(Mem{Base: R11, Disp: resD}, u)
	VMULPS(u, q, u)
	gen.Broadcast32(0x3f800000, r, RAX, X8)
	inv2(u, i, r, p)
	VMOVUPS(i, Mem{Base: R11, Disp: resIDs})
	VXORPS(Y0, Y0, Y0)
	VMOVUPS(Y0, Mem{Base: R11, Disp: resL + 32})
	VMOVUPS(Y0, Mem{Base: R11, Disp: resIDs + 32})
	VZEROUPPER()
	RET()
}

// tableBlocks2 emits kqTableBlocks8AVX2, tableBlocks8's AVX2 kernel.
func tableBlocks2() {
	l := layout2{G: 8, L: 32, H: 1}
	name := "kqTableBlocks8AVX2"
	begin2(name, "func(x, w *[256]float32, tr *[1920]float32, cfg *[88]float32, res *[48]float32)", l,
		name+" is the AVX2 kernel of tableBlocks8Go, as the AVX-512 kernel (cfg,",
		"res, a nil w), with one candidate per register.")
	tableFits2(name, true)
	// f16Round of each block's scale: NaN → 0, saturate, nearest even.
	d, t, z := Y12, Y0, Y1
	VCMPPS(U8(cmpORD), d, d, t)
	VANDPS(t, d, d)
	gen.Broadcast32(0x477fe000, t, RAX, X2) // 65504
	VMINPS(t, d, d)
	gen.Broadcast32(0xc77fe000, t, RAX, X2) // −65504
	VMAXPS(t, d, d)
	VCVTPS2PH(U8(0), d, t.AsX())
	VPMOVZXWD(t.AsX(), z)
	VMOVDQU(z, Mem{Base: R11, Disp: 128})
	VCVTPH2PS(t.AsX(), d)
	VMOVUPS(d, Mem{Base: R11})
	gen.Broadcast32(0x3f800000, z, RAX, X2)
	inv2(d, t, z, Y3)
	VMOVUPS(t, Mem{Base: R11, Disp: 64})
	VXORPS(Y0, Y0, Y0)
	for _, off := range []int{32, 96, 160} {
		VMOVUPS(Y0, Mem{Base: R11, Disp: off})
	}
	VZEROUPPER()
	RET()
}

func tableCodes2() {
	name := "kqTableCodesAVX2"
	TEXT(name, NOSPLIT, "func(x, ids []float32, shift uint64, vals, mids *[16]float32, codes []uint8)")
	Pragma("noescape")
	Doc(name+" is the AVX2 kernel of tableCodesGo, with len(x) a multiple",
		"of 16, len(codes) ≥ len(x), the sub-block of element i being",
		"(i/16) >> shift, vals the table's values and mids its 15 midpoints",
		"(and a 16th entry):",
		"",
		"\tfor i, v := range x {",
		"\t\tcodes[i] = uint8(tab.index(storeX(v) * ids[i/16>>shift]))",
		"\t}")
	Load(Param("ids").Base(), R9)
	Load(Param("vals"), R11)
	Load(Param("mids"), R12)
	VBROADCASTSS(Mem{Base: R12, Disp: 28}, Y4)
	chunks2(name, func() {
		VBROADCASTSS(Mem{Base: R9, Index: RBX, Scale: 4}, Y5) // id
		VMULPS(Y5, Y3, Y1)
		tableIndex2(Y1, Y2, Y0, Y4, Y5, Y6, Y7, Y8, Mem{Base: R12}, Mem{Base: R11})
		VCVTDQ2PS(Y2, Y2)
		storeCodes2(Y2)
	})
}
