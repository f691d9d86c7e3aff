package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

// The super-block kernels work one sub-block per lane: the elements of the
// super-block are transposed into a scratch buffer (element i of every
// sub-block in one vector), so that each lane adds its sub-block's terms in
// order of the elements, as the Go loops over one sub-block do.

// symRound is the number of candidates symSuper16's kernel measures at
// once (the rest of the search's count goes 2 and 1 at a time).
const symRound = 4

// Offsets in the superCfg and superRes structs and the scratch buffer.
const (
	cfgNumer  = 0
	cfgLevels = 64
	cfgNeg    = 128
	cfgPos    = 132
	cfgLo     = 136
	cfgHi     = 140
	cfgK      = 144
	cfgNLev   = 148
	cfgNP     = 152
	cfgNoLo   = 156
	cfgShift  = 160
	cfgPairs  = 352

	resL   = 0
	resIDs = 64
	resD   = 128
	resHD  = 132

	trX   = 0    // the elements, 16 vectors of 16
	trW   = 1024 // the weights
	trSc  = 2048 // the fitted scales
	trAs  = 2112 // their curvatures
	trMn  = 2176 // the fitted mins (−m)
	trAm  = 2240 // their curvatures (Σw)
	trFM  = 2304 // the fitted offsets m
	trSx  = 2368 // Σwx of each sub-block
	trSxx = 2432 // Σwx² of each sub-block
	trP   = 2560 // the picks' candidates: 5 vectors each
)

// Offsets in the affineRes struct.
const (
	ares1L   = 0
	ares1M   = 64
	ares1Mn  = 128
	ares1IDs = 192
	ares1D   = 256
	ares1HD  = 260
	ares1Dm  = 264
	ares1HM  = 268
)

// More VCMPPS predicates.
const (
	cmpEQOQ = 0x00
	cmpLTOQ = 0x11
	cmpGEOQ = 0x1d
)

// consts holds the kernels' constants in memory.
var consts = gen.Consts{Prefix: "kq"}

// superIdx are the transpose's VPERMT2D index pairs.
var superIdx [4][2]Mem

// bitrev4 reverses the 4 bits of a.
func bitrev4(a int) int {
	return (a&1)<<3 | (a&2)<<1 | (a&4)>>1 | (a&8)>>3
}

// transpose16 transposes the 16×16 floats at src (row r at src + 64·r)
// into dst (column i at dst + 64·i), through Z8 and Z16..Z31, with the
// index pairs in Z0..Z7. Lane p of the butterfly's output comes from
// register bitrev4(p), so loading row bitrev4(a) into register a puts row
// p in lane p.
func transpose16(src Mem, dst Mem) { transposeRows(src, dst, func(p int) int { return p }) }

// transposeRows is transpose16 with row(p) in lane p of each column.
func transposeRows(src Mem, dst Mem, row func(p int) int) {
	pool := []VecPhysical{Z8, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}
	regs := make([]VecPhysical, 16)
	for a := range 16 {
		regs[a] = pool[a]
		VMOVUPS(src.Offset(64*row(bitrev4(a))), regs[a])
	}
	free := pool[16]
	for li, h := range []int{8, 4, 2, 1} {
		for a := range 16 {
			if a&h != 0 {
				continue
			}
			A, B := regs[a], regs[a+h]
			VMOVDQA64(A, free)
			VPERMT2D(B, gen.Z(2*li), free) // the first h lanes of each 2h
			VPERMT2D(B, gen.Z(2*li+1), A)  // the second h lanes
			regs[a], regs[a+h], free = free, A, B
		}
	}
	for i := range 16 {
		VMOVUPS(regs[i], dst.Offset(64*i))
	}
}

// loadSuperIdx loads the transpose's index pairs into Z0..Z7.
func loadSuperIdx() {
	for li := range 4 {
		VMOVDQU32(superIdx[li][0], gen.Z(2*li))
		VMOVDQU32(superIdx[li][1], gen.Z(2*li+1))
	}
}

// rndLanes rounds v to integers, ties to even (VRNDSCALEPS; a value
// between −0.5 and −0 gives −0 where the Go reference's magic-constant
// rounding gives +0, which no sum or product of the kernels tells apart).
func rndLanes(v VecPhysical) { VRNDSCALEPS(U8(0), v, v) }

// clampRndLanes clamps v to [lo, hi] (a NaN to lo) and rounds it.
func clampRndLanes(v, lo, hi VecPhysical) {
	VMAXPS(lo, v, v)
	VMINPS(hi, v, v)
	rndLanes(v)
}

// invLanes sets d to 1/v, or 0 where v is ±0 (inv), using K1 and t.
func invLanes(v, d, one, t VecPhysical) {
	VDIVPS(v, one, d)
	VXORPS(t, t, t)
	VCMPPS(U8(cmpEQOQ), t, v, K1)
	VMOVAPS(t, K1, d)
}

