package gen

import (
	"fmt"

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

// Pack4 narrows the dwords of the four vectors v (a ymm or zmm each) to
// bytes in v[0], with signed or unsigned saturation, within 128-bit lanes:
// VPACK[SU]SDW of v[0], v[1] and of v[2], v[3], then VPACK[SU]SWB of the two.
// Byte i of lane h then comes from dword h·4 + i%4 of v[i/4]; a VPERMD by
// Perm8 (ymm) puts the bytes of ymm registers in order.
func Pack4(v [4]reg.VecPhysical, signed bool) {
	dw, wb := build.VPACKUSDW, build.VPACKUSWB
	if signed {
		dw, wb = build.VPACKSSDW, build.VPACKSSWB
	}
	dw(v[1], v[0], v[0])
	dw(v[3], v[2], v[2])
	wb(v[2], v[0], v[0])
}

// Pack2 narrows the 16 dwords of the ymm registers a and b to 16 bytes, in
// order, in a's xmm, with signed or unsigned saturation; t's xmm is scratch.
func Pack2(a, b, t reg.VecPhysical, signed bool) {
	dw, wb := build.VPACKUSDW, build.VPACKUSWB
	if signed {
		dw, wb = build.VPACKSSDW, build.VPACKSSWB
	}
	dw(b, a, a)
	build.VPERMQ(operand.U8(0xd8), a, a)
	build.VEXTRACTI128(operand.U8(1), a, t.AsX())
	wb(t.AsX(), a.AsX(), a.AsX())
}

// LowLanes sets the opmask k to the low CX bits (CX ≤ 16), through AX: the
// lanes of a masked load or store of the last CX elements.
func LowLanes(k reg.Register) {
	build.MOVL(operand.U32(1), reg.EAX)
	build.SHLL(reg.CL, reg.EAX)
	build.DECL(reg.EAX)
	build.KMOVW(reg.EAX, k)
}

// StoreBytes8 stores the low bytes of the 8 dwords of the ymm register v
// (each below 256) as 8 bytes at m, with t's xmm as scratch; v's xmm is
// clobbered.
func StoreBytes8(v, t reg.VecPhysical, m operand.Mem) {
	build.VEXTRACTI128(operand.U8(1), v, t.AsX())
	build.VPACKUSDW(t.AsX(), v.AsX(), v.AsX())
	build.VPACKUSWB(v.AsX(), v.AsX(), v.AsX())
	build.VMOVQ(v.AsX(), m)
}

// ElemArgs loads the arguments of a slice conversion into the registers
// ElemLoop walks: the bases of dst and src into DI and SI, len(dst) into CX.
func ElemArgs() {
	build.Load(build.Param("dst").Base(), reg.RDI)
	build.Load(build.Param("dst").Len(), reg.RCX)
	build.Load(build.Param("src").Base(), reg.RSI)
}

// NTNote is the sentence a non-temporal variant's doc comment ends with:
// it stores with store and needs dst aligned to align bytes.
func NTNote(store string, align int) string {
	return fmt.Sprintf("It stores with non-temporal hints (%s) and needs dst %d-byte aligned.", store, align)
}
