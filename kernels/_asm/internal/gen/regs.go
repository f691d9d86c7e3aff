package gen

import (
	"github.com/mmcloughlin/avo/reg"
)

var (
	zmm = [...]reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
		reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
		reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}
	ymm = [...]reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
		reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15}
	xmm = [...]reg.VecPhysical{reg.X0, reg.X1, reg.X2, reg.X3, reg.X4, reg.X5, reg.X6, reg.X7,
		reg.X8, reg.X9, reg.X10, reg.X11, reg.X12, reg.X13, reg.X14, reg.X15}
	opmask = [...]reg.Register{reg.K0, reg.K1, reg.K2, reg.K3, reg.K4, reg.K5, reg.K6, reg.K7}
)

// Z returns zmm register i (0 to 31).
func Z(i int) reg.VecPhysical { return zmm[i] }

// Y returns ymm register i (0 to 15, the ones AVX2 has).
func Y(i int) reg.VecPhysical { return ymm[i] }

// K returns opmask register i (0 to 7).
func K(i int) reg.Register { return opmask[i] }

// Num returns the number of the vector register v (an xmm, ymm or zmm).
func Num(v reg.VecPhysical) int {
	for i := range zmm {
		if zmm[i] == v || i < len(ymm) && (ymm[i] == v || xmm[i] == v) {
			return i
		}
	}
	panic("gen: not a vector register: " + v.Asm())
}

// Vec returns vector register i at the width of isa: a zmm for "AVX512", a
// ymm (i < 16) for "AVX2".
func Vec(isa string, i int) reg.VecPhysical {
	if isa == "AVX512" {
		return Z(i)
	}
	return Y(i)
}

// Lanes is the number of 32-bit lanes of a vector of isa: 16 for "AVX512",
// 8 for "AVX2".
func Lanes(isa string) int {
	if isa == "AVX512" {
		return 16
	}
	return 8
}

// ISAName is isa as the doc comments spell it: "AVX-512" for "AVX512".
func ISAName(isa string) string {
	if isa == "AVX512" {
		return "AVX-512"
	}
	return isa
}
