// Command reduce generates the block-amax kernels of package kernels:
// reduce_amd64.s and the stub declarations in reduce_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./reduce -out ../reduce_amd64.s -stubs ../reduce_stubs_amd64.go -pkg kernels
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
		iota8 := gen.Table("amaxIota8", []uint32{0, 1, 2, 3, 4, 5, 6, 7})
		generalAVX512(false)
		generalAVX512(true)
		generalAVX2(iota8, false)
		generalAVX2(iota8, true)
		idx := gen.TreeIndexes("amaxTree")
		treeAVX512(16, idx)
		treeAVX512(32, idx)
		perm := gen.Perm8("amaxTreePerm8")
		treeAVX2(16, perm)
		treeAVX2(32, perm)
	})
}

// generalAVX512 emits absMaxBlocks[Masked]AVX512 for any block size: per
// block, 64 floats per step in four accumulators, then 16 at a time, then a
// masked load of the last 1..15.
func generalAVX512(masked bool) {
	name := "absMaxBlocksAVX512"
	sig := "func(dst []uint32, src []float32, block int)"
	if masked {
		name = "absMaxBlocksMaskedAVX512"
		sig = "func(dst []uint32, src []float32, keep []bool, block int)"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	genDoc(name, "AVX-512", masked)
	Load(Param("dst").Base(), RDI)
	Load(Param("dst").Len(), R8)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), R9)
	Load(Param("block"), R10)
	if masked {
		Load(Param("keep").Base(), RDX)
		VPCMPEQD(X15, X15, X15) // all ones: VPTESTMB against it tests each keep byte
	}
	gen.Broadcast32(0x7fffffff, Z31, RAX, X4)
	l := func(s string) string { return name + "_" + s }
	TESTQ(R8, R8)
	JZ(LabelRef(l("done")))

	Label(l("block"))
	// CX = min(block, remaining)
	MOVQ(R10, RCX)
	CMPQ(R9, R10)
	CMOVQLT(R9, RCX)
	SUBQ(RCX, R9)
	for i := range 4 {
		z := gen.Z(i)
		VPXORD(z, z, z)
	}
	CMPQ(RCX, Imm(64))
	JB(LabelRef(l("by16")))

	Label(l("by64"))
	for i := range 4 {
		loadAbs512(i, masked, gen.Z(4+i), gen.K(1+i))
	}
	for i := range 4 {
		VPMAXUD(gen.Z(4+i), gen.Z(i), gen.Z(i))
	}
	ADDQ(U32(256), RSI)
	if masked {
		ADDQ(Imm(64), RDX)
	}
	SUBQ(Imm(64), RCX)
	CMPQ(RCX, Imm(64))
	JAE(LabelRef(l("by64")))

	Label(l("by16"))
	CMPQ(RCX, Imm(16))
	JB(LabelRef(l("tail")))
	loadAbs512(0, masked, Z4, K1)
	VPMAXUD(Z4, Z0, Z0)
	ADDQ(Imm(64), RSI)
	if masked {
		ADDQ(Imm(16), RDX)
	}
	SUBQ(Imm(16), RCX)
	JMP(LabelRef(l("by16")))

	Label(l("tail"))
	TESTQ(RCX, RCX)
	JZ(LabelRef(l("reduce")))
	// K1 = the low CX lanes; masked-off lanes are neither read nor faulted on.
	gen.LowLanes(K1)
	if masked {
		VMOVDQU8_Z(Mem{Base: RDX}, K1, X5)
		VPTESTMB(X5, X5, K1)
		ADDQ(RCX, RDX)
	}
	VMOVDQU32_Z(Mem{Base: RSI}, K1, Z4)
	VPANDD(Z31, Z4, Z4)
	VPMAXUD(Z4, Z1, Z1)
	LEAQ(Mem{Base: RSI, Index: RCX, Scale: 4}, RSI)

	Label(l("reduce"))
	VPMAXUD(Z1, Z0, Z0)
	VPMAXUD(Z3, Z2, Z2)
	VPMAXUD(Z2, Z0, Z0)
	gen.HReduce(Z0, Z1, VPMAXUD, false)
	VMOVD(X0, Mem{Base: RDI})
	ADDQ(Imm(4), RDI)
	DECQ(R8)
	JNZ(LabelRef(l("block")))

	Label(l("done"))
	gen.End(false)
}

// loadAbs512 loads the i-th 16 floats at SI with the sign cleared into z; when
// masked, lanes whose keep byte (at DX) is 0 are zeroed, through opmask k.
func loadAbs512(i int, masked bool, z VecPhysical, k Register) {
	m := Mem{Base: RSI, Disp: 64 * i}
	if !masked {
		VPANDD(m, Z31, z)
		return
	}
	VPTESTMB(Mem{Base: RDX, Disp: 16 * i}, X15, k)
	VPANDD_Z(m, Z31, k, z)
}

