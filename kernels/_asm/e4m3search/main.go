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
	})
}

const (
	absBits  = 0x7fffffff
	round19  = 1<<19 - 1 // added with the kept LSB: rounds to 3 mantissa bits, ties to even
	keepHigh = 0xfff00000
	k14      = 141 << 23 // 2^14: |q| + 2^14 rounds |q| < 2^−6 to a multiple of 2^−9
	minNorm  = 121 << 23 // 2^−6, E4M3's smallest normal
	f448     = 0x43e00000
	rebias   = 120 << 3
	maxMag   = 0x7e
)

// Constant registers of both kernels.
var (
	cAbs, cRound, cOne, cHigh, cK14, cMinNorm, c448 = Z24, Z25, Z26, Z27, Z28, Z29, Z30
)

func constants() {
	for i, c := range []uint32{absBits, round19, 1, keepHigh, k14, minNorm, f448} {
		gen.Broadcast32(c, gen.Z(24+i), RAX, X31)
	}
}

// roundE4M3 replaces q (a zmm of float32) by the E4M3 value it rounds to
// (nearest even, saturating at ±448, the sign kept), the float32 of
// RoundE4M3FN: normal magnitudes by integer rounding of the bits to three
// mantissa bits, magnitudes below 2^−6 by (|q| + 2^14) − 2^14, then the
// minimum with 448. a, n, s are scratch.
func roundE4M3(q, a, n, s VecPhysical) {
	VPANDD(cAbs, q, a)
	VPSRLD(U8(20), a, n)
	VPANDD(cOne, n, n)
	VPADDD(a, n, n)
	VPADDD(cRound, n, n)
	VPANDD(cHigh, n, n) // the normal value
	VADDPS(cK14, a, s)
	VSUBPS(cK14, s, s)              // the subnormal value
	VPCMPUD(U8(1), cMinNorm, a, K1) // |q| < 2^−6
	VMOVAPS(s, K1, n)
	VMINPS(c448, n, n)
	VPTERNLOGD(U8(0xd8), cAbs, n, q) // q's sign, n's magnitude
}

// terms sets t to the squared differences, in eight float64 lanes,
// x64 − float64(dec), dec a ymm of float32.
func terms(dec VecPhysical, x64, t VecPhysical) {
	VCVTPS2PD(dec, t)
	VSUBPD(t, x64, t)
	VMULPD(t, t, t)
}

