// Command kquant generates the search passes and code kernels of the
// K-quant, IQ4 and legacy GGUF quantizers of package kernels:
// kquant_amd64.s and the stub declarations in kquant_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./kquant -out ../kquant_amd64.s -stubs ../kquant_stubs_amd64.go -pkg kernels
//
// A pass measures up to 16 candidate scales (and offsets) of one sub-block
// at once, one candidate per lane of a zmm register: each element of the
// sub-block is broadcast and every lane adds its term in order of the
// elements (the products of the fits fused, as fma32 rounds them), so each lane's sums are the bits
// of the Go loop for its candidate. The code kernels turn 16 elements at a
// time into their codes under their sub-block's stored scale.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		superIdx = gen.TreeIndexes("kqTree")
		affineFit()
		affineFit0()
		affineErrs()
		symFit()
		symFit0()
		symErrs()
		tableFit()
		tableFit0()
		tableErrs()
		affineCodes()
		symCodes()
		tableCodes()
		symSuper16()
		affineSuper(16)
		affineSuper(8)
		tableSuper8()
		tableBlocks8()
		consts2.lane = gen.Table("kqLane", []uint32{0, 1, 2, 3, 4, 5, 6, 7})
		for _, c := range []struct {
			m *Mem
			v uint32
		}{{&consts2.int1, 1}, {&consts2.int2, 2}, {&consts2.int3, 3}, {&consts2.int4, 4}, {&consts2.int8, 8}} {
			*c.m = gen.Table("kqInt"+itoa(int(c.v)), []uint32{c.v, c.v, c.v, c.v, c.v, c.v, c.v, c.v})
		}
		affineSuper2(16)
		affineSuper2(8)
		symSuper2()
		affineCodes2()
		symCodes2()
		tableSuper2()
		tableBlocks2()
		tableCodes2()
		q3kPack(false)
		q3kPack(true)
		q4kNibbles()
	})
}

// magic is 1.5·2^23: adding and subtracting it rounds to an integer, ties
// to even.
const magic = 0x4b400000

// VCMPPS predicates: ordered greater-than (false for a NaN) and ordered.
const (
	cmpGTOQ = 0x1e
	cmpORD  = 0x07
)

// Registers shared by the kernels.
var (
	zMagic = Z0 // magic
	zLo    = Z1 // the lowest code
	zHi    = Z2 // the highest code
	zX     = Z3 // the element, broadcast
	zW     = Z4 // its weight, broadcast
	zV     = Z5 // scratch: the scaled element, its code or value
	zT     = Z6 // scratch
)

// clampRound clamps v to [zLo, zHi] (a NaN to zLo) and rounds it to an
// integer, ties to even, as clampRoundPass.
func clampRound(v VecPhysical) {
	VMAXPS(zLo, v, v) // max(v, lo): lo when v is NaN
	VMINPS(zHi, v, v)
	VADDPS(zMagic, v, v)
	VSUBPS(zMagic, v, v)
}

// bounds broadcasts the code range: zLo from the float32 parameter lo (0
// when lo is ""; negated when neg), zHi from hi.
func bounds(lo string, neg bool, hi string) {
	if lo == "" {
		VXORPS(zLo, zLo, zLo)
	} else {
		Load(Param(lo), X7)
		VBROADCASTSS(X7, zLo)
		if neg {
			VXORPS(zT, zT, zT)
			VSUBPS(zLo, zT, zLo)
		}
	}
	Load(Param(hi), X7)
	VBROADCASTSS(X7, zHi)
}

// lanes loads a *[16]float32 parameter into z.
func lanes(param string, z VecPhysical) {
	Load(Param(param), RAX)
	VMOVUPS(Mem{Base: RAX}, z)
}

// store writes z to a *[16]float32 parameter.
func store(z VecPhysical, param string) {
	Load(Param(param), RAX)
	VMOVUPS(z, Mem{Base: RAX})
}

// elements runs body once per element of x and w: the element broadcast
// in zX, its weight in zW. x's base is in SI, w's in DI, the count in CX.
func elements(name string, body func()) {
	Load(Param("x").Base(), RSI)
	Load(Param("x").Len(), RCX)
	Load(Param("w").Base(), RDI)
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	VBROADCASTSS(Mem{Base: RSI}, zX)
	VBROADCASTSS(Mem{Base: RDI}, zW)
	body()
	ADDQ(Imm(4), RSI)
	ADDQ(Imm(4), RDI)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
}

