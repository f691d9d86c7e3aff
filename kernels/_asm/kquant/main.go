// Command kquant generates the search passes of the K-quant quantizers of
// package kernels: kquant_amd64.s and the stub declarations in
// kquant_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./kquant -out ../kquant_amd64.s -stubs ../kquant_stubs_amd64.go -pkg kernels
//
// Every kernel measures the candidates of one sub-block of 16 or 32 float32
// values x with weights w, which it keeps in registers: chunk c of 16
// elements in Z0+c (x) and Z2+c (w). The sums run in 16 lanes, element i
// adding to lane i%16 in order of i, and the lanes are added in the tree of
// laneReduce (k+8, k+4, k+2, then the last two), without fused
// multiply-adds, so that the bits are those of the Go loops.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		affineSums()
		affineErrs()
		symSums()
		symErrs()
		tableSums()
		tableErrs()
	})
}

// magic is 1.5·2^23: adding and subtracting it rounds to an integer, ties
// to even.
const magic = 0x4b400000

// cmpGTOQ is VCMPPS's ordered greater-than predicate (false for a NaN).
const cmpGTOQ = 0x1e

// Registers shared by the kernels.
var (
	zMagic = Z4 // magic
	zLo    = Z5 // the lowest code
	zHi    = Z6 // the highest code
)

// loadX loads the sub-block: x to R8, w to R9, its chunk count to DX, and
// the chunks to Z0, Z1 (x) and Z2, Z3 (w).
func loadX(name string) {
	Load(Param("x").Base(), R8)
	Load(Param("x").Len(), RDX)
	Load(Param("w").Base(), R9)
	SHRQ(Imm(4), RDX)
	VMOVUPS(Mem{Base: R8}, Z0)
	VMOVUPS(Mem{Base: R9}, Z2)
	CMPQ(RDX, Imm(2))
	JNE(LabelRef(name + "_one"))
	VMOVUPS(Mem{Base: R8, Disp: 64}, Z1)
	VMOVUPS(Mem{Base: R9, Disp: 64}, Z3)
	Label(name + "_one")
	gen.Broadcast32(magic, zMagic, RAX, X7)
}

// chunks emits body for chunk 0, then for chunk 1 when DX is 2.
func chunks(name string, body func(x, w VecPhysical)) {
	body(Z0, Z2)
	CMPQ(RDX, Imm(2))
	JNE(LabelRef(name + "_chunks"))
	body(Z1, Z3)
	Label(name + "_chunks")
}

// clampRound clamps v to [zLo, zHi] (a NaN to zLo) and rounds it to an
// integer, ties to even, as clampRoundPass.
func clampRound(v VecPhysical) {
	VMAXPS(zLo, v, v) // max(v, lo): lo when v is NaN
	VMINPS(zHi, v, v)
	VADDPS(zMagic, v, v)
	VSUBPS(zMagic, v, v)
}

// reduce leaves in the low lane of z's xmm the sum of its 16 lanes in the
// tree order, using t as scratch.
func reduce(z, t VecPhysical) {
	y, x := z.AsY(), z.AsX()
	VEXTRACTF32X8(Imm(1), z, t.AsY())
	VADDPS(t.AsY(), y, y)
	VEXTRACTF128(Imm(1), y, t.AsX())
	VADDPS(t.AsX(), x, x)
	VPERMILPD(Imm(1), x, t.AsX())
	VADDPS(t.AsX(), x, x)
	VMOVSHDUP(x, t.AsX())
	VADDSS(t.AsX(), x, x)
}