// searchMXFP8AVX512 searches and encodes one block of 32 per step, the
// block in Z0–Z1 and as float64 in Z2–Z5; each candidate's error in the
// lanes of Z12–Z15, reduced into X16 (rule), X17 (rule+1), X18 (rule−1).
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
		"its magnitudes' bits; each candidate's block is rounded to E4M3 values as",
		"RoundE4M3FN rounds them (the bits rounded to three mantissa bits, below 2^−6",
		"(|q| + 2^14) − 2^14, the minimum with 448), decoded by the float32 product",
		"with the scale, and its error summed in sixteen",
		"float64 lanes (elements j and j+16 in lane j) reduced by sumLanes16's tree; the",
		"products are not fused, as in the loop.")
	Load(Param("codes").Base(), RDI)
	Load(Param("scales").Base(), RSI)
	Load(Param("src").Base(), RDX)
	Load(Param("src").Len(), RCX)
	Load(Param("recip"), R8)
	Load(Param("e8m0"), R9)
	SHRQ(Imm(5), RCX)
	JZ(LabelRef(name + "_done"))
	constants()
	gen.Broadcast32(0x7f7f7f7f, Y20, RAX, X31)
	gen.Broadcast32(rebias, Z21, RAX, X31)
	gen.Broadcast32(maxMag, Z22, RAX, X31)
	gen.Broadcast32(0x80, Z23, RAX, X31)

	// errOf computes the error of the scale code in the register code
	// into out.
	errOf := func(code GPPhysical, out VecPhysical) {
		VBROADCASTSS(Mem{Base: R8, Index: code, Scale: 4}, Z6)
		VBROADCASTSS(Mem{Base: R9, Index: code, Scale: 4}, Z7)
		for h := range 2 {
			VMULPS(Z6, gen.Z(h), Z8)
			roundE4M3(Z8, Z9, Z10, Z11)
			VMULPS(Z7, Z8, Z8)
			terms(Y8, gen.Z(2+2*h), gen.Z(12+2*h))
			VEXTRACTF64X4(U8(1), Z8, Y8)
			terms(Y8, gen.Z(3+2*h), gen.Z(13+2*h))
		}
		VADDPD(Z14, Z12, Z12) // lanes 0–7: elements j, j+16
		VADDPD(Z15, Z13, Z13) // lanes 8–15: elements j+8, j+24
		VADDPD(Z13, Z12, Z12) // b_j = a_j + a_{j+8}
		VEXTRACTF64X4(U8(1), Z12, Y13)
		VADDPD(Y13, Y12, Y12) // c_j = b_j + b_{j+4}
		VEXTRACTF128(U8(1), Y12, X13)
		VADDPD(X13, X12, X12) // d_j = c_j + c_{j+2}
		VPERMILPD(U8(1), X12, X13)
		VADDSD(X13, X12, out) // d_0 + d_1
	}

	Label(name + "_block")
	VMOVUPS(Mem{Base: RDX}, Z0)
	VMOVUPS(Mem{Base: RDX, Disp: 64}, Z1)
	VPANDD(cAbs, Z0, Z2)
	VPANDD(cAbs, Z1, Z3)
	VPMAXUD(Z3, Z2, Z2)
	VEXTRACTI64X4(U8(1), Z2, Y3)
	VPMAXUD(Y3, Y2, Y2)
	VEXTRACTI128(U8(1), Y2, X3)
	VPMAXUD(X3, X2, X2)
	VPSHUFD(U8(0x4e), X2, X3)
	VPMAXUD(X3, X2, X2)
	VPSHUFD(U8(0xb1), X2, X3)
	VPMAXUD(X3, X2, X2)
	VMOVD(X2, EAX) // amax bits
	CMPL(EAX, U32(0x7f800000))
	JAE(LabelRef(name + "_nan"))
	// BX: the rule's code max(exponent − 8, 0).
	MOVL(EAX, EBX)
	SHRL(U8(23), EBX)
	SUBL(U8(8), EBX)
	XORL(R10L, R10L)
	CMPL(EBX, Imm(0))
	CMOVLLT(R10L, EBX)
	TESTL(EAX, EAX)
	JZ(LabelRef(name + "_encode"))

	// The search: the block as float64, the rule's error, then k−1 (k > 0)
	// and k+1, each replacing the best only when strictly smaller.
	VCVTPS2PD(Y0, Z2)
	VEXTRACTF64X4(U8(1), Z0, Y3)
	VCVTPS2PD(Y3, Z3)
	VCVTPS2PD(Y1, Z4)
	VEXTRACTF64X4(U8(1), Z1, Y5)
	VCVTPS2PD(Y5, Z5)
	errOf(RBX, X16)
	MOVL(EBX, R11L) // the best code
	TESTL(EBX, EBX)
	JZ(LabelRef(name + "_up"))
	LEAL(Mem{Base: RBX, Disp: -1}, R10L)
	errOf(R10, X18)
	VUCOMISD(X16, X18)
	JAE(LabelRef(name + "_up"))
	MOVL(R10L, R11L)
	VMOVAPD(X18, X16)
	Label(name + "_up")
	LEAL(Mem{Base: RBX, Disp: 1}, R10L)
	errOf(R10, X17)
	VUCOMISD(X16, X17)
	JAE(LabelRef(name + "_chosen"))
	MOVL(R10L, R11L)
	Label(name + "_chosen")
	MOVL(R11L, EBX)

	// Encode with the chosen code: quantizeMXFP8Go's rounding of x·mul.
	Label(name + "_encode")
	VBROADCASTSS(Mem{Base: R8, Index: RBX, Scale: 4}, Z6)
	for h := range 2 {
		VMULPS(Z6, gen.Z(h), Z8)
		VPANDD(cAbs, Z8, Z9)
		VPSRLD(U8(20), Z9, Z10)
		VPANDD(cOne, Z10, Z10)
		VPADDD(Z9, Z10, Z10)
		VPADDD(cRound, Z10, Z10)
		VPSRLD(U8(20), Z10, Z10)
		VPSUBD(Z21, Z10, Z10) // the normal code
		VADDPS(cK14, Z9, Z11)
		VPSUBD(cK14, Z11, Z11) // the subnormal code
		VPCMPUD(U8(1), cMinNorm, Z9, K1)
		VMOVDQA32(Z11, K1, Z10)
		VPMINSD(Z22, Z10, Z10)
		VPSRLD(U8(24), Z8, Z11)
		VPTERNLOGD(U8(0xf8), Z23, Z11, Z10) // code | sign>>24 & 0x80
		VPMOVDB(Z10, Mem{Base: RDI, Disp: 16 * h})
	}
	MOVB(BL, Mem{Base: RSI})
	JMP(LabelRef(name + "_next"))

	Label(name + "_nan")
	VMOVDQU32(Y20, Mem{Base: RDI})
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

