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
	ConstraintExpr(gen.BuildConstraint)
	blendAVX512(false)
	blendAVX512(true)
	blendAVX2(false)
	blendAVX2(true)
	Generate()
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

// blendAVX512 writes blendMaskedAVX512 (zero false) or zeroMaskedAVX512: 64
// elements (8 mask bytes) a round, 16 per opmask, the kept floats merged
// into b (or into zeros) by a masked load.
func blendAVX512(zero bool) {
	name, sig, ref := "blendMaskedAVX512", "func(dst, a, b []float32, mask []byte)", "blendMaskedGo"
	loop := blendLoop
	if zero {
		name, sig, ref = "zeroMaskedAVX512", "func(dst, src []float32, mask []byte)", "zeroMaskedGo"
		loop = zeroLoop
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	doc := append([]string{fmt.Sprintf("%s is the AVX-512 kernel of %s, the loop", name, ref), ""}, loop...)
	Doc(append(doc, "",
		"over the first len(dst)/64 groups of 64 elements: each 16 bits of mask an opmask, the",
		"kept floats loaded under it into "+map[bool]string{false: "a copy of b (a merge-masked load)", true: "zeros (a zero-masked load)"}[zero]+".")...)
	Load(Param("dst").Base(), RDI)
	Load(Param("dst").Len(), RCX)
	Load(Param("mask").Base(), RDX)
	if zero {
		Load(Param("src").Base(), RSI)
	} else {
		Load(Param("a").Base(), RSI)
		Load(Param("b").Base(), R8)
	}
	SHRQ(U8(6), RCX)
	JZ(LabelRef(name + "_done"))
	ks := []Register{K1, K2, K3, K4}
	zs := []VecPhysical{Z0, Z1, Z2, Z3}
	Label(name + "_loop")
	for j := range 4 {
		KMOVW(Mem{Base: RDX, Disp: 2 * j}, ks[j])
	}
	for j := range 4 {
		if zero {
			VMOVUPS_Z(Mem{Base: RSI, Disp: 64 * j}, ks[j], zs[j])
		} else {
			VMOVUPS(Mem{Base: R8, Disp: 64 * j}, zs[j])
			VMOVUPS(Mem{Base: RSI, Disp: 64 * j}, ks[j], zs[j])
		}
	}
	for j := range 4 {
		VMOVUPS(zs[j], Mem{Base: RDI, Disp: 64 * j})
	}
	ADDQ(U32(256), RSI)
	if !zero {
		ADDQ(U32(256), R8)
	}
	ADDQ(U32(256), RDI)
	ADDQ(U8(8), RDX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// blendAVX2 writes blendMaskedAVX2 (zero false) or zeroMaskedAVX2: 32
// elements (4 mask bytes) a round, each mask byte broadcast to eight lanes,
// tested against its lane's bit (1, 2, ..., 128) and compared into a lane mask
// that VBLENDVPS (or VANDPS) applies.
func blendAVX2(zero bool) {
	name, sig, ref := "blendMaskedAVX2", "func(dst, a, b []float32, mask []byte)", "blendMaskedGo"
	how := "VBLENDVPS between a and b"
	if zero {
		name, sig, ref = "zeroMaskedAVX2", "func(dst, src []float32, mask []byte)", "zeroMaskedGo"
		how = "VANDPS with src"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s is the AVX2 kernel of %s (see %s) over the first", name, ref, map[bool]string{false: "blendMaskedAVX512", true: "zeroMaskedAVX512"}[zero]),
		"len(dst)/32 groups of 32 elements: each mask byte broadcast to eight lanes, tested",
		"against the lane's bit (1, 2, ..., 128) into a lane mask, then "+how+".")
	Load(Param("dst").Base(), RDI)
	Load(Param("dst").Len(), RCX)
	Load(Param("mask").Base(), RDX)
	if zero {
		Load(Param("src").Base(), RSI)
	} else {
		Load(Param("a").Base(), RSI)
		Load(Param("b").Base(), R8)
	}
	SHRQ(U8(5), RCX)
	JZ(LabelRef(name + "_done"))
	lanes := gen.Table(name+"Bits", []uint32{1, 2, 4, 8, 16, 32, 64, 128})
	VMOVDQU(lanes, Y15)
	ms := []VecPhysical{Y0, Y1, Y2, Y3}
	Label(name + "_loop")
	for j := range 4 {
		VPBROADCASTB(Mem{Base: RDX, Disp: j}, ms[j])
		VPAND(Y15, ms[j], ms[j])
		VPCMPEQD(Y15, ms[j], ms[j])
	}
	for j := range 4 {
		if zero {
			VANDPS(Mem{Base: RSI, Disp: 32 * j}, ms[j], ms[j])
		} else {
			VMOVUPS(Mem{Base: R8, Disp: 32 * j}, Y8)
			VBLENDVPS(ms[j], Mem{Base: RSI, Disp: 32 * j}, Y8, ms[j])
		}
		VMOVUPS(ms[j], Mem{Base: RDI, Disp: 32 * j})
	}
	ADDQ(U32(128), RSI)
	if !zero {
		ADDQ(U32(128), R8)
	}
	ADDQ(U32(128), RDI)
	ADDQ(U8(4), RDX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
