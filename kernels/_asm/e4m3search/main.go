// Command e4m3search generates the fused scale-search kernels of E4M3
// (e4m3fn) elements of package kernels: e4m3search_amd64.s and the stub
// declarations in e4m3search_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./e4m3search -out ../e4m3search_amd64.s -stubs ../e4m3search_stubs_amd64.go -pkg kernels
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		searchMXFP8AVX512()
		sqErrE4M3DivAVX512()
		sqErrE4M3RcpAVX512()
	})
}

const (
	absBits  = 0x7fffffff
	expMask  = 0x7f800000
	c20      = 20 << 23  // added to a binade's exponent bits: 2^(e+20), whose ulp is 2^(e−3)
	k14      = 141 << 23 // 2^14
	minNorm  = 121 << 23 // 2^−6, E4M3's smallest normal
	f448     = 0x43e00000
	rebias   = 120 << 3
	signByte = 0x80
)

// Constant registers of both kernels.
var cAbs, cExp, c20v, cMinNorm, c448 = Z25, Z26, Z27, Z28, Z29

func constants() {
	for i, c := range []uint32{absBits, expMask, c20, minNorm, f448} {
		gen.Broadcast32(c, gen.Z(25+i), RAX, X31)
	}
}

// roundMag sets u to the E4M3 magnitude that the non-negative q rounds to
// (nearest even, saturating at 448), the magnitude of roundE4M3FN(q): with
// e the exponent of max(q, 2^−6), c = 2^(e+20) has the ulp 2^(e−3), E4M3's
// step in that binade (2^−9 below 2^−6), so (q + c) − c is q rounded to a
// multiple of it, ties to even (a carry lands on the next binade's first
// value); then the minimum with 448. t is scratch.
func roundMag(q, u, t VecPhysical) {
	roundFree(q, u, t)
	VMINPS(c448, u, u)
}

// roundFree is roundMag without the minimum with 448: the same magnitudes
// for q ≤ 464 (which rounds to 448, the even neighbour).
func roundFree(q, u, t VecPhysical) {
	VPMAXUD(cMinNorm, q, t)
	VPANDD(cExp, t, t)
	VPADDD(c20v, t, t)
	VADDPS(t, q, u)
	VSUBPS(t, u, u)
}

// accTerms adds to the float64 lanes lo (elements 0–7 of the 16) and hi
// (8–15) the squares of d, 16 float32 differences; t is scratch. The
// squares of float32 values are exact in float64, so the fused
// multiply-adds round as the loop's product and sum do.
func accTerms(d, lo, hi, t VecPhysical) {
	VCVTPS2PD(d.AsY(), t)
	VFMADD231PD(t, t, lo)
	VEXTRACTF64X4(U8(1), d, d.AsY())
	VCVTPS2PD(d.AsY(), t)
	VFMADD231PD(t, t, hi)
}

// reduceLanes reduces the sixteen lanes lo (0–7), hi (8–15) by
// sumLanes16's tree into the low double of out; lo and hi are clobbered.
func reduceLanes(lo, hi VecPhysical, out VecPhysical) {
	VADDPD(hi, lo, lo) // b_j = a_j + a_{j+8}
	VEXTRACTF64X4(U8(1), lo, hi.AsY())
	VADDPD(hi.AsY(), lo.AsY(), lo.AsY()) // c_j = b_j + b_{j+4}
	VEXTRACTF128(U8(1), lo.AsY(), hi.AsX())
	VADDPD(hi.AsX(), lo.AsX(), lo.AsX()) // d_j = c_j + c_{j+2}
	VPERMILPD(U8(1), lo.AsX(), hi.AsX())
	VADDSD(hi.AsX(), lo.AsX(), out.AsX()) // d_0 + d_1
}

