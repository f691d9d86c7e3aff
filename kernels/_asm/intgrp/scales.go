package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

// The scale kernels of symmetric integer groups: the scale code and divisor
// of 16 (AVX-512) or 8 (AVX2) groups at a time from their amaxes, instead of
// a scalar float16 round trip per group.

func scaleKernels(isa string) {
	symScales(isa, true)
	symScales(isa, false)
	rangeBlocks(isa)
}

// symScales emits symScales{F16,F32}{AVX512,AVX2}.
func symScales(isa string, f16 bool) {
	kind, code := "F32", "math.Float32bits(s) (s finite: amax is)"
	if f16 {
		kind, code = "F16", "float32ToFloat16(s, true), decoded back for d"
	}
	name := fmt.Sprintf("symScales%s%s", kind, isa)
	TEXT(name, NOSPLIT, "func(scales []byte, div []float32, amax []uint32, qmax float32)")
	Pragma("noescape")
	n := gen.Lanes(isa)
	doc(fmt.Sprintf("%s is the %s kernel of the loop", name, gen.ISAName(isa)), []string{
		"for k, a := range amax {",
		"	code, d := symScale(format, a, qmax)",
		"	format.put(scales, k, code)",
		"	div[k] = d",
		"}",
	}, fmt.Sprintf("over the first len(amax)/%d·%d groups, for the %s scale format: the code of s = amax/qmax is", n, n, kind),
		code+"; an amax of 0 gives 1.0 (d 1), a NaN or Inf amax the NaN code (d 0).")
	Load(Param("scales").Base(), RDI)
	Load(Param("div").Base(), RDX)
	Load(Param("amax").Base(), RSI)
	Load(Param("amax").Len(), RCX)
	SHRQ(U8(n/8+2), RCX) // / 16 or / 8
	Load(Param("qmax"), X0)
	q, inf, one, top, codeOne, codeNaN := gen.Vec(isa, 15), gen.Vec(isa, 14), gen.Vec(isa, 13), gen.Vec(isa, 12), gen.Vec(isa, 11), gen.Vec(isa, 10)
	VBROADCASTSS(X0, q)
	bcast(0x7f800000, inf, X0)
	bcast(0x3f800000, one, X0)
	bcast(0x477fe000, top, X0) // 65504
	if f16 {
		bcast(0x3c00, codeOne, X0)
		bcast(0x7e00, codeNaN, X0)
	} else {
		bcast(0x3f800000, codeOne, X0)
		bcast(0x7fc00000, codeNaN, X0)
	}
	l := labels(name)
	TESTQ(RCX, RCX)
	JZ(l("done"))
	label(name, "loop")
	a, s, c, d := gen.Vec(isa, 0), gen.Vec(isa, 1), gen.Vec(isa, 2), gen.Vec(isa, 3)
	if isa == "AVX512" {
		VMOVDQU32(Mem{Base: RSI}, a)
	} else {
		VMOVDQU(Mem{Base: RSI}, a)
	}
	VDIVPS(q, a, s)
	if f16 {
		VMINPS(top, s, s)
		if isa == "AVX2" {
			VCVTPS2PH(U8(0), s, c.AsX())
			VCVTPH2PS(c.AsX(), d)
			VPMOVZXWD(c.AsX(), c)
		} else {
			VCVTPS2PH(U8(0), s, c.AsY())
			VCVTPH2PS(c.AsY(), d)
			VPMOVZXWD(c.AsY(), c)
		}
	} else {
		VMOVAPS(s, d)
		VMOVAPS(s, c)
	}
	// Zero amax: 1.0; NaN or Inf amax: the NaN code and d = 0.
	if isa == "AVX512" {
		VPTESTNMD(a, a, K1)          // a = 0
		VPCMPUD(U8(5), inf, a, K2)   // a ≥ Inf (not less than)
		VMOVDQA32(codeOne, K1, c)    //
		VMOVDQA32(one, K1, d)        //
		VMOVDQA32(codeNaN, K2, c)    //
		VPXORD(d, d, K2, d)          // d = 0 there
		VMOVDQU32(d, Mem{Base: RDX}) //
		if f16 {
			VPMOVDW(c, c.AsY())
			VMOVDQU(c.AsY(), Mem{Base: RDI})
		} else {
			VMOVDQU32(c, Mem{Base: RDI})
		}
	} else {
		z, nf := gen.Vec(isa, 4), gen.Vec(isa, 5)
		VPXOR(z, z, z)
		VPCMPEQD(z, a, z)    // a = 0
		VPCMPGTD(a, inf, nf) // Inf > a (amax bits are below 2^31)
		VPCMPEQD(nf, nf, gen.Vec(isa, 6))
		VPXOR(gen.Vec(isa, 6), nf, nf) // a ≥ Inf
		VPBLENDVB(z, codeOne, c, c)
		VPBLENDVB(z, one, d, d)
		VPBLENDVB(nf, codeNaN, c, c)
		VPANDN(d, nf, d) // d = 0 where nf
		VMOVDQU(d, Mem{Base: RDX})
		if f16 {
			VEXTRACTI128(U8(1), c, X7)
			VPACKUSDW(X7, c.AsX(), c.AsX())
			VMOVDQU(c.AsX(), Mem{Base: RDI})
		} else {
			VMOVDQU(c, Mem{Base: RDI})
		}
	}
	ADDQ(U8(4*n), RSI)
	ADDQ(U8(4*n), RDX)
	if f16 {
		ADDQ(U8(2*n), RDI)
	} else {
		ADDQ(U8(4*n), RDI)
	}
	DECQ(RCX)
	JNZ(l("loop"))
	label(name, "done")
	gen.End(false)
}

