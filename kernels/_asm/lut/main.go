// Command lut generates the lookup-table (codebook) kernels of package
// kernels: lut_amd64.s and the stub declarations in lut_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./lut -out ../lut_amd64.s -stubs ../lut_stubs_amd64.go -pkg kernels
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

// Word offsets in the search table (kernels.lutSearch.words; the Go side
// declares the same).
const (
	levelOff = 0   // level l, node j at levelOff + 32·l + j
	codesOff = 192 // the code of each entry index, 64 bytes
	plainOff = 208 // all ones for a plain table, 0 for a sign-magnitude one
	negOff   = 209 // the bits besides the sign a value needs to take the sign bit
	signOff  = 210 // the sign bit in every byte
	nanOff   = 211 // the NaN code in every byte
)

func main() {
	gen.Main(func() {
		lutEncode(4)
		lutEncode(6)
		for _, nt := range []int{2, 4, 8, 16} {
			lutSelect(nt)
		}
		lutDecodeBlocks()
		lutDecodeGroups()
	})
}

// Registers the kernels keep their constants in.
var (
	levels = [7]VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6} // level 0 broadcast; 1–4 one zmm each; 5 in Z5:Z6
	ones   = Z14                                        // 1 in every dword
)

// word returns word i of the table at tb.
func word(tb GPPhysical, i int) Mem { return Mem{Base: tb, Disp: 4 * i} }

// loadLevels loads the keys of the first n levels of the search from tb.
func loadLevels(tb GPPhysical, n int) {
	VPBROADCASTD(word(tb, levelOff), levels[0])
	for l := 1; l < n && l <= 4; l++ {
		VMOVDQU32(word(tb, levelOff+32*l), levels[l])
	}
	if n == 6 {
		VMOVDQU32(word(tb, levelOff+32*5), Z5)
		VMOVDQU32(word(tb, levelOff+32*5+16), Z6)
	}
}

// search sets j to the number of keys of the n-level search at most key
// (signed dwords): at each level the node's key, picked by VPERMD (VPERMI2D
// at level 5, 32 nodes) by the path so far, is compared with key and the
// path doubled plus the result. tmp is a scratch vector, k an opmask.
func search(n int, key, j, tmp VecPhysical, k Register) {
	VPCMPD(U8(5), levels[0], key, k) // key ≥ node (not less than)
	VMOVDQA32_Z(ones, k, j)
	for l := 1; l < n; l++ {
		if l <= 4 {
			VPERMD(levels[l], j, tmp)
		} else {
			VMOVDQA32(j, tmp)
			VPERMI2D(Z6, Z5, tmp)
		}
		VPCMPD(U8(5), tmp, key, k)
		VPADDD(j, j, j)
		VPADDD(ones, j, k, j)
	}
}

// tailMask sets the opmask k to the low min(n, 16) bits, n in count (a
// 64-bit register holding at most 16 when clamp is false), through AX.
func tailMask(count GPPhysical, k Register) {
	MOVL(U32(0xffffffff), EAX)
	BZHIL(count.As32(), EAX, EAX)
	KMOVW(EAX, k)
}

// minInto sets dst to min(dst, v) (unsigned 64-bit).
func minInto(dst, v Op) {
	CMPQ(dst, v)
	CMOVQHI(v, dst)
}