// begin opens a kernel: its frame, doc and the magic constant.
func begin(name, sig string, doc ...string) {
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(doc...)
	gen.Broadcast32(magic, zMagic, RAX, X7)
}

func affineFit() {
	name := "kqAffineFitAVX512"
	begin(name, "func(x, w []float32, t, o *[16]float32, st *[5]float32, d, m, e, sqq, sq *[16]float32)",
		name+" is the AVX-512 kernel of affineFitGo for all 16 candidates, with",
		"st the affineStats n, sw, sx, sxx, minBelow and len(w) ≥ len(x):",
		"",
		"	for c := range 16 {",
		"		var a, b, f float32",
		"		for i, v := range x {",
		"			q := clampRoundPass(t[c]*(v-o[c]), 0, n)",
		"			wq := w[i] * q",
		"			a += wq",
		"			b = fma32(wq, q, b)",
		"			f = fma32(wq, v, f)",
		"		}",
		"		sq[c], sqq[c] = a, b",
		"		det := sw*b - a*a",
		"		dc := (sw*f - sx*a) / det",
		"		mc := (b*sx - a*f) / det",
		"		if minBelow != 0 && mc > 0 {",
		"			mc, dc = 0, f/b",
		"		}",
		"		d[c], m[c] = dc, mc",
		"		if det > 0 && dc > 0 {",
		"			e[c] = sxx - 2*dc*f - 2*mc*sx + dc*dc*b + 2*dc*mc*a + mc*mc*sw",
		"		} else {",
		"			e[c] = +Inf",
		"		}",
		"	}")
	Load(Param("st"), R8)
	VXORPS(zLo, zLo, zLo)
	VBROADCASTSS(Mem{Base: R8}, zHi)
	lanes("t", Z8)
	lanes("o", Z9)
	VBROADCASTSS(Mem{Base: R8, Disp: 4}, Z14)  // sw
	VBROADCASTSS(Mem{Base: R8, Disp: 8}, Z15)  // sx
	VBROADCASTSS(Mem{Base: R8, Disp: 12}, Z16) // sxx
	affineFitCore(name, false)
	gen.End(false)
}

// affineFitCore is the loop and the least-squares tail of the affine fits:
// the candidates' inverse scales in Z8 and origins in Z9, n in zHi, and
// (unless stats) Σw, Σwx, Σwx² broadcast in Z14, Z15, Z16; with stats the
// loop adds them up in order into those registers. st (R8) holds
// minBelow at offset 16.
func affineFitCore(name string, stats bool) {
	VXORPS(Z10, Z10, Z10) // a = Σwq
	VXORPS(Z11, Z11, Z11) // b = Σwq²
	VXORPS(Z12, Z12, Z12) // f = Σwqx
	if stats {
		VXORPS(Z14, Z14, Z14)
		VXORPS(Z15, Z15, Z15)
		VXORPS(Z16, Z16, Z16)
	}
	elements(name, func() {
		if stats {
			VADDPS(zW, Z14, Z14) // sw += w
			VMULPS(zX, zW, Z13)  // w·v
			VADDPS(Z13, Z15, Z15)
			VMULPS(zX, Z13, Z13) // (w·v)·v
			VADDPS(Z13, Z16, Z16)
		}
		VSUBPS(Z9, zX, zV) // v − o
		VMULPS(zV, Z8, zV) // t·(v − o)
		clampRound(zV)
		VMULPS(zV, zW, zT) // wq
		VADDPS(zT, Z10, Z10)
		VFMADD231PS(zV, zT, Z11) // b += wq·q, fused
		VFMADD231PS(zX, zT, Z12) // f += wq·v, fused
	})
	store(Z10, "sq")
	store(Z11, "sqq")
	Load(Param("st"), R8)
	sw, sx, sxx := Z14, Z15, Z16
	a, b, f := Z10, Z11, Z12
	det, dc, mc, t1, t2 := Z17, Z18, Z19, Z20, Z21
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
	// minBelow: where mc > 0, mc = 0 and dc = f/b.
	VXORPS(t1, t1, t1)
	VMOVSS(Mem{Base: R8, Disp: 16}, X7)
	VUCOMISS(X7.AsX(), t1.AsX())
	JE(LabelRef(name + "_free"))
	VCMPPS(U8(cmpGTOQ), t1, mc, K1)
	VMOVAPS(t1, K1, mc)
	VDIVPS(b, f, K1, dc)
	Label(name + "_free")
	store(dc, "d")
	store(mc, "m")
	// e = sxx − 2dc·f − 2mc·sx + dc·dc·b + 2dc·mc·a + mc·mc·sw.
	e := Z22
	VADDPS(dc, dc, t1) // 2·dc
	VMULPS(f, t1, t2)
	VSUBPS(t2, sxx, e)
	VADDPS(mc, mc, t2) // 2·mc
	VMULPS(sx, t2, t2)
	VSUBPS(t2, e, e)
	VMULPS(dc, dc, t2)
	VMULPS(b, t2, t2)
	VADDPS(t2, e, e)
	VMULPS(mc, t1, t2) // 2dc·mc
	VMULPS(a, t2, t2)
	VADDPS(t2, e, e)
	VMULPS(mc, mc, t2)
	VMULPS(sw, t2, t2)
	VADDPS(t2, e, e)
	// +Inf unless det > 0 and dc > 0.
	VXORPS(t1, t1, t1)
	VCMPPS(U8(cmpGTOQ), t1, det, K1)
	VCMPPS(U8(cmpGTOQ), t1, dc, K2)
	KANDW(K1, K2, K1)
	KNOTW(K1, K1)
	gen.Broadcast32(0x7f800000, t2, RAX, X7)
	VMOVAPS(t2, K1, e)
	store(e, "e")
}

