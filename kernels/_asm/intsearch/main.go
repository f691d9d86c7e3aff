// Command intsearch generates the scale-search kernel of the symmetric
// integer groups of package kernels: intsearch_amd64.s and the stub
// declaration in intsearch_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./intsearch -out ../intsearch_amd64.s -stubs ../intsearch_stubs_amd64.go -pkg kernels
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		treeIdx = gen.TreeIndexes("intsearchTree")
		sqErrSymAVX512(false)
		sqErrSymAVX512(true)
		symCandsAVX512(true)
		symCandsAVX512(false)
		pickSymAVX512(true)
		pickSymAVX512(false)
	})
}

// cands is the number of candidate scales per group (kernels.searchIntCands).
const cands = 5

// sqErrSymAVX512 runs one group at a time: the five candidates'
// multipliers in Z0–Z4 and decode factors in Z5–Z9 (broadcast), their
// float32 sums in Z10–Z14, 16 elements per step in Z15, the clamp qmax in
// Z16; the five candidates' terms in Z17–Z21. Each group's five lane sums
// go to the scratch lanes (candidate c of the batch's group g at
// (16c+g)·16), and after up to 16 groups gen.Tree16 adds them up for the
// whole batch at once.
//
// The F16 variant (sqErrSymF16AVX512) computes x − q·d in one VFNMADD213PS:
// with a float16 d (11 significant bits) and |q| ≤ 127 the product q·d is
// exact in float32, so the fused and the separate operations round alike.
// Both prefetch the line ahead bytes past each 64 they read (the next
// chunk, for the pass that finds its amaxes).
func sqErrSymAVX512(f16 bool) {
	name := "sqErrSymAVX512"
	if f16 {
		name = "sqErrSymF16AVX512"
	}
	TEXT(name, NOSPLIT, "func(errs []float32, src []float32, rdiv []float32, dmul []float32, lanes []float32, glen int, stride int, nb int, qmax float32, ahead int)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of sqErrSymLanesGo's loop",
		"",
		"\tfor j := range nb {",
		"\t\tfor c := range 5 {",
		"\t\t\tr, d := rdiv[c*stride+j], dmul[c*stride+j]",
		"\t\t\tvar acc [16]float32",
		"\t\t\tfor i, v := range src[j*glen : (j+1)*glen] {",
		"\t\t\t\tq := RNE(float32(v * r)) with |q| clamped to qmax, q's sign kept",
		"\t\t\t\te := v - float32(q*d)",
		"\t\t\t\tacc[i%16] = fma32(e, e, acc[i%16])",
		"\t\t\t}",
		"\t\t\terrs[c*stride+j] = the lanes added l+8, l+4, l+2, l+1",
		"\t\t}",
		"\t}",
		"",
		"for glen a non-zero multiple of 16, len(src) ≥ nb·glen, nb ≤ stride,",
		"(sqErrSymF16AVX512) every non-zero d a float16 value, ahead ≥ 0,",
		"len(rdiv), len(dmul), len(errs) ≥ 4·stride+nb and len(lanes) ≥ 1280 (its",
		"contents are scratch). Rounding by VRNDSCALEPS (nearest even), the clamp",
		"by VRANGEPS (the smaller magnitude, the first source's sign), the square",
		"and sum by VFMADD231PS; the lanes of 16 groups are added up together",
		"(a VPERMT2D transpose tree), each group's in the loop's order.")
	Load(Param("errs").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("rdiv").Base(), R8)
	Load(Param("dmul").Base(), R9)
	Load(Param("glen"), R10)
	Load(Param("stride"), R12)
	Load(Param("nb"), R11)
	Load(Param("ahead"), R14)
	TESTQ(R11, R11)
	JZ(LabelRef(name + "_done"))
	// R12: stride·4, the candidates' stride in bytes; R13: 3·stride·4; R10:
	// steps per group.
	SHLQ(Imm(2), R12)
	LEAQ(Mem{Base: R12, Index: R12, Scale: 2}, R13)
	SHRQ(Imm(4), R10)

	// A batch: BX = min(16, groups left) groups, CX counting them, AX the
	// lanes of the batch's next group.
	Label(name + "_batch")
	MOVQ(U32(16), RBX)
	CMPQ(R11, RBX)
	CMOVQLT(R11, RBX)
	MOVQ(RBX, RCX)
	Load(Param("lanes").Base(), RAX)
	VBROADCASTSS(NewParamAddr("qmax", 144), Z16)
	Label(name + "_group")
	for c := range cands {
		VBROADCASTSS(at(R8, c), gen.Z(c))
		VBROADCASTSS(at(R9, c), gen.Z(5+c))
		VPXORD(gen.Z(10+c), gen.Z(10+c), gen.Z(10+c))
	}
	MOVQ(R10, RDX)
	Label(name + "_step")
	VMOVUPS(Mem{Base: RSI}, Z15)
	PREFETCHT1(Mem{Base: RSI, Index: R14, Scale: 1})
	for c := range cands {
		t := gen.Z(17 + c)
		VMULPS(gen.Z(c), Z15, t)
		VRNDSCALEPS(U8(0), t, t)
		VRANGEPS(U8(0x02), Z16, t, t) // min(|q|, qmax), q's sign
		if f16 {
			VFNMADD213PS(Z15, gen.Z(5+c), t) // x − d·q
		} else {
			VMULPS(gen.Z(5+c), t, t)
			VSUBPS(t, Z15, t)
		}
		VFMADD231PS(t, t, gen.Z(10+c))
	}
	ADDQ(Imm(64), RSI)
	DECQ(RDX)
	JNZ(LabelRef(name + "_step"))
	for c := range cands {
		VMOVUPS(gen.Z(10+c), Mem{Base: RAX, Disp: c * 1024})
	}
	ADDQ(Imm(64), RAX)
	ADDQ(Imm(4), R8)
	ADDQ(Imm(4), R9)
	DECQ(RCX)
	JNZ(LabelRef(name + "_group"))

	// The batch's sums: K1 masks its groups.
	MOVQ(RBX, RCX)
	MOVL(U32(1), EAX)
	SHLL(CL, EAX)
	DECL(EAX)
	KMOVW(EAX, K1)
	Load(Param("lanes").Base(), RAX)
	gen.LoadTree(treeIdx)
	for c := range cands {
		// Lane g of Z0: group g's lanes added l+8, l+4, l+2, l+1.
		for g := range 16 {
			VMOVUPS(Mem{Base: RAX, Disp: c*1024 + 64*g}, gen.Z(g))
		}
		gen.Tree16(VADDPS)
		VMOVUPS(Z0, K1, at(RDI, c))
	}
	ADDQ(Imm(64), RDI)
	SUBQ(RBX, R11)
	JNZ(LabelRef(name + "_batch"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// treeIdx holds the index tables of gen.Tree16.
var treeIdx [4][2]Mem

// at returns candidate c's entry at base, the candidates R12 bytes apart
// (R13 = 3·R12).
func at(base Register, c int) Mem {
	switch c {
	case 0:
		return Mem{Base: base}
	case 3:
		return Mem{Base: base, Index: R13, Scale: 1}
	}
	return Mem{Base: base, Index: R12, Scale: uint8(c)}
}

// bcast fills v with the 32-bit constant c (through X18, which the kernels
// leave alone).
func bcast(c uint32, v VecPhysical) { gen.Broadcast32(c, v, RAX, X18) }

// The VCMPPS predicates used here.
const (
	cmpNEQOQ = 0x0c
	cmpGTOQ  = 0x1e
	cmpGEOQ  = 0x1d
	cmpLTOQ  = 0x11
	cmpLEOQ  = 0x12
)

// The clipping ratios of the candidates after the rule's
// (kernels.searchIntRatios).
var ratios = [4]float32{0.95, 0.9, 0.85, 0.8}

// symCandsAVX512 emits symCands{F16,F32}AVX512: 16 groups per step, amax in
// Z0, the search mask in K2, candidate c's amax·r in Z2, s = amax·r/qmax in
// Z3, its code in Z5 (the previous candidate's in Z1), d in Z6, 1/d in Z7 and
// the decode factor in Z8, the candidate's validity in K3.
func symCandsAVX512(f16 bool) {
	kind, enc := "F32", "math.Float32bits(s), d = s"
	if f16 {
		kind, enc = "F16", "float32ToFloat16(min(s, 65504), true), d its value"
	}
	name := fmt.Sprintf("symCands%sAVX512", kind)
	TEXT(name, NOSPLIT, "func(codes []uint32, cand []float32, rdiv []float32, dmul []float32, amax []uint32, stride int, qmax float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of symCandsGo's loop for the "+kind+" scale format",
		"",
		"\tfor j, a := range amax {",
		"\t\tsearch := a != 0 && a < 0x7f800000",
		"\t\tfor c := range 5 {",
		"\t\t\tv := math.Float32frombits(a) (times searchIntRatios[c−1] for c > 0)",
		"\t\t\ts := v / qmax",
		"\t\t\tcode, d := "+enc,
		"\t\t\tvalid := search && v != 0 && d > 0 && (c == 0 || code != the code of c−1)",
		"\t\t\tcodes[c*stride+j], cand[c*stride+j] = code, d",
		"\t\t\trdiv[c*stride+j], dmul[c*stride+j] = 1/d, d if valid, else 0, 0",
		"\t\t}",
		"\t}",
		"",
		"over the first len(amax)/16·16 groups, stride ≥ len(amax). For the F32",
		"format a valid candidate whose d or 1/d is below 2^−126 gets the decode",
		"factor NaN (its error is then NaN, which sends the group to the float64",
		"sums). codes and cand are unspecified where rdiv is 0.")
	Load(Param("codes").Base(), RDI)
	Load(Param("cand").Base(), RSI)
	Load(Param("rdiv").Base(), R8)
	Load(Param("dmul").Base(), R9)
	Load(Param("amax").Base(), R10)
	Load(Param("amax").Len(), RCX)
	Load(Param("stride"), R12)
	SHRQ(U8(4), RCX)
	SHLQ(U8(2), R12)
	LEAQ(Mem{Base: R12, Index: R12, Scale: 2}, R13)
	VBROADCASTSS(NewParamAddr("qmax", 128), Z30)
	bcast(0x7f800000, Z31)
	bcast(0x477fe000, Z29) // 65504
	bcast(0x3f800000, Z28)
	bcast(0x00800000, Z27) // 2^−126
	bcast(0x7fc00000, Z26)
	VPXORD(Z21, Z21, Z21)
	for i, r := range ratios {
		bcast(math.Float32bits(r), gen.Z(22+i))
	}
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	VMOVDQU32(Mem{Base: R10}, Z0)
	VPTESTMD(Z0, Z0, K1)
	VPCMPUD(U8(1), Z31, Z0, K1, K2) // a != 0 && a < Inf's bits
	for c := range 5 {
		if c == 0 {
			VMOVAPS(Z0, Z2)
			KMOVW(K2, K3)
		} else {
			VMULPS(gen.Z(22+c-1), Z0, Z2)
			VCMPPS(U8(cmpNEQOQ), Z21, Z2, K2, K3) // v != 0
		}
		VDIVPS(Z30, Z2, Z3)
		if f16 {
			VMINPS(Z29, Z3, Z3)
			VCVTPS2PH(U8(0), Z3, Y4)
			VPMOVZXWD(Y4, Z5)
			VCVTPH2PS(Y4, Z6)
		} else {
			VMOVAPS(Z3, Z5)
			VMOVAPS(Z3, Z6)
		}
		VCMPPS(U8(cmpGTOQ), Z21, Z6, K3, K3) // d > 0
		if c > 0 {
			VPCMPUD(U8(4), Z1, Z5, K3, K3) // code != the previous one
		}
		VMOVDQA32(Z5, Z1)
		VDIVPS_Z(Z6, Z28, K3, Z7)
		VMOVAPS_Z(Z6, K3, Z8)
		if !f16 {
			VCMPPS(U8(cmpLTOQ), Z27, Z6, K3, K4)
			VCMPPS(U8(cmpLTOQ), Z27, Z7, K3, K5)
			KORW(K4, K5, K4)
			VMOVAPS(Z26, K4, Z8)
		}
		VMOVDQU32(Z5, at(RDI, c))
		VMOVUPS(Z6, at(RSI, c))
		VMOVUPS(Z7, at(R8, c))
		VMOVUPS(Z8, at(R9, c))
	}
	for _, r := range []Register{RDI, RSI, R8, R9, R10} {
		ADDQ(U8(64), r)
	}
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// pickSymAVX512 emits pickSym{F16,F32}AVX512, the choice among the
// candidates of 16 groups per step: the errors (+Inf where rdiv is 0) in
// Z0–Z4, the best in Z5 and its index in Z6, the indexes 1–4 in Z11–Z14;
// the groups whose choice stands in K2, whose rule takes part in K7.
func pickSymAVX512(f16 bool) {
	kind, put := "F32", "the code's 4 bytes"
	if f16 {
		kind, put = "F16", "the code's low 2 bytes"
	}
	name := "pickSym" + kind + "AVX512"
	TEXT(name, NOSPLIT, "func(pick []uint32, scales []byte, div []float32, errs []float32, rdiv []float32, cand []float32, codes []uint32, stride int, lo float32, hi float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of pickSymGo's loop for the "+kind+" scale format",
		"",
		"\tfor j := range pick {",
		"\t\te[c] := errs[c*stride+j], or +Inf where rdiv[c*stride+j] is 0",
		"\t\tbest, b := the least e[c], the first on a tie",
		"\t\tok := 2^−100 ≤ best ≤ 2^100 && best·hi < e[c]·lo for every c ≠ b",
		"\t\tpick[j] = b if ok, noPick if not, noSearch where rdiv[j] is 0",
		"\t\tif ok: scales gets "+put+" of codes[b*stride+j] at j, div[j] = cand[b*stride+j]",
		"\t}",
		"",
		"over the first len(pick)/16·16 groups, stride ≥ len(pick); the products",
		"are float32.")
	Load(Param("pick").Base(), RDI)
	Load(Param("pick").Len(), RCX)
	Load(Param("scales").Base(), R11)
	Load(Param("div").Base(), R14)
	Load(Param("errs").Base(), RSI)
	Load(Param("rdiv").Base(), R8)
	Load(Param("cand").Base(), R9)
	Load(Param("codes").Base(), R10)
	Load(Param("stride"), R12)
	SHRQ(U8(4), RCX)
	SHLQ(U8(2), R12)
	LEAQ(Mem{Base: R12, Index: R12, Scale: 2}, R13)
	VBROADCASTSS(NewParamAddr("lo", 176), Z20)
	VBROADCASTSS(NewParamAddr("hi", 180), Z19)
	bcast(0x7f800000, Z31)
	bcast(0x0d800000, Z30) // 2^−100
	bcast(0x71800000, Z29) // 2^100
	VPTERNLOGD(U8(0xff), Z28, Z28, Z28)
	bcast(0xfffffffe, Z27) // noSearch
	VPXORD(Z21, Z21, Z21)
	for c := 1; c < 5; c++ {
		bcast(uint32(c), gen.Z(10+c))
	}
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	for c := range 5 {
		e := gen.Z(c)
		VMOVUPS(at(RSI, c), e)
		VCMPPS(U8(cmpNEQOQ), at(R8, c), Z21, K1) // rdiv != 0
		if c == 0 {
			KMOVW(K1, K7)
		}
		VBLENDMPS(e, Z31, K1, e)
	}
	VMOVAPS(Z0, Z5)
	VPXORD(Z6, Z6, Z6)
	for c := 1; c < 5; c++ {
		VCMPPS(U8(cmpLTOQ), Z5, gen.Z(c), K1) // e[c] < best
		VMOVAPS(gen.Z(c), K1, Z5)
		VMOVDQA32(gen.Z(10+c), K1, Z6)
	}
	VCMPPS(U8(cmpGEOQ), Z30, Z5, K2)
	VCMPPS(U8(cmpLEOQ), Z29, Z5, K2, K2)
	VMULPS(Z19, Z5, Z7) // best·hi
	for c := range 5 {
		VMULPS(Z20, gen.Z(c), Z8)
		VCMPPS(U8(cmpLTOQ), Z8, Z7, K3) // best·hi < e[c]·lo
		if c == 0 {
			VPCMPEQD(Z21, Z6, K4)
		} else {
			VPCMPEQD(gen.Z(10+c), Z6, K4)
		}
		KORW(K3, K4, K3)
		KANDW(K3, K2, K2)
	}
	KANDW(K7, K2, K2) // a group not searched keeps the rule
	VMOVDQA32(Z28, Z9)
	VMOVDQA32(Z6, K2, Z9)
	KNOTW(K7, K7)
	VMOVDQA32(Z27, K7, Z9)
	VMOVDQU32(Z9, Mem{Base: RDI})
	// The chosen candidates' codes (Z0) and divisors (Z1).
	VMOVDQU32(at(R10, 0), Z0)
	VMOVUPS(at(R9, 0), Z1)
	for c := 1; c < 5; c++ {
		VPCMPEQD(gen.Z(10+c), Z6, K3)
		VMOVDQU32(at(R10, c), K3, Z0)
		VMOVUPS(at(R9, c), K3, Z1)
	}
	VMOVUPS(Z1, K2, Mem{Base: R14})
	if f16 {
		VPMOVDW(Z0, K2, Mem{Base: R11})
		ADDQ(U8(32), R11)
	} else {
		VMOVDQU32(Z0, K2, Mem{Base: R11})
		ADDQ(U8(64), R11)
	}
	for _, r := range []Register{RDI, RSI, R8, R9, R10, R14} {
		ADDQ(U8(64), r)
	}
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