// lutEncode writes lutEncode<n>AVX512, the encoder of an n-level search
// (n = 4: up to 16 entries; 6: up to 64).
func lutEncode(n int) {
	name := fmt.Sprintf("lutEncode%dAVX512", n)
	TEXT(name, NOSPLIT, "func(dst []uint8, src []float32, block int, muls []float32, tb *[212]uint32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of lutEncodeBlocksGo for searches of "+fmt.Sprint(n)+" levels",
		fmt.Sprintf("(up to %d entries), the loop", 1<<n),
		"",
		"\tfor i, x := range src {",
		"\t\ty := x * muls[i/block]",
		"\t\tdst[i] = the code of entry (number of bounds ≤ y), sign bit added, NaN code for a NaN",
		"\t}",
		"",
		"16 values at a time (the last of each block masked): the key of y (its bits, the magnitude",
		"negated for a negative y of a plain table) is compared with one node per level of the binary",
		"search (VPERMD of the level's keys by the path so far), the path packed to bytes (VPMOVDB) is",
		"looked up in the 64 codes (VPERMB), and the sign bit and NaN code are merged by opmasks.")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	Load(Param("block"), RDX)
	Load(Param("muls").Base(), RBX)
	Load(Param("tb"), R8)
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	loadLevels(R8, n)
	VMOVDQU8(word(R8, codesOff), Z7)
	VPBROADCASTD(word(R8, plainOff), Z8)
	VPBROADCASTD(word(R8, negOff), Z9)
	gen.Broadcast32(0x7fffffff, Z10, RAX, X31)
	gen.Broadcast32(0x80000000, Z11, RAX, X31)
	VPBROADCASTD(word(R8, signOff), Z12)
	VPBROADCASTD(word(R8, nanOff), Z13)
	gen.Broadcast32(1, ones, RAX, X31)

	Label(name + "_block")
	VBROADCASTSS(Mem{Base: RBX}, Z15)
	ADDQ(U8(4), RBX)
	MOVQ(RDX, R9) // values of this block
	minInto(R9, RCX)
	SUBQ(R9, RCX)

	Label(name + "_vec")
	MOVQ(U32(16), R10)
	minInto(R10, R9)
	tailMask(R10, K1)
	VMOVUPS_Z(Mem{Base: RSI}, K1, Z16)
	VMULPS(Z15, Z16, Z16) // y
	VCMPPS(U8(3), Z16, Z16, K2)
	// key = (|y| bits ^ neg) − neg, neg the sign of y in a plain table.
	VPSRAD(U8(31), Z16, Z17)
	VPANDD(Z8, Z17, Z17)
	VPANDD(Z10, Z16, Z18)
	VPXORD(Z17, Z18, Z18)
	VPSUBD(Z17, Z18, Z18)
	// The sign bit where y's sign is set and y has a bit of the neg mask.
	VPTESTMD(Z11, Z16, K3)
	VPTESTMD(Z9, Z16, K4)
	KANDW(K4, K3, K3)
	search(n, Z18, Z19, Z20, K5)
	VPMOVDB(Z19, X21)
	VPERMB(Z7, Z21, Z21)
	VMOVDQU8_Z(Z12, K3, Z22)
	VPORQ(Z22, Z21, Z21)
	VMOVDQU8(Z13, K2, Z21)
	VMOVDQU8(X21, K1, Mem{Base: RDI})
	LEAQ(Mem{Base: RSI, Index: R10, Scale: 4}, RSI)
	ADDQ(R10, RDI)
	SUBQ(R10, R9)
	JNZ(LabelRef(name + "_vec"))
	TESTQ(RCX, RCX)
	JNZ(LabelRef(name + "_block"))
	Label(name + "_done")
	gen.End(false)
}