// rangeBlocks emits rangeBlocks{AVX512,AVX2}: per block, the smallest and
// largest value together with 0 and NaNs left out (VMINPS and VMAXPS return
// their second source when either is NaN, so the values go first), and the
// largest magnitude as bits (a NaN or an infinity shows as 0x7f800000 or
// more); three horizontal reductions per block.
func rangeBlocks(isa string) {
	name := "rangeBlocks" + isa
	TEXT(name, NOSPLIT, "func(lo, hi []float32, amax []uint32, src []float32, block int)")
	Pragma("noescape")
	doc(fmt.Sprintf("%s is the %s kernel of the loop", name, gen.ISAName(isa)), []string{
		"for k := range lo {",
		"	var l, h float32",
		"	var m uint32",
		"	for _, x := range src[k*block : (k+1)*block] {",
		"		if x == x { // the min and max leave NaNs out",
		"			l, h = min(l, x), max(h, x)",
		"		}",
		"		m = max(m, math.Float32bits(x)&0x7fffffff)",
		"	}",
		"	lo[k], hi[k], amax[k] = l, h, m",
		"}",
	}, "for block a non-zero multiple of 16 and len(src) = len(lo)·block; the signs of zero results",
		"may differ from Go's min and max (the asymmetric scales do not depend on them).")
	Load(Param("lo").Base(), R10)
	Load(Param("lo").Len(), R8)
	Load(Param("hi").Base(), R11)
	Load(Param("amax").Base(), RDX)
	Load(Param("src").Base(), RSI)
	Load(Param("block"), R9)
	n := gen.Lanes(isa)
	abs := gen.Vec(isa, 15)
	bcast(0x7fffffff, abs, X0)
	l := labels(name)
	TESTQ(R8, R8)
	JZ(l("done"))
	label(name, "block")
	vl, vh, vm := gen.Vec(isa, 0), gen.Vec(isa, 1), gen.Vec(isa, 2)
	pxor(vl, vl, vl)
	pxor(vh, vh, vh)
	pxor(vm, vm, vm)
	MOVQ(R9, RCX)
	label(name, "step")
	for i := range 16 / n {
		x, a := gen.Vec(isa, 3+i), gen.Vec(isa, 5+i)
		VMOVUPS(Mem{Base: RSI, Disp: 4 * n * i}, x)
		pand(abs, x, a)
		VPMAXUD(a, vm, vm)
		VMINPS(vl, x, vl)
		VMAXPS(vh, x, vh)
	}
	ADDQ(U8(64), RSI)
	SUBQ(U8(16), RCX)
	JNZ(l("step"))
	// Horizontal reductions into the low lanes.
	t := gen.Vec(isa, 7)
	for _, r := range []struct {
		v  VecPhysical
		op func(...Op)
	}{{vl, VMINPS}, {vh, VMAXPS}, {vm, VPMAXUD}} {
		v := r.v
		if isa == "AVX512" {
			VEXTRACTI64X4(U8(1), v, t.AsY())
			r.op(t.AsY(), v.AsY(), v.AsY())
		}
		VEXTRACTI128(U8(1), v.AsY(), t.AsX())
		r.op(t.AsX(), v.AsX(), v.AsX())
		VPSHUFD(U8(0x4e), v.AsX(), t.AsX())
		r.op(t.AsX(), v.AsX(), v.AsX())
		VPSHUFD(U8(0xb1), v.AsX(), t.AsX())
		r.op(t.AsX(), v.AsX(), v.AsX())
	}
	VMOVSS(vl.AsX(), Mem{Base: R10})
	VMOVSS(vh.AsX(), Mem{Base: R11})
	VMOVD(vm.AsX(), Mem{Base: RDX})
	ADDQ(U8(4), R10)
	ADDQ(U8(4), R11)
	ADDQ(U8(4), RDX)
	DECQ(R8)
	JNZ(l("block"))
	label(name, "done")
	gen.End(false)
}