func symSuper16() {
	name := "kqSymSuper16AVX512"
	TEXT(name, NOSPLIT, "func(x, w *[256]float32, tr *[1920]float32, cfg *[56]float32, res *[36]float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of symSuper16Go for a symmetric search",
		"without refits (s.refine = 0, the candidates' numerators, count and",
		"code range in cfg, as newSuperCfg lays them out) and res a superRes;",
		"a nil w weighs every element 1. tr is scratch. Each sub-block is a",
		"lane: its fit, then superScale with the levels in lanes, then its pick.")
	Load(Param("tr"), R9)
	Load(Param("cfg"), R10)
	Load(Param("res"), R11)
	Load(Param("x"), RSI)
	Load(Param("w"), RDI)
	loadSuperIdx()
	TESTQ(RDI, RDI)
	JZ(LabelRef(name + "_unit"))
	transpose16(Mem{Base: RDI}, Mem{Base: R9, Disp: trW})
	Label(name + "_unit")
	transpose16(Mem{Base: RSI}, Mem{Base: R9, Disp: trX})
	xt := func(i int) Mem { return Mem{Base: R9, Disp: trX + 64*i} }
	wt := func(i int) Mem { return Mem{Base: R9, Disp: trW + 64*i} }

	// Registers of the fits.
	var (
		lo, hi     = Z1, Z2
		amax, m    = Z9, Z10
		absM       = Z12
		t, a       = Z3, Z4
		v, p       = Z6, Z13
		bS, bD, bB = Z14, Z15, Z16
		zero       = Z17
		negInf     = Z18
	)
	// Statistics: the first element of largest magnitude (m, amax) of each
	// sub-block.
	gen.Broadcast32(0x7fffffff, absM, RAX, X0)
	VXORPS(amax, amax, amax)
	VMOVUPS(xt(0), m)
	for i := range 16 {
		VMOVUPS(xt(i), a)
		VANDPS(a, absM, v)
		VCMPPS(U8(cmpGTOQ), amax, v, K1)
		VMOVAPS(v, K1, amax)
		VMOVAPS(a, K1, m)
	}

	// The candidates: t = numer[c]/m; the best score's d and Σwq².
	VBROADCASTSS(Mem{Base: R10, Disp: cfgNeg}, lo)
	VXORPS(zero, zero, zero)
	VSUBPS(lo, zero, lo)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgPos}, hi)
	gen.Broadcast32(0xff800000, negInf, RAX, X0)
	VXORPS(bS, bS, bS)
	VXORPS(bD, bD, bD)
	VXORPS(bB, bB, bB)
	// Every candidate's t = numer[c]/m, to the picks' scratch (free here).
	MOVL(Mem{Base: R10, Disp: cfgK}, ECX)
	XORQ(RDX, RDX)
	MOVQ(R9, RBX)
	TESTL(ECX, ECX)
	JZ(LabelRef(name + "_tdone"))
	Label(name + "_tloop")
	VBROADCASTSS(Mem{Base: R10, Index: RDX, Scale: 4, Disp: cfgNumer}, t)
	VDIVPS(m, t, t)
	VMOVUPS(t, Mem{Base: RBX, Disp: trP})
	ADDQ(U32(64), RBX)
	INCQ(RDX)
	CMPQ(RDX, RCX)
	JB(LabelRef(name + "_tloop"))
	Label(name + "_tdone")
	// symRound candidates at a time (then 2 and 1 for the rest); each
	// candidate's sums in order of the elements, then the candidates
	// compared in order.
	var (
		ts   = [symRound]VecPhysical{Z3, Z4, Z0, Z10}
		as   = [symRound]VecPhysical{Z5, Z7, Z11, Z26}
		bs   = [symRound]VecPhysical{Z6, Z8, Z27, Z28}
		vs   = [symRound]VecPhysical{Z19, Z20, Z29, Z30}
		qs   = [symRound]VecPhysical{Z21, Z22, Z23, Z24}
		ps   = vs
		x, w = Z13, Z25
		bA   = bD // the best's Σwqx until d = Σwqx/Σwq² at the end
	)
	// round emits R candidates' sums and comparison (RBX at their t, moved
	// past them).
	round := func(weights, lowClamp bool, R int) {
		for c := range R {
			VMOVUPS(Mem{Base: RBX, Disp: trP + 64*c}, ts[c])
			VXORPS(as[c], as[c], as[c])
			VXORPS(bs[c], bs[c], bs[c])
		}
		for i := range 16 {
			VMOVUPS(xt(i), x)
			if weights {
				VMOVUPS(wt(i), w)
			}
			for c := range R {
				VMULPS(x, ts[c], vs[c]) // t·v
				if lowClamp {
					clampRndLanes(vs[c], lo, hi)
				} else {
					VMINPS(hi, vs[c], vs[c])
					rndLanes(vs[c])
				}
			}
			for c := range R {
				qq := vs[c]
				if weights {
					VMULPS(w, vs[c], qs[c]) // wq
					qq = qs[c]
				}
				VFMADD231PS(x, qq, as[c])     // a += wq·v, fused
				VFMADD231PS(vs[c], qq, bs[c]) // b += wq·q, fused
			}
		}
		for c := range R {
			// score = a·a/b (−Inf unless b > 0); the first best.
			a, b := as[c], bs[c]
			VMULPS(a, a, ps[c])
			VDIVPS(b, ps[c], ps[c])
			VCMPPS(U8(cmpGTOQ), zero, b, K1)
			KNOTW(K1, K1)
			VMOVAPS(negInf, K1, ps[c])
			VCMPPS(U8(cmpGTOQ), bS, ps[c], K1)
			VMOVAPS(ps[c], K1, bS)
			VMOVAPS(a, K1, bA)
			VMOVAPS(b, K1, bB)
		}
		ADDQ(U32(64*R), RBX)
	}
	// Rounds of symRound candidates, then of 2 and 1 for the rest of k, in
	// the candidates' order.
	cands := func(weights, lowClamp bool, lbl string) {
		MOVQ(R9, RBX)
		MOVL(ECX, EDX)
		SHRL(U8(2), ECX)
		TESTL(ECX, ECX)
		JZ(LabelRef(lbl + "_done"))
		Label(lbl + "_loop")
		round(weights, lowClamp, symRound)
		DECL(ECX)
		JNZ(LabelRef(lbl + "_loop"))
		Label(lbl + "_done")
		TESTL(U32(2), EDX)
		JZ(LabelRef(lbl + "_no2"))
		round(weights, lowClamp, 2)
		Label(lbl + "_no2")
		TESTL(U32(1), EDX)
		JZ(LabelRef(lbl + "_no1"))
		round(weights, lowClamp, 1)
		Label(lbl + "_no1")
	}
	// Without weights a search whose candidates never round below −neg
	// (cfg.noLo) skips the lower clamp; with them (rarely that search)
	// the clamp stays.
	twoWays(name+"_cands", func() { cands(true, true, name+"_cw") }, func() {
		CMPL(Mem{Base: R10, Disp: cfgNoLo}, U8(0))
		JE(LabelRef(name + "_cul"))
		cands(false, false, name+"_cu")
		JMP(LabelRef(name + "_cud"))
		Label(name + "_cul")
		cands(false, true, name+"_cul")
		Label(name + "_cud")
	})
	// d = a/b of the best, 0 when no candidate scored above 0.
	VDIVPS(bB, bA, bD)
	VCMPPS(U8(cmpGTOQ), zero, bS, K1)
	KNOTW(K1, K1)
	VMOVAPS(zero, K1, bD)
	// A sub-block below groupEps keeps d = 0, Σwq² = 0.
	VBROADCASTSS(consts.Word(0x26901d7d), p) // 1e-15
	VCMPPS(U8(cmpLTOQ), p, amax, K1)
	VMOVAPS(zero, K1, bD)
	VMOVAPS(zero, K1, bB)
	VMOVUPS(bD, Mem{Base: R9, Disp: trSc})
	VMOVUPS(bB, Mem{Base: R9, Disp: trAs})

	superScaleLanes(name+"_ss", 16, trSc, trAs, resD, resHD)
	VBROADCASTSS(Mem{Base: R11, Disp: resD}, Z20)
	symPicks16(name)
	RET()
}

// twoWays emits weighted, then unit: weighted runs when w (DI) is not nil.
func twoWays(lbl string, weighted, unit func()) {
	TESTQ(RDI, RDI)
	JZ(LabelRef(lbl + "_u"))
	weighted()
	JMP(LabelRef(lbl + "_end"))
	Label(lbl + "_u")
	unit()
	Label(lbl + "_end")
}

// superScaleLanes computes superScale of the n sub-block scales at offset
// scOff of the scratch (R9) with their curvatures at asOff, the levels in
// lanes (cfg, R10), rounds it to float16 (f16Round) and stores its value
// and code at dOff and hdOff of res (R11). The absolute-value mask must be
// in Z12.
func superScaleLanes(name string, n, scOff, asOff, dOff, hdOff int) {
	var (
		absM, amx, m = Z12, Z21, Z22
		p, d         = Z15, Z20
	)
	VANDPS(Mem{Base: R9, Disp: scOff}, absM, amx)
	if n == 8 {
		// Only the first 8 lanes hold scales.
		MOVL(U32(0xff), EAX)
		KMOVW(EAX, K2)
		VMOVAPS_Z(amx, K2, amx)
	}
	hreduce(amx, p, func(a, b, c Op) { VMAXPS(a, b, c) })
	VXORPS(d, d, d)
	VXORPS(p, p, p)
	VUCOMISS(X21, X15)
	JE(LabelRef(name + "_done")) // every scale 0: d = 0
	// m: the first scale of largest magnitude.
	VANDPS(Mem{Base: R9, Disp: scOff}, absM, p)
	VCMPPS(U8(cmpEQOQ), amx, p, K1)
	KMOVW(K1, EAX)
	TZCNTL(EAX, EAX)
	VBROADCASTSS(Mem{Base: R9, Index: RAX, Scale: 4, Disp: scOff}, m)
	// The levels in the lanes of ymm registers (at most 8 of them: half
	// the cost of zmm ones).
	{
		id, sl, ll, dd := Y3, Y4, Y5, Y6        // id, sl, ll, dd's
		s, a, l, p, e := Y7, Y13, Y14, Y15, Y16 // s, a, l, p, e's
		lo, hi, m := Y1, Y2, Y22
		VBROADCASTSS(Mem{Base: R10, Disp: cfgLo}, lo)
		VBROADCASTSS(Mem{Base: R10, Disp: cfgHi}, hi)
		VMOVUPS(Mem{Base: R10, Disp: cfgLevels}, id)
		VDIVPS(m, id, id) // t/m
		VXORPS(sl, sl, sl)
		VXORPS(ll, ll, ll)
		// Each scale's integers at every level, kept for the error pass (Z17
		// only with 16 scales: the table kernels keep their table in Z17, Z18).
		ls := []VecPhysical{Y0, Y8, Y9, Y10, Y11, Y19, Y23, Y24, Y25, Y26, Y27, Y28, Y29, Y30, Y31, Y17}
		for j := range n {
			VBROADCASTSS(Mem{Base: R9, Disp: scOff + 4*j}, s)
			VBROADCASTSS(Mem{Base: R9, Disp: asOff + 4*j}, a)
			VMULPS(id, s, ls[j])
			clampRndLanes(ls[j], lo, hi)
			VMULPS(s, a, p)     // a·v
			VMULPS(ls[j], p, p) // ·l
			VADDPS(p, sl, sl)
			VMULPS(ls[j], a, p) // a·l
			VMULPS(ls[j], p, p) // ·l
			VADDPS(p, ll, ll)
		}
		VDIVPS(ll, sl, dd) // D = sl/ll
		VXORPS(e, e, e)
		for j := range n {
			VBROADCASTSS(Mem{Base: R9, Disp: scOff + 4*j}, s)
			VBROADCASTSS(Mem{Base: R9, Disp: asOff + 4*j}, a)
			VMULPS(ls[j], dd, p)
			VSUBPS(p, s, p) // r = v − D·l
			VMULPS(p, a, l) // a·r
			VMULPS(p, l, l) // ·r
			VADDPS(l, e, e)
		}
		// The lanes that count: below nlev, ll > 0 and e < +Inf; the first
		// of least e, or m/levels[0] when none.
		MOVL(Mem{Base: R10, Disp: cfgNLev}, ECX)
		MOVL(U32(1), EAX)
		SHLL(CL, EAX)
		DECL(EAX)
		KMOVW(EAX, K2)
		VXORPS(p, p, p)
		VCMPPS(U8(cmpGTOQ), p, ll, K2, K2)
		gen.Broadcast32(0x7f800000, p, RAX, X15)
		VCMPPS(U8(cmpLTOQ), p, e, K2, K2)
		VMOVAPS(e, K2, p) // +Inf elsewhere
		VMOVAPS(p, l)
		VPERM2F128(U8(0x01), l, l, s) // swap halves
		VMINPS(s, l, l)
		VPERMILPS(U8(0x4e), l, s) // swap 64-bit pairs
		VMINPS(s, l, l)
		VPERMILPS(U8(0xb1), l, s) // swap neighbours
		VMINPS(s, l, l)
		VMOVSS(Mem{Base: R10, Disp: cfgLevels}, X16)
		VDIVSS(X16, X22, X20) // m/levels[0]
		KORTESTW(K2, K2)
		JZ(LabelRef(name + "_done"))
		VCMPPS(U8(cmpEQOQ), l, p, K2, K1)
		KMOVW(K1, EAX)
		TZCNTL(EAX, EAX)
		VMOVUPS(dd, Mem{Base: R9, Disp: trP}) // the picks' scratch, free here
		VMOVSS(Mem{Base: R9, Index: RAX, Scale: 4, Disp: trP}, X20)
	}
	Label(name + "_done")
	// f16Round: NaN → 0, saturate to ±65504, round to nearest even.
	VCMPPS(U8(cmpORD), X20, X20, K1)
	VMOVAPS_Z(X20, K1, X20)
	gen.Broadcast32(0x477fe000, p, RAX, X15) // 65504
	VMINSS(X15, X20, X20)
	gen.Broadcast32(0xc77fe000, p, RAX, X15) // −65504
	VMAXSS(X15, X20, X20)
	VCVTPS2PH(U8(0), X20, X15)
	VMOVD(X15, EAX)
	ANDL(U32(0xffff), EAX)
	MOVL(EAX, Mem{Base: R11, Disp: hdOff})
	VCVTPH2PS(X15, X20)
	VMOVSS(X20, Mem{Base: R11, Disp: dOff})
}