// lutSelect writes lutSelect<nt>AVX512, the selection among nt tables.
func lutSelect(nt int) {
	name := fmt.Sprintf("lutSelect%dAVX512", nt)
	TEXT(name, 0, "func(codes, meta []uint8, x []float32, group, block int, muls, scales []float32, tb *[212]uint32, mags []float32, tcodes, zero []uint8)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of lutSelectGo for "+fmt.Sprint(nt)+" tables and up to 64 cells, groups",
		"of up to 64 values: for each group, the loop",
		"",
		"\tfor i, v := range xs { // the group's values",
		"\t\tc := cell(|v·mul|)",
		"\t\tfor k := range acc {",
		"\t\t\td := float64(mags[c·nt+k]·scale) − float64(|v|)",
		"\t\t\tacc[k] += float64(d·d)",
		"\t\t}",
		"\t}",
		"\tmeta[g] = the first k of least acc[k]",
		"\tcodes = tcodes[64·k + cell] | sign bit, or zero[k] for a NaN",
		"",
		"The cells of up to 64 values (whole groups of one block) are searched 16 at a time as",
		"lutEncode6AVX512 does (a NaN in the cell of 0), and kept on the stack as bytes with the sign in bit 6 and NaN in bit 7,",
		"with |v| as float64; then per group the errors of the tables accumulate in float64 lanes",
		"(one lane per table), the least is found by VMINPD (a NaN counting as +Inf: a NaN error",
		"arises only where every table's error is +Inf or NaN, and the first table wins then as in",
		"the loop), and the codes are looked up by VPERMB in the chosen table's 64 codes.")
	Load(Param("codes").Base(), RDI)
	Load(Param("meta").Base(), R8)
	Load(Param("x").Base(), RSI)
	Load(Param("x").Len(), RCX)
	Load(Param("group"), RDX)
	Load(Param("muls").Base(), RBX)
	Load(Param("scales").Base(), R11)
	Load(Param("mags").Base(), R12)
	Load(Param("tcodes").Base(), R13)
	Load(Param("zero").Base(), R14)
	cellBuf := AllocLocal(128)   // cell bytes, flags in bits 6 and 7
	absBuf := AllocLocal(8 * 64) // |v| as float64
	slot := AllocLocal(40)       // piece size, group start, group end, group length, all ones
	piece, gOff, gEnd, gLen, allOnes := slot, slot.Offset(8), slot.Offset(16), slot.Offset(24), slot.Offset(32)
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	// The piece: the most whole groups in 64 values.
	MOVQ(U32(64), RAX)
	XORL(EDX.As32(), EDX.As32())
	Load(Param("group"), R9)
	DIVQ(R9)
	IMULQ(R9, RAX)
	MOVQ(RAX, piece)
	MOVQ(R9, RDX)
	MOVQ(U32(0xffffffff), RAX)
	MOVQ(RAX, allOnes)
	NOTQ(RAX) // the high half
	ORQ(RAX, allOnes)
	Load(Param("tb"), R9)
	loadLevels(R9, 6)
	VPBROADCASTD(word(R9, negOff), Z9)
	gen.Broadcast32(0x7fffffff, Z10, RAX, X31)
	gen.Broadcast32(0x80000000, Z11, RAX, X31)
	VPBROADCASTD(word(R9, signOff), Z12)
	MOVQ(U64(0x7ff0000000000000), RAX)
	VPBROADCASTQ(RAX, Z13)
	gen.Broadcast32(1, ones, RAX, X31)
	gen.Broadcast32(0x80808080, Z29, RAX, X31)
	gen.Broadcast32(0x40404040, Z30, RAX, X31)

	Label(name + "_block")
	VBROADCASTSS(Mem{Base: RBX}, Z15)
	VBROADCASTSS(Mem{Base: R11}, Z7)
	ADDQ(U8(4), RBX)
	ADDQ(U8(4), R11)
	Load(Param("block"), R9) // values of this block
	minInto(R9, RCX)
	SUBQ(R9, RCX)

	Label(name + "_piece")
	MOVQ(piece, R10)
	minInto(R10, R9)
	// The cells of the piece, 16 at a time.
	for t := range 4 {
		MOVQ(R10, R15)
		if t > 0 {
			SUBQ(U8(16*t), R15)
			JBE(LabelRef(name + "_cellsdone"))
		}
		MOVQ(U32(16), RAX)
		minInto(R15, RAX)
		tailMask(R15, K1)
		VMOVUPS_Z(Mem{Base: RSI, Disp: 64 * t}, K1, Z16)
		VMULPS(Z15, Z16, Z17) // y
		VPANDD(Z10, Z17, Z18)
		VCMPPS(U8(7), Z17, Z17, K4) // not NaN
		VMOVDQA32_Z(Z18, K4, Z18)   // a NaN's key is that of 0
		search(6, Z18, Z19, Z20, K5)
		VCMPPS(U8(3), Z17, Z17, K2)
		VPTESTMD(Z11, Z17, K3)
		VPTESTMD(Z9, Z17, K4)
		KANDW(K4, K3, K3)
		VPORD(Z30, Z19, K3, Z19)
		VPORD(Z29, Z19, K2, Z19)
		VPMOVDB(Z19, X20)
		VMOVDQU8(X20, cellBuf.Offset(16*t))
		VPANDD(Z10, Z16, Z21)
		VCVTPS2PD(Z21.AsY(), Z22)
		VEXTRACTF64X4(U8(1), Z21, Y23)
		VCVTPS2PD(Y23, Z23)
		VMOVUPD(Z22, absBuf.Offset(128*t))
		VMOVUPD(Z23, absBuf.Offset(128*t+64))
	}
	Label(name + "_cellsdone")
	XORL(R15L, R15L) // value index in the piece

	Label(name + "_group")
	MOVQ(R15, gOff)
	MOVQ(R10, RAX)
	SUBQ(R15, RAX)
	minInto(RAX, RDX)
	MOVQ(RAX, gLen)
	BZHIQ(RAX, allOnes, RAX)
	KMOVQ(RAX, K6)
	MOVQ(gLen, RAX)
	ADDQ(R15, RAX)
	MOVQ(RAX, gEnd)
	acc := []VecPhysical{Z24, Z25}
	switch nt {
	case 8:
		acc = acc[:1]
	case 4:
		acc = []VecPhysical{Y24}
	case 2:
		acc = []VecPhysical{X24}
	}
	for _, a := range acc {
		VXORPD(a, a, a)
	}
	Label(name + "_value")
	MOVBLZX(cellBuf.Idx(R15, 1), EAX)
	ANDL(U8(63), EAX)
	shift := map[int]uint8{2: 3, 4: 4, 8: 5, 16: 6}[nt]
	SHLL(U8(shift), EAX)
	row := Mem{Base: R12, Index: RAX, Scale: 1}
	ax := absBuf.Idx(R15, 8)
	switch nt {
	case 16:
		VMULPS(row, Z7, Z26)
		VCVTPS2PD(Y26, Z27)
		VEXTRACTF64X4(U8(1), Z26, Y28)
		VCVTPS2PD(Y28, Z28)
		VSUBPD_BCST(ax, Z27, Z27)
		VSUBPD_BCST(ax, Z28, Z28)
		VMULPD(Z27, Z27, Z27)
		VMULPD(Z28, Z28, Z28)
		VADDPD(Z27, Z24, Z24)
		VADDPD(Z28, Z25, Z25)
	case 8:
		VMULPS(row, Y7, Y26)
		VCVTPS2PD(Y26, Z27)
		VSUBPD_BCST(ax, Z27, Z27)
		VMULPD(Z27, Z27, Z27)
		VADDPD(Z27, Z24, Z24)
	case 4:
		VMULPS(row, X7, X26)
		VCVTPS2PD(X26, Y27)
		VSUBPD_BCST(ax, Y27, Y27)
		VMULPD(Y27, Y27, Y27)
		VADDPD(Y27, Y24, Y24)
	case 2:
		VMOVSD(row, X26)
		VMULPS(X7, X26, X26)
		VCVTPS2PD(X26, X27)
		VSUBPD_BCST(ax, X27, X27)
		VMULPD(X27, X27, X27)
		VADDPD(X27, X24, X24)
	}
	INCQ(R15)
	CMPQ(R15, gEnd)
	JB(LabelRef(name + "_value"))

	// The first table of least error, a NaN error counting as +Inf.
	inf := map[int]VecPhysical{16: Z13, 8: Z13, 4: Y13, 2: X13}[nt]
	for _, a := range acc {
		VCMPPD(U8(3), a, a, K1)
		VMOVAPD(inf, K1, a)
	}
	var m, t VecPhysical = Z26, Z27
	switch nt {
	case 16:
		VMINPD(Z25, Z24, m)
	case 8:
		VMOVAPD(Z24, m)
	case 4:
		m, t = Y26, Y27
		VMOVAPD(Y24, m)
	case 2:
		m, t = X26, X27
		VMOVAPD(X24, m)
	}
	if nt >= 8 {
		VSHUFF64X2(U8(0x4e), m, m, t)
		VMINPD(t, m, m)
		VSHUFF64X2(U8(0xb1), m, m, t)
		VMINPD(t, m, m)
	}
	if nt == 4 {
		VPERMPD(U8(0x4e), m, t)
		VMINPD(t, m, m)
	}
	VPERMILPD(U8(0x55), m, t)
	VMINPD(t, m, m)
	VCMPPD(U8(0), m, acc[0], K1)
	if nt == 16 {
		VCMPPD(U8(0), m, Z25, K2)
		KUNPCKBW(K1, K2, K1)
	}
	KMOVW(K1, EAX)
	TZCNTL(EAX, EAX)
	MOVB(AL, Mem{Base: R8})
	INCQ(R8)
	// The codes through the chosen table.
	VPBROADCASTB(Mem{Base: R14, Index: RAX, Scale: 1}, Z16)
	SHLQ(U8(6), RAX)
	VMOVDQU8(Mem{Base: R13, Index: RAX, Scale: 1}, Z26)
	MOVQ(gOff, RAX)
	VMOVDQU8_Z(cellBuf.Idx(RAX, 1), K6, Z28)
	VPERMB(Z26, Z28, Z17)
	VPTESTMB(Z30, Z28, K3)
	VMOVDQU8_Z(Z12, K3, Z18)
	VPORQ(Z18, Z17, Z17)
	VPMOVB2M(Z28, K2)
	VMOVDQU8(Z16, K2, Z17)
	VMOVDQU8(Z17, K6, Mem{Base: RDI})
	ADDQ(gLen, RDI)
	CMPQ(R15, R10)
	JB(LabelRef(name + "_group"))

	LEAQ(Mem{Base: RSI, Index: R10, Scale: 4}, RSI)
	SUBQ(R10, R9)
	JNZ(LabelRef(name + "_piece"))
	TESTQ(RCX, RCX)
	JNZ(LabelRef(name + "_block"))
	Label(name + "_done")
	gen.End(false)
}

