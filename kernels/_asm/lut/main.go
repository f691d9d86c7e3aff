// Command lut generates the lookup-table (codebook) kernels of package
// kernels: lut_amd64.s and the stub declarations in lut_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./lut -out ../lut_amd64.s -stubs ../lut_stubs_amd64.go -pkg kernels
package main

import (
	"fmt"
	"strings"

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
	firstOff = 212 // how a search of six or more levels runs: 0, from level 2, or 8 levels
	level6   = 216 // level 6 of an eight-level search (64 nodes)
	level7   = 280 // level 7 (128 nodes)
)

func main() {
	gen.Main(func() {
		lutEncode(4)
		lutEncode(6)
		for _, weighted := range []bool{false, true} {
			for _, nt := range []int{2, 4, 8, 16} {
				lutSelect(nt, selGeneral, weighted)
				lutSelect(nt, selPow2, weighted)
				lutSelect(nt, selExact, weighted)
			}
		}
		lutDecodeGroups(false)
		lutDecodeGroups(true)
		for _, total := range []int{16, 32, 64, 0} {
			lutDecodeLanes(total)
		}
		packNibbles("AVX512")
		packNibbles("AVX2")
		unpackNibbles("AVX512")
		unpackNibbles("AVX2")
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

// searchFrom is search starting at level from, whose node 0 (at root, a
// word in memory) is then the root: the levels above compare with padding
// only. From level 0 the root is the broadcast level 0 and root is not read.
func searchFrom(from, n int, root Mem, key, j, tmp VecPhysical, k Register) {
	if from == 0 {
		VPCMPD(U8(5), levels[0], key, k) // key ≥ node (not less than)
	} else {
		VPCMPD_BCST(U8(5), root, key, k)
	}
	VMOVDQA32_Z(ones, k, j)
	for l := from + 1; l < n; l++ {
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

// search sets j to the number of keys of the n-level search at most key
// (signed dwords): at each level the node's key, picked by VPERMD (VPERMI2D
// at level 5, 32 nodes) by the path so far, is compared with key and the
// path doubled plus the result. tmp is a scratch vector, k an opmask.
func search(n int, key, j, tmp VecPhysical, k Register) {
	searchFrom(0, n, Mem{}, key, j, tmp, k)
}

// tailMask sets the opmask k to the low n bits, n in count (a 64-bit
// register holding at most 16), through AX.
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
	TEXT(name, NOSPLIT, "func(dst []uint8, src []float32, block int, muls []float32, tb *[408]uint32)")
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

// selChunk is the most values the selection kernels search the cells of
// before accumulating their errors.
const selChunk = 256

// selVariant is how a selection kernel computes the errors.
type selVariant int

const (
	// selGeneral scales the float32 entries and converts them per value.
	selGeneral selVariant = iota
	// selPow2 factors out a power-of-two scale.
	selPow2
	// selExact multiplies float64 entries by a scale that scales them
	// exactly.
	selExact
)

// lutSelect writes lutSelect<nt>AVX512, the selection among nt tables, or
// its variants lutSelect<nt>Pow2AVX512 and lutSelect<nt>ExactAVX512 for
// blocks whose scales scale every entry exactly; weighted, the same with
// each value's squared error times its weight (lutSelectW<nt>…AVX512).
func lutSelect(nt int, v selVariant, weighted bool) {
	w := ""
	if weighted {
		w = "W"
	}
	name := fmt.Sprintf("lutSelect%s%dAVX512", w, nt)
	magType := "[]float64"
	switch v {
	case selGeneral:
		magType = "[]float32"
	case selPow2:
		name = fmt.Sprintf("lutSelect%s%dPow2AVX512", w, nt)
	case selExact:
		name = fmt.Sprintf("lutSelect%s%dExactAVX512", w, nt)
	}
	pow2 := v == selPow2
	if weighted {
		TEXT(name, 0, "func(codes, meta []uint8, x, w []float32, group, block int, muls, scales []float32, tb *[408]uint32, mags "+magType+", tcodes, zero []uint8)")
		Pragma("noescape")
		unweighted := strings.Replace(name, "W", "", 1)
		Doc(name+" is "+unweighted+" with the squared error of value i multiplied",
			"by float64(w[i]) before it is summed: the loop of lutSelectWeightedGo,",
			"",
			"\tif w[i] != 0 { acc[k] += float64(float64(w[i]) · float64(d·d)) }",
			"",
			"for groups whose weights are not all equal (the caller gives a group of equal weights the",
			"weight 1, whose products are exact: the unweighted sum). The weights of a chunk are kept",
			"on the stack as float64 beside |v|. Under a power-of-two scale s the products are s² times",
			"those of the loop exactly (every float64 product here is normal), so the choice is the same.")
	} else {
		TEXT(name, 0, "func(codes, meta []uint8, x []float32, group, block int, muls, scales []float32, tb *[408]uint32, mags "+magType+", tcodes, zero []uint8)")
		Pragma("noescape")
	}
	if !weighted {
		switch v {
		case selPow2:
			Doc(name+" is lutSelect"+fmt.Sprint(nt)+"AVX512 for blocks whose scale s is a power of two",
				"that scales every entry magnitude m exactly (m·s neither overflows nor leaves the normal",
				"range), and mul = 1/s: then float64(m·s) − float64(|v|) = s·(m − float64(|v|)·mul) exactly,",
				"the squared errors are s² times those of (m − |v|·mul) and their sums too, so the least and",
				"the ties are the same. mags holds the magnitudes as float64, cell-major, and scales is not",
				"read. Each value's error costs a subtraction, a product and a sum per table.")
		case selExact:
			Doc(name+" is lutSelect"+fmt.Sprint(nt)+"AVX512 for blocks whose scale s scales every entry",
				"magnitude m exactly (m·s is a float32 without rounding: the significant bits of m and s",
				"fit in 24, the product is normal and finite): then float64(m·s) = float64(m)·float64(s),",
				"one float64 product. mags holds the magnitudes as float64, cell-major.")
		default:
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
				fmt.Sprintf("The cells of up to %d values (whole groups, across blocks) are searched 16 at a time as", selChunk),
				"lutEncode6AVX512 does (from the third level for up to 16 cells, over eight levels past 64,",
				"the last two gathered; a NaN in the cell of 0) and kept on the stack as bytes with their",
				"flags (the sign in bit 7, NaN in bit 6) and |v| as float64; then the",
				"errors of two groups at a time accumulate in float64 lanes, one per table (two chains of sums",
				"in flight), the least is found by VMINPD (a NaN counting as +Inf: a NaN error arises only",
				"where every table's error is +Inf or NaN, and the first table wins then as in the loop; two",
				"tables compare by VUCOMISD as the loop does), and the codes are looked up by VPERMB in the",
				"chosen table's 64 codes (two tables: after the chunk's groups, 64 at a time, selCodes2).")
		}
	}
	Load(Param("codes").Base(), RDI)
	Load(Param("meta").Base(), R8)
	Load(Param("x").Base(), RSI)
	Load(Param("x").Len(), RCX)
	Load(Param("group"), RDX)
	Load(Param("mags").Base(), R12)
	cellBuf := AllocLocal(selChunk + 64)      // cell bytes
	flagBuf := AllocLocal(selChunk + 64)      // the sign in bit 7, NaN in bit 6
	absBuf := AllocLocal(8 * (selChunk + 16)) // |v| (or |v|·mul) as float64
	var wBuf Mem
	if weighted {
		wBuf = AllocLocal(8 * (selChunk + 16)) // the weights as float64
	}
	slot := AllocLocal(8 * 14)
	chunkCap, allOnes, first, root2, tbP := slot, slot.Offset(8), slot.Offset(16), slot.Offset(72), slot.Offset(80)
	metaStart, log2g := slot.Offset(88), slot.Offset(96)  // two tables: the chunk's first meta field, log2 of the group
	wP := slot.Offset(104)                                // the weights of the chunk
	cellLeft, valLeft := slot.Offset(24), slot.Offset(32) // values left in the block of each pass
	mulsP, scalesP, tcodesP, zeroP := slot.Offset(40), slot.Offset(48), slot.Offset(56), slot.Offset(64)
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	for _, p := range []struct {
		name string
		at   Mem
	}{{"muls", mulsP}, {"scales", scalesP}, {"tcodes", tcodesP}, {"zero", zeroP}} {
		Load(Param(p.name).Base(), RAX)
		MOVQ(RAX, p.at)
	}
	if weighted {
		Load(Param("w").Base(), RAX)
		MOVQ(RAX, wP)
	}
	XORL(EAX, EAX)
	MOVQ(RAX, cellLeft)
	MOVQ(RAX, valLeft)
	// The chunk: the most whole groups in selChunk values.
	MOVQ(U32(selChunk), RAX)
	XORL(EDX, EDX)
	Load(Param("group"), R9)
	DIVQ(R9)
	IMULQ(R9, RAX)
	MOVQ(RAX, chunkCap)
	MOVQ(R9, RDX)
	MOVQ(U32(0xffffffff), RAX)
	MOVQ(RAX, allOnes)
	NOTQ(RAX) // the high half
	ORQ(RAX, allOnes)
	BZHIQ(RDX, allOnes, RAX)
	KMOVQ(RAX, K7) // a whole group's bytes
	Load(Param("tb"), R9)
	MOVQ(R9, tbP)
	loadLevels(R9, 6)
	MOVL(word(R9, firstOff), EAX)
	MOVQ(RAX, first)
	MOVL(word(R9, levelOff+2*32), EAX) // the root of a search from level 2
	MOVL(EAX, root2)
	VPBROADCASTD(word(R9, negOff), Z9)
	gen.Broadcast32(0x7fffffff, Z10, RAX, X31)
	gen.Broadcast32(0x80000000, Z11, RAX, X31)
	VPBROADCASTD(word(R9, signOff), Z12)
	MOVQ(U64(0x7ff0000000000000), RAX)
	VPBROADCASTQ(RAX, Z13)
	gen.Broadcast32(1, ones, RAX, X31)
	gen.Broadcast32(0x40, Z8, RAX, X31)
	gen.Broadcast32(0x80, Z29, RAX, X31)
	gen.Broadcast32(0x40404040, Z30, RAX, X31)
	sh := map[int]uint8{2: 3, 4: 4, 8: 5, 16: 6}[nt]
	if v != selGeneral {
		sh++ // float64 magnitudes
	}
	l := func(s string) LabelRef { return LabelRef(name + "_" + s) }

	if nt == 2 {
		TZCNTQ(RDX, RAX)
		MOVQ(RAX, log2g)
	}
	Label(name + "_chunk")
	MOVQ(chunkCap, R10)
	minInto(R10, RCX)
	if nt == 2 {
		MOVQ(R8, metaStart)
	}
	// The cells of the chunk: a segment of it in one block at a time, 16
	// values at a time.
	XORL(R11L, R11L) // the segment's offset in the chunk
	Label(name + "_seg")
	CMPQ(cellLeft, U8(0))
	JNE(l("segblock"))
	MOVQ(mulsP, RAX)
	VBROADCASTSS(Mem{Base: RAX}, Z15)
	ADDQ(U8(4), mulsP)
	if pow2 {
		VCVTPS2PD(Y15, Z7) // mul as float64
	}
	Load(Param("block"), RAX)
	MOVQ(RAX, cellLeft)
	Label(name + "_segblock")
	MOVQ(R10, R13)
	SUBQ(R11, R13)
	minInto(R13, cellLeft) // the segment's length
	SUBQ(R13, cellLeft)
	ADDQ(R11, R13) // its end
	MOVQ(tbP, RBX)
	CMPQ(first, U8(2))
	JE(l("vec4"))
	CMPQ(first, U8(8))
	JE(l("vec8"))
	for _, from := range []int{0, 2, 8} {
		lab := map[int]string{0: "vec6", 2: "vec4", 8: "vec8"}[from]
		Label(name + "_" + lab)
		MOVQ(R13, R15)
		SUBQ(R11, R15)
		MOVQ(U32(16), RAX)
		minInto(R15, RAX)
		tailMask(R15, K1)
		VMOVUPS_Z(Mem{Base: RSI, Index: R11, Scale: 4}, K1, Z16)
		if weighted {
			// The weights as float64 (Z24–Z26 are free until the errors).
			MOVQ(wP, RAX)
			VMOVUPS_Z(Mem{Base: RAX, Index: R11, Scale: 4}, K1, Z24)
			VPANDD(Z10, Z24, Z24) // −0 as +0
			VCVTPS2PD(Y24, Z25)
			VEXTRACTF64X4(U8(1), Z24, Y26)
			VCVTPS2PD(Y26, Z26)
			VMOVUPD(Z25, wBuf.Idx(R11, 8))
			VMOVUPD(Z26, wBuf.Offset(64).Idx(R11, 8))
		}
		VMULPS(Z15, Z16, Z17) // y
		VPANDD(Z10, Z17, Z18)
		VCMPPS(U8(7), Z17, Z17, K4) // not NaN
		VMOVDQA32_Z(Z18, K4, Z18)   // a NaN's key is that of 0
		if from == 8 {
			searchFrom(0, 6, root2, Z18, Z19, Z20, K5)
			// Levels 6 and 7 gather their nodes.
			for _, at := range []int{level6, level7} {
				KXNORW(K6, K6, K6)
				VPXORD(Z20, Z20, Z20)
				VPGATHERDD(Mem{Base: RBX, Disp: 4 * at, Index: Z19, Scale: 4}, K6, Z20)
				VPCMPD(U8(5), Z20, Z18, K5)
				VPADDD(Z19, Z19, Z19)
				VPADDD(ones, Z19, K5, Z19)
			}
		} else {
			searchFrom(from, 6, root2, Z18, Z19, Z20, K5)
		}
		VPMOVDB(Z19, X20)
		VMOVDQU8(X20, cellBuf.Idx(R11, 1))
		VCMPPS(U8(3), Z17, Z17, K2)
		VPTESTMD(Z11, Z17, K3)
		VPTESTMD(Z9, Z17, K4)
		KANDW(K4, K3, K3)
		VMOVDQA32_Z(Z29, K3, Z19) // the sign in bit 7
		VPORD(Z8, Z19, K2, Z19)   // NaN in bit 6
		VPMOVDB(Z19, X20)
		VMOVDQU8(X20, flagBuf.Idx(R11, 1))
		VPANDD(Z10, Z16, Z21)
		VCVTPS2PD(Z21.AsY(), Z22)
		VEXTRACTF64X4(U8(1), Z21, Y23)
		VCVTPS2PD(Y23, Z23)
		if pow2 {
			VMULPD(Z7, Z22, Z22)
			VMULPD(Z7, Z23, Z23)
		}
		VMOVUPD(Z22, absBuf.Idx(R11, 8))
		VMOVUPD(Z23, absBuf.Offset(64).Idx(R11, 8))
		ADDQ(R15, R11)
		CMPQ(R11, R13)
		JB(l(lab))
		CMPQ(R11, R10)
		JB(l("seg"))
		JMP(l("values"))
	}

	// The groups of the chunk, two whole ones at a time where they can be.
	Label(name + "_values")
	XORL(R15L, R15L) // the group's offset in the chunk
	accA, accB := selAccs(nt, 24), selAccs(nt, 26)
	Label(name + "_group")
	CMPQ(R15, R10)
	JAE(l("chunkdone"))
	if !pow2 {
		// The scale of the group's block.
		CMPQ(valLeft, U8(0))
		JNE(l("scaled"))
		MOVQ(scalesP, RAX)
		VBROADCASTSS(Mem{Base: RAX}, Z7)
		if v == selExact {
			VCVTPS2PD(Y7, Z7) // the scale as float64
		}
		ADDQ(U8(4), scalesP)
		Load(Param("block"), RAX)
		MOVQ(RAX, valLeft)
		Label(name + "_scaled")
	}
	MOVQ(R10, R11)
	SUBQ(R15, R11) // values left in the chunk
	LEAQ(Mem{Base: RDX, Index: RDX, Scale: 1}, RAX)
	CMPQ(R11, RAX)
	JB(l("single"))
	if !pow2 {
		CMPQ(valLeft, RAX) // both in this block
		JB(l("single"))
		SUBQ(RAX, valLeft)
	}
	zeroAccs(accA)
	zeroAccs(accB)
	MOVQ(R15, R13)
	LEAQ(Mem{Base: R15, Index: RDX, Scale: 1}, R14)
	MOVQ(R14, R11) // the end of the first group
	Label(name + "_vpair")
	MOVBLZX(cellBuf.Idx(R13, 1), EAX)
	SHLL(U8(sh), EAX)
	MOVBLZX(cellBuf.Idx(R14, 1), EBX)
	SHLL(U8(sh), EBX)
	selStep(nt, v, Mem{Base: R12, Index: RAX, Scale: 1}, absBuf.Idx(R13, 8), wOf(weighted, wBuf, R13), accA, Z16, Z17, Z18)
	selStep(nt, v, Mem{Base: R12, Index: RBX, Scale: 1}, absBuf.Idx(R14, 8), wOf(weighted, wBuf, R14), accB, Z19, Z20, Z21)
	INCQ(R13)
	INCQ(R14)
	CMPQ(R13, R11)
	JB(l("vpair"))
	selFinish(name, "a", nt, accA, Z28, Z31, cellBuf, flagBuf, first, tcodesP, zeroP, K7, RDX)
	ADDQ(RDX, R15)
	selFinish(name, "b", nt, accB, Z28, Z31, cellBuf, flagBuf, first, tcodesP, zeroP, K7, RDX)
	ADDQ(RDX, R15)
	JMP(l("group"))

	// One group (the last may be shorter).
	Label(name + "_single")
	minInto(R11, RDX) // the group's length
	if !pow2 {
		SUBQ(R11, valLeft)
	}
	BZHIQ(R11, allOnes, RAX)
	KMOVQ(RAX, K6)
	zeroAccs(accA)
	MOVQ(R15, R13)
	LEAQ(Mem{Base: R15, Index: R11, Scale: 1}, R14)
	Label(name + "_vsingle")
	MOVBLZX(cellBuf.Idx(R13, 1), EAX)
	SHLL(U8(sh), EAX)
	selStep(nt, v, Mem{Base: R12, Index: RAX, Scale: 1}, absBuf.Idx(R13, 8), wOf(weighted, wBuf, R13), accA, Z16, Z17, Z18)
	INCQ(R13)
	CMPQ(R13, R14)
	JB(l("vsingle"))
	selFinish(name, "s", nt, accA, Z28, Z31, cellBuf, flagBuf, first, tcodesP, zeroP, K6, R11)
	ADDQ(R11, R15)
	JMP(l("group"))

	Label(name + "_chunkdone")
	if nt == 2 {
		selCodes2(name, cellBuf, flagBuf, first, metaStart, log2g, tcodesP, zeroP, allOnes)
	}
	LEAQ(Mem{Base: RSI, Index: R10, Scale: 4}, RSI)
	if weighted {
		MOVQ(wP, RAX)
		LEAQ(Mem{Base: RAX, Index: R10, Scale: 4}, RAX)
		MOVQ(RAX, wP)
	}
	SUBQ(R10, RCX)
	JNZ(l("chunk"))
	Label(name + "_done")
	gen.End(false)
}

// lanePatterns are VPERMB indexes: pattern l maps byte i to i >> l, the
// group of value i for groups of 2^l values.
var lanePatterns Mem

// selCodes2 writes the codes of the R10 values of a chunk between two
// tables whose groups (of 2^log2g values, R8 past their meta fields,
// metaStart at the first) are chosen: 64 values at a time, each value's
// table from the meta fields (VPERMB by the group pattern), its code looked
// up by cell and table at once (VPERMI2B over both tables' 64 codes, or,
// past 64 cells, the 256 codes of each table by two VPERMI2B chosen by the
// cell's bit 7), the sign bit and the chosen table's NaN code merged by the
// flags. DI advances past the codes.
func selCodes2(name string, cellBuf, flagBuf, first, metaStart, log2g, tcodesP, zeroP, allOnes Mem) {
	if lanePatterns.Symbol.Name == "" {
		var b []byte
		for l := range 7 {
			for i := range 64 {
				b = append(b, byte(i>>l))
			}
		}
		lanePatterns = gen.Bytes("lutLanePatterns", b)
	}
	l := func(s string) LabelRef { return LabelRef(name + "_" + s) }
	XORL(R15L, R15L) // the offset in the chunk
	MOVQ(log2g, R14)
	MOVQ(R14, RAX)
	SHLQ(U8(6), RAX)
	LEAQ(lanePatterns, RBX)
	VMOVDQU8(Mem{Base: RBX, Index: RAX, Scale: 1}, Z23)
	MOVQ(zeroP, RBX)
	VPBROADCASTB(Mem{Base: RBX}, Z26)
	VPBROADCASTB(Mem{Base: RBX, Disp: 1}, Z27)
	MOVQ(tcodesP, RBX)
	Label(name + "_c2")
	CMPQ(R15, R10)
	JAE(l("c2done"))
	MOVQ(R10, R11)
	SUBQ(R15, R11)
	MOVQ(U32(64), RAX)
	minInto(R11, RAX) // values in this step
	BZHIQ(R11, allOnes, RAX)
	KMOVQ(RAX, K6)
	// The meta fields of the step's groups: ceil(n / group) of them.
	MOVL(U32(1), EAX)
	SHLXQ(R14, RAX, RAX)
	LEAQ(Mem{Base: R11, Index: RAX, Scale: 1, Disp: -1}, RAX)
	SHRXQ(R14, RAX, RAX)
	BZHIQ(RAX, allOnes, RAX)
	KMOVQ(RAX, K5)
	MOVQ(R15, RAX)
	SHRXQ(R14, RAX, RAX)
	ADDQ(metaStart, RAX)
	VMOVDQU8_Z(Mem{Base: RAX}, K5, Z22)
	VPERMB(Z22, Z23, Z24) // each value's table
	VPTESTMB(Z24, Z24, K4)
	VMOVDQU8_Z(cellBuf.Idx(R15, 1), K6, Z18)
	CMPQ(first, U8(8))
	JE(l("c2big"))
	VPADDB(Z30, Z18, K4, Z18) // table 1's codes follow table 0's 64
	VMOVDQU8(Mem{Base: RBX}, Z19)
	VPERMI2B(Mem{Base: RBX, Disp: 64}, Z19, Z18)
	JMP(l("c2flags"))
	Label(name + "_c2big")
	VPMOVB2M(Z18, K3) // cells from 128
	for k, dst := range []VecPhysical{Z20, Z21} {
		row := Mem{Base: RBX, Disp: 256 * k}
		VMOVDQU8(row, Z16)
		VMOVDQA64(Z18, dst)
		VPERMI2B(row.Offset(64), Z16, dst)
		VMOVDQU8(row.Offset(128), Z16)
		VMOVDQA64(Z18, Z17)
		VPERMI2B(row.Offset(192), Z16, Z17)
		VMOVDQU8(Z17, K3, dst)
	}
	VMOVDQA64(Z20, Z18)
	VMOVDQU8(Z21, K4, Z18)
	Label(name + "_c2flags")
	VMOVDQU8_Z(flagBuf.Idx(R15, 1), K6, Z21)
	VPMOVB2M(Z21, K3)
	VMOVDQU8_Z(Z12, K3, Z20)
	VPORQ(Z20, Z18, Z18)
	VPTESTMB(Z30, Z21, K2)
	VMOVDQA64(Z26, Z20)
	VMOVDQU8(Z27, K4, Z20) // the chosen table's NaN code
	VMOVDQU8(Z20, K2, Z18)
	VMOVDQU8(Z18, K6, Mem{Base: RDI})
	ADDQ(R11, RDI)
	ADDQ(U8(64), R15)
	JMP(l("c2"))
	Label(name + "_c2done")
}

// selAccs returns the accumulators of a group's errors for nt tables, from
// vector register first (two zmm for 16 tables, one zmm for 8, a ymm for 4,
// an xmm for 2).
func selAccs(nt, first int) []VecPhysical {
	z := gen.Z(first)
	switch nt {
	case 16:
		return []VecPhysical{z, gen.Z(first + 1)}
	case 8:
		return []VecPhysical{z}
	case 4:
		return []VecPhysical{z.AsY().(VecPhysical)}
	}
	return []VecPhysical{z.AsX().(VecPhysical)}
}

func zeroAccs(acc []VecPhysical) {
	for _, a := range acc {
		VXORPD(a, a, a)
	}
}

// wOf returns the address of the weight (as float64) of the value at index
// i of the chunk in wBuf, or nil when the kernel is not weighted.
func wOf(weighted bool, wBuf Mem, i GPPhysical) *Mem {
	if !weighted {
		return nil
	}
	m := wBuf.Idx(i, 8)
	return &m
}

// selStep adds to acc the squared errors of the value whose absolute value
// (as float64) is at ax and whose cell's row of magnitudes is at row: float32
// times the scale in Z7 (selGeneral); float64, against the value times mul
// (selPow2); float64 times the float64 scale in Z7 (selExact). With wx (a
// weighted kernel), each squared error is multiplied by the float64 weight
// at wx before it is added. r, d0 and d1 are scratch vectors.
func selStep(nt int, v selVariant, row, ax Mem, wx *Mem, acc []VecPhysical, r, d0, d1 VecPhysical) {
	y := func(v VecPhysical) VecPhysical { return v.AsY().(VecPhysical) }
	x := func(v VecPhysical) VecPhysical { return v.AsX().(VecPhysical) }
	switch v {
	case selPow2:
		// d = |v|·mul − m (the negated difference: the same square).
		switch nt {
		case 16:
			VBROADCASTSD(ax, r)
			VSUBPD(row, r, d0)
			VSUBPD(row.Offset(64), r, d1)
		case 8:
			VBROADCASTSD(ax, r)
			VSUBPD(row, r, d0)
		case 4:
			VBROADCASTSD(ax, y(r))
			VSUBPD(row, y(r), y(d0))
		case 2:
			VMOVDDUP(ax, x(r))
			VSUBPD(row, x(r), x(d0))
		}
	case selExact:
		switch nt {
		case 16:
			VMULPD(row, Z7, d0)
			VMULPD(row.Offset(64), Z7, d1)
			VSUBPD_BCST(ax, d0, d0)
			VSUBPD_BCST(ax, d1, d1)
		case 8:
			VMULPD(row, Z7, d0)
			VSUBPD_BCST(ax, d0, d0)
		case 4:
			VMULPD(row, Y7, y(d0))
			VSUBPD_BCST(ax, y(d0), y(d0))
		case 2:
			VMULPD(row, X7, x(d0))
			VSUBPD_BCST(ax, x(d0), x(d0))
		}
	default:
		switch nt {
		case 16:
			VMULPS(row, Z7, r)
			VCVTPS2PD(y(r), d0)
			VEXTRACTF64X4(U8(1), r, y(d1))
			VCVTPS2PD(y(d1), d1)
			VSUBPD_BCST(ax, d0, d0)
			VSUBPD_BCST(ax, d1, d1)
		case 8:
			VMULPS(row, Y7, y(r))
			VCVTPS2PD(y(r), d0)
			VSUBPD_BCST(ax, d0, d0)
		case 4:
			VMULPS(row, X7, x(r))
			VCVTPS2PD(x(r), y(d0))
			VSUBPD_BCST(ax, y(d0), y(d0))
		case 2:
			VMOVSD(row, x(r))
			VMULPS(X7, x(r), x(r))
			VCVTPS2PD(x(r), x(d0))
			VSUBPD_BCST(ax, x(d0), x(d0))
		}
	}
	if wx != nil {
		// r is free once the differences are made: the weight in every
		// lane, and in K5 whether it is not 0 (a zero weight adds nothing,
		// not even the NaN of 0·∞).
		switch nt {
		case 16, 8:
			VBROADCASTSD(*wx, r)
			VPTESTMQ(r, r, K5)
		case 4:
			VBROADCASTSD(*wx, y(r))
			VPTESTMQ(y(r), y(r), K5)
		case 2:
			VMOVDDUP(*wx, x(r))
			VPTESTMQ(x(r), x(r), K5)
		}
	}
	ds := []VecPhysical{d0, d1}
	for i, a := range acc {
		d, wr := ds[i], r
		switch nt {
		case 4:
			d, wr = y(d), y(r)
		case 2:
			d, wr = x(d), x(r)
		}
		VMULPD(d, d, d)
		if wx != nil {
			VMULPD(wr, d, d)
			VADDPD(d, a, K5, a)
			continue
		}
		VADDPD(d, a, a)
	}
}

// selArgmin sets EAX to the first table of least error of acc (a NaN error
// counting as +Inf), through the scratch vectors m and t; inf holds +Inf.
func selArgmin(nt int, acc []VecPhysical, m, t, inf VecPhysical) {
	for _, a := range acc {
		VCMPPD(U8(3), a, a, K1)
		VMOVAPD(inf, K1, a)
	}
	if nt == 16 {
		VMINPD(acc[1], acc[0], m)
	} else {
		VMOVAPD(acc[0], m)
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
		VCMPPD(U8(0), m, acc[1], K2)
		KUNPCKBW(K1, K2, K1)
	}
	KMOVW(K1, EAX)
	TZCNTL(EAX, EAX)
}

// selFinish ends a group whose errors are in acc, of glen values (a register)
// starting at R15 in the chunk, whose bytes mask k selects: the first table
// of least error into meta (R8, advanced), and the group's codes through it
// to DI (advanced by glen). m and t are scratch vectors; the label of the
// code path past 64 cells is named after the kernel and id.
func selFinish(name, id string, nt int, acc []VecPhysical, m, t VecPhysical, cellBuf, flagBuf, first, tcodesP, zeroP Mem, k Register, glen GPPhysical) {
	inf := Z13
	switch nt {
	case 4:
		inf, m, t = Y13, m.AsY().(VecPhysical), t.AsY().(VecPhysical)
	case 2:
		inf, m, t = X13, m.AsX().(VecPhysical), t.AsX().(VecPhysical)
	}
	if nt == 2 {
		// Table 1 when e1 < e0: VUCOMISD sets "above" for e0 > e1 only
		// when both are numbers, as the loop's comparison is false for a
		// NaN.
		XORL(EAX, EAX)
		VPERMILPD(U8(1), acc[0], t)
		VUCOMISD(t, acc[0])
		SETHI(AL)
	} else {
		selArgmin(nt, acc, m, t, inf)
	}
	MOVB(AL, Mem{Base: R8})
	INCQ(R8)
	if nt == 2 {
		return // the codes of the chunk come after its groups (selCodes2)
	}
	// The codes through the chosen table's codes by cell (VPERMB of 64, or
	// past 64 cells two VPERMI2B of 128 chosen by the cell's bit 7); a
	// negative value's flag (bit 7) adds the sign bit, a NaN's (bit 6) takes
	// the table's NaN code.
	MOVQ(zeroP, RBX)
	VPBROADCASTB(Mem{Base: RBX, Index: RAX, Scale: 1}, Z16)
	MOVQ(tcodesP, RBX)
	VMOVDQU8_Z(cellBuf.Idx(R15, 1), k, Z18)
	big, done := name+"_big"+id, name+"_coded"+id
	CMPQ(first, U8(8))
	JE(LabelRef(big))
	SHLQ(U8(6), RAX)
	VMOVDQU8(Mem{Base: RBX, Index: RAX, Scale: 1}, Z17)
	VPERMB(Z17, Z18, Z19)
	JMP(LabelRef(done))
	Label(big)
	SHLQ(U8(8), RAX)
	row := Mem{Base: RBX, Index: RAX, Scale: 1}
	VMOVDQU8(row, Z17)
	VMOVDQA64(Z18, Z19)
	VPERMI2B(row.Offset(64), Z17, Z19) // cells below 128 (bit 7 ignored)
	VMOVDQU8(row.Offset(128), Z17)
	VMOVDQA64(Z18, Z20)
	VPERMI2B(row.Offset(192), Z17, Z20) // cells from 128
	VPMOVB2M(Z18, K3)
	VMOVDQU8(Z20, K3, Z19)
	Label(done)
	VMOVDQU8_Z(flagBuf.Idx(R15, 1), k, Z18)
	VPMOVB2M(Z18, K3)
	VMOVDQU8_Z(Z12, K3, Z20)
	VPORQ(Z20, Z19, Z19)
	VPTESTMB(Z30, Z18, K2)
	VMOVDQU8(Z16, K2, Z19)
	VMOVDQU8(Z19, k, Mem{Base: RDI})
	ADDQ(glen, RDI)
}

// lutDecodeGroups writes lutDecodeGroupsAVX512 (tables of 16 entries, each
// group's in a zmm) or, with gather, lutDecodeGroupsGatherAVX512 (tables of
// 2^log2 entries, gathered).
func lutDecodeGroups(gather bool) {
	name, params := "lutDecodeGroupsAVX512", "tmask int"
	doc := []string{name + " is the AVX-512 kernel of lutDecodeGroupsGo, the loop",
		"",
		"\tfor i, c := range src {",
		"\t\tdst[i] = luts[16*(int(meta[i/group])&tmask) + int(c&15)] * scales[i/block]",
		"\t}",
		"",
		"a group at a time (its table in a zmm), 16 codes at a time (the last of each group masked):",
		"VPMOVZXBD, VPERMPS of the table, VMULPS."}
	if gather {
		name, params = "lutDecodeGroupsGatherAVX512", "tmask, log2 int"
		doc = []string{name + " is the AVX-512 kernel of lutDecodeGroupsGo for tables of 2^log2 entries, the loop",
			"",
			"\tfor i, c := range src {",
			"\t\tdst[i] = luts[(int(meta[i/group])&tmask)<<log2 + int(c)&(1<<log2-1)] * scales[i/block]",
			"\t}",
			"",
			"a group at a time, 16 codes at a time (the last of each group masked): VPMOVZXBD, the table's",
			"offset added, VGATHERDPS, VMULPS."}
	}
	TEXT(name, NOSPLIT, "func(dst []float32, src, meta []uint8, group, block int, luts, scales []float32, "+params+")")
	Pragma("noescape")
	Doc(doc...)
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	Load(Param("meta").Base(), R11)
	Load(Param("scales").Base(), RBX)
	Load(Param("luts").Base(), R8)
	Load(Param("tmask"), R12)
	if gather {
		Load(Param("log2"), R14)
	}
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	if gather {
		MOVL(U32(1), EAX)
		SHLXL(R14L, EAX, EAX)
		DECL(EAX)
		VPBROADCASTD(EAX, Z4) // the code mask
	}
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
	if gather {
		SHLXQ(R14, RAX, RAX)
		VPBROADCASTD(EAX, Z0) // the table's first entry
	} else {
		SHLQ(U8(6), RAX)
		VMOVUPS(Mem{Base: R8, Index: RAX, Scale: 1}, Z0)
	}
	Load(Param("group"), R13)
	minInto(R13, R9)
	SUBQ(R13, R9)
	Label(name + "_vec")
	MOVQ(U32(16), R10)
	minInto(R10, R13)
	tailMask(R10, K1)
	VMOVDQU8_Z(Mem{Base: RSI}, K1, X2)
	VPMOVZXBD(X2, Z2)
	if gather {
		VPANDD(Z4, Z2, Z2)
		VPADDD(Z0, Z2, Z2)
		KMOVW(K1, K2)
		VXORPS(Z3, Z3, Z3)
		VGATHERDPS(Mem{Base: R8, Index: Z2, Scale: 4}, K2, Z3)
	} else {
		VPERMPS(Z0, Z2, Z3)
	}
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

// lutDecodeLanes writes lutDecodeLanes<total>AVX512, whose tables hold
// total entries in all (16, 32 or 64: looked up by VPERMPS, VPERMI2PS or two
// of them), or lutDecodeLanesGatherAVX512 (total 0: any number, gathered).
func lutDecodeLanes(total int) {
	name := fmt.Sprintf("lutDecodeLanes%dAVX512", total)
	how := fmt.Sprintf("looked up in the %d entries of all tables (", total) + map[int]string{16: "VPERMPS", 32: "VPERMI2PS", 64: "two VPERMI2PS"}[total] + ")"
	if total == 0 {
		name, how = "lutDecodeLanesGatherAVX512", "gathered (VGATHERDPS)"
	}
	TEXT(name, NOSPLIT, "func(dst []float32, src, meta []uint8, group, block int, luts, scales []float32, tmask, log2 int, lanes int)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of lutDecodeGroupsGo for blocks of a multiple of 16 codes",
		"and groups of a power of two up to 16 codes (lanes = log2 of the group) or of a multiple",
		"of 16 (lanes = −1), the loop",
		"",
		"\tfor i, c := range src {",
		"\t\tdst[i] = luts[(int(meta[i/group])&tmask)<<log2 + int(c)&(1<<log2-1)] * scales[i/block]",
		"\t}",
		"",
		"16 codes at a time, whatever their groups: each lane's meta field (the fields of the 16",
		"codes widened to dwords and spread by VPERMD, or one broadcast), its table's offset added",
		"to the code, the entry "+how+", VMULPS.")
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	Load(Param("meta").Base(), R11)
	Load(Param("scales").Base(), RBX)
	Load(Param("luts").Base(), R8)
	Load(Param("tmask"), RAX)
	VPBROADCASTD(EAX, Z12)
	Load(Param("log2"), RAX)
	VMOVD(EAX, X11) // the shift of a table's offset
	MOVL(U32(1), EDX)
	SHLXL(EAX, EDX, EDX)
	DECL(EDX)
	VPBROADCASTD(EDX, Z4) // the code mask
	Load(Param("lanes"), R14)
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	for i := range total / 16 {
		VMOVUPS(Mem{Base: R8, Disp: 64 * i}, gen.Z(16+i))
	}
	// The lanes' groups within 16 codes: i >> lanes.
	iota := make([]uint32, 16)
	for i := range iota {
		iota[i] = uint32(i)
	}
	VMOVDQU32(gen.Table(name+"Iota", iota), Z5)
	if total == 64 {
		gen.Broadcast32(32, Z20, RAX, X20)
	}
	TESTQ(R14, R14)
	JS(LabelRef(name + "_wide"))
	VMOVQ(R14, X7)
	VPSRLD(X7, Z5, Z5)
	Label(name + "_wide")
	XORL(R13L, R13L) // codes left in the group (wide groups)
	Label(name + "_block")
	VBROADCASTSS(Mem{Base: RBX}, Z1)
	ADDQ(U8(4), RBX)
	Load(Param("block"), R9)
	minInto(R9, RCX)
	SUBQ(R9, RCX)
	Label(name + "_vec")
	MOVQ(U32(16), R10)
	minInto(R10, R9)
	tailMask(R10, K1)
	TESTQ(R14, R14)
	JS(LabelRef(name + "_onemeta"))
	// Narrow groups: the fields of the ceil(n/group) groups of the n
	// codes, one per lane by VPERMD.
	MOVL(U32(1), EAX)
	SHLXQ(R14, RAX, RAX)
	LEAQ(Mem{Base: R10, Index: RAX, Scale: 1, Disp: -1}, RAX)
	SHRXQ(R14, RAX, RAX)
	MOVL(U32(0xffff), EDX)
	BZHIL(EAX, EDX, EDX)
	KMOVW(EDX, K3)
	VMOVDQU8_Z(Mem{Base: R11}, K3, X6)
	VPMOVZXBD(X6, Z6)
	VPERMD(Z6, Z5, Z6)
	ADDQ(RAX, R11)
	JMP(LabelRef(name + "_codes"))
	// Wide groups: a group's field broadcast while its codes last.
	Label(name + "_onemeta")
	TESTQ(R13, R13)
	JNZ(LabelRef(name + "_samegroup"))
	MOVBLZX(Mem{Base: R11}, EAX)
	INCQ(R11)
	VPBROADCASTD(EAX, Z6)
	Load(Param("group"), R13)
	Label(name + "_samegroup")
	SUBQ(R10, R13)
	Label(name + "_codes")
	VMOVDQU8_Z(Mem{Base: RSI}, K1, X2)
	VPMOVZXBD(X2, Z2)
	VPANDD(Z4, Z2, Z2)
	VPANDD(Z12, Z6, Z7)
	VPSLLD(X11, Z7, Z7)
	VPADDD(Z7, Z2, Z2)
	switch total {
	case 16:
		VPERMPS(Z16, Z2, Z3)
	case 32:
		VMOVDQA32(Z2, Z3)
		VPERMI2PS(Z17, Z16, Z3)
	case 64:
		VMOVDQA32(Z2, Z3)
		VPERMI2PS(Z17, Z16, Z3)
		VMOVDQA32(Z2, Z7)
		VPERMI2PS(Z19, Z18, Z7)
		VPTESTMD(Z20, Z2, K3) // index 32 or more
		VMOVAPS(Z7, K3, Z3)
	default:
		KMOVW(K1, K2)
		VXORPS(Z3, Z3, Z3)
		VGATHERDPS(Mem{Base: R8, Index: Z2, Scale: 4}, K2, Z3)
	}
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

// nibbleLoop emits a kernel func(dst []byte, src []byte) whose count slice's
// length, shifted right by log2, is the number of steps; body runs once a
// step, after which SI moves by in and DI by out bytes.
func nibbleLoop(name string, count string, log2 uint8, in, out int, body func()) {
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param(count).Len(), RCX)
	SHRQ(U8(log2), RCX)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	body()
	ADDQ(U8(in), RSI)
	ADDQ(U8(out), RDI)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	gen.End(false)
}

// packNibbles writes packNibbles<isa>: codes two to a byte, element 2k in
// bits 3:0 (the low nibbles of each pair of codes as a word, w | w>>4, then
// the words narrowed to bytes).
func packNibbles(isa string) {
	name := "packNibbles" + isa
	TEXT(name, NOSPLIT, "func(dst []byte, src []uint8)")
	Pragma("noescape")
	if isa == "AVX512" {
		Doc(name+" is the AVX-512 kernel of packBitsGo for width 4, the loop",
			"",
			"\tfor k := range dst {",
			"\t\tdst[k] = src[2*k]&15 | src[2*k+1]<<4",
			"\t}",
			"",
			"over len(src)/64 groups of 64 codes: each pair of codes a word w (low nibbles kept),",
			"w | w>>4 (VPSRLW), narrowed to bytes (VPMOVWB).")
		gen.Broadcast32(0x0f0f0f0f, Z15, RAX, X15)
		nibbleLoop(name, "src", 6, 64, 32, func() {
			VPANDD(Mem{Base: RSI}, Z15, Z0)
			VPSRLW(U8(4), Z0, Z1)
			VPORD(Z1, Z0, Z0)
			VPMOVWB(Z0, Mem{Base: RDI})
		})
		return
	}
	Doc(name+" is the AVX2 kernel of packBitsGo for width 4 (see packNibblesAVX512) over",
		"len(src)/32 groups of 32 codes: w | w>>4 of each pair, the low bytes kept (VPAND 0x00ff,",
		"VPACKUSWB, VPERMQ).")
	gen.Broadcast32(0x0f0f0f0f, Y15, RAX, X15)
	gen.Broadcast32(0x00ff00ff, Y14, RAX, X14)
	nibbleLoop(name, "src", 5, 32, 16, func() {
		VPAND(Mem{Base: RSI}, Y15, Y0)
		VPSRLW(U8(4), Y0, Y1)
		VPOR(Y1, Y0, Y0)
		VPAND(Y14, Y0, Y0)
		VPACKUSWB(Y0, Y0, Y0)
		VPERMQ(U8(0x08), Y0, Y0)
		VMOVDQU(X0, Mem{Base: RDI})
	})
}

// unpackNibbles writes unpackNibbles<isa>: each byte widened to a word
// (VPMOVZXBW) b, then (b & 0x0f) | (b<<4 & 0x0f00), two codes.
func unpackNibbles(isa string) {
	name := "unpackNibbles" + isa
	TEXT(name, NOSPLIT, "func(dst []uint8, src []byte)")
	Pragma("noescape")
	if isa == "AVX512" {
		Doc(name+" is the AVX-512 kernel of unpackBitsGo for width 4, the loop",
			"",
			"\tfor i := range dst {",
			"\t\tdst[i] = src[i/2] >> (4 * (i % 2)) & 15",
			"\t}",
			"",
			"over len(dst)/64 groups of 64 codes: 32 bytes widened to words b (VPMOVZXBW), then",
			"(b & 0x0f) | (b<<4 & 0x0f00).")
		gen.Broadcast32(0x000f000f, Z15, RAX, X15)
		gen.Broadcast32(0x0f000f00, Z14, RAX, X14)
		nibbleLoop(name, "dst", 6, 32, 64, func() {
			VPMOVZXBW(Mem{Base: RSI}, Z0)
			VPSLLW(U8(4), Z0, Z1)
			VPANDD(Z15, Z0, Z0)
			VPANDD(Z14, Z1, Z1)
			VPORD(Z1, Z0, Z0)
			VMOVDQU8(Z0, Mem{Base: RDI})
		})
		return
	}
	Doc(name+" is the AVX2 kernel of unpackBitsGo for width 4 (see unpackNibblesAVX512) over",
		"len(dst)/32 groups of 32 codes.")
	gen.Broadcast32(0x000f000f, Y15, RAX, X15)
	gen.Broadcast32(0x0f000f00, Y14, RAX, X14)
	nibbleLoop(name, "dst", 5, 16, 32, func() {
		VPMOVZXBW(Mem{Base: RSI}, Y0)
		VPSLLW(U8(4), Y0, Y1)
		VPAND(Y15, Y0, Y0)
		VPAND(Y14, Y1, Y1)
		VPOR(Y1, Y0, Y0)
		VMOVDQU(Y0, Mem{Base: RDI})
	})
}