// symPicks16 picks each sub-block's integer scale under the super-block
// scale d (broadcast in Z20) from its fitted scale (trSc), as pickSym, and
// stores l and inv(d·l) to res.
func symPicks16(name string) {
	var (
		lo, hi         = Z1, Z2 // the codes' range
		slo, shi       = Z3, Z4 // the scales' range
		v, f, la, lb   = Z5, Z6, Z7, Z9
		d0, d1, i0, i1 = Z10, Z11, Z12, Z13
		e0, e1, p, q   = Z14, Z15, Z16, Z17
		x              = Z18
		one, mg        = Z19, Z21
		d              = Z20
		zero           = Z22
	)
	gen.Broadcast32(0x3f800000, one, RAX, X0)
	gen.Broadcast32(magic, mg, RAX, X0)
	VXORPS(zero, zero, zero)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgLo}, slo)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgHi}, shi)
	// v = sc·inv(d).
	VXORPS(X0, X0, X0)
	VUCOMISS(X0, X20)
	JE(LabelRef(name + "_d0"))
	VDIVSS(X20, X19, X0)
	Label(name + "_d0")
	VBROADCASTSS(X0, v)
	VMULPS(Mem{Base: R9, Disp: trSc}, v, v)
	// neighbours(v, lo, hi).
	VADDPS(mg, v, f)
	VSUBPS(mg, f, f) // rnd(v)
	VCMPPS(U8(cmpGTOQ), v, f, K1)
	VSUBPS(one, f, K1, f) // f > v: f − 1
	VMOVAPS(f, la)
	VADDPS(one, f, lb)
	VMINPS(shi, lb, lb)
	VCMPPS(U8(cmpGTOQ), shi, v, K1)
	VMOVAPS(shi, K1, la)
	VMOVAPS(shi, K1, lb)
	VCMPPS(U8(cmpGEOQ), slo, v, K1)
	KNOTW(K1, K1)
	VMOVAPS(slo, K1, la)
	VMOVAPS(slo, K1, lb)
	// The errors of d·la and d·lb.
	VMULPS(d, la, d0)
	VMULPS(d, lb, d1)
	invLanes(d0, i0, one, p)
	invLanes(d1, i1, one, p)
	gen.Broadcast32(0x80000000, Z23, RAX, X0)
	VXORPS(Z23, d0, d0) // −d (a NaN d gives −NaN, as fma32(−d, q, v))
	VXORPS(Z23, d1, d1)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgNeg}, lo)
	VSUBPS(lo, zero, lo)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgPos}, hi)
	VXORPS(e0, e0, e0)
	VXORPS(e1, e1, e1)
	errs := func(weights bool) {
		for i := range 16 {
			VMOVUPS(Mem{Base: R9, Disp: trX + 64*i}, x)
			for _, c := range []struct{ id, d, e VecPhysical }{{i0, d0, e0}, {i1, d1, e1}} {
				VMULPS(c.id, x, p) // v·id
				clampRndLanes(p, lo, hi)
				VFMADD213PS(x, c.d, p) // r = (−d)·q + v, fused
				if weights {
					VMULPS(Mem{Base: R9, Disp: trW + 64*i}, p, q) // w·r
					VFMADD231PS(p, q, c.e)                        // + w·r·r, fused
				} else {
					VFMADD231PS(p, p, c.e)
				}
			}
		}
	}
	twoWays(name+"_errs", func() { errs(true) }, func() { errs(false) })
	VCMPPS(U8(cmpLTOQ), e0, e1, K1)
	VMOVAPS(lb, K1, la)
	VMOVUPS(la, Mem{Base: R11, Disp: resL})
	VMULPS(d, la, p)
	invLanes(p, q, one, v)
	VMOVUPS(q, Mem{Base: R11, Disp: resIDs})
}