func genDoc(name, isa string, masked bool) {
	lines := []string{
		"for k := range dst {",
		"	s := src[k*block : min((k+1)*block, len(src))]",
	}
	if masked {
		lines = append(lines, "	keep := keep[k*block : k*block+len(s)]")
	}
	lines = append(lines,
		"	var m uint32",
		"	for i, x := range s {",
		"		b := math.Float32bits(x) & 0x7fffffff",
	)
	if masked {
		lines = append(lines, "		if !keep[i] {", "			b = 0", "		}")
	}
	lines = append(lines, "		m = max(m, b)", "	}", "	dst[k] = m", "}")
	for i := range lines {
		lines[i] = "\t" + lines[i]
	}
	extra := ""
	if masked {
		extra = " and keep as long as src"
	}
	doc := append([]string{name + " is the " + isa + " kernel of the loop (block ≥ 1)", ""}, lines...)
	Doc(append(doc, "", "with len(dst) = ceil(len(src)/block)"+extra+".")...)
}

// generalAVX2 emits absMaxBlocks[Masked]AVX2: per block, 32 floats per step
// in four accumulators, then 8 at a time, then the last 1..7 with a masked
// load (unmasked) or one at a time (masked).
func generalAVX2(iota8 Mem, masked bool) {
	name := "absMaxBlocksAVX2"
	sig := "func(dst []uint32, src []float32, block int)"
	if masked {
		name = "absMaxBlocksMaskedAVX2"
		sig = "func(dst []uint32, src []float32, keep []bool, block int)"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	genDoc(name, "AVX2", masked)
	Load(Param("dst").Base(), RDI)
	Load(Param("dst").Len(), R8)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), R9)
	Load(Param("block"), R10)
	if masked {
		Load(Param("keep").Base(), RDX)
		VPXOR(Y14, Y14, Y14)
	} else {
		VMOVDQU(iota8, Y14)
	}
	VPCMPEQD(Y15, Y15, Y15)
	VPSRLD(Imm(1), Y15, Y15) // 0x7fffffff
	l := func(s string) string { return name + "_" + s }
	TESTQ(R8, R8)
	JZ(LabelRef(l("done")))

	Label(l("block"))
	MOVQ(R10, RCX)
	CMPQ(R9, R10)
	CMOVQLT(R9, RCX)
	SUBQ(RCX, R9)
	for i := range 4 {
		VPXOR(gen.Y(i), gen.Y(i), gen.Y(i))
	}
	CMPQ(RCX, Imm(32))
	JB(LabelRef(l("by8")))

	Label(l("by32"))
	for i := range 4 {
		loadAbs256(i, masked, gen.Y(4+i), gen.Y(8+i))
	}
	for i := range 4 {
		VPMAXUD(gen.Y(4+i), gen.Y(i), gen.Y(i))
	}
	ADDQ(Imm(128), RSI)
	if masked {
		ADDQ(Imm(32), RDX)
	}
	SUBQ(Imm(32), RCX)
	CMPQ(RCX, Imm(32))
	JAE(LabelRef(l("by32")))

	Label(l("by8"))
	CMPQ(RCX, Imm(8))
	JB(LabelRef(l("tail")))
	loadAbs256(0, masked, Y4, Y8)
	VPMAXUD(Y4, Y0, Y0)
	ADDQ(Imm(32), RSI)
	if masked {
		ADDQ(Imm(8), RDX)
	}
	SUBQ(Imm(8), RCX)
	JMP(LabelRef(l("by8")))

	Label(l("tail"))
	TESTQ(RCX, RCX)
	JZ(LabelRef(l("reduce")))
	if !masked {
		// Lanes i < CX: VPMASKMOVD neither reads nor faults on the others.
		VMOVQ(RCX, X5)
		VPBROADCASTD(X5, Y5)
		VPCMPGTD(Y14, Y5, Y5)
		VPMASKMOVD(Mem{Base: RSI}, Y5, Y4)
		VPAND(Y15, Y4, Y4)
		VPMAXUD(Y4, Y1, Y1)
		LEAQ(Mem{Base: RSI, Index: RCX, Scale: 4}, RSI)
	} else {
		Label(l("tail1"))
		MOVL(Mem{Base: RSI}, EAX)
		ANDL(U32(0x7fffffff), EAX)
		MOVBLZX(Mem{Base: RDX}, EBX)
		NEGL(EBX)
		ANDL(EBX, EAX)
		VMOVD(EAX, X4)
		VPMAXUD(Y4, Y1, Y1)
		ADDQ(Imm(4), RSI)
		INCQ(RDX)
		DECQ(RCX)
		JNZ(LabelRef(l("tail1")))
	}

	Label(l("reduce"))
	VPMAXUD(Y1, Y0, Y0)
	VPMAXUD(Y3, Y2, Y2)
	VPMAXUD(Y2, Y0, Y0)
	gen.HReduce(Y0, Y1, VPMAXUD, false)
	VMOVD(X0, Mem{Base: RDI})
	ADDQ(Imm(4), RDI)
	DECQ(R8)
	JNZ(LabelRef(l("block")))

	Label(l("done"))
	gen.End(false)
}

