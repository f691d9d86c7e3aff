// Command sqerr generates the scale-search kernels of package kernels:
// sqerr_amd64.s and the stub declarations in sqerr_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./sqerr -out ../sqerr_amd64.s -stubs ../sqerr_stubs_amd64.go -pkg kernels
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		sqErrE2M1x3AVX512()
		sqErrE2M1x3x16AVX512()
		encodeE2M1AVX512()
		mulSliceAVX512()
	})
}

// The magic numbers 1.5·2^23·s that round |q| to a multiple of s by
// (|q| + m) − m, s being the E2M1 step of |q|'s range: 0.5 below 2, 1 below 4,
// 2 above.
const (
	magicHalf = (149 << 23) | 0x400000 // 1.5·2^22
	magicOne  = (150 << 23) | 0x400000 // 1.5·2^23
	magicTwo  = (151 << 23) | 0x400000 // 1.5·2^24
	two       = 128 << 23
	four      = 129 << 23
	six       = (129 << 23) | 0x400000
	absBits   = 0x7fffffff
)

// sqErrE2M1x3AVX512 runs 8 blocks at once, one per lane: the three
// candidates' float32 multipliers and decode factors of the 8 blocks sit in
// Y0–Y5, the float64 sums in Z6–Z8; element j of the 8 blocks is gathered
// (the lanes' offsets k·blockLen·4 in Y9) and each candidate's error term is
// added to its lane, so every lane sums its block in index order.
func sqErrE2M1x3AVX512() {
	name := "sqErrE2M1x3AVX512"
	TEXT(name, NOSPLIT, "func(errs []float64, x []float32, mul, dmul []float32, blockLen, nb, groups int)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of the loop",
		"",
		"\tfor b := range groups * 8 {",
		"\t\tfor c := range 3 {",
		"\t\t\tm, dm := mul[c*nb+b], dmul[c*nb+b]",
		"\t\t\tvar sum float64",
		"\t\t\tfor _, v := range x[b*blockLen : (b+1)*blockLen] {",
		"\t\t\t\te := float64(v) - float64(float32(RoundE2M1(float32(v*m))*dm))",
		"\t\t\t\tsum += float64(e * e)",
		"\t\t\t}",
		"\t\t\terrs[c*nb+b] = sum",
		"\t\t}",
		"\t}",
		"",
		"with blockLen ≥ 1, groups·8 ≤ nb, len(x) ≥ nb·blockLen < 2^29 and",
		"len(mul), len(dmul), len(errs) ≥ 3·nb. Lane k of a vector is block",
		"8g+k; E2M1 rounding adds and subtracts 1.5·2^23·s (s the E2M1 step of",
		"|q|'s range, so the float32 addition rounds to a multiple of s, ties to",
		"the even code), clamps to 6 (NaN included) and puts q's sign back. The",
		"products are not fused, as in the loop.")
	Load(Param("errs").Base(), RDI)
	Load(Param("x").Base(), RSI)
	Load(Param("mul").Base(), R8)
	Load(Param("dmul").Base(), R9)
	Load(Param("blockLen"), R10)
	Load(Param("nb"), R11)
	Load(Param("groups"), RCX)
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))

	// Constants: Y20 abs mask, Y21–Y23 magics, Y24 two, Y25 four, Y26 six.
	for i, c := range []uint32{absBits, magicHalf, magicOne, magicTwo, two, four, six} {
		gen.Broadcast32(c, ymm(20+i), RAX, X31)
	}
	// Y9: lane offsets k·blockLen·4 bytes.
	MOVQ(R10, RAX)
	SHLQ(Imm(2), RAX)
	VMOVD(EAX, X10)
	VPBROADCASTD(X10, Y10)
	MOVL(U32(0x03020100), EAX)
	VMOVD(EAX, X9)
	MOVL(U32(0x07060504), EAX)
	VPINSRD(Imm(1), EAX, X9, X9)
	VPMOVZXBD(X9, Y9)
	VPMULLD(Y10, Y9, Y9)
	// R12: 8·blockLen·4 bytes, the step from one group to the next in x;
	// R13: nb·4 bytes, the stride of the candidates in mul and dmul; R14:
	// nb·8 bytes, in errs.
	MOVQ(R10, R12)
	SHLQ(Imm(5), R12)
	MOVQ(R11, R13)
	SHLQ(Imm(2), R13)
	MOVQ(R11, R14)
	SHLQ(Imm(3), R14)

	Label(name + "_group")
	for c := 0; c < 3; c++ {
		m, d := Mem{Base: R8}, Mem{Base: R9}
		if c > 0 {
			m.Index, m.Scale = R13, uint8(c)
			d.Index, d.Scale = R13, uint8(c)
		}
		VMOVUPS(m, gen.Y(c))
		VMOVUPS(d, gen.Y(3+c))
	}
	VPXORQ(Z6, Z6, Z6)
	VPXORQ(Z7, Z7, Z7)
	VPXORQ(Z8, Z8, Z8)
	MOVQ(RSI, RBX)
	MOVQ(R10, RDX)
	Label(name + "_elem")
	KXNORW(K1, K1, K1)
	VGATHERDPS(Mem{Base: RBX, Index: Y9, Scale: 1}, K1, Y11) // x of the 8 blocks
	VCVTPS2PD(Y11, Z12)
	for c := 0; c < 3; c++ {
		VMULPS(gen.Y(c), Y11, Y13)      // q
		VANDPS(Y20, Y13, Y14)           // |q|
		VCMPPS(Imm(0x1d), Y24, Y14, K2) // |q| ≥ 2
		VCMPPS(Imm(0x1d), Y25, Y14, K3) // |q| ≥ 4
		VBLENDMPS(Y22, Y21, K2, Y15)
		VMOVAPS(Y23, K3, Y15)
		VADDPS(Y15, Y14, Y14)
		VSUBPS(Y15, Y14, Y14)
		VMINPS(Y26, Y14, Y14)                // min(r, 6); 6 where r is NaN
		VPTERNLOGD(Imm(0xd8), Y20, Y14, Y13) // q's sign, r's magnitude
		VMULPS(gen.Y(3+c), Y13, Y13)
		VCVTPS2PD(Y13, Z16)
		VSUBPD(Z16, Z12, Z16)
		VMULPD(Z16, Z16, Z16)
		VADDPD(Z16, gen.Z(6+c), gen.Z(6+c))
	}
	ADDQ(Imm(4), RBX)
	DECQ(RDX)
	JNZ(LabelRef(name + "_elem"))
	MOVQ(RDI, RBX)
	for c := 0; c < 3; c++ {
		VMOVUPD(gen.Z(6+c), Mem{Base: RBX})
		if c < 2 {
			ADDQ(R14, RBX)
		}
	}
	ADDQ(Imm(64), RDI)
	ADDQ(Imm(32), R8)
	ADDQ(Imm(32), R9)
	ADDQ(R12, RSI)
	DECQ(RCX)
	JNZ(LabelRef(name + "_group"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// ymm returns the ymm register of number i (0–31).
func ymm(i int) VecPhysical { return gen.Z(i).AsY().(VecPhysical) }

// encodeE2M1AVX512 encodes 16 values per step: the same rounding as
// sqErrE2M1x3AVX512, then the code of the rounded magnitude r: 2r below 2,
// else the float32 bits of r shifted right by 22, less 252 (2 → 4, 3 → 5,
// 4 → 6, 6 → 7), and the sign as bit 3.
func encodeE2M1AVX512() {
	name := "encodeE2M1AVX512"
	TEXT(name, NOSPLIT, "func(dst []uint8, src []float32) int")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of the loop",
		"",
		"\tfor i, x := range src[:len(src)&^15] {",
		"\t\tif x != x {",
		"\t\t\treturn i &^ 15",
		"\t\t}",
		"\t\tb := math.Float32bits(x)",
		"\t\tdst[i] = uint8(e2m1Code(min(int32(b&0x7fffffff), e2m1KeyHi), &mx.e2m1Key) | b>>31<<3)",
		"\t}",
		"\treturn len(src) &^ 15",
		"",
		"with len(dst) ≥ len(src): it stops before the first 16 values that hold a",
		"NaN and returns how many values it encoded.")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	SHRQ(Imm(4), RCX)
	XORQ(RAX, RAX)
	for i, c := range []uint32{absBits, magicHalf, magicOne, magicTwo, two, four, six, 252, 8} {
		gen.Broadcast32(c, gen.Z(20+i), RDX, X31)
	}
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	VMOVUPS(Mem{Base: RSI, Index: RAX, Scale: 4}, Z0)
	VCMPPS(Imm(3), Z0, Z0, K1) // unordered: NaN
	KORTESTW(K1, K1)
	JNZ(LabelRef(name + "_done"))
	VANDPS(Z20, Z0, Z1)            // |x|
	VCMPPS(Imm(0x1d), Z24, Z1, K2) // |x| ≥ 2
	VCMPPS(Imm(0x1d), Z25, Z1, K3) // |x| ≥ 4
	VBLENDMPS(Z22, Z21, K2, Z2)
	VMOVAPS(Z23, K3, Z2)
	VADDPS(Z2, Z1, Z1)
	VSUBPS(Z2, Z1, Z1)
	VMINPS(Z26, Z1, Z1) // r
	VADDPS(Z1, Z1, Z3)
	VCVTTPS2DQ(Z3, Z3) // 2r
	VPSRLD(Imm(22), Z1, Z4)
	VPSUBD(Z27, Z4, K2, Z3) // bits(r)>>22 − 252 where |x| ≥ 2
	VPSRLD(Imm(28), Z0, Z5)
	VPTERNLOGD(Imm(0xf8), Z28, Z5, Z3) // code | sign>>28 & 8
	VPMOVDB(Z3, Mem{Base: RDI, Index: RAX, Scale: 1})
	ADDQ(Imm(16), RAX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	Store(RAX, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// sqErrE2M1x3x16AVX512 is sqErrE2M1x3AVX512 on 16 blocks per pass: the
// rounding runs on 16 float32 lanes (Z0–Z5 hold the candidates' multipliers
// and decode factors), the sums in two float64 vectors per candidate
// (Z6–Z11: blocks 0–7 and 8–15 of the group).
func sqErrE2M1x3x16AVX512() {
	name := "sqErrE2M1x3x16AVX512"
	iota16 := gen.Table("sqerrIota16", []uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	TEXT(name, NOSPLIT, "func(errs []float64, x []float32, mul, dmul []float32, blockLen, nb, groups int)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of the loop",
		"",
		"\tfor b := range groups * 16 {",
		"\t\tfor c := range 3 {",
		"\t\t\tm, dm := mul[c*nb+b], dmul[c*nb+b]",
		"\t\t\tvar sum float64",
		"\t\t\tfor _, v := range x[b*blockLen : (b+1)*blockLen] {",
		"\t\t\t\te := float64(v) - float64(float32(RoundE2M1(float32(v*m))*dm))",
		"\t\t\t\tsum += float64(e * e)",
		"\t\t\t}",
		"\t\t\terrs[c*nb+b] = sum",
		"\t\t}",
		"\t}",
		"",
		"with blockLen ≥ 1, groups·16 ≤ nb, len(x) ≥ nb·blockLen, 16·blockLen < 2^29",
		"and len(mul), len(dmul), len(errs) ≥ 3·nb; the rounding is",
		"sqErrE2M1x3AVX512's. The products are not fused, as in the loop.")
	Load(Param("errs").Base(), RDI)
	Load(Param("x").Base(), RSI)
	Load(Param("mul").Base(), R8)
	Load(Param("dmul").Base(), R9)
	Load(Param("blockLen"), R10)
	Load(Param("nb"), R11)
	Load(Param("groups"), RCX)
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	for i, c := range []uint32{absBits, magicHalf, magicOne, magicTwo, two, four, six} {
		gen.Broadcast32(c, gen.Z(20+i), RAX, X31)
	}
	// Z12: lane offsets k·blockLen·4 bytes.
	MOVQ(R10, RAX)
	SHLQ(Imm(2), RAX)
	VMOVD(EAX, X13)
	VPBROADCASTD(X13, Z13)
	VPMULLD(iota16, Z13, Z12)
	// R12: 16·blockLen·4 bytes, the step from one group to the next in x;
	// R13: nb·4 bytes, the stride of the candidates in mul and dmul; R14:
	// nb·8 bytes, in errs.
	MOVQ(R10, R12)
	SHLQ(Imm(6), R12)
	MOVQ(R11, R13)
	SHLQ(Imm(2), R13)
	MOVQ(R11, R14)
	SHLQ(Imm(3), R14)

	Label(name + "_group")
	for c := 0; c < 3; c++ {
		m, d := Mem{Base: R8}, Mem{Base: R9}
		if c > 0 {
			m.Index, m.Scale = R13, uint8(c)
			d.Index, d.Scale = R13, uint8(c)
		}
		VMOVUPS(m, gen.Z(c))
		VMOVUPS(d, gen.Z(3+c))
	}
	for i := 6; i < 12; i++ {
		VPXORQ(gen.Z(i), gen.Z(i), gen.Z(i))
	}
	MOVQ(RSI, RBX)
	MOVQ(R10, RDX)
	Label(name + "_elem")
	KXNORW(K1, K1, K1)
	VGATHERDPS(Mem{Base: RBX, Index: Z12, Scale: 1}, K1, Z13) // x of the 16 blocks
	VCVTPS2PD(Y13, Z14)
	VEXTRACTF64X4(Imm(1), Z13, Y15)
	VCVTPS2PD(Y15, Z15)
	for c := 0; c < 3; c++ {
		VMULPS(gen.Z(c), Z13, Z16)      // q
		VANDPS(Z20, Z16, Z17)           // |q|
		VCMPPS(Imm(0x1d), Z24, Z17, K2) // |q| ≥ 2
		VCMPPS(Imm(0x1d), Z25, Z17, K3) // |q| ≥ 4
		VBLENDMPS(Z22, Z21, K2, Z18)
		VMOVAPS(Z23, K3, Z18)
		VADDPS(Z18, Z17, Z17)
		VSUBPS(Z18, Z17, Z17)
		VMINPS(Z26, Z17, Z17)                // min(r, 6); 6 where r is NaN
		VPTERNLOGD(Imm(0xd8), Z20, Z17, Z16) // q's sign, r's magnitude
		VMULPS(gen.Z(3+c), Z16, Z16)
		VCVTPS2PD(Y16, Z27)
		VEXTRACTF64X4(Imm(1), Z16, Y28)
		VCVTPS2PD(Y28, Z28)
		VSUBPD(Z27, Z14, Z27)
		VSUBPD(Z28, Z15, Z28)
		VMULPD(Z27, Z27, Z27)
		VMULPD(Z28, Z28, Z28)
		VADDPD(Z27, gen.Z(6+2*c), gen.Z(6+2*c))
		VADDPD(Z28, gen.Z(7+2*c), gen.Z(7+2*c))
	}
	ADDQ(Imm(4), RBX)
	DECQ(RDX)
	JNZ(LabelRef(name + "_elem"))
	MOVQ(RDI, RBX)
	for c := 0; c < 3; c++ {
		VMOVUPD(gen.Z(6+2*c), Mem{Base: RBX})
		VMOVUPD(gen.Z(7+2*c), Mem{Base: RBX, Disp: 64})
		if c < 2 {
			ADDQ(R14, RBX)
		}
	}
	ADDQ(Imm(128), RDI)
	ADDQ(Imm(64), R8)
	ADDQ(Imm(64), R9)
	ADDQ(R12, RSI)
	DECQ(RCX)
	JNZ(LabelRef(name + "_group"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// mulSliceAVX512 multiplies 16 values per step by the broadcast m.
func mulSliceAVX512() {
	name := "mulSliceAVX512"
	TEXT(name, NOSPLIT, "func(dst, src []float32, m float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of the loop",
		"",
		"\tfor i, x := range src[:len(src)&^15] {",
		"\t\tdst[i] = x * m",
		"\t}",
		"",
		"with len(dst) ≥ len(src)&^15.")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	SHRQ(Imm(4), RCX)
	JZ(LabelRef(name + "_done"))
	Load(Param("m"), X1)
	VBROADCASTSS(X1, Z1)
	XORQ(RAX, RAX)
	Label(name + "_loop")
	VMULPS(Mem{Base: RSI, Index: RAX, Scale: 4}, Z1, Z0)
	VMOVUPS(Z0, Mem{Base: RDI, Index: RAX, Scale: 4})
	ADDQ(Imm(16), RAX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
