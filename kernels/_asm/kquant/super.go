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

	resL   = 0
	resIDs = 64
	resD   = 128
	resHD  = 132

	trX  = 0    // the elements, 16 vectors of 16
	trW  = 1024 // the weights
	trSc = 2048 // the fitted scales
	trAs = 2112 // their curvatures
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
// index pairs in Z0..Z7. Loading row bitrev4(a) into register a makes the
// butterfly's output come out in order.
func transpose16(src Mem, dst Mem) {
	pool := []VecPhysical{Z8, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}
	regs := make([]VecPhysical, 16)
	for a := range 16 {
		regs[a] = pool[a]
		VMOVUPS(src.Offset(64*bitrev4(a)), regs[a])
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
	TEXT(name, NOSPLIT, "func(x, w *[256]float32, tr *[544]float32, cfg *[40]float32, res *[36]float32)")
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
		lo, hi       = Z1, Z2
		amax, m, sxx = Z9, Z10, Z11
		absM         = Z12
		t, a, b      = Z3, Z4, Z5
		v, q, p      = Z6, Z7, Z13
		bS, bD, bB   = Z14, Z15, Z16
		zero         = Z17
		negInf       = Z18
	)
	// Statistics: the first element of largest magnitude (m, amax) and
	// Σ(wx)x of each sub-block.
	gen.Broadcast32(0x7fffffff, absM, RAX, X0)
	VXORPS(amax, amax, amax)
	VMOVUPS(xt(0), m)
	VXORPS(sxx, sxx, sxx)
	stats := func(weights bool) {
		for i := range 16 {
			VMOVUPS(xt(i), a)
			VANDPS(a, absM, v)
			VCMPPS(U8(cmpGTOQ), amax, v, K1)
			VMOVAPS(v, K1, amax)
			VMOVAPS(a, K1, m)
			if weights {
				VMULPS(wt(i), a, p) // w·v
				VMULPS(a, p, p)     // ·v
			} else {
				VMULPS(a, a, p)
			}
			VADDPS(p, sxx, sxx)
		}
	}
	twoWays(name+"_stats", func() { stats(true) }, func() { stats(false) })

	// The candidates: t = numer[c]/m; the best score's d and Σwq².
	VBROADCASTSS(Mem{Base: R10, Disp: cfgNeg}, lo)
	VXORPS(zero, zero, zero)
	VSUBPS(lo, zero, lo)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgPos}, hi)
	gen.Broadcast32(0xff800000, negInf, RAX, X0)
	VXORPS(bS, bS, bS)
	VXORPS(bD, bD, bD)
	VXORPS(bB, bB, bB)
	cands := func(weights bool, lbl string) {
		MOVL(Mem{Base: R10, Disp: cfgK}, ECX)
		XORQ(RDX, RDX)
		TESTL(ECX, ECX)
		JZ(LabelRef(lbl + "_done"))
		Label(lbl + "_loop")
		VBROADCASTSS(Mem{Base: R10, Index: RDX, Scale: 4, Disp: cfgNumer}, t)
		VDIVPS(m, t, t) // numer/m
		VXORPS(a, a, a)
		VXORPS(b, b, b)
		for i := range 16 {
			VMULPS(xt(i), t, v) // t·v
			clampRndLanes(v, lo, hi)
			qq := v
			if weights {
				VMULPS(wt(i), v, q) // wq
				qq = q
			}
			VMULPS(xt(i), qq, p) // wq·v
			VADDPS(p, a, a)
			VMULPS(v, qq, p) // wq·q
			VADDPS(p, b, b)
		}
		// d = a/b, score = a·a/b (−Inf unless b > 0); the first best.
		VDIVPS(b, a, p)
		VMULPS(a, a, a)
		VDIVPS(b, a, a)
		VCMPPS(U8(cmpGTOQ), zero, b, K1)
		KNOTW(K1, K1)
		VMOVAPS(negInf, K1, a)
		VCMPPS(U8(cmpGTOQ), bS, a, K1)
		VMOVAPS(a, K1, bS)
		VMOVAPS(p, K1, bD)
		VMOVAPS(b, K1, bB)
		INCQ(RDX)
		CMPQ(RDX, RCX)
		JB(LabelRef(lbl + "_loop"))
		Label(lbl + "_done")
	}
	twoWays(name+"_cands", func() { cands(true, name+"_cw") }, func() { cands(false, name+"_cu") })
	// A sub-block below groupEps keeps d = 0, Σwq² = 0.
	VBROADCASTSS(consts.Word(0x26901d7d), p) // 1e-15
	VCMPPS(U8(cmpLTOQ), p, amax, K1)
	VMOVAPS(zero, K1, bD)
	VMOVAPS(zero, K1, bB)
	VMOVUPS(bD, Mem{Base: R9, Disp: trSc})
	VMOVUPS(bB, Mem{Base: R9, Disp: trAs})

	superScaleLanes(name, 16)
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

