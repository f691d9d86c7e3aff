// Command errsum generates the error-measure kernels of package kernels:
// errsum_amd64.s and the stub declarations in errsum_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./errsum -out ../errsum_amd64.s -stubs ../errsum_stubs_amd64.go -pkg kernels
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		errorSumsAVX512()
		errorSumsAVX2()
	})
}

const sig = "func(sig, noise *[8]float64, want, got []float32) float64"

// doc states the loop a kernel computes.
func doc(name, isa string) {
	Doc(name+" is the "+isa+" kernel of the loop",
		"",
		"\tvar m float64",
		"\tfor i, w := range want {",
		"\t\tx := float64(w)",
		"\t\td := float64(got[i]) - x",
		"\t\tsig[i%8] += float64(x * x)",
		"\t\tnoise[i%8] += float64(d * d)",
		"\t\tif a := math.Abs(d); a > m {",
		"\t\t\tm = a",
		"\t\t}",
		"\t}",
		"\treturn m",
		"",
		"with len(want) a multiple of 8 and len(got) ≥ len(want), for finite",
		"values (with a NaN or an infinity, some lane of sig or noise is NaN or",
		"infinite and m is unspecified). The products are not fused: each is",
		"rounded to float64 before it is added, as in the loop.")
}

// args loads the parameters: sig in DI, noise in SI, want in R8, got in R9,
// the number of 8-element steps in CX.
func args() {
	Load(Param("sig"), RDI)
	Load(Param("noise"), RSI)
	Load(Param("want").Base(), R8)
	Load(Param("want").Len(), RCX)
	Load(Param("got").Base(), R9)
	SHRQ(Imm(3), RCX)
}

// absMask fills v with the 64-bit mask that clears a float64's sign.
func absMask(v VecPhysical) {
	MOVQ(U64(0x7fffffffffffffff), RAX)
	VMOVQ(RAX, v.AsX())
	VPBROADCASTQ(v.AsX(), v)
}

// errorSumsAVX512 keeps the eight lanes of sig in Z0, of noise in Z1 and the
// running max |d| in Z2; each step widens 8 values of want and got.
func errorSumsAVX512() {
	name := "errorSumsAVX512"
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	doc(name, "AVX-512")
	args()
	VMOVUPD(Mem{Base: RDI}, Z0)
	VMOVUPD(Mem{Base: RSI}, Z1)
	VPXORQ(Z2, Z2, Z2)
	absMask(Z3)
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	VCVTPS2PD(Mem{Base: R8}, Z4) // x
	VCVTPS2PD(Mem{Base: R9}, Z5)
	VSUBPD(Z4, Z5, Z5) // d = g − x
	VMULPD(Z4, Z4, Z4)
	VADDPD(Z4, Z0, Z0)
	VMULPD(Z5, Z5, Z6)
	VADDPD(Z6, Z1, Z1)
	VPANDQ(Z3, Z5, Z5)
	VMAXPD(Z2, Z5, Z2) // max(|d|, m): m where |d| is NaN
	ADDQ(Imm(32), R8)
	ADDQ(Imm(32), R9)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VMOVUPD(Z0, Mem{Base: RDI})
	VMOVUPD(Z1, Mem{Base: RSI})
	VEXTRACTF64X4(Imm(1), Z2, Y7)
	VMAXPD(Y7, Y2, Y2)
	reduceMax128(Y2, X7)
	Store(X2, ReturnIndex(0))
	gen.End(false)
}

// errorSumsAVX2 keeps lanes 0–3 of sig in Y0 and 4–7 in Y1, of noise in Y2
// and Y3, and the running max |d| in Y4; each step widens 8 values of want
// and got, 4 at a time.
func errorSumsAVX2() {
	name := "errorSumsAVX2"
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	doc(name, "AVX2")
	args()
	VMOVUPD(Mem{Base: RDI}, Y0)
	VMOVUPD(Mem{Base: RDI, Disp: 32}, Y1)
	VMOVUPD(Mem{Base: RSI}, Y2)
	VMOVUPD(Mem{Base: RSI, Disp: 32}, Y3)
	VXORPD(Y4, Y4, Y4)
	absMask(Y5)
	TESTQ(RCX, RCX)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	VCVTPS2PD(Mem{Base: R8}, Y6) // x, lanes 0–3
	VCVTPS2PD(Mem{Base: R8, Disp: 16}, Y7)
	VCVTPS2PD(Mem{Base: R9}, Y8)
	VCVTPS2PD(Mem{Base: R9, Disp: 16}, Y9)
	VSUBPD(Y6, Y8, Y8) // d = g − x
	VSUBPD(Y7, Y9, Y9)
	VMULPD(Y6, Y6, Y6)
	VMULPD(Y7, Y7, Y7)
	VADDPD(Y6, Y0, Y0)
	VADDPD(Y7, Y1, Y1)
	VMULPD(Y8, Y8, Y10)
	VMULPD(Y9, Y9, Y11)
	VADDPD(Y10, Y2, Y2)
	VADDPD(Y11, Y3, Y3)
	VANDPD(Y5, Y8, Y8)
	VANDPD(Y5, Y9, Y9)
	VMAXPD(Y4, Y8, Y4) // max(|d|, m): m where |d| is NaN
	VMAXPD(Y4, Y9, Y4)
	ADDQ(Imm(32), R8)
	ADDQ(Imm(32), R9)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VMOVUPD(Y0, Mem{Base: RDI})
	VMOVUPD(Y1, Mem{Base: RDI, Disp: 32})
	VMOVUPD(Y2, Mem{Base: RSI})
	VMOVUPD(Y3, Mem{Base: RSI, Disp: 32})
	reduceMax128(Y4, X7)
	Store(X4, ReturnIndex(0))
	gen.End(false)
}

// reduceMax128 leaves in the low float64 of y the largest of its four, using
// t as scratch.
func reduceMax128(y VecPhysical, t VecPhysical) {
	x := y.AsX()
	VEXTRACTF128(Imm(1), y, t)
	VMAXPD(t, x, x)
	VPERMILPD(Imm(1), x, t)
	VMAXSD(t, x, x)
}
