// Command fwht generates the fast Walsh–Hadamard transform kernels of
// package kernels: fwht_amd64.s and the stub declarations in
// fwht_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./fwht -out ../fwht_amd64.s -stubs ../fwht_stubs_amd64.go -pkg kernels
//
// The transform runs in float64, eight values to a zmm register. Its stages
// h = 1, 2, 4 pair values inside a register: a permutation t of the register
// x puts each value's partner next to it, and one VFMADD213PD gives x·s + t
// with s = +1 where the lane takes the sum a+b and −1 where it takes the
// difference a−b (−b + a is a−b exactly: the product is exact and the sum is
// rounded once, as the subtraction rounds). The stages h ≥ 8 pair whole
// registers: a VADDPD and a VSUBPD. The last stage's results are multiplied
// by the scale (VMULPD, rounded to float64) and then rounded to float32
// (VCVTPD2PS, to nearest even), as the Go reference does.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

// The fixed registers: the scale broadcast, and the sign vectors of the
// stages h = 1, 2, 4 inside a register.
var (
	scale = gen.Z(28)
	signs = map[int]VecPhysical{1: gen.Z(29), 2: gen.Z(30), 4: gen.Z(31)}
)

// signTable holds the sign vectors s of the stages h = 1, 2, 4 (64 bytes
// each, in that order): lane i takes a+b (+1) when bit h of i is clear, a−b
// (−1) when it is set.
var signTable Mem

func main() {
	gen.Main(func() {
		var words []uint32
		for _, h := range []int{1, 2, 4} {
			for i := range 8 {
				s := 1.0
				if i&h != 0 {
					s = -1
				}
				b := math.Float64bits(s)
				words = append(words, uint32(b), uint32(b>>32))
			}
		}
		signTable = gen.Table("fwhtSigns", words)
		for b := 2; b <= 128; b *= 2 {
			rows(b)
		}
		chunks()
		for r := 1; r <= 4; r++ {
			pass(r, false)
		}
		for r := 1; r <= 4; r++ {
			pass(r, true)
		}
	})
}

// alloc hands out the vector registers not holding values.
type alloc struct{ free []VecPhysical }

// newAlloc returns the registers Z0–Z27 other than the n data registers
// Z0…Z(n−1), which it returns too.
func newAlloc(n int) ([]VecPhysical, *alloc) {
	v := make([]VecPhysical, n)
	a := &alloc{}
	for i := range 28 {
		if i < n {
			v[i] = gen.Z(i)
		} else {
			a.free = append(a.free, gen.Z(i))
		}
	}
	return v, a
}

func (a *alloc) get() VecPhysical {
	v := a.free[0]
	a.free = a.free[1:]
	return v
}

func (a *alloc) put(v VecPhysical) { a.free = append(a.free, v) }

// loadSigns fills the sign registers of the stages inside a register that a
// block of the given size runs (h < block, h < 8).
func loadSigns(block int) {
	for k, h := range []int{1, 2, 4} {
		if h < block {
			VMOVUPD(signTable.Offset(64*k), signs[h])
		}
	}
}

// loadScale broadcasts the float64 parameter sc to the scale register.
func loadScale() {
	Load(Param("sc"), X0)
	VBROADCASTSD(X0, scale)
}

// inRegister runs the stages h = 1, 2, 4 below block on every register of v
// (each holding 8 consecutive values); with last, the stage h = block/2 is
// the transform's last and its results are multiplied by the scale.
func inRegister(v []VecPhysical, a *alloc, block int, last bool) {
	for h := 1; h < block && h < 8; h *= 2 {
		for i := range v {
			t := a.get()
			switch h {
			case 1:
				VPERMILPD(U8(0x55), v[i], t) // lanes 1 0 3 2 5 4 7 6
			case 2:
				VPERMPD(U8(0x4e), v[i], t) // lanes 2 3 0 1 6 7 4 5
			case 4:
				VSHUFF64X2(U8(0x4e), v[i], v[i], t) // lanes 4 5 6 7 0 1 2 3
			}
			VFMADD213PD(t, signs[h], v[i]) // x·s + t: a+b, or −b + a = a−b
			a.put(t)
			if last && 2*h == block {
				VMULPD(scale, v[i], v[i])
			}
		}
	}
}

// across runs the stage whose pairs are the registers d apart (h = 8·d
// values): v[i], v[i+d] become their sum and difference for every i with
// bit d clear. With last, the results are multiplied by the scale. The
// difference goes to a free register, which takes the place of v[i+d].
func across(v []VecPhysical, a *alloc, d int, last bool) {
	for i := range v {
		if i&d != 0 {
			continue
		}
		x, y := v[i], v[i+d]
		t := a.get()
		VSUBPD(y, x, t) // a − b
		VADDPD(y, x, x) // a + b
		if last {
			VMULPD(scale, x, x)
			VMULPD(scale, t, t)
		}
		v[i+d] = t
		a.put(y)
	}
}