// superScaleLanes computes superScale of the n sub-block scales at trSc with curvatures at trAs, the levels in lanes
// (cfg), rounds it to float16 (f16Round) and stores d and hd to res; it
// leaves d broadcast in Z20.
func superScaleLanes(name string, n int) {
	var (
		absM, amx, m   = Z12, Z21, Z22
		id, sl, ll, dd = Z3, Z4, Z5, Z6
		s, a, l, p, e  = Z7, Z13, Z14, Z15, Z16
		lo, hi         = Z1, Z2
		d              = Z20
	)
	VANDPS(Mem{Base: R9, Disp: trSc}, absM, amx)
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
	JE(LabelRef(name + "_ss_done")) // every scale 0: d = 0
	// m: the first scale of largest magnitude.
	VANDPS(Mem{Base: R9, Disp: trSc}, absM, p)
	VCMPPS(U8(cmpEQOQ), amx, p, K1)
	KMOVW(K1, EAX)
	TZCNTL(EAX, EAX)
	VBROADCASTSS(Mem{Base: R9, Index: RAX, Scale: 4, Disp: trSc}, m)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgLo}, lo)
	VBROADCASTSS(Mem{Base: R10, Disp: cfgHi}, hi)
	VMOVUPS(Mem{Base: R10, Disp: cfgLevels}, id)
	VDIVPS(m, id, id) // t/m
	VXORPS(sl, sl, sl)
	VXORPS(ll, ll, ll)
	for j := range n {
		VBROADCASTSS(Mem{Base: R9, Disp: trSc + 4*j}, s)
		VBROADCASTSS(Mem{Base: R9, Disp: trAs + 4*j}, a)
		VMULPS(id, s, l)
		clampRndLanes(l, lo, hi)
		VMULPS(s, a, p) // a·v
		VMULPS(l, p, p) // ·l
		VADDPS(p, sl, sl)
		VMULPS(l, a, p) // a·l
		VMULPS(l, p, p) // ·l
		VADDPS(p, ll, ll)
	}
	VDIVPS(ll, sl, dd) // D = sl/ll
	VXORPS(e, e, e)
	for j := range n {
		VBROADCASTSS(Mem{Base: R9, Disp: trSc + 4*j}, s)
		VBROADCASTSS(Mem{Base: R9, Disp: trAs + 4*j}, a)
		VMULPS(id, s, l)
		clampRndLanes(l, lo, hi)
		VMULPS(l, dd, p)
		VSUBPS(p, s, p) // r = v − D·l
		VMULPS(p, a, l) // a·r
		VMULPS(p, l, l) // ·r
		VADDPS(l, e, e)
	}
	// The lanes that count: below nlev, ll > 0 and e < +Inf; the first of
	// least e, or m/levels[0] when none.
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
	hreduce(l, s, func(a, b, c Op) { VMINPS(a, b, c) })
	VMOVSS(Mem{Base: R10, Disp: cfgLevels}, X16)
	VDIVSS(X16, X22, X20) // m/levels[0]
	KORTESTW(K2, K2)
	JZ(LabelRef(name + "_ss_done"))
	VCMPPS(U8(cmpEQOQ), l, p, K2, K1)
	KMOVW(K1, EAX)
	TZCNTL(EAX, EAX)
	VMOVUPS(dd, Mem{Base: R11, Disp: resIDs}) // scratch: res.ids is written later
	VMOVSS(Mem{Base: R11, Index: RAX, Scale: 4, Disp: resIDs}, X20)
	Label(name + "_ss_done")
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
	MOVL(EAX, Mem{Base: R11, Disp: resHD})
	VCVTPH2PS(X15, X20)
	VMOVSS(X20, Mem{Base: R11, Disp: resD})
	VBROADCASTSS(X20, d)
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
				VMULPS(p, c.d, p) // d·q
				VSUBPS(p, x, p)   // r
				if weights {
					VMULPS(Mem{Base: R9, Disp: trW + 64*i}, p, q) // w·r
					VMULPS(p, q, q)                               // ·r
				} else {
					VMULPS(p, p, q)
				}
				VADDPS(q, c.e, c.e)
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