// lutDecodeBlocks writes lutDecodeBlocksAVX512.
func lutDecodeBlocks() {
	name := "lutDecodeBlocksAVX512"
	TEXT(name, NOSPLIT, "func(dst []float32, src []uint8, lut *[16]float32, block int, scales []float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of lutDecodeBlocksGo, the loop",
		"",
		"\tfor i, c := range src {",
		"\t\tdst[i] = lut[c&15] * scales[i/block]",
		"\t}",
		"",
		"16 codes at a time (the last of each block masked): VPMOVZXBD, VPERMPS of the table, VMULPS.")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	Load(Param("block"), RDX)
	Load(Param("scales").Base(), RBX)
	Load(Param("lut"), R8)
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	VMOVUPS(Mem{Base: R8}, Z0)
	Label(name + "_block")
	VBROADCASTSS(Mem{Base: RBX}, Z1)
	ADDQ(U8(4), RBX)
	MOVQ(RDX, R9)
	minInto(R9, RCX)
	SUBQ(R9, RCX)
	Label(name + "_vec")
	MOVQ(U32(16), R10)
	minInto(R10, R9)
	tailMask(R10, K1)
	VMOVDQU8_Z(Mem{Base: RSI}, K1, X2)
	VPMOVZXBD(X2, Z2)
	VPERMPS(Z0, Z2, Z3)
	VMULPS(Z1, Z3, Z3)
	VMOVUPS(Z3, K1, Mem{Base: RDI})
	ADDQ(R10, RSI)
	LEAQ(Mem{Base: RDI, Index: R10, Scale: 4}, RDI)
	SUBQ(R10, R9)
	JNZ(LabelRef(name + "_vec"))
	TESTQ(RCX, RCX)
	JNZ(LabelRef(name + "_block"))
	Label(name + "_done")
	gen.End(false)
}

