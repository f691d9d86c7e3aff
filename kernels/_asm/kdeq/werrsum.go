package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The importance-weighted error sums with which the conversions report
// the error their quantizers minimise: Σ w·x² and Σ w·e² in eight float64
// lanes, the elements whose error is not finite left out.

// weightedDoc states the loop of the weighted error-sum kernels.
func weightedDoc(name, isa string) {
	doc(name+" is the "+isa+" kernel of weightedErrorSumsGo's loop", []string{
		"for i, v := range w {",
		"	a := float64(want[i])",
		"	e := a - float64(got[i])",
		"	if e-e != 0 { // NaN or infinite",
		"		continue",
		"	}",
		"	sig[i%8] += float64(v) * a * a",
		"	noise[i%8] += float64(v) * e * e",
		"}",
	}, "with len(w) a multiple of 8 and want and got at least as long. The",
		"products are rounded one by one and never fused with the sums.")
}

// weightedArgs loads sig into DI, noise into SI, w, want and got into R8,
// R9 and R10 and the number of 8-element steps into CX, jumping to done
// when there are none.
func weightedArgs(name string) {
	Load(Param("sig"), RDI)
	Load(Param("noise"), RSI)
	Load(Param("w").Base(), R8)
	Load(Param("w").Len(), RCX)
	Load(Param("want").Base(), R9)
	Load(Param("got").Base(), R10)
	SHRQ(U8(3), RCX)
	JZ(LabelRef(name + "_done"))
}

func weightedErrorSumsAVX512() {
	name := "weightedErrorSumsAVX512"
	TEXT(name, NOSPLIT, "func(sig, noise *[8]float64, w, want, got []float32)")
	Pragma("noescape")
	weightedDoc(name, "AVX-512")
	weightedArgs(name)
	VMOVUPD(Mem{Base: RDI}, Z0)
	VMOVUPD(Mem{Base: RSI}, Z1)
	VXORPD(X2, X2, X2)
	VBROADCASTSD(X2, Z2) // 0
	Label(name + "_loop")
	VCVTPS2PD(Mem{Base: R9}, Z3)  // a
	VCVTPS2PD(Mem{Base: R10}, Z4) // got
	VCVTPS2PD(Mem{Base: R8}, Z5)  // w
	VSUBPD(Z4, Z3, Z4)            // e = a − got
	VSUBPD(Z4, Z4, Z6)
	VCMPPD(U8(0), Z2, Z6, K1) // e − e = 0: e is finite
	VMULPD(Z3, Z5, Z6)
	VMULPD(Z3, Z6, Z6)
	VADDPD(Z6, Z0, K1, Z0)
	VMULPD(Z4, Z5, Z7)
	VMULPD(Z4, Z7, Z7)
	VADDPD(Z7, Z1, K1, Z1)
	ADDQ(U8(32), R8)
	ADDQ(U8(32), R9)
	ADDQ(U8(32), R10)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	VMOVUPD(Z0, Mem{Base: RDI})
	VMOVUPD(Z1, Mem{Base: RSI})
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func weightedErrorSumsAVX2() {
	name := "weightedErrorSumsAVX2"
	TEXT(name, NOSPLIT, "func(sig, noise *[8]float64, w, want, got []float32)")
	Pragma("noescape")
	weightedDoc(name, "AVX2")
	weightedArgs(name)
	// Lanes 0..3 in Y0 (sig) and Y1 (noise), 4..7 in Y2 and Y3.
	VMOVUPD(Mem{Base: RDI}, Y0)
	VMOVUPD(Mem{Base: RSI}, Y1)
	VMOVUPD(Mem{Base: RDI, Disp: 32}, Y2)
	VMOVUPD(Mem{Base: RSI, Disp: 32}, Y3)
	VXORPD(Y15, Y15, Y15)
	Label(name + "_loop")
	for h := range 2 {
		sig, noise := []VecPhysical{Y0, Y2}[h], []VecPhysical{Y1, Y3}[h]
		VCVTPS2PD(Mem{Base: R9, Disp: 16 * h}, Y4)  // a
		VCVTPS2PD(Mem{Base: R10, Disp: 16 * h}, Y5) // got
		VCVTPS2PD(Mem{Base: R8, Disp: 16 * h}, Y6)  // w
		VSUBPD(Y5, Y4, Y5)                          // e = a − got
		VSUBPD(Y5, Y5, Y7)
		VCMPPD(U8(0), Y15, Y7, Y7) // e − e = 0: e is finite
		VMULPD(Y4, Y6, Y8)
		VMULPD(Y4, Y8, Y8)
		VADDPD(Y8, sig, Y8)
		VBLENDVPD(Y7, Y8, sig, sig)
		VMULPD(Y5, Y6, Y9)
		VMULPD(Y5, Y9, Y9)
		VADDPD(Y9, noise, Y9)
		VBLENDVPD(Y7, Y9, noise, noise)
	}
	ADDQ(U8(32), R8)
	ADDQ(U8(32), R9)
	ADDQ(U8(32), R10)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	VMOVUPD(Y0, Mem{Base: RDI})
	VMOVUPD(Y1, Mem{Base: RSI})
	VMOVUPD(Y2, Mem{Base: RDI, Disp: 32})
	VMOVUPD(Y3, Mem{Base: RSI, Disp: 32})
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
