// Command sqerr generates the E2M1 slice encoder and MulSlice of package kernels:
// sqerr_amd64.s and the stub declarations in sqerr_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./sqerr -out ../sqerr_amd64.s -stubs ../sqerr_stubs_amd64.go -pkg kernels
package main

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		encodeE2M1AVX512()
		mulSliceAVX512()
		mulSliceAVX2()
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

// encodeE2M1AVX512 encodes 16 values per step: the same rounding as
// the E2M1 rounding (|q| + m) − m, then the code of the rounded magnitude r: 2r below 2,
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

// mulSliceAVX512 multiplies 16 values per step by the broadcast m.
func mulSliceAVX512() { mulSlice("mulSliceAVX512", "AVX-512", 16, Z1, Z0) }

// mulSliceAVX2 multiplies 8 values per step by the broadcast m.
func mulSliceAVX2() { mulSlice("mulSliceAVX2", "AVX2", 8, Y1, Y0) }

// mulSlice writes the kernel name of dst = src·m, lanes values a step, m
// broadcast in mr and each product in p.
func mulSlice(name, isa string, lanes int, mr, p VecPhysical) {
	TEXT(name, NOSPLIT, "func(dst, src []float32, m float32)")
	Pragma("noescape")
	mask := fmt.Sprintf("len(src)&^%d", lanes-1)
	Doc(name+" is the "+isa+" kernel of the loop",
		"",
		"\tfor i, x := range src[:"+mask+"] {",
		"\t\tdst[i] = x * m",
		"\t}",
		"",
		"with len(dst) ≥ "+mask+".")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	SHRQ(Imm(uint64(bits.TrailingZeros(uint(lanes)))), RCX)
	JZ(LabelRef(name + "_done"))
	Load(Param("m"), X1)
	VBROADCASTSS(X1, mr)
	XORQ(RAX, RAX)
	Label(name + "_loop")
	VMULPS(Mem{Base: RSI, Index: RAX, Scale: 4}, mr, p)
	VMOVUPS(p, Mem{Base: RDI, Index: RAX, Scale: 4})
	ADDQ(Imm(uint64(lanes)), RAX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
