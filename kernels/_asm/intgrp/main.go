// Command intgrp generates the integer-group, FP8 and GGUF block kernels of
// package kernels: intgrp_amd64.s and the stub declarations in
// intgrp_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./intgrp -out ../intgrp_amd64.s -stubs ../intgrp_stubs_amd64.go -pkg kernels
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
	for _, isa := range []string{"AVX512", "AVX2"} {
		quantQ8_0(isa)
		dequantQ8_0(isa)
		quantQ4_0(isa)
		dequantQ4_0(isa)
	}
	quantQ8_0x16()
	quantQ4_0x16()
	for _, isa := range []string{"AVX512", "AVX2"} {
		groupKernels(isa)
		fp8Kernels(isa)
		scaleKernels(isa)
	}
	Generate()
}

var (
	zs = []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
		Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}
	ks = []Register{K0, K1, K2, K3, K4, K5, K6, K7}
)

// vec returns vector register i at the width of isa: zmm for AVX512, ymm for
// AVX2 (i < 16 there).
func vec(isa string, i int) VecPhysical {
	if isa == "AVX512" {
		return zs[i]
	}
	if i >= 16 {
		panic(fmt.Sprintf("ymm register %d does not exist", i))
	}
	return zs[i].AsY().(VecPhysical)
}

// xmm returns xmm register i.
func xmm(i int) VecPhysical { return zs[i].AsX().(VecPhysical) }

// lanes is the number of 32-bit lanes of a vector of isa.
func lanes(isa string) int {
	if isa == "AVX512" {
		return 16
	}
	return 8
}

// isaName is isa as the doc comments spell it.
func isaName(isa string) string {
	if isa == "AVX512" {
		return "AVX-512"
	}
	return isa
}

// bcast fills v with the 32-bit constant c (through AX and X0's neighbour
// scratch register x).
func bcast(c uint32, v VecPhysical, x VecPhysical) {
	gen.Broadcast32(c, v, RAX, x)
}

// hmaxPS reduces the non-negative, NaN-free floats of v (a zmm, ymm or xmm)
// to their largest, left in every lane of v's xmm, with t as scratch.
func hmaxPS(v, t VecPhysical) {
	if v.Size() == 64 {
		VEXTRACTF64X4(U8(1), v, t.AsY())
		VMAXPS(t.AsY(), v.AsY(), v.AsY())
	}
	if v.Size() >= 32 {
		VEXTRACTF128(U8(1), v.AsY(), t.AsX())
		VMAXPS(t.AsX(), v.AsX(), v.AsX())
	}
	VPERMILPS(U8(0x4e), v.AsX(), t.AsX())
	VMAXPS(t.AsX(), v.AsX(), v.AsX())
	VPERMILPS(U8(0xb1), v.AsX(), t.AsX())
	VMAXPS(t.AsX(), v.AsX(), v.AsX())
}

// doc writes a kernel's doc comment: a sentence, then the Go loop indented as
// code, then notes.
func doc(first string, body []string, notes ...string) {
	lines := []string{first, ""}
	for _, b := range body {
		lines = append(lines, "\t"+b)
	}
	if len(notes) > 0 {
		lines = append(lines, "")
		lines = append(lines, notes...)
	}
	Doc(lines...)
}

// Comparison predicates of VCMPPS.
const (
	cmpEQ    = 0x00 // equal, ordered
	cmpUNORD = 0x03 // either is NaN
	cmpNEQ   = 0x0c // not equal, ordered
	cmpORD   = 0x07 // neither is NaN
	cmpGE    = 0x1d // greater or equal, ordered
	cmpGT    = 0x1e // greater, ordered
)

// VRNDSCALEPS / VROUNDPS immediates: toward zero, and to nearest even, both
// without the precision exception.
const (
	roundTrunc = 0x0b
	roundEven  = 0x08
)

// labels returns a function that makes the labels of one kernel unique.
func labels(name string) func(string) LabelRef {
	return func(s string) LabelRef { return LabelRef(name + "_" + s) }
}

func label(name, s string) { Label(name + "_" + s) }

// pand, por and pxor are VPAND, VPOR and VPXOR at any width (the EVEX forms
// VPANDD, VPORD and VPXORD for zmm, where VANDPS and its kin would need
// AVX512DQ, which the AVX-512 tier does not require).
func pand(a, b Op, dst VecPhysical) {
	if dst.Size() == 64 {
		VPANDD(a, b, dst)
		return
	}
	VPAND(a, b, dst)
}

func por(a, b Op, dst VecPhysical) {
	if dst.Size() == 64 {
		VPORD(a, b, dst)
		return
	}
	VPOR(a, b, dst)
}

func pxor(a, b Op, dst VecPhysical) {
	if dst.Size() == 64 {
		VPXORD(a, b, dst)
		return
	}
	VPXOR(a, b, dst)
}
