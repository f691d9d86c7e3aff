// Command blend generates the mask-blend kernels of package kernels:
// blend_amd64.s and the stub declarations in blend_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./blend -out ../blend_amd64.s -stubs ../blend_stubs_amd64.go -pkg kernels
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		blendAVX512(false)
		blendAVX512(true)
		blendAVX2(false)
		blendAVX2(true)
	})
}

var blendLoop = []string{
	"\tfor i := range dst {",
	"\t\tif mask[i>>3]>>(i&7)&1 != 0 {",
	"\t\t\tdst[i] = a[i]",
	"\t\t} else {",
	"\t\t\tdst[i] = b[i]",
	"\t\t}",
	"\t}",
}

var zeroLoop = []string{
	"\tfor i := range dst {",
	"\t\tif mask[i>>3]>>(i&7)&1 != 0 {",
	"\t\t\tdst[i] = src[i]",
	"\t\t} else {",
	"\t\t\tdst[i] = 0",
	"\t\t}",
	"\t}",
}

// kernel declares the kernel of isa: blendMasked (zero false) or zeroMasked.
// It returns the kernel's name and the name of its Go reference.
func kernel(zero bool, isa string) (name, ref string) {
	name, sig, ref := "blendMasked"+isa, "func(dst, a, b []float32, mask []byte)", "blendMaskedGo"
	if zero {
		name, sig, ref = "zeroMasked"+isa, "func(dst, src []float32, mask []byte)", "zeroMaskedGo"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	return name, ref
}

// args loads the arguments: dst into DI, len(dst) into CX, mask into DX, and
// src into SI (zero) or a into SI and b into R8.
func args(zero bool) {
	Load(Param("dst").Base(), RDI)
	Load(Param("dst").Len(), RCX)
	Load(Param("mask").Base(), RDX)
	if zero {
		Load(Param("src").Base(), RSI)
	} else {
		Load(Param("a").Base(), RSI)
		Load(Param("b").Base(), R8)
	}
}

// next moves the pointers past a round of n elements (n/8 mask bytes), loops
// while CX, the rounds left, is not zero, and ends the kernel.
func next(name string, zero bool, n int) {
	ADDQ(U32(4*n), RSI)
	if !zero {
		ADDQ(U32(4*n), R8)
	}
	ADDQ(U32(4*n), RDI)
	ADDQ(U8(n/8), RDX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	gen.End(false)
}

// blendAVX512 writes blendMaskedAVX512 (zero false) or zeroMaskedAVX512: 64
// elements (8 mask bytes) a round, 16 per opmask, the kept floats merged
// into b (or into zeros) by a masked load.
func blendAVX512(zero bool) {
	name, ref := kernel(zero, "AVX512")
	loop, into := blendLoop, "a copy of b (a merge-masked load)"
	if zero {
		loop, into = zeroLoop, "zeros (a zero-masked load)"
	}
	doc := append([]string{fmt.Sprintf("%s is the AVX-512 kernel of %s, the loop", name, ref), ""}, loop...)
	Doc(append(doc, "",
		"over the first len(dst)/64 groups of 64 elements: each 16 bits of mask an opmask, the",
		"kept floats loaded under it into "+into+".")...)
	args(zero)
	SHRQ(U8(6), RCX)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	for j := range 4 {
		KMOVW(Mem{Base: RDX, Disp: 2 * j}, gen.K(1+j))
	}
	for j := range 4 {
		if zero {
			VMOVUPS_Z(Mem{Base: RSI, Disp: 64 * j}, gen.K(1+j), gen.Z(j))
		} else {
			VMOVUPS(Mem{Base: R8, Disp: 64 * j}, gen.Z(j))
			VMOVUPS(Mem{Base: RSI, Disp: 64 * j}, gen.K(1+j), gen.Z(j))
		}
	}
	for j := range 4 {
		VMOVUPS(gen.Z(j), Mem{Base: RDI, Disp: 64 * j})
	}
	next(name, zero, 64)
}

// blendAVX2 writes blendMaskedAVX2 (zero false) or zeroMaskedAVX2: 32
// elements (4 mask bytes) a round, each mask byte broadcast to eight lanes,
// tested against its lane's bit (1, 2, ..., 128) and compared into a lane mask
// that VBLENDVPS (or VANDPS) applies.
func blendAVX2(zero bool) {
	name, ref := kernel(zero, "AVX2")
	twin, how := "blendMaskedAVX512", "VBLENDVPS between a and b"
	if zero {
		twin, how = "zeroMaskedAVX512", "VANDPS with src"
	}
	Doc(fmt.Sprintf("%s is the AVX2 kernel of %s (see %s) over the first", name, ref, twin),
		"len(dst)/32 groups of 32 elements: each mask byte broadcast to eight lanes, tested",
		"against the lane's bit (1, 2, ..., 128) into a lane mask, then "+how+".")
	args(zero)
	SHRQ(U8(5), RCX)
	JZ(LabelRef(name + "_done"))
	lanes := gen.Table(name+"Bits", []uint32{1, 2, 4, 8, 16, 32, 64, 128})
	VMOVDQU(lanes, Y15)
	Label(name + "_loop")
	for j := range 4 {
		VPBROADCASTB(Mem{Base: RDX, Disp: j}, gen.Y(j))
		VPAND(Y15, gen.Y(j), gen.Y(j))
		VPCMPEQD(Y15, gen.Y(j), gen.Y(j))
	}
	for j := range 4 {
		if zero {
			VANDPS(Mem{Base: RSI, Disp: 32 * j}, gen.Y(j), gen.Y(j))
		} else {
			VMOVUPS(Mem{Base: R8, Disp: 32 * j}, Y8)
			VBLENDVPS(gen.Y(j), Mem{Base: RSI, Disp: 32 * j}, Y8, gen.Y(j))
		}
		VMOVUPS(gen.Y(j), Mem{Base: RDI, Disp: 32 * j})
	}
	next(name, zero, 32)
}
