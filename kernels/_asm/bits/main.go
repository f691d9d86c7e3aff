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

// bytesKernel emits a kernel func(dst []byte, src []byte) that loads the
// bases of dst and src into DI and SI and the length of count into CX,
// shifted right by log2 (the number of steps), runs setup, then body once a
// step, after which SI moves by in and DI by out bytes.
func bytesKernel(name, count string, log2 uint8, in, out int, doc []string, setup, body func()) {
	TEXT(name, NOSPLIT, "func(dst []byte, src []byte)")
	Pragma("noescape")
	Doc(doc...)
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param(count).Len(), RCX)
	SHRQ(U8(log2), RCX)
	JZ(LabelRef(name + "_done"))
	setup()
	Label(name + "_loop")
	body()
	ADDQ(U8(in), RSI)
	ADDQ(U8(out), RDI)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	gen.End(false)
}

// ones fills v with bytes 0x01 (through AX and v's xmm).
func ones(v VecPhysical) { gen.Broadcast32(0x01010101, v, RAX, v.AsX().(VecPhysical)) }

func packMaskAVX512() {
	bytesKernel("packMaskAVX512", "src", 6, 64, 8, []string{
		"packMaskAVX512 is the AVX-512 kernel of packMaskGo, the loop",
		"",
		"\tfor k := range dst {",
		"\t\tvar b byte",
		"\t\tfor i, s := range src[8*k : 8*k+8] {",
		"\t\t\tb |= (s & 1) << i",
		"\t\t}",
		"\t\tdst[k] = b",
		"\t}",
		"",
		"over the first len(src)/64 groups of 64 bytes (VPTESTMB against 0x01, then KMOVQ).",
	}, func() {
		ones(Z1)
	}, func() {
		VPTESTMB(Mem{Base: RSI}, Z1, K1)
		KMOVQ(K1, Mem{Base: RDI})
	})
}

func packMaskAVX2() {
	bytesKernel("packMaskAVX2", "src", 5, 32, 4, []string{
		"packMaskAVX2 is the AVX2 kernel of packMaskGo (see packMaskAVX512) over the first",
		"len(src)/32 groups of 32 bytes: each byte's bit 0 moved to bit 7 (VPSLLW by 7), then VPMOVMSKB.",
	}, func() {}, func() {
		VMOVDQU(Mem{Base: RSI}, Y0)
		VPSLLW(U8(7), Y0, Y0)
		VPMOVMSKB(Y0, EAX)
		MOVL(EAX, Mem{Base: RDI})
	})
}

func unpackMaskAVX512() {
	bytesKernel("unpackMaskAVX512", "dst", 6, 8, 64, []string{
		"unpackMaskAVX512 is the AVX-512 kernel of unpackMaskGo, the loop",
		"",
		"\tfor i := range dst {",
		"\t\tdst[i] = src[i>>3] >> (i & 7) & 1",
		"\t}",
		"",
		"over the first len(dst)/64 groups of 64 bytes (KMOVQ, then a zero-masked move of bytes 0x01).",
	}, func() {
		ones(Z1)
	}, func() {
		KMOVQ(Mem{Base: RSI}, K1)
		VMOVDQU8_Z(Z1, K1, Z0)
		VMOVDQU8(Z0, Mem{Base: RDI})
	})
}

func unpackMaskAVX2() {
	bytesKernel("unpackMaskAVX2", "dst", 5, 4, 32, []string{
		"unpackMaskAVX2 is the AVX2 kernel of unpackMaskGo (see unpackMaskAVX512) over the first",
		"len(dst)/32 groups of 32 bytes: four mask bytes broadcast, each copied to eight bytes",
		"(VPSHUFB), tested against its bit (1, 2, 4, ..., 128) and turned into 0 or 1.",
	}, func() {
		var spread, sel [32]byte
		for i := range 32 {
			spread[i], sel[i] = byte(i/8), byte(1<<(i%8))
		}
		VMOVDQU(gen.Bytes("bitsSpread", spread[:]), Y2)
		VMOVDQU(gen.Bytes("bitsSelect", sel[:]), Y3)
		ones(Y4)
	}, func() {
		VPBROADCASTD(Mem{Base: RSI}, Y0)
		VPSHUFB(Y2, Y0, Y0)
		VPAND(Y3, Y0, Y0)
		VPCMPEQB(Y3, Y0, Y0)
		VPAND(Y4, Y0, Y0)
		VMOVDQU(Y0, Mem{Base: RDI})
	})
}

func popCountAVX512() {
	TEXT("popCountAVX512", NOSPLIT, "func(src []byte) int")
	Pragma("noescape")
	Doc("popCountAVX512 is the AVX-512 (AVX512_VPOPCNTDQ) kernel of popCountGo over the first",
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

// maskedKernel emits a kernel func(dst, src []float32, mask []byte) int that
// walks the elements of count 16 at a time: R8 counts the steps, DX walks
// mask, two bytes a step, whose bits go to K1 and their number to CX, and R9
// sums those numbers and is returned. DI and SI hold the bases of dst and
// src; body moves one step's elements and advances the side that moves by CX
// elements, and the other, fixed, moves by 16 elements here.
func maskedKernel(name, count string, fixed GPPhysical, doc []string, body func()) {
	TEXT(name, NOSPLIT, "func(dst, src []float32, mask []byte) int")
	Pragma("noescape")
	Doc(doc...)
	Load(Param("dst").Base(), RDI)
	if count == "dst" {
		Load(Param("dst").Len(), R8)
	}
	Load(Param("src").Base(), RSI)
	if count == "src" {
		Load(Param("src").Len(), R8)
	}
	Load(Param("mask").Base(), RDX)
	XORQ(R9, R9) // elements moved
	SHRQ(U8(4), R8)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	MOVWLZX(Mem{Base: RDX}, EBX)
	KMOVW(EBX, K1)
	POPCNTL(EBX, ECX)
	body()
	ADDQ(RCX, R9)
	ADDQ(U8(64), fixed)
	ADDQ(U8(2), RDX)
	DECQ(R8)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	Store(R9, ReturnIndex(0))
	gen.End(false)
}

func selectMaskedAVX512() {
	maskedKernel("selectMaskedAVX512", "src", RSI, []string{
		"selectMaskedAVX512 is the AVX-512 kernel of selectMaskedGo, the loop",
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
		"store of the selected count only, so dst needs room for the selected elements alone.",
	}, func() {
		VMOVDQU32(Mem{Base: RSI}, Z0)
		VPCOMPRESSD_Z(Z0, K1, Z1)
		gen.LowLanes(K2)
		VMOVDQU32(Z1, K2, Mem{Base: RDI})
		LEAQ(Mem{Base: RDI, Index: RCX, Scale: 4}, RDI)
	})
}

func expandMaskedAVX512() {
	maskedKernel("expandMaskedAVX512", "dst", RDI, []string{
		"expandMaskedAVX512 is the AVX-512 kernel of expandMaskedGo, the loop",
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
		"only (src needs no room beyond the elements used), then VPEXPANDD.",
	}, func() {
		gen.LowLanes(K2)
		VMOVDQU32_Z(Mem{Base: RSI}, K2, Z0)
		VPEXPANDD_Z(Z0, K1, Z1)
		VMOVDQU32(Z1, Mem{Base: RDI})
		LEAQ(Mem{Base: RSI, Index: RCX, Scale: 4}, RSI)
	})
}