// hreduce leaves in every lane of z the min (or max) of its 16 lanes,
// using t as scratch.
func hreduce(z, t VecPhysical, op func(a, b, c Op)) {
	VSHUFF32X4(Imm(0x4e), z, z, t) // swap 256-bit halves
	op(t, z, z)
	VSHUFF32X4(Imm(0xb1), z, z, t) // swap 128-bit quarters in each half
	op(t, z, z)
	VPERMILPS(Imm(0x4e), z, t) // swap 64-bit pairs
	op(t, z, z)
	VPERMILPS(Imm(0xb1), z, t) // swap neighbours
	op(t, z, z)
}

func affineFit0() {
	name := "kqAffineFit0AVX512"
	begin(name, "func(x, w []float32, nd, shift *[16]float32, st *[5]float32, lohi *[2]float32, d, m, e, sqq, sq *[16]float32)",
		name+" is the AVX-512 kernel of affineFit0Go for all 16 candidates, with",
		"st the affineStats n, sw, sx, sxx, minBelow (it reads n and minBelow and",
		"writes the sums) and len(x) 16 or 32, len(w) ≥ len(x):",
		"",
		"	lo, hi := the least and greatest of x, each plus 0 (−0 as +0)",
		"	if minBelow != 0 && lo > 0 {",
		"		lo = 0",
		"	}",
		"	for i, v := range x {",
		"		sw += w[i]",
		"		wx := w[i] * v",
		"		sx += wx",
		"		sxx += wx * v",
		"	}",
		"	span := hi - lo",
		"	r := 1 / span",
		"	for c := range 16 {",
		"		t[c], o[c] = nd[c]*r, lo-shift[c]*span",
		"	}",
		"	lohi[0], lohi[1] = lo, hi",
		"	affineFitGo(x, w, 16, &t, &o, st, d, m, e, sqq, sq)")
	// lo and hi of the 16 or 32 elements.
	Load(Param("x").Base(), RSI)
	Load(Param("x").Len(), RCX)
	VMOVUPS(Mem{Base: RSI}, Z8)
	VMOVAPS(Z8, Z9)
	CMPQ(RCX, Imm(32))
	JNE(LabelRef(name + "_one"))
	VMOVUPS(Mem{Base: RSI, Disp: 64}, Z10)
	VMINPS(Z10, Z8, Z8)
	VMAXPS(Z10, Z9, Z9)
	Label(name + "_one")
	hreduce(Z8, Z10, func(a, b, c Op) { VMINPS(a, b, c) })
	hreduce(Z9, Z10, func(a, b, c Op) { VMAXPS(a, b, c) })
	VXORPS(Z10, Z10, Z10)
	VADDPS(Z10, Z8, Z8) // lo + 0
	VADDPS(Z10, Z9, Z9) // hi + 0
	Load(Param("st"), R8)
	VMOVSS(Mem{Base: R8, Disp: 16}, X7)
	VUCOMISS(X7, X10)
	JE(LabelRef(name + "_lo"))
	VMINPS(Z10, Z8, Z8) // min(lo, 0): lo is finite
	Label(name + "_lo")
	Load(Param("lohi"), RAX)
	VMOVSS(X8, Mem{Base: RAX})
	VMOVSS(X9, Mem{Base: RAX, Disp: 4})
	// span, r, the candidates.
	VSUBPS(Z8, Z9, Z11) // span = hi − lo
	gen.Broadcast32(0x3f800000, Z12, RAX, X7)
	VDIVPS(Z11, Z12, Z12) // r = 1/span
	lanes("nd", Z13)
	lanes("shift", Z14)
	VMULPS(Z12, Z13, Z13) // t = nd·r
	VMULPS(Z11, Z14, Z14) // shift·span
	VSUBPS(Z14, Z8, Z9)   // o = lo − shift·span
	VMOVAPS(Z13, Z8)      // t
	VXORPS(zLo, zLo, zLo)
	VBROADCASTSS(Mem{Base: R8}, zHi)
	affineFitCore(name, true)
	Load(Param("st"), R8)
	VMOVSS(X14, Mem{Base: R8, Disp: 4})
	VMOVSS(X15, Mem{Base: R8, Disp: 8})
	VMOVSS(X16, Mem{Base: R8, Disp: 12})
	gen.End(false)
}

