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
	cmpUNORD = 0x03 // either is NaN
	cmpNEQ   = 0x0c // not equal, ordered
	cmpORD   = 0x07 // neither is NaN
	cmpGT    = 0x1e // greater, ordered
)

// labels returns a function that makes the labels of one kernel unique.
func labels(name string) func(string) LabelRef {
	return func(s string) LabelRef { return LabelRef(name + "_" + s) }
}

func label(name, s string) { Label(name + "_" + s) }

// pand, por and pxor are VPAND, VPOR and VPXOR at any width (the EVEX forms
// VPANDD, VPORD and VPXORD for zmm, where VANDPS and its kin would need
// AVX512DQ, which the AVX-512 tier does not require).
var (
	pand = anyWidth(VPAND, VPANDD)
	por  = anyWidth(VPOR, VPORD)
	pxor = anyWidth(VPXOR, VPXORD)
)

// anyWidth returns the bitwise operation that emits vex for a destination
// of up to 256 bits and its EVEX form evex for a zmm.
func anyWidth(vex func(a, b, dst Op), evex func(...Op)) func(a, b Op, dst VecPhysical) {
	return func(a, b Op, dst VecPhysical) {
		if dst.Size() == 64 {
			evex(a, b, dst)
			return
		}
		vex(a, b, dst)
	}
}