// affineSuper emits kqAffineSuper{G}AVX512, the affine super-block search
// of G sub-blocks (16 of 16 or 8 of 32). With G = 8 a register holds two
// candidates for each sub-block: lanes 0..7 one, lanes 8..15 another.
func affineSuper(G int) {
	L := 256 / G
	name := "kqAffineSuper" + itoa(G) + "AVX512"
	TEXT(name, NOSPLIT, "func(x, w *[256]float32, tr *[1920]float32, cfg *[104]float32, res *[68]float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of affineSuperGo for "+itoa(G)+" sub-blocks of "+itoa(L)+",",
		"an affine search with minBelow, without refits and with nd > 0, shift ≥ 0",
		"(cfg as newAffineSuperCfg lays it out), and res an affineRes; a nil w",
		"weighs every element 1. tr is scratch. Each sub-block is a lane (with",
		"8 sub-blocks, two candidates of each at once): its fit, superScale of",
		"the scales and of the mins, then its pick among the pairs cfg lists",
		"(an even number of them with 8 sub-blocks).")
	Load(Param("tr"), R9)
	Load(Param("cfg"), R10)
	Load(Param("res"), R11)
	Load(Param("x"), RSI)
	Load(Param("w"), RDI)
	loadSuperIdx()
	row := func(p int) int { return p }
	if G == 8 { // lanes 0..7: the first halves of the sub-blocks; 8..15: the second
		row = func(p int) int {
			if p < 8 {
				return 2 * p
			}
			return 2*(p-8) + 1
		}
	}
	TESTQ(RDI, RDI)
	JZ(LabelRef(name + "_unit"))
	transposeRows(Mem{Base: RDI}, Mem{Base: R9, Disp: trW}, row)
	Label(name + "_unit")
	transposeRows(Mem{Base: RSI}, Mem{Base: R9, Disp: trX}, row)
	// elem loads element i of every sub-block (twice with G = 8).
	at := func(base, i int) Mem {
		if G == 16 {
			return Mem{Base: R9, Disp: base + 64*i}
		}
		return Mem{Base: R9, Disp: base + 64*(i%16) + 32*(i/16)}
	}
	elem := func(i int, z VecPhysical) {
		if G == 16 {
			VMOVUPS(at(trX, i), z)
		} else {
			VBROADCASTF64X4(at(trX, i), z)
		}
	}
	welem := func(i int, z VecPhysical) {
		if G == 16 {
			VMOVUPS(at(trW, i), z)
		} else {
			VBROADCASTF64X4(at(trW, i), z)
		}
	}
	var (
		lo, hi, sw, sx, sxx = Z9, Z10, Z11, Z12, Z13
		zero, span, r, one  = Z14, Z15, Z16, Z17
		n, inf              = Z18, Z19
		t, o, a, b, f       = Z1, Z2, Z3, Z4, Z5
		xv, v, q, p, wv     = Z6, Z7, Z8, Z20, Z21
		det, dc, mc, e      = Z22, Z23, Z24, Z25
		bE, bD, bM, bB      = Z26, Z27, Z28, Z29
		t1, t2              = Z30, Z31
	)
	VXORPS(zero, zero, zero)
	gen.Broadcast32(0x3f800000, one, RAX, X0)
	gen.Broadcast32(0x7f800000, inf, RAX, X0)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgPos}, n)
	// lo, hi (each + 0, lo at most 0), Σw, Σwx, Σ(wx)x.
	elem(0, lo)
	VMOVAPS(lo, hi)
	for i := 1; i < L; i++ {
		elem(i, xv)
		VMINPS(xv, lo, lo)
		VMAXPS(xv, hi, hi)
	}
	VADDPS(zero, lo, lo)
	VADDPS(zero, hi, hi)
	VMINPS(zero, lo, lo)
	VXORPS(sw, sw, sw)
	VXORPS(sx, sx, sx)
	VXORPS(sxx, sxx, sxx)
	twoWays(name+"_sums", func() {
		for i := range L {
			elem(i, xv)
			welem(i, wv)
			VADDPS(wv, sw, sw)
			VMULPS(xv, wv, p) // wx
			VADDPS(p, sx, sx)
			VMULPS(xv, p, p) // wx·v
			VADDPS(p, sxx, sxx)
		}
	}, func() {
		for i := range L {
			elem(i, xv)
			VADDPS(one, sw, sw)
			VADDPS(xv, sx, sx)
			VMULPS(xv, xv, p)
			VADDPS(p, sxx, sxx)
		}
	})
	VSUBPS(lo, hi, span)
	VDIVPS(span, one, r)
	// The candidates, two at a time with G = 8 (c and c + k/2).
	VMOVAPS(inf, bE)
	VXORPS(bD, bD, bD)
	VXORPS(bM, bM, bM)
	VXORPS(bB, bB, bB)
	MOVL(Mem{Base: R10, Disp: cfgK}, ECX)
	if G == 8 {
		SHRL(U8(1), ECX)
	}
	XORQ(RDX, RDX)
	// pair loads lanes of the candidate parameter at off: c's, or c's and
	// c + k/2's in the two halves.
	pair := func(off int, z VecPhysical) {
		VBROADCASTSS(Mem{Base: R10, Index: RDX, Scale: 4, Disp: off}, z)
		if G == 8 {
			VBROADCASTSS(Mem{Base: R10, Index: RBX, Scale: 4, Disp: off}, t2.AsY())
			VINSERTF64X4(U8(1), t2.AsY(), z, z)
		}
	}
	cands := func(weights bool, lbl string) {
		Label(lbl + "_loop")
		if G == 8 {
			LEAQ(Mem{Base: RDX, Index: RCX, Scale: 1}, RBX)
		}
		pair(cfgNumer, t)
		VMULPS(r, t, t) // t = nd·r
		pair(cfgShift, o)
		VMULPS(span, o, o)
		VSUBPS(o, lo, o) // o = lo − shift·span
		// With weights the codes are clamped below too: a span that
		// overflows to +Inf makes t = 0 and t·(x − o) NaN, which
		// clampRoundPass takes to 0 and VMINPS alone to n. Unit weights
		// then give every code alike either way, so det = 0 and the
		// candidate is out in both; weighted sums round differently.
		affineSums(L, elem, welem, weights, weights, t, o, a, b, f, xv, v, q, wv, n, zero, one)
		affineTail(sw, sx, sxx, a, b, f, det, dc, mc, e, t1, t2, zero, inf)
		VCMPPS(U8(cmpLTOQ), bE, e, K1)
		VMOVAPS(e, K1, bE)
		VMOVAPS(dc, K1, bD)
		VMOVAPS(mc, K1, bM)
		VMOVAPS(b, K1, bB)
		INCQ(RDX)
		CMPQ(RDX, RCX)
		JB(LabelRef(lbl + "_loop"))
	}
	TESTL(ECX, ECX)
	JZ(LabelRef(name + "_nocands"))
	twoWays(name+"_cands", func() { cands(true, name+"_cw") }, func() { cands(false, name+"_cu") })
	Label(name + "_nocands")
	if G == 8 { // the second half's candidates come after the first's
		VSHUFF32X4(U8(0xee), bE, bE, t1)
		VCMPPS(U8(cmpLTOQ), bE, t1, K1)
		for _, z := range []VecPhysical{bD, bM, bB} {
			VSHUFF32X4(U8(0xee), z, z, t2)
			VMOVAPS(t2, K1, z)
		}
	}
	// No candidate: the min-max scale; a constant: d = 0, m = Σwx/Σw (≤ 0).
	VCMPPS(U8(cmpEQOQ), zero, bD, K1)
	VDIVPS(n, span, t1)
	VMOVAPS(t1, K1, bD)
	VMOVAPS(lo, K1, bM)
	VMOVAPS(zero, K1, bB)
	VBROADCASTSS(consts.Word(0x26901d7d), t1) // 1e-15
	VCMPPS(U8(cmpGTOQ), t1, span, K1)
	KNOTW(K1, K1)
	VDIVPS(sw, sx, t1)
	VCMPPS(U8(cmpGTOQ), zero, t1, K2)
	VMOVAPS(zero, K2, t1) // m > 0: 0
	VMOVAPS(zero, K1, bD)
	VMOVAPS(t1, K1, bM)
	VMOVAPS(zero, K1, bB)
	VMOVUPS(bD, Mem{Base: R9, Disp: trSc})
	VMOVUPS(bB, Mem{Base: R9, Disp: trAs})
	VMOVUPS(bM, Mem{Base: R9, Disp: trFM})
	gen.Broadcast32(0x80000000, t1, RAX, X0)
	VXORPS(t1, bM, t2) // −m
	VMOVUPS(t2, Mem{Base: R9, Disp: trMn})
	VMOVUPS(sw, Mem{Base: R9, Disp: trAm})
	VMOVUPS(sx, Mem{Base: R9, Disp: trSx})
	VMOVUPS(sxx, Mem{Base: R9, Disp: trSxx})

	gen.Broadcast32(0x7fffffff, Z12, RAX, X0)
	superScaleLanes(name+"_ssd", G, trSc, trAs, ares1D, ares1HD)
	superScaleLanes(name+"_ssm", G, trMn, trAm, ares1Dm, ares1HM)
	affinePicks(name, G, L, elem, welem)
	RET()
}

// affineSums adds up, over the L elements (elem, welem), the sums a = Σwq,
// b = Σwq² and f = Σwqx (the last two fused) of the codes
// q = clamp(round(t·(x − o)), 0, n), in order of the elements (as
// affineFitGo). lowClamp clamps at 0 too (not needed when x − o ≥ 0 and
// t > 0).
func affineSums(L int, elem, welem func(i int, z VecPhysical), weights, lowClamp bool,
	t, o, a, b, f, xv, v, q, wv, n, zero, one VecPhysical) {
	VXORPS(a, a, a)
	VXORPS(b, b, b)
	VXORPS(f, f, f)
	for i := range L {
		elem(i, xv)
		// v − o as −(o·1) + v and a + q as q·1 + a: the same bits (one
		// rounding of the exact value, zeros signed alike), on the
		// multiply pipes, which the clamps and roundings leave idle.
		VMOVAPS(xv, v)
		VFNMADD231PS(one, o, v)
		VMULPS(v, t, v) // t·(v − o)
		if lowClamp {
			VMAXPS(zero, v, v)
		}
		VMINPS(n, v, v)
		rndLanes(v)
		qq := v
		if weights {
			welem(i, wv)
			VMULPS(v, wv, q) // wq
			qq = q
		}
		VFMADD231PS(one, qq, a)
		VFMADD231PS(v, qq, b)  // b += wq·q, fused
		VFMADD231PS(xv, qq, f) // f += wq·v, fused
	}
}

