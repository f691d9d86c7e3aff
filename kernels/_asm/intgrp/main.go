// Command intgrp generates the integer-group, FP8 and GGUF block kernels of
// package kernels: intgrp_amd64.s and the stub declarations in
// intgrp_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./intgrp -out ../intgrp_amd64.s -stubs ../intgrp_stubs_amd64.go -pkg kernels
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
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
	})
}

// bcast fills v with the 32-bit constant c (through AX and X0's neighbour
// scratch register x).
func bcast(c uint32, v VecPhysical, x VecPhysical) {
	gen.Broadcast32(c, v, RAX, x)
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
