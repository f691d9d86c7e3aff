package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

// The ggml Q8_0 and Q4_0 block codecs: one block of 32 per step, its scale
// worked out in the low lane of an xmm register, the codes two zmm (four ymm)
// at a time.

// blockArgs loads dst and src bases into DI and SI and the number of steps
// (the float32 side's length / 2^log2: blocks of 32 for log2 = 5) into CX,
// jumping to done when it is zero.
func blockArgs(floats string, log2 uint8, l func(string) LabelRef) {
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param(floats).Len(), RCX)
	SHRQ(U8(log2), RCX)
	JZ(l("done"))
}

// blockEnd ends the loop over blocks of a ggml kernel and the kernel: SI
// moves by in bytes, DI by out, and CX counts the blocks down.
func blockEnd(name string, in, out int) {
	ADDQ(U8(in), RSI)
	ADDQ(U8(out), RDI)
	DECQ(RCX)
	JNZ(LabelRef(name + "_block"))
	label(name, "done")
	gen.End(false)
}

// loadAbsMax loads the block of 32 floats at SI into data registers (two zmm
// or four ymm, from register 0 up), their magnitudes into as many registers
// from 4 up, and their largest non-NaN magnitude into every lane of X8 (0 if
// there is none). absMask holds 0x7fffffff in every lane; register 9 is
// scratch.
func loadAbsMax(isa string, absMask VecPhysical) {
	n := 32 / gen.Lanes(isa)
	acc, t := gen.Vec(isa, 8), gen.Vec(isa, 9)
	pxor(acc, acc, acc)
	for i := range n {
		VMOVUPS(Mem{Base: RSI, Disp: 4 * gen.Lanes(isa) * i}, gen.Vec(isa, i))
		pand(absMask, gen.Vec(isa, i), gen.Vec(isa, 4+i))
		// VMAXPS returns its second source when either is NaN: with the
		// magnitudes first, a NaN lane leaves the accumulator alone.
		VMAXPS(acc, gen.Vec(isa, 4+i), acc)
	}
	gen.HReduce(acc, t, VMAXPS, true)
}

// reciprocal sets id to 1/d, or to 0 when d is 0 (low lanes), with one
// holding 1.0 in its low lane and tmp scratch.
func reciprocal(d, one, id, tmp VecPhysical) {
	VDIVSS(d, one, id)
	pxor(tmp, tmp, tmp)
	VCMPSS(U8(cmpNEQ), tmp, d, tmp) // all ones where d ≠ 0
	pand(tmp, id, id)
}

// loadHalf reads the float16 scale at SI and returns register 8 of isa's
// width holding it, as float32, in every lane.
func loadHalf(isa string) VecPhysical {
	MOVWLZX(Mem{Base: RSI}, EAX)
	VMOVD(EAX, X8)
	VCVTPH2PS(X8, X8)
	d := gen.Vec(isa, 8)
	VBROADCASTSS(X8, d)
	return d
}

// storeHalf stores at DI the float16 code of the float32 in d's low lane,
// rounded to nearest even (overflow gives ±Inf), with tmp scratch.
func storeHalf(d, tmp VecPhysical) {
	VCVTPS2PH(U8(0), d, tmp)
	VPEXTRW(U8(0), tmp, Mem{Base: RDI})
}