// stages runs every stage h < block on the values of v (8 consecutive
// values to a register, in blocks of block values, or of all of v when the
// block is longer); with last, the stage block/2 is the transform's last
// and multiplies by the scale.
func stages(v []VecPhysical, a *alloc, block int, last bool) {
	inRegister(v, a, block, last)
	for h := 8; h < block && h/8 < len(v); h *= 2 {
		across(v, a, h/8, last && 2*h == block)
	}
}

// narrow rounds the float64 values of v to float32 and stores them at m,
// 32 bytes a register.
func narrow(v []VecPhysical, m Mem) {
	for i, x := range v {
		VCVTPD2PS(x, x.AsY())
		VMOVUPS(x.AsY(), m.Offset(32*i))
	}
}

// widen loads 8 float32 values a register from m into v, as float64.
func widen(v []VecPhysical, m Mem) {
	for i, x := range v {
		VCVTPS2PD(m.Offset(32*i), x)
	}
}

// rows emits the kernel of blocks of the given size (2 to 128): 128 values
// (16 registers) a step while there are so many, then one block (at least 8
// values) a step.
func rows(block int) {
	name := fmt.Sprintf("fwht%dAVX512", block)
	TEXT(name, NOSPLIT, "func(dst, src []float32, sc float64)")
	Pragma("noescape")
	step := max(block, 8)
	loop := fmt.Sprintf("\tfor b := 0; b+%d <= len(src); b += %d {", block, block)
	rest := "The values past the last whole block are left alone."
	if block < 8 {
		loop = fmt.Sprintf("\tfor b := 0; b < len(src)&^7; b += %d {", block)
		rest = "The values past the last multiple of 8 are left alone."
	}
	Doc(name+" is the AVX-512 kernel of the loop",
		"",
		loop,
		fmt.Sprintf("\t\tfwhtBlockGo(buf, src[b:b+%d], dst[b:b+%d], sc)", block, block),
		"\t}",
		"",
		fmt.Sprintf("with len(dst) ≥ len(src) (buf is scratch of %d values): the normalised", block),
		fmt.Sprintf("Walsh–Hadamard transform of each block of %d values, sc = FWHTScale(%d).", block, block),
		"dst may be src. "+rest)
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	loadScale()
	loadSigns(block)
	gen.ElemLoop(name, step, 128/step, 4, 4, false, func(j int) {
		v, a := newAlloc(step / 8)
		widen(v, Mem{Base: RSI, Disp: 4 * step * j})
		stages(v, a, block, true)
		narrow(v, Mem{Base: RDI, Disp: 4 * step * j})
	})
}

