// Command weigh generates the element weights of the GGUF quantizers'
// importance rules (kqweight.go) and the weighted sums of their unbiased
// gain (iqquant.go) of package kernels: weigh_amd64.s and the stub
// declarations in weigh_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./weigh -out ../weigh_amd64.s -stubs ../weigh_stubs_amd64.go -pkg kernels
package main

import (
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		meanSquareAVX512()
		sigmaWeightsAVX512()
		absWeightsAVX512()
		gainSumsAVX512()
		meanSquareAVX2()
		sigmaWeightsAVX2()
		absWeightsAVX2()
	})
}

// meanSquareAVX512 sums (x·ia)² in 16 lanes, 16 elements a step, with
// separate multiplies and adds (no fused multiply-add), then adds the lanes
// in the tree l += l+8, l += l+4, l += l+2, l += l+1 and divides by n.
func meanSquareAVX512() {
	name := "meanSquareAVX512"
	TEXT(name, NOSPLIT, "func(x []float32, ia float32) float32")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of meanSquareGo: for len(x) a",
		"positive multiple of 16,",
		"",
		"\tvar acc [16]float32",
		"\tfor i, v := range x {",
		"\t\tv *= ia",
		"\t\tacc[i%16] += float32(v * v)",
		"\t}",
		"\tfor h := 8; h >= 1; h /= 2 {",
		"\t\tfor l := range h {",
		"\t\t\tacc[l] += acc[l+h]",
		"\t\t}",
		"\t}",
		"\treturn acc[0] / float32(len(x))")
	Load(Param("x").Base(), RSI)
	Load(Param("x").Len(), RCX)
	Load(Param("ia"), X1)
	VBROADCASTSS(X1, Z1)
	VPXORD(Z0, Z0, Z0)
	MOVQ(RCX, RDX)
	SHRQ(Imm(4), RCX)
	XORQ(RAX, RAX)
	Label(name + "_loop")
	VMULPS(Mem{Base: RSI, Index: RAX, Scale: 4}, Z1, Z2)
	VMULPS(Z2, Z2, Z2)
	VADDPS(Z2, Z0, Z0)
	ADDQ(Imm(16), RAX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	VEXTRACTF64X4(Imm(1), Z0, Y2)
	VADDPS(Y2, Y0, Y0)
	meanTail()
}