func affineErrs() {
	name := "kqAffineErrsAVX512"
	begin(name, "func(x, w []float32, d, m, id *[16]float32, n float32, e *[16]float32)",
		name+" is the AVX-512 kernel of affineErrsGo for all 16 candidates:",
		"",
		"\tfor c := range 16 {",
		"\t\tvar s float32",
		"\t\tfor i, v := range x {",
		"\t\t\tq := clampRoundPass((v-m[c])*id[c], 0, n)",
		"\t\t\tr := v - (float32(d[c]*q) + m[c])",
		"\t\t\ts += w[i] * r * r",
		"\t\t}",
		"\t\te[c] = s",
		"\t}",
		"",
		"with len(w) ≥ len(x).")
	bounds("", false, "n")
	lanes("d", Z8)
	lanes("m", Z9)
	lanes("id", Z10)
	VXORPS(Z11, Z11, Z11)
	elements(name, func() {
		VSUBPS(Z9, zX, zV)  // v − m
		VMULPS(Z10, zV, zV) // (v − m)·id
		clampRound(zV)
		VMULPS(zV, Z8, zV) // d·q
		VADDPS(Z9, zV, zV) // + m
		VSUBPS(zV, zX, zV) // r = v − x̂
		VMULPS(zV, zW, zT) // w·r
		VMULPS(zV, zT, zT) // ·r
		VADDPS(zT, Z11, Z11)
	})
	store(Z11, "e")
	gen.End(false)
}

// symFitTail stores, from the sums a = Σwqx in Z10 and b = Σwq² in Z11,
// d = a/b, score = a·a/b (−Inf unless b > 0) and sqq = b.
func symFitTail() {
	a, b, t1, t2 := Z10, Z11, Z20, Z21
	VDIVPS(b, a, t1)
	store(t1, "d")
	VMULPS(a, a, t1)
	VDIVPS(b, t1, t1)
	VXORPS(t2, t2, t2)
	VCMPPS(U8(cmpGTOQ), t2, b, K1)
	KNOTW(K1, K1)
	gen.Broadcast32(0xff800000, t2, RAX, X7)
	VMOVAPS(t2, K1, t1)
	store(t1, "score")
	store(b, "sqq")
}

