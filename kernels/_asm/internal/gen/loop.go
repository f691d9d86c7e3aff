package gen

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Name returns the name of a kernel: base, "NT" for a non-temporal variant,
// then the ISA ("AVX512", "AVX2").
func Name(base string, nt bool, isa string) string {
	if nt {
		base += "NT"
	}
	return base + isa
}

// End ends a kernel: SFENCE first in a non-temporal variant (to order its
// weakly-ordered stores before any later store), then VZEROUPPER and RET.
func End(nt bool) {
	if nt {
		build.SFENCE()
	}
	build.VZEROUPPER()
	build.RET()
}

// StoreFloats writes the float vector v to m: VMOVNTPS in a non-temporal
// variant (m then aligned to v's size), VMOVUPS otherwise.
func StoreFloats(v reg.Register, m operand.Mem, nt bool) {
	if nt {
		build.VMOVNTPS(v, m)
		return
	}
	build.VMOVUPS(v, m)
}

// ElemLoop emits the element loop of a slice conversion and the kernel's end
// (End): CX counts the elements left, SI and DI walk src and dst (inSize and
// outSize bytes per element). It runs body(j) for j < unroll on each step of
// unroll·step elements while there are that many, then (unroll > 1) body(0)
// per step elements. Elements beyond the last whole step are left alone.
func ElemLoop(name string, step, unroll, inSize, outSize int, nt bool, body func(j int)) {
	l := func(s string) operand.LabelRef { return operand.LabelRef(name + "_" + s) }
	u32 := func(n int) operand.U32 { return operand.U32(uint32(n)) }
	big := step * unroll
	build.CMPQ(reg.RCX, u32(big))
	build.JB(l("one"))
	build.Label(name + "_big")
	for j := range unroll {
		body(j)
	}
	build.ADDQ(u32(big*inSize), reg.RSI)
	build.ADDQ(u32(big*outSize), reg.RDI)
	build.SUBQ(u32(big), reg.RCX)
	build.CMPQ(reg.RCX, u32(big))
	build.JAE(l("big"))
	build.Label(name + "_one")
	if unroll > 1 {
		build.CMPQ(reg.RCX, u32(step))
		build.JB(l("done"))
		body(0)
		build.ADDQ(u32(step*inSize), reg.RSI)
		build.ADDQ(u32(step*outSize), reg.RDI)
		build.SUBQ(u32(step), reg.RCX)
		build.JMP(l("one"))
	}
	build.Label(name + "_done")
	End(nt)
}
