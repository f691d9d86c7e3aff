package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

// The integer-group element kernels: runs of groups of g elements (g a
// multiple of 16), one divisor (or multiplier) per group worked out by the
// Go code, 16 elements per step. A step of AVX2 is two ymm registers.

func groupKernels(isa string) {
	for _, bits := range []int{8, 4} {
		quantGroups(isa, bits, false)
		quantGroups(isa, bits, true)
		dequantGroups(isa, bits, false)
		dequantGroups(isa, bits, true)
	}
}

// groupArgs loads the arguments of a group kernel that groupLoop walks: the
// bases of the slices out (into DI), in (SI) and per (one value per group,
// DX), the number of groups (len(per), R8) and glen (R9).
func groupArgs(out, in, per string) {
	Load(Param(out).Base(), RDI)
	Load(Param(in).Base(), RSI)
	Load(Param(per).Base(), RDX)
	Load(Param(per).Len(), R8)
	Load(Param("glen"), R9)
}

// groupLoop emits the loops of a group kernel: R8 groups of R9 elements
// (R9 a non-zero multiple of 16), with perGroup run before each group's
// steps and step run for each 16 elements, after which SI advances by
// inStep bytes, DI by outStep and the per-group pointers (DX, and R10 when
// two) by 4 bytes.
func groupLoop(name string, inStep, outStep int, twoPtrs bool, perGroup, step func()) {
	l := labels(name)
	TESTQ(R8, R8)
	JZ(l("done"))
	label(name, "group")
	perGroup()
	MOVQ(R9, RCX)
	label(name, "step")
	step()
	ADDQ(U8(inStep), RSI)
	ADDQ(U8(outStep), RDI)
	SUBQ(U8(16), RCX)
	JNZ(l("step"))
	ADDQ(U8(4), RDX)
	if twoPtrs {
		ADDQ(U8(4), R10)
	}
	DECQ(R8)
	JNZ(l("group"))
	label(name, "done")
	gen.End(false)
}

// prefetchAhead is how far ahead of the element being quantized the
// element kernels prefetch (PREFETCHT1, into the level-2 cache, which
// leaves the level-1 miss buffers to the loads and stores): one chunk of the
// Go driver (chunkElems floats), so that the amax pass over the next chunk
// finds it in the cache while the memory keeps streaming during this
// chunk's second pass.
const prefetchAhead = 4 * 2048

// quantGroups emits quant{Sym,Asym}{8,4}{AVX512,AVX2}.
func quantGroups(isa string, bits int, asym bool) {
	kind := "Sym"
	sig := "func(codes []byte, src []float32, div []float32, glen int, qmax float32)"
	if asym {
		kind = "Asym"
		sig = "func(codes []byte, src []float32, div []float32, zp []int32, glen int, qmax int32)"
	}
	name := fmt.Sprintf("quant%s%d%s", kind, bits, isa)
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	put := "codes[i] = byte(q)"
	if bits == 4 {
		put = "putCode(codes, i, q, 4) // element 2k in bits 3:0, 2k+1 in 7:4"
	}
	body := []string{
		"for k, d := range div {",
		"	for i := k * glen; i < (k+1)*glen; i++ {",
		"		var q int32",
	}
	if asym {
		body = append(body,
			"		q = zp[k]",
			"		if d != 0 {",
			"			q += roundEven32(min(max(src[i]/d, -(1<<22)), 1<<22))",
			"		}",
			"		q = min(max(q, 0), qmax)")
	} else {
		body = append(body,
			"		if d != 0 {",
			"			q = roundEven32(min(max(src[i]/d, -qmax), qmax))",
			"		}")
	}
	body = append(body, "		"+put, "	}", "}")
	doc(fmt.Sprintf("%s is the %s kernel of the loop", name, gen.ISAName(isa)), body,
		"for glen a non-zero multiple of 16; src must hold len(div)·glen floats and codes their codes.",
		"A d that is not above 0 (0 or NaN) gives codes 0: zp is 0 for those groups.")
	groupArgs("codes", "src", "div")
	if asym {
		Load(Param("zp").Base(), R10)
	}
	n := gen.Lanes(isa)
	nv := 16 / n // vectors per step
	hi, lo, d, zero := gen.Vec(isa, 15), gen.Vec(isa, 14), gen.Vec(isa, 13), gen.Vec(isa, 12)
	zpv, qv, nib, low8 := gen.Vec(isa, 11), gen.Vec(isa, 10), gen.Vec(isa, 9), gen.Vec(isa, 8)
	if asym {
		bcast(0x4a800000, hi, X0) // 2^22
		bcast(0xca800000, lo, X0) // −2^22
		Load(Param("qmax"), EAX)
		VMOVD(EAX, X0)
		VPBROADCASTD(X0, qv)
	} else {
		Load(Param("qmax"), X0)
		VBROADCASTSS(X0, hi)
		pxor(lo, lo, lo)
		VSUBPS(hi, lo, lo)
	}
	pxor(zero, zero, zero)
	if bits == 4 {
		if isa == "AVX512" {
			bcast(0x0f, nib, X0) // on int32 codes
		} else {
			bcast(0x0f0f0f0f, nib, X0) // on byte codes
			bcast(0x00ff00ff, low8, X0)
		}
	}
	outStep := 16
	if bits == 4 {
		outStep = 8
	}
	groupLoop(name, 64, outStep, asym, func() {
		VBROADCASTSS(Mem{Base: RDX}, d)
		if asym {
			VPBROADCASTD(Mem{Base: R10}, zpv)
		}
		if isa == "AVX512" {
			VCMPPS(U8(cmpGT), zero, d, K1) // d > 0
		} else {
			VCMPPS(U8(cmpGT), zero, d, gen.Vec(isa, 7))
		}
	}, func() {
		PREFETCHT1(Mem{Base: RSI, Disp: prefetchAhead})
		for i := range nv {
			v := gen.Vec(isa, i)
			VMOVUPS(Mem{Base: RSI, Disp: 4 * n * i}, v)
			VDIVPS(d, v, v)
			VMAXPS(lo, v, v)
			VMINPS(hi, v, v)
			if isa == "AVX512" {
				VCVTPS2DQ_Z(v, K1, v)
			} else {
				VCVTPS2DQ(v, v)
				VPAND(gen.Vec(isa, 7), v, v)
			}
			if asym {
				if isa == "AVX512" {
					VPADDD(zpv, v, K1, v) // zp only where d > 0: 0 elsewhere
				} else {
					VPADDD(zpv, v, v)
				}
				VPMAXSD(zero, v, v)
				VPMINSD(qv, v, v)
			}
		}
		storeCodes(isa, bits, asym, nib, low8)
	})
}