// loop runs body once per candidate: CX candidates, params in R10 (stride
// pstride bytes), outputs in R11 (stride ostride bytes).
func loop(name string, pstride, ostride int, body func()) {
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	body()
	ADDQ(Imm(uint64(pstride)), R10)
	ADDQ(Imm(uint64(ostride)), R11)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// bounds broadcasts the code range: zLo from lo (a float32 parameter name,
// or "" for 0), zHi from hi; a negate flag negates lo (−neg).
func bounds(lo string, negLo bool, hi string) {
	if lo == "" {
		VXORPS(zLo, zLo, zLo)
	} else {
		Load(Param(lo), X7)
		VBROADCASTSS(X7, zLo)
		if negLo {
			VXORPS(Z8, Z8, Z8)
			VSUBPS(zLo, Z8, zLo)
		}
	}
	Load(Param(hi), X7)
	VBROADCASTSS(X7, zHi)
}

func affineSums() {
	name := "kqAffineSumsAVX512"
	TEXT(name, NOSPLIT, "func(x, w, tp []float32, n float32, out []float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of affineSumsBatchGo:",
		"",
		"\tfor c := range len(tp) / 2 {",
		"\t\tout[3*c], out[3*c+1], out[3*c+2] = affineSumsGo(x, w, tp[2*c], tp[2*c+1], n)",
		"\t}",
		"",
		"with len(x) 16 or 32, len(w) ≥ len(x) and len(out) ≥ 3·len(tp)/2.")
	loadX(name)
	bounds("", false, "n")
	Load(Param("tp").Base(), R10)
	Load(Param("tp").Len(), RCX)
	SHRQ(Imm(1), RCX)
	Load(Param("out").Base(), R11)
	loop(name, 8, 12, func() {
		VBROADCASTSS(Mem{Base: R10}, Z8)          // t
		VBROADCASTSS(Mem{Base: R10, Disp: 4}, Z9) // o
		VXORPS(Z10, Z10, Z10)
		VXORPS(Z11, Z11, Z11)
		VXORPS(Z12, Z12, Z12)
		chunks(name, func(x, w VecPhysical) {
			VSUBPS(Z9, x, Z13) // x − o
			VMULPS(Z13, Z8, Z13)
			clampRound(Z13)
			VMULPS(Z13, w, Z14) // wq
			VADDPS(Z14, Z10, Z10)
			VMULPS(Z13, Z14, Z15)
			VADDPS(Z15, Z11, Z11)
			VMULPS(x, Z14, Z15)
			VADDPS(Z15, Z12, Z12)
		})
		for i, z := range []VecPhysical{Z10, Z11, Z12} {
			reduce(z, Z15)
			VMOVSS(z.AsX(), Mem{Base: R11, Disp: 4 * i})
		}
	})
}

func affineErrs() {
	name := "kqAffineErrsAVX512"
	TEXT(name, NOSPLIT, "func(x, w, dmi []float32, n float32, out []float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of affineErrBatchGo: for each candidate c",
		"with scale d, offset m and inverse id in dmi[3c:3c+3],",
		"",
		"\tvar e [16]float32",
		"\tfor i, v := range x {",
		"\t\tq := clampRoundPass((v-m)*id, 0, n)",
		"\t\tr := v - (float32(d*q) + m)",
		"\t\te[i%16] += w[i] * r * r",
		"\t}",
		"\tout[c] = laneReduce(&e)",
		"",
		"with len(x) 16 or 32, len(w) ≥ len(x) and len(out) ≥ len(dmi)/3.")
	loadX(name)
	bounds("", false, "n")
	Load(Param("dmi").Base(), R10)
	Load(Param("dmi").Len(), RCX)
	MOVQ(RCX, RAX)
	MOVQ(U64(0xaaaaaaaaaaaaaaab), RBX) // divide by 3: the high half of len·⌈2^65/3⌉, shifted
	MULQ(RBX)
	SHRQ(Imm(1), RDX)
	MOVQ(RDX, RCX)
	Load(Param("x").Len(), RDX) // the chunk count again (MULQ used DX)
	SHRQ(Imm(4), RDX)
	Load(Param("out").Base(), R11)
	loop(name, 12, 4, func() {
		VBROADCASTSS(Mem{Base: R10}, Z8)           // d
		VBROADCASTSS(Mem{Base: R10, Disp: 4}, Z9)  // m
		VBROADCASTSS(Mem{Base: R10, Disp: 8}, Z16) // id
		VXORPS(Z10, Z10, Z10)
		chunks(name, func(x, w VecPhysical) {
			VSUBPS(Z9, x, Z13) // v − m
			VMULPS(Z16, Z13, Z13)
			clampRound(Z13)
			VMULPS(Z13, Z8, Z13) // d·q
			VADDPS(Z9, Z13, Z13) // + m
			VSUBPS(Z13, x, Z13)  // r = v − x̂
			VMULPS(Z13, w, Z14)  // w·r
			VMULPS(Z13, Z14, Z14)
			VADDPS(Z14, Z10, Z10)
		})
		reduce(Z10, Z15)
		VMOVSS(X10, Mem{Base: R11})
	})
}

func symSums() {
	name := "kqSymSumsAVX512"
	TEXT(name, NOSPLIT, "func(x, w, ts []float32, neg, pos float32, out []float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of symSumsBatchGo:",
		"",
		"\tfor c, t := range ts {",
		"\t\tout[2*c], out[2*c+1] = symSumsGo(x, w, t, neg, pos)",
		"\t}",
		"",
		"with len(x) 16 or 32, len(w) ≥ len(x) and len(out) ≥ 2·len(ts).")
	loadX(name)
	bounds("neg", true, "pos")
	Load(Param("ts").Base(), R10)
	Load(Param("ts").Len(), RCX)
	Load(Param("out").Base(), R11)
	loop(name, 4, 8, func() {
		VBROADCASTSS(Mem{Base: R10}, Z8) // t
		VXORPS(Z10, Z10, Z10)
		VXORPS(Z11, Z11, Z11)
		chunks(name, func(x, w VecPhysical) {
			VMULPS(x, Z8, Z13) // t·v
			clampRound(Z13)
			VMULPS(Z13, w, Z14) // wq
			VMULPS(x, Z14, Z15)
			VADDPS(Z15, Z10, Z10)
			VMULPS(Z13, Z14, Z15)
			VADDPS(Z15, Z11, Z11)
		})
		reduce(Z10, Z15)
		VMOVSS(X10, Mem{Base: R11})
		reduce(Z11, Z15)
		VMOVSS(X11, Mem{Base: R11, Disp: 4})
	})
}

func symErrs() {
	name := "kqSymErrsAVX512"
	TEXT(name, NOSPLIT, "func(x, w, di []float32, neg, pos float32, out []float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of symErrBatchGo: for each candidate c",
		"with scale d and inverse id in di[2c:2c+2],",
		"",
		"\tvar e [16]float32",
		"\tfor i, v := range x {",
		"\t\tq := clampRoundPass(v*id, -neg, pos)",
		"\t\tr := v - d*q",
		"\t\te[i%16] += w[i] * r * r",
		"\t}",
		"\tout[c] = laneReduce(&e)",
		"",
		"with len(x) 16 or 32, len(w) ≥ len(x) and len(out) ≥ len(di)/2.")
	loadX(name)
	bounds("neg", true, "pos")
	Load(Param("di").Base(), R10)
	Load(Param("di").Len(), RCX)
	SHRQ(Imm(1), RCX)
	Load(Param("out").Base(), R11)
	loop(name, 8, 4, func() {
		VBROADCASTSS(Mem{Base: R10}, Z8)          // d
		VBROADCASTSS(Mem{Base: R10, Disp: 4}, Z9) // id
		VXORPS(Z10, Z10, Z10)
		chunks(name, func(x, w VecPhysical) {
			VMULPS(Z9, x, Z13) // v·id
			clampRound(Z13)
			VMULPS(Z13, Z8, Z13) // d·q
			VSUBPS(Z13, x, Z13)  // r
			VMULPS(Z13, w, Z14)
			VMULPS(Z13, Z14, Z14)
			VADDPS(Z14, Z10, Z10)
		})
		reduce(Z10, Z15)
		VMOVSS(X10, Mem{Base: R11})
	})
}

// tableParams loads the table's 16 values to Z17 and its 15 midpoints (and
// one pad) to Z18, and the integer steps 8, 4, 3, 2, 1 to Z19..Z23.
func tableParams() {
	Load(Param("vals"), RAX)
	VMOVUPS(Mem{Base: RAX}, Z17)
	Load(Param("mids"), RAX)
	VMOVUPS(Mem{Base: RAX}, Z18)
	for i, c := range []uint32{8, 4, 3, 2, 1} {
		gen.Broadcast32(c, gen.Z(19+i), RAX, X7)
	}
}

// tableValue sets v to the table value nearest u (Z13 in, Z13 out), as
// table.index: the number of midpoints below u by a binary search, using
// Z24, Z25 and K1.
func tableValue() {
	u := Z13
	i, m := Z24, Z25
	VPXORD(i, i, i)
	VPADDD(Z20, Z21, m) // index 7 = 4 + 3
	VPERMPS(Z18, m, m)  // mid[7]
	VCMPPS(U8(cmpGTOQ), m, u, K1)
	VMOVDQA32(Z19, K1, i) // i = 8
	for _, step := range []struct{ off, add VecPhysical }{{Z21, Z20}, {Z23, Z22}} {
		VPADDD(step.off, i, m) // i + 3, then i + 1
		VPERMPS(Z18, m, m)
		VCMPPS(U8(cmpGTOQ), m, u, K1)
		VPADDD(step.add, i, K1, i) // i += 4, then 2
	}
	VPERMPS(Z18, i, m) // mid[i]
	VCMPPS(U8(cmpGTOQ), m, u, K1)
	VPADDD(Z23, i, K1, i) // i++
	VPERMPS(Z17, i, u)
}

func tableSums() {
	name := "kqTableSumsAVX512"
	TEXT(name, NOSPLIT, "func(x, w, ts []float32, vals, mids *[16]float32, out []float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of tableSumsBatchGo:",
		"",
		"\tfor c, t := range ts {",
		"\t\tout[2*c], out[2*c+1] = tableSumsGo(x, w, t, tab)",
		"\t}",
		"",
		"with vals the table's values, mids its 15 midpoints (and one more entry),",
		"len(x) 16 or 32, len(w) ≥ len(x) and len(out) ≥ 2·len(ts).")
	loadX(name)
	tableParams()
	Load(Param("ts").Base(), R10)
	Load(Param("ts").Len(), RCX)
	Load(Param("out").Base(), R11)
	loop(name, 4, 8, func() {
		VBROADCASTSS(Mem{Base: R10}, Z8) // t
		VXORPS(Z10, Z10, Z10)
		VXORPS(Z11, Z11, Z11)
		chunks(name, func(x, w VecPhysical) {
			VMULPS(x, Z8, Z13) // t·v
			tableValue()
			VMULPS(Z13, w, Z14) // wq
			VMULPS(x, Z14, Z15)
			VADDPS(Z15, Z10, Z10)
			VMULPS(Z13, Z14, Z15)
			VADDPS(Z15, Z11, Z11)
		})
		reduce(Z10, Z15)
		VMOVSS(X10, Mem{Base: R11})
		reduce(Z11, Z15)
		VMOVSS(X11, Mem{Base: R11, Disp: 4})
	})
}

func tableErrs() {
	name := "kqTableErrsAVX512"
	TEXT(name, NOSPLIT, "func(x, w, di []float32, vals, mids *[16]float32, out []float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of tableErrBatchGo: for each candidate c",
		"with scale d and inverse id in di[2c:2c+2],",
		"",
		"\tvar e [16]float32",
		"\tfor i, v := range x {",
		"\t\tr := v - d*tab.v[tab.index(id*v)]",
		"\t\te[i%16] += w[i] * r * r",
		"\t}",
		"\tout[c] = laneReduce(&e)",
		"",
		"with vals the table's values, mids its 15 midpoints (and one more entry),",
		"len(x) 16 or 32, len(w) ≥ len(x) and len(out) ≥ len(di)/2.")
	loadX(name)
	tableParams()
	Load(Param("di").Base(), R10)
	Load(Param("di").Len(), RCX)
	SHRQ(Imm(1), RCX)
	Load(Param("out").Base(), R11)
	loop(name, 8, 4, func() {
		VBROADCASTSS(Mem{Base: R10}, Z8)          // d
		VBROADCASTSS(Mem{Base: R10, Disp: 4}, Z9) // id
		VXORPS(Z10, Z10, Z10)
		chunks(name, func(x, w VecPhysical) {
			VMULPS(x, Z9, Z13) // id·v
			tableValue()
			VMULPS(Z13, Z8, Z13) // d·q
			VSUBPS(Z13, x, Z13)  // r
			VMULPS(Z13, w, Z14)
			VMULPS(Z13, Z14, Z14)
			VADDPS(Z14, Z10, Z10)
		})
		reduce(Z10, Z15)
		VMOVSS(X10, Mem{Base: R11})
	})
}
