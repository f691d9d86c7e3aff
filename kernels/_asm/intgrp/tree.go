package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

// The AVX-512 kernels that work on 16 blocks at a time: one vector of
// partial results per block in Z0..Z15, a transpose tree of VPERMT2D pairs
// that leaves the 16 block results in order in Z0, the block scales worked
// out for all 16 at once, then the blocks' elements one block after the
// other, reloaded from L1. This keeps the long scalar chain of a per-block
// scale (a horizontal reduction, a division or two, a float16 conversion)
// out of the element loop.

// treeIdx holds the VPERMT2D index pairs of the transpose tree: at half-width
// h = 8, 4, 2, 1, lo[i] = (i/h)·2h + i%h and hi[i] = lo[i] + h pick the first
// and second h lanes of each 2h-lane group from two vectors.
var treeIdx = gen.TreeIndexes("intgrpTree")

// groupAmax leaves in lane b of Z0 the largest non-NaN magnitude of block b
// of the 16 blocks of 32 at SI (0 if there is none), with abs = 0x7fffffff
// and zero = 0. VMAXPS returns its second source when either is NaN, so the
// magnitudes go first; the tree orders them as bits, which non-negative
// floats without NaN do as their values.
func groupAmax(abs, zero VecPhysical) {
	for b := range 16 {
		z := gen.Z(b)
		pand(Mem{Base: RSI, Disp: 128 * b}, abs, Z24)
		pand(Mem{Base: RSI, Disp: 128*b + 64}, abs, Z25)
		VMAXPS(zero, Z24, z)
		VMAXPS(z, Z25, z)
	}
	gen.Tree16(VPMAXUD)
}

// groupScales stores the float16 codes of the 16 scales d in Z1 to scales
// and their reciprocals 1/d (0 where d is 0) to inv, with one = 1.0 and
// zero = 0.
func groupScales(scales, inv Mem, one, zero VecPhysical) {
	VCVTPS2PH(U8(0), Z1, Y2)
	VMOVDQU(Y2, scales)
	VDIVPS(Z1, one, Z3)
	VCMPPS(U8(cmpNEQ), zero, Z1, K1)
	VMOVAPS_Z(Z3, K1, Z3)
	VMOVUPS(Z3, inv)
}

// quantQ8_0x16 emits quantQ8_0x16AVX512: quantizeQ8_0 on whole groups of 16
// blocks.
func quantQ8_0x16() {
	name := "quantQ8_0x16AVX512"
	TEXT(name, 0, "func(dst []byte, src []float32)")
	Pragma("noescape")
	doc(name+" is quantQ8_0AVX512 (the loop of quantQ8_0Go) on 16 blocks at a time:", nil,
		"it works through the first len(src)/512·16 blocks; dst must hold 34 bytes per block.")
	scales := AllocLocal(32) // the 16 float16 codes of d
	inv := AllocLocal(64)    // the 16 float32 values of id
	l := labels(name)
	blockArgs("src", 9, l) // groups of 16 blocks
	gen.LoadTree(treeIdx)
	abs, half, top, sign, one, zero := Z31, Z30, Z29, Z28, Z27, Z26
	bcast(0x7fffffff, abs, X0)
	bcast(0x3effffff, half, X0) // 0.5 − 2^−25
	bcast(0x42fe0000, top, X0)  // 127
	bcast(0x80000000, sign, X0)
	bcast(0x3f800000, one, X0)
	VPXORD(zero, zero, zero)
	label(name, "group")
	groupAmax(abs, zero)
	// d = amax/127 for the 16 blocks, their float16 codes, id = 1/d or 0.
	VDIVPS(top, Z0, Z1)
	groupScales(scales, inv, one, zero)
	for b := range 16 {
		// The next group but one, a line at a time.
		PREFETCHT0(Mem{Base: RSI, Disp: 4096 + 128*b})
		PREFETCHT0(Mem{Base: RSI, Disp: 4096 + 128*b + 64})
		MOVWLZX(scales.Offset(2*b), EAX)
		MOVW(AX, Mem{Base: RDI, Disp: Q8Bytes * b})
		VBROADCASTSS(inv.Offset(4*b), Z0)
		for i := range 2 {
			t, a := gen.Z(1+2*i), gen.Z(2+2*i)
			k := gen.K(1 + i)
			VMULPS(Mem{Base: RSI, Disp: 128*b + 64*i}, Z0, t)
			pand(abs, t, a)
			VADDPS(half, a, a)
			VMINPS(top, a, a)
			VCMPPS(U8(cmpORD), t, t, k)
			VPTERNLOGD(U8(0xf8), sign, t, a) // a | t&sign
			VCVTTPS2DQ_Z(a, k, a)
			VPMOVSDB(a, a.AsX())
			VMOVDQU(a.AsX(), Mem{Base: RDI, Disp: Q8Bytes*b + 2 + 16*i})
		}
	}
	ADDQ(U32(2048), RSI)
	ADDQ(U32(16*Q8Bytes), RDI)
	DECQ(RCX)
	JNZ(l("group"))
	label(name, "done")
	gen.End(false)
}