func symFit() {
	name := "kqSymFitAVX512"
	begin(name, "func(x, w []float32, t *[16]float32, neg, pos float32, d, score, sqq *[16]float32)",
		name+" is the AVX-512 kernel of symFitGo for all 16 candidates:",
		"",
		"	for c := range 16 {",
		"		var a, b float32",
		"		for i, v := range x {",
		"			q := clampRoundPass(t[c]*v, -neg, pos)",
		"			wq := w[i] * q",
		"			a = fma32(wq, v, a)",
		"			b = fma32(wq, q, b)",
		"		}",
		"		d[c], sqq[c] = a/b, b",
		"		score[c] = a * a / b // −Inf unless b > 0",
		"	}",
		"",
		"with len(w) ≥ len(x).")
	bounds("neg", true, "pos")
	lanes("t", Z8)
	VXORPS(Z10, Z10, Z10)
	VXORPS(Z11, Z11, Z11)
	elements(name, func() {
		VMULPS(zX, Z8, zV) // t·v
		clampRound(zV)
		VMULPS(zV, zW, zT)       // wq
		VFMADD231PS(zX, zT, Z10) // a += wq·v, fused
		VFMADD231PS(zV, zT, Z11) // b += wq·q, fused
	})
	symFitTail()
	gen.End(false)
}

// signedMax broadcasts to Z9 the element of x (base in RSI, 16 or 32
// elements) of largest magnitude, the first of them, and to Z26 that
// magnitude, as signedMax: the magnitudes' maximum, then the first element
// whose magnitude equals it. It uses Z8, Z10..Z13, K1 and AX, BX, CX.
func signedMax(name string) {
	Load(Param("x").Base(), RSI)
	Load(Param("x").Len(), RCX)
	gen.Broadcast32(0x7fffffff, Z13, RAX, X7)
	VANDPS(Mem{Base: RSI}, Z13, Z10) // |chunk 0|
	VMOVAPS(Z10, Z26)
	CMPQ(RCX, Imm(32))
	JNE(LabelRef(name + "_one"))
	VANDPS(Mem{Base: RSI, Disp: 64}, Z13, Z11) // |chunk 1|
	VMAXPS(Z11, Z26, Z26)
	Label(name + "_one")
	hreduce(Z26, Z12, func(a, b, c Op) { VMAXPS(a, b, c) })
	VCMPPS(U8(0x00), Z26, Z10, K1) // |x| == amax (EQ_OQ)
	KMOVW(K1, EAX)
	XORQ(RBX, RBX)
	TESTL(EAX, EAX)
	JNZ(LabelRef(name + "_found"))
	VCMPPS(U8(0x00), Z26, Z11, K1)
	KMOVW(K1, EAX)
	MOVQ(U64(16), RBX)
	Label(name + "_found")
	TZCNTL(EAX, EAX)
	ADDQ(RAX, RBX)
	VBROADCASTSS(Mem{Base: RSI, Index: RBX, Scale: 4}, Z9)
}

// fit0Stats stores, after a first-round loop that added Σ(wx)x into Z15,
// sxx and the largest magnitude (Z26) to stats.
func fit0Stats() {
	Load(Param("stats"), RAX)
	VMOVSS(X15, Mem{Base: RAX})
	VMOVSS(X26, Mem{Base: RAX, Disp: 4})
}

func symFit0() {
	name := "kqSymFit0AVX512"
	begin(name, "func(x, w []float32, numer *[16]float32, neg, pos float32, d, score, sqq *[16]float32, stats *[2]float32)",
		name+" is the AVX-512 kernel of symFit0Go for all 16 candidates, with",
		"len(x) 16 or 32 and len(w) ≥ len(x):",
		"",
		"	amax, m := signedMax(x)",
		"	for i, v := range x {",
		"		sxx += w[i] * v * v",
		"	}",
		"	stats[0], stats[1] = sxx, amax",
		"	for c := range 16 {",
		"		t[c] = numer[c] / m",
		"	}",
		"	symFitGo(x, w, 16, &t, neg, pos, d, score, sqq)")
	signedMax(name)
	lanes("numer", Z8)
	VDIVPS(Z9, Z8, Z8) // t = numer/m
	bounds("neg", true, "pos")
	VXORPS(Z10, Z10, Z10)
	VXORPS(Z11, Z11, Z11)
	VXORPS(Z15, Z15, Z15)
	elements(name, func() {
		VMULPS(zX, zW, Z13) // w·v
		VMULPS(zX, Z13, Z13)
		VADDPS(Z13, Z15, Z15) // sxx
		VMULPS(zX, Z8, zV)    // t·v
		clampRound(zV)
		VMULPS(zV, zW, zT)       // wq
		VFMADD231PS(zX, zT, Z10) // a += wq·v, fused
		VFMADD231PS(zV, zT, Z11) // b += wq·q, fused
	})
	symFitTail()
	fit0Stats()
	gen.End(false)
}

