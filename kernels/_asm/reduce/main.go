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
	ConstraintExpr(gen.BuildConstraint)
	iota8 := gen.Table("amaxIota8", []uint32{0, 1, 2, 3, 4, 5, 6, 7})
	generalAVX512(false)
	generalAVX512(true)
	generalAVX2(iota8, false)
	generalAVX2(iota8, true)
	idx := treeIndexes()
	treeAVX512(16, idx)
	treeAVX512(32, idx)
	perm := gen.Table("amaxTreePerm8", []uint32{0, 4, 1, 5, 2, 6, 3, 7})
	treeAVX2(16, perm)
	treeAVX2(32, perm)
	Generate()
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
		z := zr(i)
		VPXORD(z, z, z)
	}
	CMPQ(RCX, Imm(64))
	JB(LabelRef(l("by16")))

	Label(l("by64"))
	for i := range 4 {
		loadAbs512(i, masked, Z(4+i), kreg(1+i))
	}
	for i := range 4 {
		VPMAXUD(Z(4+i), zr(i), zr(i))
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
	MOVL(U32(1), EAX)
	SHLL(CL, EAX)
	DECL(EAX)
	KMOVW(EAX, K1)
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
	VEXTRACTI64X4(Imm(1), Z0, Y1)
	VPMAXUD(Y1, Y0, Y0)
	hmax128()
	VMOVD(X0, Mem{Base: RDI})
	ADDQ(Imm(4), RDI)
	DECQ(R8)
	JNZ(LabelRef(l("block")))

	Label(l("done"))
	VZEROUPPER()
	RET()
}

func zr(i int) VecPhysical { return Z(i) }

// Z returns zmm register i.
func Z(i int) VecPhysical {
	return []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
		Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}[i]
}

// Y returns ymm register i.
func Y(i int) VecPhysical {
	return []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15}[i]
}

// kreg returns opmask register i.
func kreg(i int) Register { return []Register{K0, K1, K2, K3, K4, K5, K6, K7}[i] }

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

// hmax128 reduces Y0 to its largest lane in the low lane of X0.
func hmax128() {
	VEXTRACTI128(Imm(1), Y0, X1)
	VPMAXUD(X1, X0, X0)
	VPSHUFD(Imm(0x4e), X0, X1)
	VPMAXUD(X1, X0, X0)
	VPSHUFD(Imm(0xb1), X0, X1)
	VPMAXUD(X1, X0, X0)
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
		VPXOR(Y(i), Y(i), Y(i))
	}
	CMPQ(RCX, Imm(32))
	JB(LabelRef(l("by8")))

	Label(l("by32"))
	for i := range 4 {
		loadAbs256(i, masked, Y(4+i), Y(8+i))
	}
	for i := range 4 {
		VPMAXUD(Y(4+i), Y(i), Y(i))
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
	hmax128()
	VMOVD(X0, Mem{Base: RDI})
	ADDQ(Imm(4), RDI)
	DECQ(R8)
	JNZ(LabelRef(l("block")))

	Label(l("done"))
	VZEROUPPER()
	RET()
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

// treeIndexes emits the VPERMT2D index pairs of the AVX-512 transpose tree:
// at half-width h, lo[i] = (i/h)·2h + i%h and hi[i] = lo[i] + h pick the
// first and second h lanes of each 2h-lane group from two vectors.
func treeIndexes() [4][2]Mem {
	var out [4][2]Mem
	for li, h := range []int{8, 4, 2, 1} {
		for j := range 2 {
			w := make([]uint32, 16)
			for i := range w {
				w[i] = uint32((i/h)*2*h + i%h + j*h)
			}
			out[li][j] = gen.Table(fmt.Sprintf("amaxTree%d_%d", h, j), w)
		}
	}
	return out
}

// treeAVX512 emits absMaxBlocks{16,32}AVX512: 16 blocks at a time, each
// reduced to one zmm of partial maxima, then a transpose tree of VPERMT2D
// pairs and VPMAXUD that leaves the 16 block maxima in order in one zmm.
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
	for li := range 4 {
		VMOVDQU32(idx[li][0], Z(16+2*li))
		VMOVDQU32(idx[li][1], Z(17+2*li))
	}
	Label(l("loop"))
	for b := range 16 {
		off := 4 * block * b
		VPANDD(Mem{Base: RSI, Disp: off}, Z31, Z(b))
		if block == 32 {
			VPANDD(Mem{Base: RSI, Disp: off + 64}, Z31, Z24)
			VPMAXUD(Z24, Z(b), Z(b))
		}
	}
	// Level h pairs vectors 2j and 2j+1 (stride s apart in register numbers).
	for li, s := 0, 1; li < 4; li, s = li+1, s*2 {
		for a := 0; a < 16; a += 2 * s {
			A, B := Z(a), Z(a+s)
			VMOVDQA64(A, Z24)
			VPERMT2D(B, Z(16+2*li), Z24)
			VPERMT2D(B, Z(17+2*li), A)
			VPMAXUD(Z24, A, A)
		}
	}
	VMOVDQU32(Z0, Mem{Base: RDI})
	ADDQ(U32(uint32(64*block)), RSI)
	ADDQ(Imm(64), RDI)
	DECQ(RCX)
	JNZ(LabelRef(l("loop")))
	Label(l("done"))
	VZEROUPPER()
	RET()
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
// VSHUFPS pairs with VPMAXUD, and a VPERMD that puts the 8 maxima in order.
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
	for b := range 8 {
		off := 4 * block * b
		VPAND(Mem{Base: RSI, Disp: off}, Y15, Y(b))
		VPAND(Mem{Base: RSI, Disp: off + 32}, Y15, Y8)
		if block == 32 {
			VPAND(Mem{Base: RSI, Disp: off + 64}, Y15, Y9)
			VPAND(Mem{Base: RSI, Disp: off + 96}, Y15, Y10)
			VPMAXUD(Y10, Y9, Y9)
			VPMAXUD(Y9, Y(b), Y(b))
		}
		VPMAXUD(Y8, Y(b), Y(b))
	}
	// 128-bit halves: Yb = [block b ×4 | block b+1 ×4] for b = 0, 2, 4, 6.
	for b := 0; b < 8; b += 2 {
		VPERM2I128(Imm(0x20), Y(b+1), Y(b), Y8)
		VPERM2I128(Imm(0x31), Y(b+1), Y(b), Y(b))
		VPMAXUD(Y8, Y(b), Y(b))
	}
	// 64-bit pairs: Y0 = [0,0,2,2 | 1,1,3,3], Y4 = [4,4,6,6 | 5,5,7,7].
	for _, b := range []int{0, 4} {
		VPUNPCKLQDQ(Y(b+2), Y(b), Y8)
		VPUNPCKHQDQ(Y(b+2), Y(b), Y(b))
		VPMAXUD(Y8, Y(b), Y(b))
	}
	// Even/odd lanes: Y0 = [0,2,4,6 | 1,3,5,7], then VPERMD puts them in order.
	VSHUFPS(Imm(0x88), Y4, Y0, Y8)
	VSHUFPS(Imm(0xdd), Y4, Y0, Y0)
	VPMAXUD(Y8, Y0, Y0)
	VPERMD(Y0, Y14, Y0)
	VMOVDQU(Y0, Mem{Base: RDI})
	ADDQ(U32(uint32(32*block)), RSI)
	ADDQ(Imm(32), RDI)
	DECQ(RCX)
	JNZ(LabelRef(l("loop")))
	Label(l("done"))
	VZEROUPPER()
	RET()
}