// Q8Bytes and Q4Bytes are the sizes of the ggml blocks.
const (
	Q8Bytes = 34
	Q4Bytes = 18
)

// quantQ4_0x16 emits quantQ4_0x16AVX512: quantizeQ4_0 on whole groups of 16
// blocks. The magnitude of m is the block's amax, so d's magnitude amax/8
// and id's 1/(amax/8) are worked out for 16 blocks at once; the sign (d is
// negative when m is positive or zero) comes from a search for the first
// element of largest magnitude in each block.
func quantQ4_0x16() {
	name := "quantQ4_0x16AVX512"
	TEXT(name, 0, "func(dst []byte, src []float32)")
	Pragma("noescape")
	doc(name+" is quantQ4_0AVX512 (the loop of quantQ4_0Go) on 16 blocks at a time:", nil,
		"it works through the first len(src)/512·16 blocks; dst must hold 18 bytes per block.")
	amaxes := AllocLocal(64) // amax bits
	scales := AllocLocal(32) // float16 codes of amax/8
	inv := AllocLocal(64)    // 1/(amax/8), or 0
	l := labels(name)
	blockArgs("src", 9, l) // groups of 16 blocks
	gen.LoadTree(treeIdx)
	abs, off, top, eighth, one, zero := Z31, Z30, Z29, Z28, Z27, Z26
	bcast(0x7fffffff, abs, X0)
	bcast(0x41080000, off, X0)    // 8.5
	bcast(0x41700000, top, X0)    // 15
	bcast(0x3e000000, eighth, X0) // 0.125
	bcast(0x3f800000, one, X0)
	VPXORD(zero, zero, zero)
	XORL(R8L, R8L)
	label(name, "group")
	groupAmax(abs, zero)
	VMOVDQU32(Z0, amaxes)
	VMULPS(eighth, Z0, Z1) // amax/8, the same float32 as amax/(−8) up to the sign
	groupScales(scales, inv, one, zero)
	for b := range 16 {
		// The sign of m: bit 31 of the first element whose magnitude is
		// amax (bit 31 of the lane mask is forced so that the index stays
		// in the block when none is, amax = 0 among NaNs); dropped when
		// amax = 0. d takes the opposite sign.
		VPBROADCASTD(amaxes.Offset(4*b), Z0)
		pand(Mem{Base: RSI, Disp: 128 * b}, abs, Z1)
		pand(Mem{Base: RSI, Disp: 128*b + 64}, abs, Z2)
		VPCMPEQD(Z0, Z1, K1)
		VPCMPEQD(Z0, Z2, K2)
		KUNPCKWD(K1, K2, K1) // K2 in bits 31:16, K1 in 15:0
		KMOVD(K1, EAX)
		ORL(U32(0x80000000), EAX)
		BSFL(EAX, EAX)
		MOVL(Mem{Base: RSI, Disp: 128 * b, Index: RAX, Scale: 4}, EBX)
		MOVL(amaxes.Offset(4*b), EDX)
		ANDL(U32(0x80000000), EBX)
		TESTL(EDX, EDX)
		CMOVLEQ(R8L, EBX)
		XORL(U32(0x80000000), EBX) // the sign of d
		MOVWLZX(scales.Offset(2*b), EAX)
		MOVL(EBX, EDX)
		SHRL(U8(16), EDX)
		XORL(EDX, EAX)
		MOVW(AX, Mem{Base: RDI, Disp: Q4Bytes * b})
		XORL(inv.Offset(4*b), EBX)
		VPBROADCASTD(EBX, Z0)
		for i := range 2 {
			x := gen.Z(1 + i)
			k := gen.K(1 + i)
			VMULPS(Mem{Base: RSI, Disp: 128*b + 64*i}, Z0, x)
			VADDPS(off, x, x)
			VCMPPS(U8(cmpUNORD), x, x, k)
			VMOVAPS(off, k, x) // NaN → 8.5, code 8
			VMAXPS(zero, x, x)
			VMINPS(top, x, x)
			VCVTTPS2DQ(x, x)
		}
		VPSLLD(U8(4), Z2, Z2)
		VPORD(Z2, Z1, Z1)
		VPMOVDB(Z1, X1)
		VMOVDQU(X1, Mem{Base: RDI, Disp: Q4Bytes*b + 2})
	}
	ADDQ(U32(2048), RSI)
	ADDQ(U32(16*Q4Bytes), RDI)
	DECQ(RCX)
	JNZ(l("group"))
	label(name, "done")
	gen.End(false)
}