func tableFit0() {
	name := "kqTableFit0AVX512"
	begin(name, "func(x, w []float32, numer *[16]float32, vals, mids *[16]float32, d, score, sqq *[16]float32, stats *[2]float32)",
		name+" is the AVX-512 kernel of tableFit0Go for all 16 candidates, with",
		"vals the table's values, mids its 15 midpoints (and a 16th entry),",
		"len(x) 16 or 32 and len(w) ≥ len(x):",
		"",
		"	amax, m := signedMax(x)",
		"	for i, v := range x {",
		"		sxx += w[i] * v * v",
		"	}",
		"	stats[0], stats[1] = sxx, amax",
		"	for c := range 16 {",
		"		t[c] = numer[c] / m",
		"	}",
		"	tableFitGo(x, w, 16, &t, tab, d, score, sqq)")
	signedMax(name)
	lanes("numer", Z8)
	VDIVPS(Z9, Z8, Z8) // t = numer/m
	tableRegs()
	VXORPS(Z10, Z10, Z10)
	VXORPS(Z11, Z11, Z11)
	VXORPS(Z15, Z15, Z15)
	elements(name, func() {
		VMULPS(zX, zW, Z13) // w·v
		VMULPS(zX, Z13, Z13)
		VADDPS(Z13, Z15, Z15) // sxx
		VMULPS(zX, Z8, zV)    // t·v
		tableIndex(zV, Z24, Z25)
		VPERMPS(Z17, Z24, zV)    // q
		VMULPS(zV, zW, zT)       // wq
		VFMADD231PS(zX, zT, Z10) // a += wq·v, fused
		VFMADD231PS(zV, zT, Z11) // b += wq·q, fused
	})
	symFitTail()
	fit0Stats()
	gen.End(false)
}

func symErrs() {
	name := "kqSymErrsAVX512"
	begin(name, "func(x, w []float32, d, id *[16]float32, neg, pos float32, e *[16]float32)",
		name+" is the AVX-512 kernel of symErrsGo for all 16 candidates:",
		"",
		"\tfor c := range 16 {",
		"\t\tvar s float32",
		"\t\tfor i, v := range x {",
		"\t\t\tq := clampRoundPass(v*id[c], -neg, pos)",
		"\t\t\tr := fma32(-d[c], q, v)",
		"\t\t\ts = fma32(w[i]*r, r, s)",
		"\t\t}",
		"\t\te[c] = s",
		"\t}",
		"",
		"with len(w) ≥ len(x).")
	bounds("neg", true, "pos")
	lanes("d", Z8)
	lanes("id", Z9)
	gen.Broadcast32(0x80000000, Z12, RAX, X7)
	VXORPS(Z12, Z8, Z8) // −d: a NaN d gives −NaN, as the Go reference's fma32(−d, q, v)
	VXORPS(Z11, Z11, Z11)
	elements(name, func() {
		VMULPS(Z9, zX, zV) // v·id
		clampRound(zV)
		VFMADD213PS(zX, Z8, zV)  // r = (−d)·q + v, fused
		VMULPS(zV, zW, zT)       // w·r
		VFMADD231PS(zV, zT, Z11) // + w·r·r, fused
	})
	store(Z11, "e")
	gen.End(false)
}

// tableRegs loads a table's 16 values to Z17 and its 15 midpoints (and a
// 16th entry) to Z18, and the integer steps 8, 4, 3, 2, 1 to Z19..Z23.
func tableRegs() {
	Load(Param("vals"), RAX)
	VMOVUPS(Mem{Base: RAX}, Z17)
	Load(Param("mids"), RAX)
	VMOVUPS(Mem{Base: RAX}, Z18)
	for i, c := range []uint32{8, 4, 3, 2, 1} {
		gen.Broadcast32(c, gen.Z(19+i), RAX, X7)
	}
}