// gainSumsAVX512 sums w·(x·ia)² and w·(x·ia)·(q·ia) in 16 lanes each,
// 16 elements a step, with separate multiplies and adds, then adds each
// sum's lanes in the tree l += l+8, l += l+4, l += l+2, l += l+1.
func gainSumsAVX512() {
	name := "gainSumsAVX512"
	TEXT(name, NOSPLIT, "func(w, x, q []float32, ia float32) (xx, xq float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of gainSumsGo: for len(x) a",
		"positive multiple of 16 and len(w), len(q) ≥ len(x),",
		"",
		"	var a, b [16]float32",
		"	for i, v := range x {",
		"		v *= ia",
		"		wv := w[i] * v",
		"		a[i%16] += float32(wv * v)",
		"		b[i%16] += float32(wv * (q[i] * ia))",
		"	}",
		"",
		"then each of a and b added in the tree of meanSquareGo: a[0], b[0].")
	Load(Param("w").Base(), RDI)
	Load(Param("x").Base(), RSI)
	Load(Param("x").Len(), RCX)
	Load(Param("q").Base(), RDX)
	Load(Param("ia"), X1)
	VBROADCASTSS(X1, Z1)
	VPXORD(Z0, Z0, Z0)
	VPXORD(Z5, Z5, Z5)
	SHRQ(Imm(4), RCX)
	XORQ(RAX, RAX)
	Label(name + "_loop")
	VMULPS(Mem{Base: RSI, Index: RAX, Scale: 4}, Z1, Z2) // v
	VMULPS(Mem{Base: RDX, Index: RAX, Scale: 4}, Z1, Z3) // q·ia
	VMULPS(Mem{Base: RDI, Index: RAX, Scale: 4}, Z2, Z4) // wv
	VMULPS(Z2, Z4, Z2)
	VADDPS(Z2, Z0, Z0)
	VMULPS(Z3, Z4, Z3)
	VADDPS(Z3, Z5, Z5)
	ADDQ(Imm(16), RAX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	laneTree(Z0, X2)
	laneTree(Z5, X2)
	VZEROUPPER()
	Store(X0, ReturnIndex(0))
	Store(X5, ReturnIndex(1))
	RET()
}

// laneTree adds the 16 lanes of z in the tree l += l+8, then as laneTree8;
// t is scratch.
func laneTree(z VecPhysical, t VecPhysical) {
	VEXTRACTF64X4(Imm(1), z, t.AsY())
	VADDPS(t.AsY(), z.AsY(), z.AsY())
	laneTree8(z, t)
}

// laneTree8 adds the 8 lanes of z's Y register in the tree l += l+4,
// l += l+2, l += l+1, into lane 0; t is scratch.
func laneTree8(z VecPhysical, t VecPhysical) {
	VEXTRACTF128(Imm(1), z.AsY(), t.AsX())
	VADDPS(t.AsX(), z.AsX(), z.AsX())
	VMOVHLPS(z.AsX(), z.AsX(), t.AsX())
	VADDPS(t.AsX(), z.AsX(), z.AsX())
	VMOVSHDUP(z.AsX(), t.AsX())
	VADDSS(t.AsX(), z.AsX(), z.AsX())
}

// meanTail adds the 8 lanes of Y0 in the tree l += l+4, l += l+2, l += l+1,
// divides the sum by the count in DX and returns it.
func meanTail() {
	laneTree8(Y0, X2)
	VCVTSI2SSQ(RDX, X2, X2)
	VDIVSS(X2, X0, X0)
	VZEROUPPER()
	Store(X0, ReturnIndex(0))
	RET()
}

// sigmaWeightsAVX512 writes w = base·sqrt(s2 + (x·ia)²), 16 a step
// (VSQRTPS is correctly rounded, as float64's sqrt rounded to float32).
func sigmaWeightsAVX512() {
	name := "sigmaWeightsAVX512"
	TEXT(name, NOSPLIT, "func(w, x, base []float32, ia, s2 float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of the loop",
		"",
		"\tfor i, v := range x[:len(x)&^15] {",
		"\t\tv *= ia",
		"\t\tw[i] = base[i] * float32(math.Sqrt(float64(s2+float32(v*v))))",
		"\t}",
		"",
		"with len(w), len(base) ≥ len(x)&^15.")
	sigmaLoop(name, 16, Z1, Z2, Z3)
}

// absWeightsAVX512 writes w = base·|x·ia|, 16 a step.
func absWeightsAVX512() {
	name := "absWeightsAVX512"
	TEXT(name, NOSPLIT, "func(w, x, base []float32, ia float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of the loop",
		"",
		"\tfor i, v := range x[:len(x)&^15] {",
		"\t\tw[i] = base[i] * abs32(v*ia)",
		"\t}",
		"",
		"with len(w), len(base) ≥ len(x)&^15.")
	loop3(name, 16, Z1, func(x, b Mem, out Mem) {
		VMULPS(x, Z1, Z3)
		VPANDD(Z4, Z3, Z3)
		VMULPS(b, Z3, Z3)
		VMOVUPS(Z3, out)
	}, func() {
		gen.Broadcast32(0x7fffffff, Z4, RBX, X4)
	})
}

// meanSquareAVX2 is meanSquareAVX512 with the 16 lanes in two registers:
// Y0 holds lanes 0–7, Y1 lanes 8–15, so l += l+8 is Y0 += Y1 and the rest
// of the tree is the AVX-512 kernel's.
func meanSquareAVX2() {
	name := "meanSquareAVX2"
	TEXT(name, NOSPLIT, "func(x []float32, ia float32) float32")
	Pragma("noescape")
	Doc(name+" is the AVX2 kernel of meanSquareGo, as meanSquareAVX512 (the",
		"same sums in the same order), for len(x) a positive multiple of 16.")
	Load(Param("x").Base(), RSI)
	Load(Param("x").Len(), RCX)
	Load(Param("ia"), X2)
	VBROADCASTSS(X2, Y2)
	VXORPS(Y0, Y0, Y0)
	VXORPS(Y1, Y1, Y1)
	MOVQ(RCX, RDX)
	SHRQ(Imm(4), RCX)
	XORQ(RAX, RAX)
	Label(name + "_loop")
	VMULPS(Mem{Base: RSI, Index: RAX, Scale: 4}, Y2, Y3)
	VMULPS(Y3, Y3, Y3)
	VADDPS(Y3, Y0, Y0)
	VMULPS(Mem{Base: RSI, Index: RAX, Scale: 4, Disp: 32}, Y2, Y4)
	VMULPS(Y4, Y4, Y4)
	VADDPS(Y4, Y1, Y1)
	ADDQ(Imm(16), RAX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	VADDPS(Y1, Y0, Y0)
	meanTail()
}

// sigmaWeightsAVX2 is sigmaWeightsAVX512 8 a step.
func sigmaWeightsAVX2() {
	name := "sigmaWeightsAVX2"
	TEXT(name, NOSPLIT, "func(w, x, base []float32, ia, s2 float32)")
	Pragma("noescape")
	Doc(name+" is the AVX2 kernel of sigmaWeightsGo over x[:len(x)&^7],",
		"with len(w), len(base) ≥ len(x)&^7.")
	sigmaLoop(name, 8, Y1, Y2, Y3)
}

// sigmaLoop is the loop of the sigma kernels: ia in ia, s2 in s2, each
// step's weights in t.
func sigmaLoop(name string, lanes int, ia, s2, t VecPhysical) {
	loop3(name, lanes, ia, func(x, b Mem, out Mem) {
		VMULPS(x, ia, t)
		VMULPS(t, t, t)
		VADDPS(s2, t, t)
		VSQRTPS(t, t)
		VMULPS(b, t, t)
		VMOVUPS(t, out)
	}, func() {
		Load(Param("s2"), X2)
		VBROADCASTSS(X2, s2)
	})
}

// absWeightsAVX2 is absWeightsAVX512 8 a step.
func absWeightsAVX2() {
	name := "absWeightsAVX2"
	TEXT(name, NOSPLIT, "func(w, x, base []float32, ia float32)")
	Pragma("noescape")
	Doc(name+" is the AVX2 kernel of absWeightsGo over x[:len(x)&^7],",
		"with len(w), len(base) ≥ len(x)&^7.")
	loop3(name, 8, Y1, func(x, b Mem, out Mem) {
		VMULPS(x, Y1, Y3)
		VANDPS(Y4, Y3, Y3)
		VMULPS(b, Y3, Y3)
		VMOVUPS(Y3, out)
	}, func() {
		gen.Broadcast32(0x7fffffff, Y4, RBX, X4)
	})
}

// loop3 is the frame of the weight kernels, lanes (16 or 8) elements a
// step: ia broadcast in iaReg (Z1 or Y1), setup's constants, then step(x,
// base, w) for each step.
func loop3(name string, lanes int, iaReg VecPhysical, step func(x, b, out Mem), setup func()) {
	shift := uint64(bits.TrailingZeros(uint(lanes)))
	Load(Param("w").Base(), RDI)
	Load(Param("x").Base(), RSI)
	Load(Param("x").Len(), RCX)
	Load(Param("base").Base(), RDX)
	SHRQ(Imm(shift), RCX)
	JZ(LabelRef(name + "_done"))
	Load(Param("ia"), X1)
	VBROADCASTSS(X1, iaReg)
	setup()
	XORQ(RAX, RAX)
	Label(name + "_loop")
	step(Mem{Base: RSI, Index: RAX, Scale: 4}, Mem{Base: RDX, Index: RAX, Scale: 4},
		Mem{Base: RDI, Index: RAX, Scale: 4})
	ADDQ(Imm(uint64(lanes)), RAX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