func quantQ8_0(isa string) {
	name := "quantQ8_0" + isa
	TEXT(name, NOSPLIT, "func(dst []byte, src []float32)")
	Pragma("noescape")
	doc(name+" is the "+gen.ISAName(isa)+" kernel of quantizeQ8_0, quantQ8_0Go's loop", []string{
		"for b := range len(src) / 32 {",
		"	x, y := src[32*b:32*b+32], dst[34*b:34*b+34]",
		"	var amax float32",
		"	for _, v := range x {",
		"		amax = max(amax, nanToZero(abs32(v)))",
		"	}",
		"	d := amax / 127",
		"	var id float32",
		"	if d != 0 {",
		"		id = 1 / d",
		"	}",
		"	binary.LittleEndian.PutUint16(y, float32ToFloat16(d, false))",
		"	for j, v := range x {",
		"		q := roundAway(float32(v * id)) // NaN → 0, clamped to ±127",
		"		y[2+j] = byte(int8(q))",
		"	}",
		"}",
	}, "over the len(src)/32 whole blocks; dst must hold 34 bytes per block.")
	l := labels(name)
	blockArgs("src", 5, l)
	n := gen.Lanes(isa)
	abs, half, one, top, sign := gen.Vec(isa, 15), gen.Vec(isa, 14), gen.Vec(isa, 13), gen.Vec(isa, 12), gen.Vec(isa, 11)
	if isa == "AVX512" {
		abs, half, one, top, sign = Z31, Z30, Z29, Z28, Z27
	}
	bcast(0x7fffffff, abs, X0)
	bcast(0x3effffff, half, X0) // 0.5 − 2^−25
	bcast(0x3f800000, one, X0)  // 1
	bcast(0x42fe0000, top, X0)  // 127
	bcast(0x80000000, sign, X0)
	label(name, "block")
	loadAbsMax(isa, abs)
	// d = amax / 127, stored as float16; id = 1/d or 0, in every lane.
	VDIVSS(top.AsX(), X8, X9)
	storeHalf(X9, X10)
	reciprocal(X9, one.AsX().(VecPhysical), X10, X8)
	id := gen.Vec(isa, 10)
	VBROADCASTSS(X10, id)
	for i := range 32 / n {
		x, t, a := gen.Vec(isa, i), gen.Vec(isa, 4+i), gen.Vec(isa, 8)
		// t = x·id. Adding 0.5 − 2^−25 to |t| and truncating is C's roundf
		// for every float32 (a sum whose fraction reaches 0.5 rounds up to
		// the next integer, one below stays below it: see roundAway's test);
		// then the clamp at 127, t's sign, and code 0 where t is NaN.
		VMULPS(id, x, t)
		pand(abs, t, a)
		VADDPS(half, a, a)
		VMINPS(top, a, a)
		if isa == "AVX512" {
			VCMPPS(U8(cmpORD), t, t, K1)
			VPTERNLOGD(U8(0xf8), sign, t, a) // a | t&sign
			VCVTTPS2DQ_Z(a, K1, a)
			VPMOVSDB(a, a.AsX())
			VMOVDQU(a.AsX(), Mem{Base: RDI, Disp: 2 + 16*i})
			continue
		}
		r := gen.Vec(isa, 9)
		VCMPPS(U8(cmpORD), t, t, r)
		pand(r, a, a)
		pand(sign, t, t)
		por(t, a, a)
		VCVTTPS2DQ(a, x) // x is free now: the codes of vector i
	}
	if isa == "AVX2" {
		// Four vectors of eight int32 codes (within ±127) to 32 bytes in
		// order: the two packs interleave 128-bit lanes, VPERMD undoes it.
		gen.Pack4([4]VecPhysical{Y0, Y1, Y2, Y3}, true)
		VMOVDQU(permQ8, Y1)
		VPERMD(Y0, Y1, Y0)
		VMOVDQU(Y0, Mem{Base: RDI, Disp: 2})
	}
	blockEnd(name, 128, Q8Bytes)
}

// permQ8 is the VPERMD order that undoes the lane interleaving of
// VPACKSSDW + VPACKSSWB on four vectors.
var permQ8 = gen.Perm8("q8Perm")