// tableIndex sets the int32 lanes of i to the table index of the values u,
// as table.index: the number of midpoints below u by a binary search (a
// NaN gives 0), using m and K1 as scratch.
func tableIndex(u, i, m VecPhysical) {
	VPXORD(i, i, i)
	VPADDD(Z20, Z21, m) // index 7 = 4 + 3
	VPERMPS(Z18, m, m)  // mid[7]
	VCMPPS(U8(cmpGTOQ), m, u, K1)
	VMOVDQA32(Z19, K1, i) // i = 8
	for _, step := range []struct{ off, add VecPhysical }{{Z21, Z20}, {Z23, Z22}} {
		VPADDD(step.off, i, m) // i + 3, then i + 1
		VPERMPS(Z18, m, m)
		VCMPPS(U8(cmpGTOQ), m, u, K1)
		VPADDD(step.add, i, K1, i) // i += 4, then 2
	}
	VPERMPS(Z18, i, m) // mid[i]
	VCMPPS(U8(cmpGTOQ), m, u, K1)
	VPADDD(Z23, i, K1, i) // i++
}

func tableFit() {
	name := "kqTableFitAVX512"
	begin(name, "func(x, w []float32, t *[16]float32, vals, mids *[16]float32, d, score, sqq *[16]float32)",
		name+" is the AVX-512 kernel of tableFitGo for all 16 candidates:",
		"",
		"	for c := range 16 {",
		"		var a, b float32",
		"		for i, v := range x {",
		"			q := tab.v[tab.index(t[c]*v)]",
		"			wq := w[i] * q",
		"			a = fma32(wq, v, a)",
		"			b = fma32(wq, q, b)",
		"		}",
		"		d[c], sqq[c] = a/b, b",
		"		score[c] = a * a / b // −Inf unless b > 0",
		"	}",
		"",
		"with vals the table's values, mids its 15 midpoints (and a 16th entry),",
		"and len(w) ≥ len(x).")
	tableRegs()
	lanes("t", Z8)
	VXORPS(Z10, Z10, Z10)
	VXORPS(Z11, Z11, Z11)
	elements(name, func() {
		VMULPS(zX, Z8, zV) // t·v
		tableIndex(zV, Z24, Z25)
		VPERMPS(Z17, Z24, zV)    // q
		VMULPS(zV, zW, zT)       // wq
		VFMADD231PS(zX, zT, Z10) // a += wq·v, fused
		VFMADD231PS(zV, zT, Z11) // b += wq·q, fused
	})
	symFitTail()
	gen.End(false)
}

func tableErrs() {
	name := "kqTableErrsAVX512"
	begin(name, "func(x, w []float32, d, id *[16]float32, vals, mids *[16]float32, e *[16]float32)",
		name+" is the AVX-512 kernel of tableErrsGo for all 16 candidates:",
		"",
		"\tfor c := range 16 {",
		"\t\tvar s float32",
		"\t\tfor i, v := range x {",
		"\t\t\tr := v - d[c]*tab.v[tab.index(id[c]*v)]",
		"\t\t\ts += w[i] * r * r",
		"\t\t}",
		"\t\te[c] = s",
		"\t}",
		"",
		"with vals the table's values, mids its 15 midpoints (and a 16th entry),",
		"and len(w) ≥ len(x).")
	tableRegs()
	lanes("d", Z8)
	lanes("id", Z9)
	VXORPS(Z11, Z11, Z11)
	elements(name, func() {
		VMULPS(zX, Z9, zV) // id·v
		tableIndex(zV, Z24, Z25)
		VPERMPS(Z17, Z24, zV) // q
		VMULPS(zV, Z8, zV)    // d·q
		VSUBPS(zV, zX, zV)    // r
		VMULPS(zV, zW, zT)
		VMULPS(zV, zT, zT)
		VADDPS(zT, Z11, Z11)
	})
	store(Z11, "e")
	gen.End(false)
}

