// Command bits generates the bit-mask kernels of package kernels: bits_amd64.s
// and the stub declarations in bits_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./bits -out ../bits_amd64.s -stubs ../bits_stubs_amd64.go -pkg kernels
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		packMaskAVX512()
		packMaskAVX2()
		unpackMaskAVX512()
		unpackMaskAVX2()
		popCountAVX512()
		selectMaskedAVX512()
		expandMaskedAVX512()
	})
}

func doc(lines ...string) { Doc(lines...) }

func packMaskAVX512() {
	TEXT("packMaskAVX512", NOSPLIT, "func(dst []byte, src []byte)")
	Pragma("noescape")
	doc("packMaskAVX512 is the AVX-512 kernel of packMaskGo, the loop",
		"",
		"\tfor k := range dst {",
		"\t\tvar b byte",
		"\t\tfor i, s := range src[8*k : 8*k+8] {",
		"\t\t\tb |= (s & 1) << i",
		"\t\t}",
		"\t\tdst[k] = b",
		"\t}",
		"",
		"over the first len(src)/64 groups of 64 bytes (VPTESTMB against 0x01, then KMOVQ).")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	SHRQ(U8(6), RCX)
	JZ(LabelRef("packMaskAVX512_done"))
	MOVL(U32(0x01010101), EAX)
	VMOVD(EAX, X1)
	VPBROADCASTD(X1, Z1)
	Label("packMaskAVX512_loop")
	VPTESTMB(Mem{Base: RSI}, Z1, K1)
	KMOVQ(K1, Mem{Base: RDI})
	ADDQ(U8(64), RSI)
	ADDQ(U8(8), RDI)
	DECQ(RCX)
	JNZ(LabelRef("packMaskAVX512_loop"))
	Label("packMaskAVX512_done")
	gen.End(false)
}

func packMaskAVX2() {
	TEXT("packMaskAVX2", NOSPLIT, "func(dst []byte, src []byte)")
	Pragma("noescape")
	doc("packMaskAVX2 is the AVX2 kernel of packMaskGo (see packMaskAVX512) over the first",
		"len(src)/32 groups of 32 bytes: each byte's bit 0 moved to bit 7 (VPSLLW by 7), then VPMOVMSKB.")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	SHRQ(U8(5), RCX)
	JZ(LabelRef("packMaskAVX2_done"))
	Label("packMaskAVX2_loop")
	VMOVDQU(Mem{Base: RSI}, Y0)
	VPSLLW(U8(7), Y0, Y0)
	VPMOVMSKB(Y0, EAX)
	MOVL(EAX, Mem{Base: RDI})
	ADDQ(U8(32), RSI)
	ADDQ(U8(4), RDI)
	DECQ(RCX)
	JNZ(LabelRef("packMaskAVX2_loop"))
	Label("packMaskAVX2_done")
	gen.End(false)
}

func unpackMaskAVX512() {
	TEXT("unpackMaskAVX512", NOSPLIT, "func(dst []byte, src []byte)")
	Pragma("noescape")
	doc("unpackMaskAVX512 is the AVX-512 kernel of unpackMaskGo, the loop",
		"",
		"\tfor i := range dst {",
		"\t\tdst[i] = src[i>>3] >> (i & 7) & 1",
		"\t}",
		"",
		"over the first len(dst)/64 groups of 64 bytes (KMOVQ, then a zero-masked move of bytes 0x01).")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("dst").Len(), RCX)
	SHRQ(U8(6), RCX)
	JZ(LabelRef("unpackMaskAVX512_done"))
	MOVL(U32(0x01010101), EAX)
	VMOVD(EAX, X1)
	VPBROADCASTD(X1, Z1)
	Label("unpackMaskAVX512_loop")
	KMOVQ(Mem{Base: RSI}, K1)
	VMOVDQU8_Z(Z1, K1, Z0)
	VMOVDQU8(Z0, Mem{Base: RDI})
	ADDQ(U8(8), RSI)
	ADDQ(U8(64), RDI)
	DECQ(RCX)
	JNZ(LabelRef("unpackMaskAVX512_loop"))
	Label("unpackMaskAVX512_done")
	gen.End(false)
}

func unpackMaskAVX2() {
	TEXT("unpackMaskAVX2", NOSPLIT, "func(dst []byte, src []byte)")
	Pragma("noescape")
	doc("unpackMaskAVX2 is the AVX2 kernel of unpackMaskGo (see unpackMaskAVX512) over the first",
		"len(dst)/32 groups of 32 bytes: four mask bytes broadcast, each copied to eight bytes",
		"(VPSHUFB), tested against its bit (1, 2, 4, ..., 128) and turned into 0 or 1.")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("dst").Len(), RCX)
	SHRQ(U8(5), RCX)
	JZ(LabelRef("unpackMaskAVX2_done"))
	spread := GLOBL("bitsSpread", RODATA|NOPTR)
	for i := range 32 {
		DATA(i, U8(i/8))
	}
	sel := GLOBL("bitsSelect", RODATA|NOPTR)
	for i := range 32 {
		DATA(i, U8(1<<(i%8)))
	}
	VMOVDQU(spread, Y2)
	VMOVDQU(sel, Y3)
	MOVL(U32(0x01010101), EAX)
	VMOVD(EAX, X4)
	VPBROADCASTD(X4, Y4)
	Label("unpackMaskAVX2_loop")
	VPBROADCASTD(Mem{Base: RSI}, Y0)
	VPSHUFB(Y2, Y0, Y0)
	VPAND(Y3, Y0, Y0)
	VPCMPEQB(Y3, Y0, Y0)
	VPAND(Y4, Y0, Y0)
	VMOVDQU(Y0, Mem{Base: RDI})
	ADDQ(U8(4), RSI)
	ADDQ(U8(32), RDI)
	DECQ(RCX)
	JNZ(LabelRef("unpackMaskAVX2_loop"))
	Label("unpackMaskAVX2_done")
	gen.End(false)
}

