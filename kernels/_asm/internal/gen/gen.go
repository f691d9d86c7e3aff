// Package gen holds the helpers the kernel generators share.
package gen

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// BuildConstraint is the build constraint of every generated file: the
// assembly is amd64 only, and the purego tag turns it off.
const BuildConstraint = "amd64,!purego"

// Broadcast32 fills the vector register v (an xmm, ymm or zmm) with the 32-bit
// constant c through the general-purpose register gp and the xmm register x.
func Broadcast32(c uint32, v VecPhysical, gp GPPhysical, x VecPhysical) {
	MOVL(U32(c), gp.As32())
	VMOVD(gp.As32(), x.AsX())
	VPBROADCASTD(x.AsX(), v)
}

// Broadcast16 fills v with the 16-bit value held in the low half of gp.
func Broadcast16(v VecPhysical, gp GPPhysical, x VecPhysical) {
	VMOVD(gp.As32(), x.AsX())
	VPBROADCASTW(x.AsX(), v)
}

// Table emits a read-only table of 32-bit words and returns it.
func Table(name string, words []uint32) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i, w := range words {
		DATA(4*i, U32(w))
	}
	return m
}