// loadAbs256 loads the i-th 8 floats at SI with the sign cleared into y; when
// masked, lanes whose keep byte (at DX) is 0 are zeroed, using t as scratch.
func loadAbs256(i int, masked bool, y, t VecPhysical) {
	m := Mem{Base: RSI, Disp: 32 * i}
	if !masked {
		VPAND(m, Y15, y)
		return
	}
	// keep byte 0/1 → 0/−1 → 0/0x7fffffff, a mask that also clears the sign.
	VPMOVZXBD(Mem{Base: RDX, Disp: 8 * i}, t)
	VPSUBD(t, Y14, t)
	VPSRLD(Imm(1), t, t)
	VPAND(m, t, y)
}

// treeAVX512 emits absMaxBlocks{16,32}AVX512: 16 blocks at a time, each
// reduced to one zmm of partial maxima, then a transpose tree of VPERMT2D
// pairs and VPMAXUD that leaves the 16 block maxima in order in one zmm
// (gen.AbsMaxTree512).
func treeAVX512(block int, idx [4][2]Mem) {
	name := fmt.Sprintf("absMaxBlocks%dAVX512", block)
	TEXT(name, NOSPLIT, "func(dst []uint32, src []float32)")
	Pragma("noescape")
	treeDoc(name, "AVX-512", block, 16)
	Load(Param("dst").Base(), RDI)
	Load(Param("dst").Len(), RCX)
	Load(Param("src").Base(), RSI)
	SHRQ(Imm(4), RCX)
	l := func(s string) string { return name + "_" + s }
	JZ(LabelRef(l("done")))
	gen.Broadcast32(0x7fffffff, Z31, RAX, X4)
	gen.LoadTree(idx)
	Label(l("loop"))
	gen.AbsMaxTree512(RSI, block, Z31)
	VMOVDQU32(Z0, Mem{Base: RDI})
	ADDQ(U32(uint32(64*block)), RSI)
	ADDQ(Imm(64), RDI)
	DECQ(RCX)
	JNZ(LabelRef(l("loop")))
	Label(l("done"))
	gen.End(false)
}

func treeDoc(name, isa string, block, group int) {
	Doc(fmt.Sprintf("%s is the %s kernel of the loop", name, isa), "",
		fmt.Sprintf("\tfor k := range dst[:len(dst)/%d*%d] {", group, group),
		"\t\tvar m uint32",
		fmt.Sprintf("\t\tfor _, x := range src[k*%d : (k+1)*%d] {", block, block),
		"\t\t\tm = max(m, math.Float32bits(x)&0x7fffffff)",
		"\t\t}",
		"\t\tdst[k] = m",
		"\t}",
		"",
		fmt.Sprintf("over whole groups of %d blocks of %d; src must hold %d floats per block of dst.", group, block, block))
}

// treeAVX2 emits absMaxBlocks{16,32}AVX2: 8 blocks at a time, each reduced
// to one ymm of partial maxima, then a tree of VPERM2I128, VPUNPCK[LH]QDQ and
// VSHUFPS pairs with VPMAXUD, and a VPERMD that puts the 8 maxima in order
// (gen.AbsMaxTree256).
func treeAVX2(block int, perm Mem) {
	name := fmt.Sprintf("absMaxBlocks%dAVX2", block)
	TEXT(name, NOSPLIT, "func(dst []uint32, src []float32)")
	Pragma("noescape")
	treeDoc(name, "AVX2", block, 8)
	Load(Param("dst").Base(), RDI)
	Load(Param("dst").Len(), RCX)
	Load(Param("src").Base(), RSI)
	SHRQ(Imm(3), RCX)
	l := func(s string) string { return name + "_" + s }
	JZ(LabelRef(l("done")))
	VPCMPEQD(Y15, Y15, Y15)
	VPSRLD(Imm(1), Y15, Y15)
	VMOVDQU(perm, Y14)
	Label(l("loop"))
	gen.AbsMaxTree256(RSI, block, Y15, Y14)
	VMOVDQU(Y0, Mem{Base: RDI})
	ADDQ(U32(uint32(32*block)), RSI)
	ADDQ(Imm(32), RDI)
	DECQ(RCX)
	JNZ(LabelRef(l("loop")))
	Label(l("done"))
	gen.End(false)
}