func popCountAVX512() {
	TEXT("popCountAVX512", NOSPLIT, "func(src []byte) int")
	Pragma("noescape")
	doc("popCountAVX512 is the AVX-512 (AVX512_VPOPCNTDQ) kernel of popCountGo over the first",
		"len(src)/64 groups of 64 bytes: the number of set bits.")
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	SHRQ(U8(6), RCX)
	VPXORQ(Z0, Z0, Z0)
	JZ(LabelRef("popCountAVX512_sum"))
	Label("popCountAVX512_loop")
	VPOPCNTQ(Mem{Base: RSI}, Z1)
	VPADDQ(Z1, Z0, Z0)
	ADDQ(U8(64), RSI)
	DECQ(RCX)
	JNZ(LabelRef("popCountAVX512_loop"))
	Label("popCountAVX512_sum")
	VEXTRACTI64X4(U8(1), Z0, Y1)
	VPADDQ(Y1, Y0, Y0)
	VEXTRACTI128(U8(1), Y0, X1)
	VPADDQ(X1, X0, X0)
	VPSHUFD(U8(0x4e), X0, X1)
	VPADDQ(X1, X0, X0)
	VMOVQ(X0, RAX)
	Store(RAX, ReturnIndex(0))
	gen.End(false)
}

// lowMask sets the opmask k to the low CX bits (CX ≤ 16), through AX.
func lowMask(k Register) {
	MOVL(U32(1), EAX)
	SHLL(CL, EAX)
	DECL(EAX)
	KMOVW(EAX, k)
}

func selectMaskedAVX512() {
	TEXT("selectMaskedAVX512", NOSPLIT, "func(dst, src []float32, mask []byte) int")
	Pragma("noescape")
	doc("selectMaskedAVX512 is the AVX-512 kernel of selectMaskedGo, the loop",
		"",
		"\tj := 0",
		"\tfor i, x := range src {",
		"\t\tif mask[i>>3]>>(i&7)&1 != 0 {",
		"\t\t\tdst[j] = x",
		"\t\t\tj++",
		"\t\t}",
		"\t}",
		"\treturn j",
		"",
		"over the first len(src)/16 groups of 16 elements: VPCOMPRESSD into a register, then a",
		"store of the selected count only, so dst needs room for the selected elements alone.")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), R8)
	Load(Param("mask").Base(), RDX)
	XORQ(R9, R9) // elements stored
	SHRQ(U8(4), R8)
	JZ(LabelRef("selectMaskedAVX512_done"))
	Label("selectMaskedAVX512_loop")
	MOVWLZX(Mem{Base: RDX}, EBX)
	KMOVW(EBX, K1)
	POPCNTL(EBX, ECX)
	VMOVDQU32(Mem{Base: RSI}, Z0)
	VPCOMPRESSD_Z(Z0, K1, Z1)
	lowMask(K2)
	VMOVDQU32(Z1, K2, Mem{Base: RDI})
	LEAQ(Mem{Base: RDI, Index: RCX, Scale: 4}, RDI)
	ADDQ(RCX, R9)
	ADDQ(U8(64), RSI)
	ADDQ(U8(2), RDX)
	DECQ(R8)
	JNZ(LabelRef("selectMaskedAVX512_loop"))
	Label("selectMaskedAVX512_done")
	Store(R9, ReturnIndex(0))
	gen.End(false)
}

func expandMaskedAVX512() {
	TEXT("expandMaskedAVX512", NOSPLIT, "func(dst, src []float32, mask []byte) int")
	Pragma("noescape")
	doc("expandMaskedAVX512 is the AVX-512 kernel of expandMaskedGo, the loop",
		"",
		"\tj := 0",
		"\tfor i := range dst {",
		"\t\tif mask[i>>3]>>(i&7)&1 != 0 {",
		"\t\t\tdst[i] = src[j]",
		"\t\t\tj++",
		"\t\t} else {",
		"\t\t\tdst[i] = 0",
		"\t\t}",
		"\t}",
		"\treturn j",
		"",
		"over the first len(dst)/16 groups of 16 elements: a masked load of the selected count",
		"only (src needs no room beyond the elements used), then VPEXPANDD.")
	Load(Param("dst").Base(), RDI)
	Load(Param("dst").Len(), R8)
	Load(Param("src").Base(), RSI)
	Load(Param("mask").Base(), RDX)
	XORQ(R9, R9) // elements used
	SHRQ(U8(4), R8)
	JZ(LabelRef("expandMaskedAVX512_done"))
	Label("expandMaskedAVX512_loop")
	MOVWLZX(Mem{Base: RDX}, EBX)
	KMOVW(EBX, K1)
	POPCNTL(EBX, ECX)
	lowMask(K2)
	VMOVDQU32_Z(Mem{Base: RSI}, K2, Z0)
	VPEXPANDD_Z(Z0, K1, Z1)
	VMOVDQU32(Z1, Mem{Base: RDI})
	LEAQ(Mem{Base: RSI, Index: RCX, Scale: 4}, RSI)
	ADDQ(RCX, R9)
	ADDQ(U8(64), RDI)
	ADDQ(U8(2), RDX)
	DECQ(R8)
	JNZ(LabelRef("expandMaskedAVX512_loop"))
	Label("expandMaskedAVX512_done")
	Store(R9, ReturnIndex(0))
	gen.End(false)
}