// chunks runs body once per 16 elements of x: the elements in zX with
// NaNs as 0, the sub-block index (chunk >> shift) in BX. x's base is in
// SI, the codes' in DI, the shift in CX, the chunks left in R10, the chunk
// number in DX.
func chunks(name string, body func()) {
	Load(Param("x").Base(), RSI)
	Load(Param("x").Len(), R10)
	Load(Param("codes").Base(), RDI)
	Load(Param("shift"), RCX)
	SHRQ(Imm(4), R10)
	XORQ(RDX, RDX)
	TESTQ(R10, R10)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	VMOVUPS(Mem{Base: RSI}, zT)
	VCMPPS(U8(cmpORD), zT, zT, K2)
	VMOVAPS_Z(zT, K2, zX) // NaN → 0
	MOVQ(RDX, RBX)
	SHRQ(CL, RBX)
	body()
	ADDQ(Imm(64), RSI)
	ADDQ(Imm(16), RDI)
	INCQ(RDX)
	DECQ(R10)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
}

// storeCodes converts the integer-valued floats of v to bytes at DI.
func storeCodes(v VecPhysical) {
	VCVTPS2DQ(v, v)
	VPMOVDB(v, Mem{Base: RDI})
}

func affineCodes() {
	name := "kqAffineCodesAVX512"
	begin(name, "func(x, mi []float32, shift uint64, n float32, codes []uint8)",
		name+" is the AVX-512 kernel of affineCodesGo, with len(x) a multiple",
		"of 16, len(codes) ≥ len(x) and the sub-block of element i being",
		"(i/16) >> shift:",
		"",
		"\tfor i, v := range x {",
		"\t\tj := i / 16 >> shift",
		"\t\tcodes[i] = uint8(clampRoundPass((storeX(v)-mi[2*j])*mi[2*j+1], 0, n))",
		"\t}")
	bounds("", false, "n")
	Load(Param("mi").Base(), R9)
	chunks(name, func() {
		VBROADCASTSS(Mem{Base: R9, Index: RBX, Scale: 8}, Z8)          // m
		VBROADCASTSS(Mem{Base: R9, Index: RBX, Scale: 8, Disp: 4}, Z9) // id
		VSUBPS(Z8, zX, zV)
		VMULPS(Z9, zV, zV)
		clampRound(zV)
		storeCodes(zV)
	})
	gen.End(false)
}

func symCodes() {
	name := "kqSymCodesAVX512"
	begin(name, "func(x, ids []float32, shift uint64, neg, pos float32, codes []uint8)",
		name+" is the AVX-512 kernel of symCodesGo, with len(x) a multiple of",
		"16, len(codes) ≥ len(x) and the sub-block of element i being",
		"(i/16) >> shift:",
		"",
		"\tfor i, v := range x {",
		"\t\tj := i / 16 >> shift",
		"\t\tcodes[i] = uint8(clampRoundPass(storeX(v)*ids[j], -neg, pos) + neg)",
		"\t}")
	bounds("neg", true, "pos")
	Load(Param("neg"), X7)
	VBROADCASTSS(X7, Z10)
	Load(Param("ids").Base(), R9)
	chunks(name, func() {
		VBROADCASTSS(Mem{Base: R9, Index: RBX, Scale: 4}, Z9) // id
		VMULPS(Z9, zX, zV)
		clampRound(zV)
		VADDPS(Z10, zV, zV)
		storeCodes(zV)
	})
	gen.End(false)
}

func tableCodes() {
	name := "kqTableCodesAVX512"
	begin(name, "func(x, ids []float32, shift uint64, vals, mids *[16]float32, codes []uint8)",
		name+" is the AVX-512 kernel of tableCodesGo, with len(x) a multiple",
		"of 16, len(codes) ≥ len(x), the sub-block of element i being",
		"(i/16) >> shift, vals the table's values and mids its 15 midpoints",
		"(and a 16th entry):",
		"",
		"\tfor i, v := range x {",
		"\t\tcodes[i] = uint8(tab.index(storeX(v) * ids[i/16>>shift]))",
		"\t}")
	tableRegs()
	Load(Param("ids").Base(), R9)
	chunks(name, func() {
		VBROADCASTSS(Mem{Base: R9, Index: RBX, Scale: 4}, Z9) // id
		VMULPS(Z9, zX, zV)
		tableIndex(zV, Z24, Z25)
		VPMOVDB(Z24, Mem{Base: RDI})
	})
	gen.End(false)
}