func dequantQ8_0(isa string) {
	name := "dequantQ8_0" + isa
	TEXT(name, NOSPLIT, "func(dst []float32, src []byte)")
	Pragma("noescape")
	doc(name+" is the "+gen.ISAName(isa)+" kernel of dequantizeQ8_0, dequantQ8_0Go's loop", []string{
		"for b := range len(dst) / 32 {",
		"	x, y := src[34*b:34*b+34], dst[32*b:32*b+32]",
		"	d := float16To32(binary.LittleEndian.Uint16(x))",
		"	for j := range y {",
		"		y[j] = float32(int8(x[2+j])) * d",
		"	}",
		"}",
	}, "over the len(dst)/32 whole blocks; src must hold 34 bytes per block.")
	l := labels(name)
	blockArgs("dst", 5, l)
	n := gen.Lanes(isa)
	label(name, "block")
	d := loadHalf(isa)
	for i := range 32 / n {
		v := gen.Vec(isa, i)
		VPMOVSXBD(Mem{Base: RSI, Disp: 2 + n*i}, v)
		VCVTDQ2PS(v, v)
		VMULPS(d, v, v)
		VMOVUPS(v, Mem{Base: RDI, Disp: 4 * n * i})
	}
	blockEnd(name, Q8Bytes, 128)
}

func quantQ4_0(isa string) {
	name := "quantQ4_0" + isa
	TEXT(name, NOSPLIT, "func(dst []byte, src []float32)")
	Pragma("noescape")
	doc(name+" is the "+gen.ISAName(isa)+" kernel of quantizeQ4_0, quantQ4_0Go's loop", []string{
		"for b := range len(src) / 32 {",
		"	x, y := src[32*b:32*b+32], dst[18*b:18*b+18]",
		"	var amax, m float32",
		"	for _, v := range x {",
		"		if a := abs32(v); amax < a {",
		"			amax, m = a, v",
		"		}",
		"	}",
		"	d := m / -8",
		"	var id float32",
		"	if d != 0 {",
		"		id = 1 / d",
		"	}",
		"	binary.LittleEndian.PutUint16(y, float32ToFloat16(d, false))",
		"	for j := range 16 {",
		"		y[2+j] = code(x[j]) | code(x[j+16])<<4 // trunc(x·id + 8.5): NaN → 8, clamped to 0..15",
		"	}",
		"}",
	}, "over the len(src)/32 whole blocks; dst must hold 18 bytes per block.")
	l := labels(name)
	blockArgs("src", 5, l)
	n := gen.Lanes(isa)
	abs, off, top, zero := gen.Vec(isa, 15), gen.Vec(isa, 14), gen.Vec(isa, 13), gen.Vec(isa, 12)
	if isa == "AVX512" {
		abs, off, top, zero = Z31, Z30, Z29, Z28
	}
	bcast(0x7fffffff, abs, X0)
	bcast(0x41080000, off, X0) // 8.5
	bcast(0x41700000, top, X0) // 15
	pxor(zero, zero, zero)
	XORL(R8L, R8L)
	label(name, "block")
	loadAbsMax(isa, abs)
	// The first lane whose magnitude equals amax (as bits; NaN lanes never
	// do) gives m's sign. Bit 31 of the lane mask is forced on so that the
	// index stays inside the block when no lane matches (amax = 0 among
	// NaNs), where the sign is dropped anyway.
	if isa == "AVX512" {
		VPBROADCASTD(X8, Z9)
		VPCMPEQD(Z9, Z4, K1)
		VPCMPEQD(Z9, Z5, K2)
		KMOVW(K1, EAX)
		KMOVW(K2, EBX)
		SHLL(U8(16), EBX)
		ORL(EBX, EAX)
	} else {
		VPBROADCASTD(X8, Y9)
		XORL(EAX, EAX)
		for i := 3; i >= 0; i-- {
			VPCMPEQD(Y9, gen.Vec(isa, 4+i), Y10)
			VMOVMSKPS(Y10, EBX)
			SHLL(U8(8), EAX)
			ORL(EBX, EAX)
		}
	}
	ORL(U32(0x80000000), EAX)
	BSFL(EAX, EAX)
	MOVL(Mem{Base: RSI, Index: RAX, Scale: 4}, EBX)
	ANDL(U32(0x80000000), EBX)
	VMOVD(X8, EDX)
	TESTL(EDX, EDX)
	CMOVLEQ(R8L, EBX) // amax = 0: m is +0
	ORL(EDX, EBX)
	// d = m / −8 (the same float32 as m·−0.125), id = 1/d or 0.
	MOVL(U32(0xbe000000), EAX) // −0.125
	VMOVD(EAX, X10)
	VMOVD(EBX, X9)
	VMULSS(X10, X9, X9)
	storeHalf(X9, X10)
	MOVL(U32(0x3f800000), EAX)
	VMOVD(EAX, X10)
	reciprocal(X9, X10, X11, X8)
	id := gen.Vec(isa, 10)
	VBROADCASTSS(X11, id)
	for i := range 32 / n {
		x := gen.Vec(isa, i)
		VMULPS(id, x, x)
		VADDPS(off, x, x)
		if isa == "AVX512" {
			VCMPPS(U8(cmpUNORD), x, x, K1)
			VMOVAPS(off, K1, x) // NaN → 8.5, code 8
		} else {
			m := gen.Vec(isa, 9)
			VCMPPS(U8(cmpUNORD), x, x, m)
			VBLENDVPS(m, off, x, x)
		}
		VMAXPS(zero, x, x)
		VMINPS(top, x, x)
		VCVTTPS2DQ(x, x)
	}
	if isa == "AVX512" {
		// Elements 0..15 in the low nibbles, 16..31 in the high ones.
		VPSLLD(U8(4), Z1, Z1)
		VPORD(Z1, Z0, Z0)
		VPMOVDB(Z0, X0)
		VMOVDQU(X0, Mem{Base: RDI, Disp: 2})
	} else {
		VPSLLD(U8(4), Y2, Y2)
		VPSLLD(U8(4), Y3, Y3)
		VPOR(Y2, Y0, Y0)
		VPOR(Y3, Y1, Y1)
		// 16 dwords below 256 to 16 bytes in order.
		gen.Pack2(Y0, Y1, Y1, false)
		VMOVDQU(X0, Mem{Base: RDI, Disp: 2})
	}
	blockEnd(name, 128, Q4Bytes)
}