// storeCodes narrows the 16 int32 codes of the step (Z0, or Y0 and Y1) to
// bytes at DI: 16 of them, or 8 of two 4-bit codes each. Codes fit their
// width (signed codes as two's complement).
func storeCodes(isa string, bits int, unsigned bool, nib, low8 VecPhysical) {
	if isa == "AVX512" {
		if bits == 8 {
			VPMOVDB(Z0, X0)
			VMOVDQU(X0, Mem{Base: RDI})
			return
		}
		// Each qword c0 | c1<<32 becomes c0 | c1<<4 in its low byte.
		VPANDD(nib, Z0, Z0)
		VPSRLQ(U8(28), Z0, Z1)
		VPORQ(Z1, Z0, Z0)
		VPMOVQB(Z0, X0)
		VMOVQ(X0, Mem{Base: RDI})
		return
	}
	// Two ymm of int32 codes to 16 bytes in order (saturation never acts).
	gen.Pack2(Y0, Y1, Y1, !unsigned)
	if bits == 8 {
		VMOVDQU(X0, Mem{Base: RDI})
		return
	}
	// Bytes c0, c1, ... (low nibbles): word c0 | c1<<8 becomes c0 | c1<<4.
	VPAND(nib.AsX(), X0, X0)
	VPSRLW(U8(4), X0, X1)
	VPAND(low8.AsX(), X0, X0)
	VPOR(X1, X0, X0)
	VPACKUSWB(X0, X0, X0)
	VMOVQ(X0, Mem{Base: RDI})
}

// dequantGroups emits dequant{Sym,Asym}{8,4}{AVX512,AVX2}.
func dequantGroups(isa string, bits int, asym bool) {
	kind := "Sym"
	sig := "func(dst []float32, codes []byte, mul []float32, glen int)"
	if asym {
		kind = "Asym"
		sig = "func(dst []float32, codes []byte, mul []float32, zero []float32, glen int)"
	}
	name := fmt.Sprintf("dequant%s%d%s", kind, bits, isa)
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	val := "float32(getCode(codes, i, %d, %v)) * m"
	if asym {
		val = "(float32(getCode(codes, i, %d, %v)) - zero[k]) * m"
	}
	doc(fmt.Sprintf("%s is the %s kernel of the loop", name, gen.ISAName(isa)), []string{
		"for k, m := range mul {",
		"	for i := k * glen; i < (k+1)*glen; i++ {",
		"		dst[i] = " + fmt.Sprintf(val, bits, !asym),
		"	}",
		"}",
	}, "for glen a non-zero multiple of 16; dst must hold len(mul)·glen floats and codes their codes.")
	groupArgs("dst", "codes", "mul")
	if asym {
		Load(Param("zero").Base(), R10)
	}
	n := gen.Lanes(isa)
	m, z, nib := gen.Vec(isa, 15), gen.Vec(isa, 14), gen.Vec(isa, 13)
	bcast(0x0f, nib, X0)
	inStep := 16
	if bits == 4 {
		inStep = 8
	}
	groupLoop(name, inStep, 64, asym, func() {
		VBROADCASTSS(Mem{Base: RDX}, m)
		if asym {
			VBROADCASTSS(Mem{Base: R10}, z)
		}
	}, func() {
		for i := range 16 / n {
			v := gen.Vec(isa, i)
			switch {
			case bits == 8 && asym:
				VPMOVZXBD(Mem{Base: RSI, Disp: n * i}, v)
			case bits == 8:
				VPMOVSXBD(Mem{Base: RSI, Disp: n * i}, v)
			default:
				// Byte b in a qword, b | b<<28: nibble 0 in bits 3:0 of
				// the low dword, nibble 1 in bits 3:0 of the high one.
				VPMOVZXBQ(Mem{Base: RSI, Disp: n / 2 * i}, v)
				VPSLLQ(U8(28), v, gen.Vec(isa, 4))
				por(gen.Vec(isa, 4), v, v)
				if asym {
					pand(nib, v, v)
				} else {
					VPSLLD(U8(28), v, v)
					VPSRAD(U8(28), v, v)
				}
			}
			VCVTDQ2PS(v, v)
			if asym {
				VSUBPS(z, v, v)
			}
			VMULPS(m, v, v)
			VMOVUPS(v, Mem{Base: RDI, Disp: 4 * n * i})
		}
	})
}