// affineErr sets e to the error of the codes with sums a, b, f under the
// scale d and offset m (as affinePairErrsGo), using t1 and t2.
func affineErr(sw, sx, sxx, a, b, f, d, m, e, t1, t2 VecPhysical) {
	// e = sxx − 2d·f − 2m·sx + d·d·b + 2d·m·a + m·m·sw.
	VADDPS(d, d, t1) // 2·d
	VMULPS(f, t1, t2)
	VSUBPS(t2, sxx, e)
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

// affineTail is the least-squares solve of an affine candidate from its
// sums (as affineFitGo, minBelow): det, dc, mc and e (+Inf unless det > 0
// and dc > 0), with scratch t1, t2 and K1, K2.
func affineTail(sw, sx, sxx, a, b, f, det, dc, mc, e, t1, t2, zero, inf VecPhysical) {
	VMULPS(b, sw, t1)
	VMULPS(a, a, t2)
	VSUBPS(t2, t1, det) // sw·b − a·a
	VMULPS(f, sw, t1)
	VMULPS(a, sx, t2)
	VSUBPS(t2, t1, dc)
	VDIVPS(det, dc, dc) // (sw·f − sx·a)/det
	VMULPS(sx, b, t1)
	VMULPS(f, a, t2)
	VSUBPS(t2, t1, mc)
	VDIVPS(det, mc, mc) // (b·sx − a·f)/det
	VCMPPS(U8(cmpGTOQ), zero, mc, K1)
	VMOVAPS(zero, K1, mc)
	VDIVPS(b, f, K1, dc)
	affineErr(sw, sx, sxx, a, b, f, dc, mc, e, t1, t2)
	VCMPPS(U8(cmpGTOQ), zero, det, K1)
	VCMPPS(U8(cmpGTOQ), zero, dc, K2)
	KANDW(K1, K2, K1)
	KNOTW(K1, K1)
	VMOVAPS(inf, K1, e)
}

// neighbourLanes sets a, b to neighbours(v, 0, top): the integers below and
// above v clamped to [0, top] (both 0 for a NaN or v < 0, both top above
// it), with rnd by the magic constant as the Go reference, using K1.
func neighbourLanes(v, a, b, zero, top, one, mg VecPhysical) {
	VADDPS(mg, v, a)
	VSUBPS(mg, a, a) // rnd(v)
	VCMPPS(U8(cmpGTOQ), v, a, K1)
	VSUBPS(one, a, K1, a) // a > v: a − 1
	VADDPS(one, a, b)
	VMINPS(top, b, b)
	VCMPPS(U8(cmpGTOQ), top, v, K1)
	VMOVAPS(top, K1, a)
	VMOVAPS(top, K1, b)
	VCMPPS(U8(cmpGEOQ), zero, v, K1)
	KNOTW(K1, K1)
	VMOVAPS(zero, K1, a)
	VMOVAPS(zero, K1, b)
}

// affinePicks picks each sub-block's integer scale and min under the
// super-block scales (res) as pickAffine: of the pairs listed in cfg
// (indices 4i+j into {l0, l1, l0−1, l1+1} × {m0, m1, m0−1, m1+1} around
// its fit), the one of least error (the first listed on ties); and stores
// l, m, −(Dm·m) and inv(D·l) to res. With G = 8 the list's length must be
// even.
func affinePicks(name string, G, L int, elem, welem func(i int, z VecPhysical)) {
	var (
		zero, one, mg, top, n = Z0, Z1, Z2, Z3, Z4
		D, Dm                 = Z5, Z6
		v, l0, l1, m0, m1     = Z7, Z8, Z9, Z10, Z11
		t1, t2                = Z12, Z13
		sign                  = Z14
	)
	VXORPS(zero, zero, zero)
	gen.Broadcast32(0x3f800000, one, RAX, X15)
	gen.Broadcast32(magic, mg, RAX, X15)
	gen.Broadcast32(0x80000000, sign, RAX, X15)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgHi}, top)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgPos}, n)
	VBROADCASTSS(Mem{Base: R11, Disp: ares1D}, D)
	VBROADCASTSS(Mem{Base: R11, Disp: ares1Dm}, Dm)
	// inv(D), inv(Dm) (neither is NaN after f16Round).
	invLanes(D, t1, one, t2)
	invLanes(Dm, t2, one, v)
	VMULPS(Mem{Base: R9, Disp: trSc}, t1, v) // f.d·inv(D)
	neighbourLanes(v, l0, l1, zero, top, one, mg)
	VMULPS(Mem{Base: R9, Disp: trMn}, t2, v) // −f.m·inv(Dm)
	neighbourLanes(v, m0, m1, zero, top, one, mg)
	// The 16 pairs' parameters: d = D·ls[i], mv = −(Dm·ms[j]), id = inv(d),
	// and ls[i], ms[j], pair 4i+j at trP + 320·(4i+j).
	ls := []VecPhysical{l0, l1, Z15, Z16}
	ms := []VecPhysical{m0, m1, Z17, Z18}
	VSUBPS(one, l0, Z15)
	VMAXPS(zero, Z15, Z15)
	VADDPS(one, l1, Z16)
	VMINPS(top, Z16, Z16)
	VSUBPS(one, m0, Z17)
	VMAXPS(zero, Z17, Z17)
	VADDPS(one, m1, Z18)
	VMINPS(top, Z18, Z18)
	dl, il, mv := []VecPhysical{Z19, Z20, Z21, Z22}, []VecPhysical{Z23, Z24, Z25, Z26}, []VecPhysical{Z27, Z28, Z29, Z30}
	for i := range 4 {
		VMULPS(ls[i], D, dl[i])
		invLanes(dl[i], il[i], one, t1)
		VMULPS(ms[i], Dm, mv[i])
		VXORPS(sign, mv[i], mv[i])
	}
	for c := range 16 {
		i, j := c/4, c%4
		for k, z := range []VecPhysical{dl[i], mv[j], il[i], ls[i], ms[j]} {
			m := Mem{Base: R9, Disp: trP + 320*c + 64*k}
			if G == 8 {
				VMOVUPS(z.AsY(), m)
			} else {
				VMOVUPS(z, m)
			}
		}
	}
	// The errors of the pairs listed in cfg (pairs[:np]), one per round
	// (with G = 8, pairs[r] and pairs[r + np/2] in the two halves of round
	// r), in code steps: u =
	// id·x + κ (fused, κ = −(m·id)), r = u − clamp(round(u), 0, n),
	// s = Σ w·r·r (fused), e = (d·d)·s; with d = 0, (sxx − 2m·sx) + m·m·sw.
	var (
		xv, q, r, wv, e = Z5, Z6, Z7, Z8, Z9
		bE, bL, bM      = Z10, Z11, Z12
		pd, pm, pid     = Z13, Z14, Z15
		s, kk, p        = Z16, Z17, Z19
		sw, sx, sxx     = Z20, Z21, Z22
	)
	VMOVUPS(Mem{Base: R9, Disp: trAm}, sw)
	VMOVUPS(Mem{Base: R9, Disp: trSx}, sx)
	VMOVUPS(Mem{Base: R9, Disp: trSxx}, sxx)
	t1, t2 = Z23, Z24
	sign = Z25
	gen.Broadcast32(0x80000000, sign, RAX, X15)
	gen.Broadcast32(0x7f800000, bE, RAX, X15)
	// R8: the rounds; round RDX reads its pair's parameters at RAX (the
	// first halves) and RBX (the second halves with G = 8).
	MOVL(Mem{Base: R10, Disp: cfgNP}, R8L)
	if G == 8 {
		SHRL(U8(1), R8L)
	}
	pairAt := func(idx, dst GPPhysical) { // dst = R9 + 320·pairs[idx]
		MOVL(Mem{Base: R10, Index: idx, Scale: 4, Disp: cfgPairs}, dst.As32())
		LEAQ(Mem{Base: dst, Index: dst, Scale: 4}, dst)
		SHLQ(U8(6), dst)
		ADDQ(R9, dst)
	}
	pairs := func() {
		pairAt(RDX, RAX)
		if G == 8 {
			LEAQ(Mem{Base: RDX, Index: R8, Scale: 1}, RBX)
			pairAt(RBX, RBX)
		}
	}
	param := func(k int, z VecPhysical) { // parameter k of the round's pairs
		if G == 8 {
			VMOVUPS(Mem{Base: RAX, Disp: trP + 64*k}, z.AsY())
			VINSERTF64X4(U8(1), Mem{Base: RBX, Disp: trP + 64*k}, z, z)
		} else {
			VMOVUPS(Mem{Base: RAX, Disp: trP + 64*k}, z)
		}
	}
	// Until beaten: the first round's pairs.
	XORQ(RDX, RDX)
	pairs()
	param(3, bL)
	param(4, bM)
	errs := func(weights bool, lbl string) {
		XORQ(RDX, RDX)
		Label(lbl + "_loop")
		pairs()
		param(0, pd)
		param(1, pm)
		param(2, pid)
		VMULPS(pid, pm, kk)
		VXORPS(sign, kk, kk) // κ = −(m·id)
		VXORPS(s, s, s)
		for i := range L {
			elem(i, xv)
			VFMADD213PS(kk, pid, xv) // u = id·x + κ, fused
			VMAXPS(zero, xv, q)
			VMINPS(n, q, q)
			rndLanes(q)
			VSUBPS(q, xv, r) // r = u − q
			if weights {
				welem(i, wv)
				VMULPS(wv, r, q)     // w·r
				VFMADD231PS(r, q, s) // s += w·r·r, fused
			} else {
				VFMADD231PS(r, r, s)
			}
		}
		VMULPS(pd, pd, t1)
		VMULPS(s, t1, e) // (d·d)·s
		VADDPS(pm, pm, t1)
		VMULPS(sx, t1, t1)
		VSUBPS(t1, sxx, t2) // sxx − 2m·sx
		VMULPS(pm, pm, t1)
		VMULPS(sw, t1, t1)
		VADDPS(t1, t2, t2) // + m·m·sw
		VCMPPS(U8(cmpEQOQ), zero, pd, K1)
		VMOVAPS(t2, K1, e) // d = 0
		VCMPPS(U8(cmpLTOQ), bE, e, K1)
		VMOVAPS(e, K1, bE)
		param(3, Z26)
		VMOVAPS(Z26, K1, bL)
		param(4, Z27)
		VMOVAPS(Z27, K1, bM)
		INCQ(RDX)
		CMPQ(RDX, R8)
		JB(LabelRef(lbl + "_loop"))
	}
	twoWays(name+"_errs", func() { errs(true, name+"_ew") }, func() { errs(false, name+"_eu") })
	if G == 8 { // pairs[np/2:] come after pairs[:np/2]
		VSHUFF32X4(U8(0xee), bE, bE, p)
		VCMPPS(U8(cmpLTOQ), bE, p, K1)
		VSHUFF32X4(U8(0xee), bL, bL, Z18)
		VMOVAPS(Z18, K1, bL)
		VSHUFF32X4(U8(0xee), bM, bM, Z18)
		VMOVAPS(Z18, K1, bM)
	}
	if G == 8 { // lanes 8..15 of the results are 0
		MOVL(U32(0xff), EAX)
		KMOVW(EAX, K3)
		VMOVAPS_Z(bL, K3, bL)
		VMOVAPS_Z(bM, K3, bM)
	}
	VMOVUPS(bL, Mem{Base: R11, Disp: ares1L})
	VMOVUPS(bM, Mem{Base: R11, Disp: ares1M})
	VBROADCASTSS(Mem{Base: R11, Disp: ares1Dm}, Dm)
	VMULPS(bM, Dm, p)
	gen.Broadcast32(0x80000000, q, RAX, X15)
	VXORPS(q, p, p)
	if G == 8 {
		VMOVAPS_Z(p, K3, p)
	}
	VMOVUPS(p, Mem{Base: R11, Disp: ares1Mn})
	VBROADCASTSS(Mem{Base: R11, Disp: ares1D}, D)
	VMULPS(bL, D, p)
	invLanes(p, q, one, r)
	if G == 8 {
		VMOVAPS_Z(q, K3, q)
	}
	VMOVUPS(q, Mem{Base: R11, Disp: ares1IDs})
}