// sqErrE4M3DivAVX512 accumulates five candidates' error terms over x, 16
// elements a step: the candidates' divisors in Z16–Z20, their lane sums in
// Z6–Z15 (lanes 0–7 and 8–15 of candidate c in Z(6+2c), Z(7+2c)).
func sqErrE4M3DivAVX512() {
	name := "sqErrE4M3DivAVX512"
	TEXT(name, NOSPLIT, "func(acc *[80]float64, x []float32, div *[5]float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of the loop",
		"",
		"\tfor c, d := range div {",
		"\t\tfor i, v := range x[:len(x)&^15] {",
		"\t\t\te := float64(v) - float64(float32(RoundE4M3FN(v/d)*d))",
		"\t\t\tacc[16*c+i%16] += float64(e * e)",
		"\t\t}",
		"\t}",
		"",
		"with every divisor positive and finite and len(x) < 2^35; the rounding is",
		"searchMXFP8AVX512's.",
		"The products are not fused, as in the loop.")
	Load(Param("acc"), RDI)
	Load(Param("x").Base(), RSI)
	Load(Param("x").Len(), RCX)
	Load(Param("div"), RDX)
	SHRQ(Imm(4), RCX)
	JZ(LabelRef(name + "_done"))
	constants()
	for c := range 5 {
		VBROADCASTSS(Mem{Base: RDX, Disp: 4 * c}, gen.Z(16+c))
		VMOVUPD(Mem{Base: RDI, Disp: 128 * c}, gen.Z(6+2*c))
		VMOVUPD(Mem{Base: RDI, Disp: 128*c + 64}, gen.Z(7+2*c))
	}
	Label(name + "_loop")
	VMOVUPS(Mem{Base: RSI}, Z0)
	VCVTPS2PD(Y0, Z1)
	VEXTRACTF64X4(U8(1), Z0, Y2)
	VCVTPS2PD(Y2, Z2)
	for c := range 5 {
		d := gen.Z(16 + c)
		VDIVPS(d, Z0, Z3)
		roundE4M3(Z3, Z4, Z5, Z21)
		VMULPS(d, Z3, Z3)
		terms(Y3, Z1, Z22)
		VADDPD(Z22, gen.Z(6+2*c), gen.Z(6+2*c))
		VEXTRACTF64X4(U8(1), Z3, Y3)
		terms(Y3, Z2, Z23)
		VADDPD(Z23, gen.Z(7+2*c), gen.Z(7+2*c))
	}
	ADDQ(Imm(64), RSI)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	for c := range 5 {
		VMOVUPD(gen.Z(6+2*c), Mem{Base: RDI, Disp: 128 * c})
		VMOVUPD(gen.Z(7+2*c), Mem{Base: RDI, Disp: 128*c + 64})
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