// chunks emits the first pass of a block of more than 128 values: the
// stages h = 1 to 64 on each run of 128, widened from src and stored to buf
// as float64.
func chunks() {
	name := "fwhtChunksAVX512"
	TEXT(name, NOSPLIT, "func(buf []float64, src []float32)")
	Pragma("noescape")
	Doc(name+" is the AVX-512 kernel of the loop",
		"",
		"\tfor i, x := range src {",
		"\t\tbuf[i] = float64(x)",
		"\t}",
		"\tfor h := 1; h < 128; h *= 2 {",
		"\t\tfor i := 0; i < len(src); i += 2 * h {",
		"\t\t\tfor j := i; j < i+h; j++ {",
		"\t\t\t\tbuf[j], buf[j+h] = buf[j]+buf[j+h], buf[j]-buf[j+h]",
		"\t\t\t}",
		"\t\t}",
		"\t}",
		"",
		"with len(buf) ≥ len(src): the first seven stages of the Walsh–Hadamard",
		"transform of each run of 128 values. The values past the last whole",
		"run of 128 are left alone.")
	Load(Param("buf").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	loadSigns(128)
	gen.ElemLoop(name, 128, 1, 4, 8, false, func(int) {
		v, a := newAlloc(16)
		widen(v, Mem{Base: RSI})
		stages(v, a, 128, false)
		for i, x := range v {
			VMOVUPD(x, Mem{Base: RDI, Disp: 64 * i})
		}
	})
}

// pass emits a pass of r stages (1 to 4) h, 2h, ..., 2^(r−1)·h over buf in
// memory, h a multiple of 8: 2^r registers, each of 8 values h apart from
// the next's, take the r stages at once. With out, the stages are the
// transform's last: the results are scaled, rounded to float32 and written
// to dst instead of buf.
func pass(r int, out bool) {
	n := 1 << r
	name := fmt.Sprintf("fwhtPass%dAVX512", r)
	sig := "func(buf []float64, h int)"
	if out {
		name = fmt.Sprintf("fwhtPassOut%dAVX512", r)
		sig = "func(dst []float32, buf []float64, h int, sc float64)"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	body := []string{"\t\t\t\tbuf[j], buf[j+g*h] = buf[j]+buf[j+g*h], buf[j]-buf[j+g*h]"}
	if out {
		body = append([]string{
			fmt.Sprintf("\t\t\t\tif g == %d {", n/2),
			"\t\t\t\t\tdst[j], dst[j+g*h] = float32((buf[j]+buf[j+g*h])*sc), float32((buf[j]-buf[j+g*h])*sc)",
			"\t\t\t\t\tcontinue",
			"\t\t\t\t}"}, body...)
	}
	lines := []string{name + " is the AVX-512 kernel of the loop",
		"",
		fmt.Sprintf("\tfor g := 1; g < %d; g *= 2 {", n),
		"\t\tfor i := 0; i < len(buf); i += 2 * g * h {",
		"\t\t\tfor j := i; j < i+g*h; j++ {"}
	lines = append(lines, body...)
	lines = append(lines,
		"\t\t\t}",
		"\t\t}",
		"\t}",
		"",
		fmt.Sprintf("with h a multiple of 8 and len(buf) a multiple of %d·h: the stages h", n),
		fmt.Sprintf("to %d·h of the Walsh–Hadamard transform of buf in place.", n/2))
	if out {
		lines[len(lines)-1] = fmt.Sprintf("to %d·h of the Walsh–Hadamard transform of buf, the last of them", n/2)
		lines = append(lines, "writing dst (len(dst) ≥ len(buf)) instead of buf.")
	}
	Doc(lines...)
	// DI walks buf, SI dst; BX is the stride h·8 bytes, DX 3·h·8; AX, R10
	// and R11 point 4, 8 and 12 strides past DI (then past SI); R13 and R14
	// are dst's strides; R12 skips the 2^r − 1 runs of h each group's walk
	// of its first run leaves; CX counts the groups of 2^r·h, R8 the steps
	// of 8 values in a run of h (R9 of them).
	Load(Param("buf").Base(), RDI)
	Load(Param("buf").Len(), RAX)
	Load(Param("h"), R9)
	if out {
		Load(Param("dst").Base(), RSI)
		loadScale()
	}
	BSFQ(R9, RCX)
	ADDQ(U8(r), RCX)
	SHRQ(CL, RAX)
	MOVQ(RAX, RCX)
	MOVQ(R9, RBX)
	SHLQ(U8(3), RBX)
	LEAQ(Mem{Base: RBX, Index: RBX, Scale: 2}, RDX)
	IMUL3Q(U32(n-1), RBX, R12)
	SHRQ(U8(3), R9)
	if out {
		MOVQ(RBX, R13)
		SHRQ(U8(1), R13)
		MOVQ(RDX, R14)
		SHRQ(U8(1), R14)
	}
	bases := []GPPhysical{RDI, RAX, R10, R11}
	at := func(k int, s, s3 GPPhysical) Mem {
		m := Mem{Base: bases[k/4]}
		switch k % 4 {
		case 1:
			m.Index, m.Scale = s, 1
		case 2:
			m.Index, m.Scale = s, 2
		case 3:
			m.Index, m.Scale = s3, 1
		}
		return m
	}
	setBases := func(p, s GPPhysical) {
		if n > 4 {
			LEAQ(Mem{Base: p, Index: s, Scale: 4}, RAX)
		}
		if n > 8 {
			LEAQ(Mem{Base: p, Index: s, Scale: 8}, R10)
			LEAQ(Mem{Base: RAX, Index: s, Scale: 8}, R11)
		}
	}
	Label(name + "_group")
	MOVQ(R9, R8)
	Label(name + "_run")
	setBases(RDI, RBX)
	v, a := newAlloc(n)
	for k, x := range v {
		VMOVUPD(at(k, RBX, RDX), x)
	}
	for d := 1; d < n; d *= 2 {
		across(v, a, d, out && 2*d == n)
	}
	if out {
		bases[0] = RSI
		setBases(RSI, R13)
		for k, x := range v {
			VCVTPD2PS(x, x.AsY())
			VMOVUPS(x.AsY(), at(k, R13, R14))
		}
		ADDQ(U8(32), RSI)
	} else {
		for k, x := range v {
			VMOVUPD(x, at(k, RBX, RDX))
		}
	}
	ADDQ(U8(64), RDI)
	DECQ(R8)
	JNZ(LabelRef(name + "_run"))
	ADDQ(R12, RDI)
	if out {
		MOVQ(R12, RAX)
		SHRQ(U8(1), RAX)
		ADDQ(RAX, RSI)
	}
	DECQ(RCX)
	JNZ(LabelRef(name + "_group"))
	gen.End(false)
}