// itoa formats a small non-negative integer.
func itoa(v int) string {
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoa(v/10) + string(rune('0'+v%10))
}

// Offsets of the table in a superCfg (a table search's values and
// midpoints).
const (
	cfgVals = 224
	cfgMids = 288
)

// tableSuper8 emits kqTableSuper8AVX512, the IQ4_XS super-block search: 8
// sub-blocks of 32 fitted to a table's values (two candidates per
// register: c in lanes 0..7, c + k/2 in lanes 8..15), superScale of their
// signed scales, and each sub-block's pick of the two integer scales next
// to its fitted one (l0 in lanes 0..7, l1 in 8..15).
func tableSuper8() {
	const G, L = 8, 32
	name := "kqTableSuper8AVX512"
	TEXT(name, NOSPLIT, "func(x, w *[256]float32, tr *[1920]float32, cfg *[88]float32, res *[36]float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of tableSuper8Go for a table search",
		"without refits with an even number of first candidates (cfg as",
		"newTableSuperCfg lays it out) and res a superRes; a nil w weighs every",
		"element 1. tr is scratch.")
	at := func(base, i int) Mem { return Mem{Base: R9, Disp: base + 64*(i%16) + 32*(i/16)} }
	tableFits8(name, false, at)
	VMOVUPS(Z15, Mem{Base: R9, Disp: trSc})
	VMOVUPS(Z16, Mem{Base: R9, Disp: trAs})
	gen.Broadcast32(0x7fffffff, Z12, RAX, X0)
	superScaleLanes(name+"_ss", 8, trSc, trAs, resD, resHD)
	tablePicks8(name, at)
	RET()
}

// tableFits8 fits 8 sub-blocks of 32 elements (transposed into the
// scratch by pairs of rows, at) to the table of cfg, two candidates per
// register, as table.fit (with refine, one refit round of 7 local factors,
// cfg.shift), leaving each sub-block's scale (0 below groupEps or when no
// candidate scored) in Z15 and its Σwq² in Z16, lanes 0..7.
func tableFits8(name string, refine bool, at func(base, i int) Mem) {
	const L = 32
	Load(Param("tr"), R9)
	Load(Param("cfg"), R10)
	Load(Param("res"), R11)
	Load(Param("x"), RSI)
	Load(Param("w"), RDI)
	loadSuperIdx()
	row := func(p int) int {
		if p < 8 {
			return 2 * p
		}
		return 2*(p-8) + 1
	}
	TESTQ(RDI, RDI)
	JZ(LabelRef(name + "_unit"))
	transposeRows(Mem{Base: RDI}, Mem{Base: R9, Disp: trW}, row)
	Label(name + "_unit")
	transposeRows(Mem{Base: RSI}, Mem{Base: R9, Disp: trX}, row)
	var (
		t, a, b, x, u, q, w, wq = Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10
		m, absM, amax           = Z11, Z12, Z13
		bS, bA, bB              = Z14, Z15, Z16
		zero, negInf            = Z26, Z27
		idx, tmp                = Z24, Z25
	)
	// The table (Z17, Z18) and the binary search's steps (Z19..Z23).
	VMOVUPS(Mem{Base: R10, Disp: cfgVals}, Z17)
	VMOVUPS(Mem{Base: R10, Disp: cfgMids}, Z18)
	for i, c := range []uint32{8, 4, 3, 2, 1} {
		gen.Broadcast32(c, gen.Z(19+i), RAX, X0)
	}
	VXORPS(zero, zero, zero)
	gen.Broadcast32(0xff800000, negInf, RAX, X0)
	gen.Broadcast32(0x7fffffff, absM, RAX, X0)
	// The first element of largest magnitude of each sub-block.
	VXORPS(amax, amax, amax)
	VBROADCASTF64X4(at(trX, 0), m)
	for i := range L {
		VBROADCASTF64X4(at(trX, i), x)
		VANDPS(x, absM, u)
		VCMPPS(U8(cmpGTOQ), amax, u, K1)
		VMOVAPS(u, K1, amax)
		VMOVAPS(x, K1, m)
	}
	// t = numer/m of candidates c and c + k/2, to the picks' scratch.
	MOVL(Mem{Base: R10, Disp: cfgK}, ECX)
	SHRL(U8(1), ECX)
	XORQ(RDX, RDX)
	MOVQ(R9, RBX)
	TESTL(ECX, ECX)
	JZ(LabelRef(name + "_tdone"))
	Label(name + "_tloop")
	LEAQ(Mem{Base: RDX, Index: RCX, Scale: 1}, R8)
	VBROADCASTSS(Mem{Base: R10, Index: RDX, Scale: 4, Disp: cfgNumer}, t)
	VBROADCASTSS(Mem{Base: R10, Index: R8, Scale: 4, Disp: cfgNumer}, u.AsY())
	VINSERTF64X4(U8(1), u.AsY(), t, t)
	VDIVPS(m, t, t)
	VMOVUPS(t, Mem{Base: RBX, Disp: trP})
	ADDQ(U32(64), RBX)
	INCQ(RDX)
	CMPQ(RDX, RCX)
	JB(LabelRef(name + "_tloop"))
	Label(name + "_tdone")
	VXORPS(bS, bS, bS)
	VXORPS(bA, bA, bA)
	VXORPS(bB, bB, bB)
	cands := func(weights bool, lbl string, rounds Op, valid bool) {
		MOVQ(R9, RBX)
		MOVL(rounds, EDX)
		TESTL(EDX, EDX)
		JZ(LabelRef(lbl + "_done"))
		Label(lbl + "_loop")
		VMOVUPS(Mem{Base: RBX, Disp: trP}, t)
		VXORPS(a, a, a)
		VXORPS(b, b, b)
		for i := range L {
			VBROADCASTF64X4(at(trX, i), x)
			VMULPS(x, t, u) // t·v
			tableIndex(u, idx, tmp)
			VPERMPS(Z17, idx, q) // the table value
			qq := q
			if weights {
				VBROADCASTF64X4(at(trW, i), w)
				VMULPS(q, w, wq)
				qq = wq
			}
			VFMADD231PS(x, qq, a) // a += wq·v, fused
			VFMADD231PS(q, qq, b) // b += wq·q, fused
		}
		// score = a·a/b (−Inf unless b > 0); the first best in each half.
		VMULPS(a, a, u)
		VDIVPS(b, u, u)
		VCMPPS(U8(cmpGTOQ), zero, b, K1)
		KNOTW(K1, K1)
		VMOVAPS(negInf, K1, u)
		if valid {
			VCMPPS(U8(cmpGTOQ), bS, u, K4, K1)
		} else {
			VCMPPS(U8(cmpGTOQ), bS, u, K1)
		}
		VMOVAPS(u, K1, bS)
		VMOVAPS(a, K1, bA)
		VMOVAPS(b, K1, bB)
		ADDQ(U32(64), RBX)
		DECL(EDX)
		JNZ(LabelRef(lbl + "_loop"))
		Label(lbl + "_done")
	}
	merge := func() {
		// Candidates of the second halves come after the first halves':
		// the second half's best wins only with a higher score.
		VSHUFF32X4(U8(0xee), bS, bS, u)
		VCMPPS(U8(cmpGTOQ), bS, u, K1)
		VMOVAPS(u, K1, bS)
		for _, z := range []VecPhysical{bA, bB} {
			VSHUFF32X4(U8(0xee), z, z, q)
			VMOVAPS(q, K1, z)
		}
	}
	twoWays(name+"_cands", func() { cands(true, name+"_cw", ECX, false) }, func() { cands(false, name+"_cu", ECX, false) })
	merge()
	if refine {
		// One refit round where a candidate scored: t = (1/d)·f for the
		// local factors f (four per half, cfg.shift), from the best so far
		// in both halves.
		for _, z := range []VecPhysical{bS, bA, bB} {
			VSHUFF32X4(U8(0x44), z, z, z)
		}
		VCMPPS(U8(cmpGTOQ), zero, bS, K4)
		VDIVPS(bB, bA, u)                 // d
		VCMPPS(U8(0x0c), zero, u, K4, K4) // and d ≠ 0 (NEQ_OQ)
		gen.Broadcast32(0x3f800000, q, RAX, X0)
		VDIVPS(u, q, u) // 1/d
		MOVQ(R9, RBX)
		for r := range 4 {
			VBROADCASTSS(Mem{Base: R10, Disp: cfgShift + 4*r}, t.AsY())
			VBROADCASTSS(Mem{Base: R10, Disp: cfgShift + 4*min(r+4, 6)}, q.AsY())
			VINSERTF64X4(U8(1), q.AsY(), t, t)
			VMULPS(t, u, t) // id·f
			VMOVUPS(t, Mem{Base: R9, Disp: trP + 64*r})
		}
		MOVL(U32(4), R8L)
		twoWays(name+"_refit", func() { cands(true, name+"_rw", R8L, true) }, func() { cands(false, name+"_ru", R8L, true) })
		merge()
	}
	// d = a/b of the best, 0 when none scored above 0 or below groupEps.
	VDIVPS(bB, bA, bA)
	VCMPPS(U8(cmpGTOQ), zero, bS, K1)
	KNOTW(K1, K1)
	VMOVAPS(zero, K1, bA)
	VMOVAPS(zero, K1, bB)
	VBROADCASTSS(consts.Word(0x26901d7d), u) // 1e-15
	VCMPPS(U8(cmpLTOQ), u, amax, K1)
	VMOVAPS(zero, K1, bA)
	VMOVAPS(zero, K1, bB)

}