// lutDecodeGroups writes lutDecodeGroupsAVX512.
func lutDecodeGroups() {
	name := "lutDecodeGroupsAVX512"
	TEXT(name, NOSPLIT, "func(dst []float32, src, meta []uint8, group, block int, luts, scales []float32, tmask int)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of lutDecodeGroupsGo, the loop",
		"",
		"\tfor i, c := range src {",
		"\t\tdst[i] = luts[16*(int(meta[i/group])&tmask) + int(c&15)] * scales[i/block]",
		"\t}",
		"",
		"a group at a time (its table in a zmm), 16 codes at a time (the last of each group masked):",
		"VPMOVZXBD, VPERMPS of the table, VMULPS.")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	Load(Param("meta").Base(), R11)
	Load(Param("scales").Base(), RBX)
	Load(Param("luts").Base(), R8)
	Load(Param("tmask"), R12)
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	Label(name + "_block")
	VBROADCASTSS(Mem{Base: RBX}, Z1)
	ADDQ(U8(4), RBX)
	Load(Param("block"), R9)
	minInto(R9, RCX)
	SUBQ(R9, RCX)
	Label(name + "_group")
	MOVBQZX(Mem{Base: R11}, RAX)
	INCQ(R11)
	ANDQ(R12, RAX)
	SHLQ(U8(6), RAX)
	VMOVUPS(Mem{Base: R8, Index: RAX, Scale: 1}, Z0)
	Load(Param("group"), R13)
	minInto(R13, R9)
	SUBQ(R13, R9)
	Label(name + "_vec")
	MOVQ(U32(16), R10)
	minInto(R10, R13)
	tailMask(R10, K1)
	VMOVDQU8_Z(Mem{Base: RSI}, K1, X2)
	VPMOVZXBD(X2, Z2)
	VPERMPS(Z0, Z2, Z3)
	VMULPS(Z1, Z3, Z3)
	VMOVUPS(Z3, K1, Mem{Base: RDI})
	ADDQ(R10, RSI)
	LEAQ(Mem{Base: RDI, Index: R10, Scale: 4}, RDI)
	SUBQ(R10, R13)
	JNZ(LabelRef(name + "_vec"))
	TESTQ(R9, R9)
	JNZ(LabelRef(name + "_group"))
	TESTQ(RCX, RCX)
	JNZ(LabelRef(name + "_block"))
	Label(name + "_done")
	gen.End(false)
}