func dequantQ4_0(isa string) {
	name := "dequantQ4_0" + isa
	TEXT(name, NOSPLIT, "func(dst []float32, src []byte)")
	Pragma("noescape")
	doc(name+" is the "+gen.ISAName(isa)+" kernel of dequantizeQ4_0, dequantQ4_0Go's loop", []string{
		"for b := range len(dst) / 32 {",
		"	x, y := src[18*b:18*b+18], dst[32*b:32*b+32]",
		"	d := float16To32(binary.LittleEndian.Uint16(x))",
		"	for j := range 16 {",
		"		c := x[2+j]",
		"		y[j] = float32(int(c&0x0f)-8) * d",
		"		y[j+16] = float32(int(c>>4)-8) * d",
		"	}",
		"}",
	}, "over the len(dst)/32 whole blocks; src must hold 18 bytes per block.")
	l := labels(name)
	blockArgs("dst", 5, l)
	n := gen.Lanes(isa)
	nib, eight := gen.Vec(isa, 15), gen.Vec(isa, 14)
	bcast(0x0f, nib, X0)
	bcast(8, eight, X0)
	label(name, "block")
	d := loadHalf(isa)
	for i := range 16 / n {
		lo, hi := gen.Vec(isa, 2*i), gen.Vec(isa, 2*i+1)
		VPMOVZXBD(Mem{Base: RSI, Disp: 2 + n*i}, lo)
		VPSRLD(U8(4), lo, hi)
		pand(nib, lo, lo)
		for _, v := range []VecPhysical{lo, hi} {
			VPSUBD(eight, v, v)
			VCVTDQ2PS(v, v)
			VMULPS(d, v, v)
		}
		VMOVUPS(lo, Mem{Base: RDI, Disp: 4 * n * i})
		VMOVUPS(hi, Mem{Base: RDI, Disp: 64 + 4*n*i})
	}
	blockEnd(name, Q4Bytes, 128)
}