// tablePicks8 picks each of the 8 sub-blocks' integer scale under the
// super-block scale (res) from its fitted scale (trSc), as pickSym with a
// table: l0 measured in lanes 0..7, l1 in lanes 8..15, in one pass; it
// stores l and inv(d·l) to res (lanes 8..15 zero). The table and the
// search's steps must be in Z17..Z23.
func tablePicks8(name string, at func(base, i int) Mem) {
	var (
		slo, shi, one, mg = Z1, Z2, Z3, Z4
		v, f, la, lb      = Z5, Z6, Z7, Z8
		d, l, dl, id      = Z9, Z10, Z11, Z12
		x, r, p, e, w     = Z13, Z14, Z15, Z16, Z26
		zero              = Z27
		idx, tmp          = Z24, Z25
	)
	gen.Broadcast32(0x3f800000, one, RAX, X0)
	gen.Broadcast32(magic, mg, RAX, X0)
	for i, c := range []uint32{8, 4, 3, 2, 1} { // superScaleLanes took some
		gen.Broadcast32(c, gen.Z(19+i), RAX, X0)
	}
	VXORPS(zero, zero, zero)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgLo}, slo)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgHi}, shi)
	VBROADCASTSS(Mem{Base: R11, Disp: resD}, d)
	invLanes(d, v, one, p)
	VMULPS(Mem{Base: R9, Disp: trSc}, v, v) // sc·inv(d)
	// neighbours(v, lo, hi).
	VADDPS(mg, v, f)
	VSUBPS(mg, f, f) // rnd(v)
	VCMPPS(U8(cmpGTOQ), v, f, K1)
	VSUBPS(one, f, K1, f) // f > v: f − 1
	VMOVAPS(f, la)
	VADDPS(one, f, lb)
	VMINPS(shi, lb, lb)
	VCMPPS(U8(cmpGTOQ), shi, v, K1)
	VMOVAPS(shi, K1, la)
	VMOVAPS(shi, K1, lb)
	VCMPPS(U8(cmpGEOQ), slo, v, K1)
	KNOTW(K1, K1)
	VMOVAPS(slo, K1, la)
	VMOVAPS(slo, K1, lb)
	// l: l0 in lanes 0..7, l1 in lanes 8..15.
	VINSERTF64X4(U8(1), lb.AsY(), la, l)
	VMULPS(d, l, dl)
	invLanes(dl, id, one, p)
	VXORPS(e, e, e)
	errs := func(weights bool) {
		for i := range 32 {
			VBROADCASTF64X4(at(trX, i), x)
			VMULPS(x, id, p) // id·v
			tableIndex(p, idx, tmp)
			VPERMPS(Z17, idx, p) // the table value
			VMULPS(p, dl, p)     // d·q
			VSUBPS(p, x, r)      // r
			if weights {
				VBROADCASTF64X4(at(trW, i), w)
				VMULPS(r, w, p) // w·r
				VMULPS(r, p, p) // ·r
			} else {
				VMULPS(r, r, p)
			}
			VADDPS(p, e, e)
		}
	}
	twoWays(name+"_errs", func() { errs(true) }, func() { errs(false) })
	// l1 where its error is below l0's.
	VSHUFF32X4(U8(0xee), e, e, p)
	VCMPPS(U8(cmpLTOQ), e, p, K1)
	VMOVAPS(lb, K1, la)
	MOVL(U32(0xff), EAX)
	KMOVW(EAX, K3)
	VMOVAPS_Z(la, K3, la)
	VMOVUPS(la, Mem{Base: R11, Disp: resL})
	VMULPS(d, la, p)
	invLanes(p, id, one, v)
	VMOVAPS_Z(id, K3, id)
	VMOVUPS(id, Mem{Base: R11, Disp: resIDs})
}

// tableBlocks8 emits kqTableBlocks8AVX512: 8 IQ4_NL blocks of 32, each
// fitted to the table (with its refit round) and its scale rounded to
// float16.
func tableBlocks8() {
	name := "kqTableBlocks8AVX512"
	TEXT(name, NOSPLIT, "func(x, w *[256]float32, tr *[1920]float32, cfg *[88]float32, res *[48]float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of tableBlocks8Go for a table search",
		"with one refit round of 7 local factors (in cfg.shift) and an even",
		"number of first candidates (cfg as newTableSuperCfg lays it out) and",
		"res an nlRes; a nil w weighs every element 1. tr is scratch.")
	at := func(base, i int) Mem { return Mem{Base: R9, Disp: base + 64*(i%16) + 32*(i/16)} }
	tableFits8(name, true, at)
	// f16Round of each block's scale: NaN → 0, saturate, nearest even.
	d, t, z := Z15, Z3, Z4
	MOVL(U32(0xff), EAX)
	KMOVW(EAX, K3)
	VCMPPS(U8(cmpORD), d, d, K3, K1)
	VMOVAPS_Z(d, K1, d)
	gen.Broadcast32(0x477fe000, t, RAX, X0) // 65504
	VMINPS(t, d, d)
	gen.Broadcast32(0xc77fe000, t, RAX, X0) // −65504
	VMAXPS(t, d, d)
	VCVTPS2PH(U8(0), d, t.AsY())
	VPMOVZXWD(t.AsY(), z)
	VMOVDQU32(z, Mem{Base: R11, Disp: 128})
	VCVTPH2PS(t.AsY(), d)
	VMOVUPS(d, Mem{Base: R11})
	gen.Broadcast32(0x3f800000, z, RAX, X0)
	invLanes(d, t, z, Z5)
	VMOVAPS_Z(t, K3, t)
	VMOVUPS(t, Mem{Base: R11, Disp: 64})
	RET()
}