// searchMXFP8AVX512 searches and encodes one block of 32 per step: x in
// Z0–Z1, |x| in Z2–Z3, the rounded magnitudes of the rule's candidate in
// Z4–Z5 and of rule+1's in Z6–Z7, their lane sums in Z8–Z11.
//
// Most blocks need no error sums at all: k+1 decodes an element exactly as
// k does unless its value q = |x|·2^(127−k) at k lies in [2^−10, 2^−5)
// (below 2^−5, q/2 is an E4M3 subnormal at k+1, on a coarser grid than q's
// at k; at most 2^−10 both round to 0) or is at least 464 (q rounds to 448
// but q/2 to more than 224). Elsewhere q and q/2 are normal, q/2 at most
// 232, so E4M3(q/2) = E4M3(q)/2 and both decode to the same float32 (the
// products with powers of two are exact). With no such element the two
// candidates' terms, hence their sums, are equal, the rule's code wins the
// tie, and the kernel encodes the block without computing them.
//
// It does not try the code k − 1 that searchMXFP8Go tries, because that
// candidate never has the smaller error: for k ≥ 1 the rule maps the amax
// to q = amax·2^(127−k) in [256, 512), and at k − 1 every element's value
// in the E4M3 domain doubles. Elements that stay at most 448 and are not
// below 2^−6 decode exactly as at k (the same relative grid); those that
// saturate decode no closer than at k; those below 2^−6 gain at most 2^−10
// each (in the E4M3 domain of k); and the amax element's error grows from
// at most max(16, q − 448) to q − 224, its square by at least 768, far more
// than 31 elements' gains of at most 2^−20 and any rounding of the sums.
func searchMXFP8AVX512() {
	name := "searchMXFP8AVX512"
	TEXT(name, NOSPLIT, "func(codes []byte, scales []uint8, src []float32, recip, e8m0 *[256]float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of searchMXFP8Go",
		"",
		"\tsearchMXFP8Go(codes, scales, src)",
		"",
		"for len(src) a multiple of 32, len(codes) ≥ len(src), len(scales) ≥ len(src)/32,",
		"recip = &mx.recip and e8m0 = &mx.e8m0. A block's amax is the unsigned maximum of",
		"its magnitudes' bits; a candidate's elements are rounded in magnitude (the",
		"error of x − x̂ is that of |x| − |x̂|), decoded by the float32 product with",
		"the scale, and the squares of the float32 differences summed in sixteen float64",
		"lanes (elements j and j+16 in lane j) reduced by sumLanes16's tree. It tries the",
		"codes k and k+1 only: k−1 never has the smaller error (see the generator); it",
		"computes the errors only for blocks where k+1 can decode an element otherwise",
		"than k (else they tie), and chooses k+1 when its error is strictly smaller.")
	Load(Param("codes").Base(), RDI)
	Load(Param("scales").Base(), RSI)
	Load(Param("src").Base(), RDX)
	Load(Param("src").Len(), RCX)
	Load(Param("recip"), R8)
	Load(Param("e8m0"), R9)
	SHRQ(Imm(5), RCX)
	JZ(LabelRef(name + "_done"))
	constants()
	gen.Broadcast32(0x43e80000, Z20, RAX, X31) // 464
	gen.Broadcast32(117<<23, Z30, RAX, X31)    // 2^−10
	gen.Broadcast32(122<<23, Z31, RAX, X31)    // 2^−5
	gen.Broadcast32(rebias, Z21, RAX, X31)
	gen.Broadcast32(k14, Z22, RAX, X31)
	gen.Broadcast32(signByte, Z23, RAX, X31)
	gen.Broadcast32(254, Z17, RAX, X31)
	gen.Broadcast32(8, Z18, RAX, X31)
	gen.Broadcast32(1<<23, Z19, RAX, X31)
	gen.Broadcast32(0x400000, Z24, RAX, X31) // 2^−127, E8M0 code 0

	// rounded sets u (two registers) to the rounded magnitudes of |x|
	// times the multiplier mul (a vector).
	rounded := func(mul, u0, u1 VecPhysical) {
		VMULPS(mul, Z2, Z15)
		roundMag(Z15, u0, Z16)
		VMULPS(mul, Z3, Z15)
		roundMag(Z15, u1, Z16)
	}
	// errLanes sets lo and hi to the error lanes of the rounded magnitudes
	// u decoded with the factor dm (a vector). The product is rounded
	// before the subtraction, as in the loop: near the top of float32 it
	// overflows to +Inf (an infinite error, a candidate never chosen).
	errLanes := func(dm, u0, u1, lo, hi VecPhysical) {
		VPXORQ(lo, lo, lo)
		VPXORQ(hi, hi, hi)
		for h, u := range []VecPhysical{u0, u1} {
			VMULPS(dm, u, Z15)
			VSUBPS(Z15, gen.Z(2+h), Z15)
			accTerms(Z15, lo, hi, Z16)
		}
	}

	Label(name + "_block")
	VMOVUPS(Mem{Base: RDX}, Z0)
	VMOVUPS(Mem{Base: RDX, Disp: 64}, Z1)
	VPANDD(cAbs, Z0, Z2)
	VPANDD(cAbs, Z1, Z3)
	// Z8: the block's amax bits in every lane.
	VPMAXUD(Z3, Z2, Z8)
	VSHUFI64X2(U8(0x4e), Z8, Z8, Z9)
	VPMAXUD(Z9, Z8, Z8)
	VSHUFI64X2(U8(0xb1), Z8, Z8, Z9)
	VPMAXUD(Z9, Z8, Z8)
	VPSHUFD(U8(0x4e), Z8, Z9)
	VPMAXUD(Z9, Z8, Z8)
	VPSHUFD(U8(0xb1), Z8, Z9)
	VPMAXUD(Z9, Z8, Z8)
	VMOVD(X8, EAX)
	CMPL(EAX, U32(0x7f800000))
	JAE(LabelRef(name + "_nan"))
	// BX: the rule's code k = max(exponent − 8, 0), for the scale byte;
	// the same in the vector: the multipliers 2^(127−k) (Z6) and
	// 2^(126−k) (Z7), the decode factors 2^(k−127) (Z12, 2^−127 for
	// k = 0) and 2^(k−126) (Z13). An all-zero block's candidates both
	// have the error 0, so it keeps k = 0.
	MOVL(EAX, EBX)
	SHRL(U8(23), EBX)
	SUBL(U8(8), EBX)
	XORL(R10L, R10L)
	CMPL(EBX, Imm(0))
	CMOVLLT(R10L, EBX)
	VPSRLD(U8(23), Z8, Z9)
	VPMAXUD(Z18, Z9, Z9)
	VPSUBD(Z18, Z9, Z9) // k
	VPSUBD(Z9, Z17, Z6)
	VPSLLD(U8(23), Z6, Z6) // 2^(127−k)
	VPSUBD(Z19, Z6, Z7)    // 2^(126−k)
	VPSLLD(U8(23), Z9, Z9)
	VPMAXUD(Z24, Z9, Z12) // 2^(k−127)
	VPADDD(Z19, Z9, Z13)  // 2^(k−126)
	// k's rounded magnitudes, and K3: the elements whose value at k+1
	// may decode otherwise, q = |x|·2^(127−k) in [2^−10, 2^−5) or at
	// least 464 (see the generator). With none, k+1's terms equal k's,
	// the errors tie and k stays.
	for h := range 2 {
		k, t := K3, K5
		if h == 1 {
			k = K4
		}
		VMULPS(Z6, gen.Z(2+h), Z15)
		VPCMPUD(U8(5), Z30, Z15, k)    // q ≥ 2^−10
		VPCMPUD(U8(1), Z31, Z15, k, k) // and q < 2^−5
		VPCMPUD(U8(5), Z20, Z15, t)    // q ≥ 464
		KORW(t, k, k)
		roundMag(Z15, gen.Z(4+h), Z16)
	}
	KORTESTW(K4, K3)
	JZ(LabelRef(name + "_encode"))
	rounded(Z7, Z6, Z7)
	errLanes(Z12, Z4, Z5, Z8, Z9)
	errLanes(Z13, Z6, Z7, Z10, Z11)
	// Both reductions at once: b = lo + hi of each; then c, d and the
	// last sum of sumLanes16's tree on [b_k | b_k+1] by 128-bit shuffles:
	// k's error in lane 0 of Z8, k+1's in lane 2.
	VADDPD(Z9, Z8, Z8)
	VADDPD(Z11, Z10, Z10)
	VSHUFF64X2(U8(0x44), Z10, Z8, Z9)  // b_0..3 of k, of k+1
	VSHUFF64X2(U8(0xee), Z10, Z8, Z11) // b_4..7
	VADDPD(Z11, Z9, Z9)                // c_0..3 of k, of k+1
	VSHUFF64X2(U8(0x88), Z9, Z9, Z8)   // c_0,1 of k, of k+1 (twice)
	VSHUFF64X2(U8(0xdd), Z9, Z9, Z11)  // c_2,3
	VADDPD(Z11, Z8, Z8)                // d_0,1 of k, of k+1
	VPERMILPD(U8(0x55), Z8, Z9)
	VADDPD(Z9, Z8, Z8) // d_0 + d_1 (commuted in odd lanes)
	VEXTRACTF32X4(U8(1), Z8, X9)
	VCMPSD(U8(1), X8, X9, K2) // err(k+1) < err(k)
	KMOVW(K2, R10L)
	ANDL(U8(1), R10L)
	ADDL(R10L, EBX)
	NEGL(R10L)
	KMOVW(R10L, K2)
	VMOVAPS(Z6, K2, Z4)
	VMOVAPS(Z7, K2, Z5)

	// Encode the chosen magnitudes: the bits of a normal value shifted to
	// E4M3's exponent and mantissa and rebiased, a subnormal one's steps of
	// 2^−9 as the bits of u + 2^14 less those of 2^14; x's sign.
	Label(name + "_encode")
	for h := range 2 {
		u := gen.Z(4 + h)
		VPSRLD(U8(20), u, Z15)
		VPSUBD(Z21, Z15, Z15)
		VPCMPUD(U8(1), cMinNorm, u, K1) // u < 2^−6
		VADDPS(Z22, u, K1, Z15)
		VPSUBD(Z22, Z15, K1, Z15)
		VPSRLD(U8(24), gen.Z(h), Z16)
		VPTERNLOGD(U8(0xf8), Z23, Z16, Z15) // code | sign>>24 & 0x80
		VPMOVDB(Z15, Mem{Base: RDI, Disp: 16 * h})
	}
	MOVB(BL, Mem{Base: RSI})
	JMP(LabelRef(name + "_next"))

	Label(name + "_nan")
	VPMOVSDB(cAbs, Mem{Base: RDI}) // 0x7FFFFFFF saturates to 0x7F
	VPMOVSDB(cAbs, Mem{Base: RDI, Disp: 16})
	MOVB(U8(0xff), Mem{Base: RSI})

	Label(name + "_next")
	ADDQ(Imm(128), RDX)
	ADDQ(Imm(32), RDI)
	INCQ(RSI)
	DECQ(RCX)
	JNZ(LabelRef(name + "_block"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// sqErrE4M3DivAVX512 accumulates five candidates' error terms over a tile
// of rows runs of width elements (width a multiple of 16), 16 elements a
// step: |x| in Z0, the candidates' divisors in Z16–Z20, their lane sums in
// Z6–Z15 (lanes 0–7 and 8–15 of candidate c in Z(6+2c), Z(7+2c)). The
// quotients are rounded in magnitude (|x|/d is the magnitude of x/d, and
// the error of x − x̂ that of |x| − |x̂|).
func sqErrE4M3DivAVX512() {
	name := "sqErrE4M3DivAVX512"
	TEXT(name, NOSPLIT, "func(acc *[80]float64, x []float32, div *[5]float32, width, rows, stride int)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of the loop",
		"",
		"	for c, d := range div {",
		"		for r := range rows {",
		"			for i, v := range x[r*stride : r*stride+width] {",
		"				e := float64(v - float32(roundE4M3FN(v/d)*d))",
		"				acc[16*c+i%16] += float64(e * e)",
		"			}",
		"		}",
		"	}",
		"",
		"for width a multiple of 16 and every divisor positive and finite; the",
		"rounding is searchMXFP8AVX512's.")
	Load(Param("acc"), RDI)
	Load(Param("x").Base(), RSI)
	Load(Param("div"), RDX)
	Load(Param("width"), R8)
	Load(Param("rows"), R9)
	Load(Param("stride"), R10)
	SHRQ(Imm(4), R8)
	JZ(LabelRef(name + "_done"))
	TESTQ(R9, R9)
	JZ(LabelRef(name + "_done"))
	SHLQ(Imm(2), R10) // the row stride in bytes
	constants()
	for c := range 5 {
		VBROADCASTSS(Mem{Base: RDX, Disp: 4 * c}, gen.Z(16+c))
		VMOVUPD(Mem{Base: RDI, Disp: 128 * c}, gen.Z(6+2*c))
		VMOVUPD(Mem{Base: RDI, Disp: 128*c + 64}, gen.Z(7+2*c))
	}
	Label(name + "_row")
	MOVQ(RSI, RBX)
	MOVQ(R8, RCX)
	Label(name + "_loop")
	VPANDD(Mem{Base: RBX}, cAbs, Z0)
	for c := range 5 {
		d := gen.Z(16 + c)
		VDIVPS(d, Z0, Z1)
		roundMag(Z1, Z2, Z3)
		VMULPS(d, Z2, Z2)
		VSUBPS(Z2, Z0, Z2)
		accTerms(Z2, gen.Z(6+2*c), gen.Z(7+2*c), Z3)
	}
	ADDQ(Imm(64), RBX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	ADDQ(R10, RSI)
	DECQ(R9)
	JNZ(LabelRef(name + "_row"))
	for c := range 5 {
		VMOVUPD(gen.Z(6+2*c), Mem{Base: RDI, Disp: 128 * c})
		VMOVUPD(gen.Z(7+2*c), Mem{Base: RDI, Disp: 128*c + 64})
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// rcpFlush is how many 16-element steps sqErrE4M3RcpAVX512 sums in float32
// lanes before adding them to the float64 lanes (the Go side's
// e4m3RcpFlush).
const rcpFlush = 64

// sqErrE4M3RcpAVX512 is the fast pass of the tile search: five candidates'
// error terms over a tile of rows runs of width elements (width a multiple
// of 16), 16 elements a step, the quotients taken as products with the
// reciprocals, the terms squared and added by fused multiply-adds into
// float32 lanes, which are added to the float64 lanes of acc every rcpFlush
// steps and at the end. Steps whose magnitudes are all at most sat (whose
// products with the reciprocals stay at most 464, e4m3SatBound) round
// without the minimum with 448, which would not change them. |x| in Z0,
// scratch Z1–Z3, the float32 lanes in Z6–Z10, the reciprocals in Z11–Z15,
// the divisors in Z16–Z20, sat in Z21, the step count to the next flush in
// R11.
func sqErrE4M3RcpAVX512() {
	name := "sqErrE4M3RcpAVX512"
	TEXT(name, NOSPLIT, "func(acc *[80]float64, x []float32, rcp, div *[5]float32, sat float32, width, rows, stride int)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of sqErrE4M3RcpGo",
		"",
		"\tsqErrE4M3RcpGo(acc, x, rcp, div, width, rows, stride)",
		"",
		"for width a multiple of 16, every divisor and reciprocal positive and",
		"finite, and sat = e4m3SatBound(div) (16 elements none of whose magnitudes",
		"exceeds sat are rounded without the clamp at 448, which none of them",
		"reaches): each candidate c's terms (|x| − float32(E4M3(|x|·rcp[c])·div[c]))²",
		"fused-multiply-added into 16 float32 lanes (element i of the run into lane",
		"i mod 16), the float32 lanes added to acc[16c:16c+16] and cleared every",
		"64 steps of 16 elements and at the end; the rounding is",
		"searchMXFP8AVX512's.")
	Load(Param("acc"), RDI)
	Load(Param("x").Base(), RSI)
	Load(Param("rcp"), RAX)
	Load(Param("div"), RDX)
	Load(Param("width"), R8)
	Load(Param("rows"), R9)
	Load(Param("stride"), R10)
	SHRQ(Imm(4), R8)
	JZ(LabelRef(name + "_done"))
	TESTQ(R9, R9)
	JZ(LabelRef(name + "_done"))
	SHLQ(Imm(2), R10) // the row stride in bytes
	Load(Param("sat"), X1)
	VBROADCASTSS(X1, Z21)
	for c := range 5 {
		VBROADCASTSS(Mem{Base: RAX, Disp: 4 * c}, gen.Z(11+c))
		VBROADCASTSS(Mem{Base: RDX, Disp: 4 * c}, gen.Z(16+c))
		VPXORD(gen.Z(6+c), gen.Z(6+c), gen.Z(6+c))
	}
	constants()
	MOVQ(U32(rcpFlush), R11)
	// flush adds the float32 lanes to acc's float64 lanes and clears them.
	flush := func() {
		for c := range 5 {
			a := gen.Z(6 + c)
			VCVTPS2PD(a.AsY(), Z1)
			VADDPD(Mem{Base: RDI, Disp: 128 * c}, Z1, Z1)
			VMOVUPD(Z1, Mem{Base: RDI, Disp: 128 * c})
			VEXTRACTF32X8(U8(1), a, Y2)
			VCVTPS2PD(Y2, Z2)
			VADDPD(Mem{Base: RDI, Disp: 128*c + 64}, Z2, Z2)
			VMOVUPD(Z2, Mem{Base: RDI, Disp: 128*c + 64})
			VPXORD(a, a, a)
		}
	}
	Label(name + "_row")
	MOVQ(RSI, RBX)
	MOVQ(R8, RCX)
	Label(name + "_loop")
	VPANDD(Mem{Base: RBX}, cAbs, Z0)
	// Vectors without a magnitude above sat skip the clamp at 448.
	VPCMPUD(U8(6), Z21, Z0, K1) // |x| > sat
	KORTESTW(K1, K1)
	JNZ(LabelRef(name + "_sat"))
	terms := func(clamp bool) {
		for c := range 5 {
			VMULPS(gen.Z(11+c), Z0, Z1)
			if clamp {
				roundMag(Z1, Z2, Z3)
			} else {
				roundFree(Z1, Z2, Z3)
			}
			VMULPS(gen.Z(16+c), Z2, Z2)
			VSUBPS(Z2, Z0, Z2)
			VFMADD231PS(Z2, Z2, gen.Z(6+c))
		}
	}
	terms(false)
	JMP(LabelRef(name + "_step"))
	Label(name + "_sat")
	terms(true)
	Label(name + "_step")
	DECQ(R11)
	JNZ(LabelRef(name + "_next"))
	flush()
	MOVQ(U32(rcpFlush), R11)
	Label(name + "_next")
	ADDQ(Imm(64), RBX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	ADDQ(R10, RSI)
	DECQ(R9)
	JNZ(LabelRef(name + "_row"))
	flush()
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
