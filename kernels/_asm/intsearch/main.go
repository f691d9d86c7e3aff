// Command intsearch generates the scale-search kernel of the symmetric
// integer groups of package kernels: intsearch_amd64.s and the stub
// declaration in intsearch_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./intsearch -out ../intsearch_amd64.s -stubs ../intsearch_stubs_amd64.go -pkg kernels
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		sqErrSymAVX512()
	})
}

// cands is the number of candidate scales per group (kernels.searchIntCands).
const cands = 5

// sqErrSymAVX512 runs one group at a time: the five candidates'
// multipliers in Z0–Z4 and decode factors in Z5–Z9 (broadcast), their
// float32 sums in Z10–Z14, 16 elements per step in Z15, the clamp qmax in
// Z16; the five candidates' terms in Z17–Z21. After the group each sum is
// reduced to one float32 (upper half onto lower: lanes l+8, l+4, l+2, l+1).
func sqErrSymAVX512() {
	name := "sqErrSymAVX512"
	TEXT(name, NOSPLIT, "func(errs []float32, src []float32, rdiv []float32, dmul []float32, glen int, stride int, nb int, qmax float32)")
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
		"for glen a non-zero multiple of 16, len(src) ≥ nb·glen, nb ≤ stride and",
		"len(rdiv), len(dmul), len(errs) ≥ 4·stride+nb. Rounding by VRNDSCALEPS (nearest even),",
		"the clamp by VRANGEPS (the smaller magnitude, the first source's sign),",
		"the square and sum by VFMADD231PS.")
	Load(Param("errs").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("rdiv").Base(), R8)
	Load(Param("dmul").Base(), R9)
	Load(Param("glen"), R10)
	Load(Param("stride"), R12)
	Load(Param("nb"), R11)
	TESTQ(R11, R11)
	JZ(LabelRef(name + "_done"))
	VBROADCASTSS(NewParamAddr("qmax", 120), Z16)
	// R12: stride·4, the candidates' stride in bytes; R13: 3·stride·4; R10:
	// steps per group.
	SHLQ(Imm(2), R12)
	LEAQ(Mem{Base: R12, Index: R12, Scale: 2}, R13)
	SHRQ(Imm(4), R10)
	at := func(base Register, c int) Mem {
		switch c {
		case 0:
			return Mem{Base: base}
		case 3:
			return Mem{Base: base, Index: R13, Scale: 1}
		}
		return Mem{Base: base, Index: R12, Scale: uint8(c)}
	}

	Label(name + "_group")
	for c := range cands {
		VBROADCASTSS(at(R8, c), gen.Z(c))
		VBROADCASTSS(at(R9, c), gen.Z(5+c))
		VPXORD(gen.Z(10+c), gen.Z(10+c), gen.Z(10+c))
	}
	MOVQ(R10, RDX)
	Label(name + "_step")
	VMOVUPS(Mem{Base: RSI}, Z15)
	for c := range cands {
		t := gen.Z(17 + c)
		VMULPS(gen.Z(c), Z15, t)
		VRNDSCALEPS(U8(0), t, t)
		VRANGEPS(U8(0x02), Z16, t, t) // min(|q|, qmax), q's sign
		VMULPS(gen.Z(5+c), t, t)
		VSUBPS(t, Z15, t)
		VFMADD231PS(t, t, gen.Z(10+c))
	}
	ADDQ(Imm(64), RSI)
	DECQ(RDX)
	JNZ(LabelRef(name + "_step"))
	for c := range cands {
		a := gen.Z(10 + c)
		ya, xa := gen.Y(10+c), a.AsX()
		VEXTRACTF64X4(U8(1), a, Y15)
		VADDPS(Y15, ya, ya)
		VEXTRACTF128(U8(1), ya, X15)
		VADDPS(X15, xa, xa)
		VMOVHLPS(xa, xa, X15)
		VADDPS(X15, xa, xa)
		VMOVSHDUP(xa, X15)
		VADDSS(X15, xa, xa)
		VMOVSS(xa, at(RDI, c))
	}
	ADDQ(Imm(4), R8)
	ADDQ(Imm(4), R9)
	ADDQ(Imm(4), RDI)
	DECQ(R11)
	JNZ(LabelRef(name + "_group"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