// q3kPack emits kqQ3KPackAVX512: a Q3_K block from its search's result.
func q3kPack(finite bool) {
	name := "kqQ3KPackAVX512"
	doc := []string{name + " is the AVX-512 kernel of q3kPackGo: the codes of x (NaN as 0)",
		"under the inverse scales of res (a superRes), packed with the 6-bit",
		"scales l+32 and the float16 d into the Q3_K block y; q is scratch."}
	if finite {
		name = "kqQ3KPackFiniteAVX512"
		doc = []string{name + " is kqQ3KPackAVX512 for x without NaN (q3kPackGo)."}
	}
	TEXT(name, NOSPLIT, "func(y *[110]byte, x *[256]float32, res *[36]float32, q *[256]uint8)")
	Pragma("noescape")
	Doc(doc...)
	Load(Param("y"), RDI)
	Load(Param("x"), RSI)
	Load(Param("res"), R11)
	Load(Param("q"), R8)
	// The codes: clamp(round(x·id), −4, 3) + 4 of each sub-block of 16
	// (VCVTPS2DQ rounds to nearest even, as rnd).
	lo, hi, four := Z1, Z2, Z3
	gen.Broadcast32(0xc0800000, lo, RAX, X0) // −4
	gen.Broadcast32(0x40400000, hi, RAX, X0) // 3
	gen.Broadcast32(4, four, RAX, X0)
	// Codes 32m..32m+31 in Qm = Y8+m, from the registers (a store of 16
	// bytes read back as 32 would stall the store forwarding).
	Q := func(m int) VecPhysical { return gen.Y(8 + m) }
	for j := range 16 {
		VMOVUPS(Mem{Base: RSI, Disp: 64 * j}, Z4)
		if !finite {
			VCMPPS(U8(cmpORD), Z4, Z4, K1)
			VMOVAPS_Z(Z4, K1, Z4) // NaN → 0
		}
		VBROADCASTSS(Mem{Base: R11, Disp: resIDs + 4*j}, Z5)
		VMULPS(Z5, Z4, Z4) // v·id
		VMAXPS(lo, Z4, Z4)
		VMINPS(hi, Z4, Z4)
		VCVTPS2DQ(Z4, Z4)
		VPADDD(four, Z4, Z4)
		if j%2 == 0 {
			VPMOVDB(Z4, Q(j/2).AsX())
		} else {
			VPMOVDB(Z4, X5)
			VINSERTI128(U8(1), X5, Q(j/2), Q(j/2))
		}
	}
	// Low two bits: byte 32+32h+l holds code 128h+32k+l's in bits 2k..2k+1;
	// the third bits: bit 4h+k of byte l.
	m3, m4, hm, t := Y0, Y1, Y2, Y4
	MOVL(U32(0x03030303), EAX)
	VMOVD(EAX, X0)
	VPBROADCASTD(X0, m3)
	MOVL(U32(0x04040404), EAX)
	VMOVD(EAX, X1)
	VPBROADCASTD(X1, m4)
	VPXOR(hm, hm, hm)
	for h := range 2 {
		qs := Y3
		VPXOR(qs, qs, qs)
		for k := range 4 {
			c := Q(4*h + k)
			VPAND(m3, c, t)
			if k > 0 {
				VPSLLW(U8(2*k), t, t)
			}
			VPOR(t, qs, qs)
			VPAND(m4, c, t) // bit 2
			switch sh := 4*h + k - 2; {
			case sh < 0:
				VPSRLW(U8(-sh), t, t)
			case sh > 0:
				VPSLLW(U8(sh), t, t)
			}
			VPOR(t, hm, hm)
		}
		VMOVDQU(qs, Mem{Base: RDI, Disp: 32 + 32*h})
	}
	VMOVDQU(hm, Mem{Base: RDI})
	// The scales v = l + 32: low nibbles of v[0..7] | v[8..15] in bytes
	// 96..103, top two bits of v[4g+i] in bits 2g..2g+1 of byte 104+i.
	VMOVUPS(Mem{Base: R11, Disp: resL}, Z4)
	VCVTPS2DQ(Z4, Z4)
	MOVL(U32(32), EAX)
	VPBROADCASTD(EAX, Z5)
	VPADDD(Z5, Z4, Z4)
	VPMOVDB(Z4, X4)
	MOVL(U32(0x0f0f0f0f), EAX)
	VMOVD(EAX, X5)
	VPBROADCASTD(X5, X5)
	VPSRLDQ(U8(8), X4, X6)
	VPAND(X5, X4, X7)
	VPAND(X5, X6, X6)
	VPSLLW(U8(4), X6, X6)
	VPOR(X6, X7, X7)
	VMOVQ(X7, Mem{Base: RDI, Disp: 96})
	VPSRLW(U8(4), X4, X4)
	MOVL(U32(0x03030303), EAX)
	VMOVD(EAX, X5)
	VPBROADCASTD(X5, X5)
	VPAND(X5, X4, X4) // v >> 4
	VMOVD(X4, EAX)
	for g := 1; g < 4; g++ {
		VPEXTRD(U8(g), X4, ECX)
		SHLL(U8(2*g), ECX)
		ORL(ECX, EAX)
	}
	MOVL(EAX, Mem{Base: RDI, Disp: 104})
	MOVL(Mem{Base: R11, Disp: resHD}, EAX)
	MOVW(AX, Mem{Base: RDI, Disp: 108})
	VZEROUPPER()
	RET()
}

// q4kNibbles emits kqQ4KNibblesAVX512, Q4_K's codes and their packing for
// a block without NaN: as q4kNibblesGo, each code clamp(round((x−m)·id),
// 0, 15) of its sub-block of 32 (m, id = mi[2j], mi[2j+1]; VCVTPS2DQ
// rounds to nearest even after the clamp, as rnd before it), then byte
// 32c+l of y = code 64c+l | code 64c+32+l << 4.
func q4kNibbles() {
	name := "kqQ4KNibblesAVX512"
	TEXT(name, NOSPLIT, "func(y *[128]byte, x *[256]float32, mi *[16]float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of q4kNibblesGo for x without NaN: Q4_K's",
		"codes of x under the offsets and inverse scales mi of its 8 sub-blocks",
		"of 32, packed two to a byte as Q4_K keeps them.")
	Load(Param("y"), RDI)
	Load(Param("x"), RSI)
	Load(Param("mi"), R11)
	zero, top := Z1, Z2
	VXORPS(zero, zero, zero)
	gen.Broadcast32(0x41700000, top, RAX, X0) // 15
	code := func(j, k int, z VecPhysical) {   // elements 32j+16k..+15
		VMOVUPS(Mem{Base: RSI, Disp: 128*j + 64*k}, z)
		VSUBPS(Z8, z, z)
		VMULPS(Z9, z, z) // (x − m)·id
		VMAXPS(zero, z, z)
		VMINPS(top, z, z)
		VCVTPS2DQ(z, z)
	}
	for c := range 4 {
		lo, hi := []VecPhysical{Z3, Z4}, []VecPhysical{Z5, Z6}
		for h, regs := range [][]VecPhysical{lo, hi} {
			j := 2*c + h
			VBROADCASTSS(Mem{Base: R11, Disp: 8 * j}, Z8)
			VBROADCASTSS(Mem{Base: R11, Disp: 8*j + 4}, Z9)
			code(j, 0, regs[0])
			code(j, 1, regs[1])
		}
		for k := range 2 {
			VPSLLD(U8(4), hi[k], hi[k])
			VPORD(hi[k], lo[k], lo[k])
			VPMOVDB(lo[k], X7)
			VMOVDQU(X7, Mem{Base: RDI, Disp: 32*c + 16*k})
		}
	}
	VZEROUPPER()
	RET()
}
