// Command half generates the float16 and bfloat16 slice conversions of package
// kernels: half_amd64.s and the stub declarations in half_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./half -out ../half_amd64.s -stubs ../half_stubs_amd64.go -pkg kernels
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

func main() {
	gen.Main(func() {
		for _, isa := range []string{"AVX512", "AVX2"} {
			for _, nt = range []bool{false, true} {
				for _, bytes := range []bool{false, true} {
					bf16ToF32(isa, bytes)
					f16ToF32(isa, bytes)
				}
				f32ToBF16(isa)
				f32ToF16(isa)
			}
		}
	})
}

// nt selects the non-temporal variants: the kernel being emitted stores with
// VMOVNTDQ (which bypasses the caches, for outputs far larger than them) and
// ends with SFENCE; dst must then be 64-byte aligned.
var nt bool

// store writes the vector v to m, non-temporally in an NT variant.
func store(v Register, m Mem) {
	if nt {
		VMOVNTDQ(v, m)
		return
	}
	switch v.Size() {
	case 64:
		VMOVDQU32(v, m)
	default:
		VMOVDQU(v, m)
	}
}

// docLoop writes the doc comment of kernel name: the Go loop it computes, over
// whole steps of step elements, and an optional note.
func docLoop(name, isa, entry string, step int, note string, body ...string) {
	lines := []string{fmt.Sprintf("%s is the %s kernel of %s, the loop", name, gen.ISAName(isa), entry), ""}
	for _, b := range body {
		lines = append(lines, "\t"+b)
	}
	lines = append(lines, "", fmt.Sprintf(
		"over the first len(dst) rounded down to a multiple of %d elements; src must hold as many.", step))
	if note != "" {
		lines = append(lines, note)
	}
	if nt {
		lines = append(lines, gen.NTNote("VMOVNTDQ", 64))
	}
	Doc(lines...)
}

// bf16ToF32 emits bf16[Bytes]ToF32{AVX512,AVX2}: widen each code to the top
// half of a float32 and set the quiet bit of NaNs.
func bf16ToF32(isa string, bytes bool) {
	name, sig, entry := gen.Name("bf16ToF32", nt, isa), "func(dst []float32, src []uint16)", "BFloat16ToFloat32"
	read := "src[i]"
	if bytes {
		name, sig, entry = gen.Name("bf16BytesToF32", nt, isa), "func(dst []float32, src []byte)", "BFloat16BytesToFloat32"
		read = "binary.LittleEndian.Uint16(src[2*i:])"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	docLoop(name, isa, entry, gen.Lanes(isa), "",
		"for i := range dst {",
		"	v := uint32("+read+") << 16",
		"	if v&0x7fffffff > 0x7f800000 {",
		"		v |= 0x00400000",
		"	}",
		"	dst[i] = math.Float32frombits(v)",
		"}")
	gen.ElemArgs()
	n := gen.Lanes(isa)
	if isa == "AVX512" {
		gen.Broadcast32(0x7fffffff, Z31, RAX, X0)
		gen.Broadcast32(0x7f800000, Z30, RAX, X0)
		gen.Broadcast32(0x00400000, Z29, RAX, X0)
		gen.ElemLoop(name, n, 4, 2, 4, nt, func(j int) {
			v, a := gen.Z(2*j), gen.Z(2*j+1)
			VPMOVZXWD(Mem{Base: RSI, Disp: 2 * n * j}, v)
			VPSLLD(U8(16), v, v)
			VPANDD(Z31, v, a)
			VPCMPUD(U8(6), Z30, a, gen.K(1+j)) // a > Inf: NaN
			VPORD(Z29, v, gen.K(1+j), v)
			store(v, Mem{Base: RDI, Disp: 4 * n * j})
		})
		return
	}
	gen.Broadcast32(0x7fffffff, Y15, RAX, X0)
	gen.Broadcast32(0x7f800000, Y14, RAX, X0)
	gen.Broadcast32(0x00400000, Y13, RAX, X0)
	gen.ElemLoop(name, n, 4, 2, 4, nt, func(j int) {
		v, a := gen.Vec(isa, 2*j), gen.Vec(isa, 2*j+1)
		VPMOVZXWD(Mem{Base: RSI, Disp: 2 * n * j}, v)
		VPSLLD(U8(16), v, v)
		VPAND(Y15, v, a)
		VPCMPGTD(Y14, a, a) // a > Inf: NaN (both non-negative as int32)
		VPAND(Y13, a, a)
		VPOR(a, v, v)
		store(v, Mem{Base: RDI, Disp: 4 * n * j})
	})
}

// f16ToF32 emits f16[Bytes]ToF32{AVX512,AVX2}: VCVTPH2PS, which widens
// exactly and quiets NaNs the way the reference does.
func f16ToF32(isa string, bytes bool) {
	name, sig, entry := gen.Name("f16ToF32", nt, isa), "func(dst []float32, src []uint16)", "Float16ToFloat32"
	read := "src[i]"
	if bytes {
		name, sig, entry = gen.Name("f16BytesToF32", nt, isa), "func(dst []float32, src []byte)", "Float16BytesToFloat32"
		read = "binary.LittleEndian.Uint16(src[2*i:])"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	docLoop(name, isa, entry, gen.Lanes(isa), "",
		"for i := range dst {",
		"	dst[i] = float16To32("+read+")",
		"}")
	gen.ElemArgs()
	n := gen.Lanes(isa)
	gen.ElemLoop(name, n, 4, 2, 4, nt, func(j int) {
		v := gen.Vec(isa, j)
		VCVTPH2PS(Mem{Base: RSI, Disp: 2 * n * j}, v)
		store(v, Mem{Base: RDI, Disp: 4 * n * j})
	})
}

// f32ToBF16 emits f32ToBF16{AVX512,AVX2}: the integer round-to-nearest-even
// of the reference, a clamp of the magnitude code for saturation, and the
// reference's NaN code.
func f32ToBF16(isa string) {
	name := gen.Name("f32ToBF16", nt, isa)
	TEXT(name, NOSPLIT, "func(dst []uint16, src []float32, saturate bool)")
	Pragma("noescape")
	step := gen.Lanes(isa)
	if isa == "AVX2" {
		step = 16 // two ymm of floats make one ymm of codes
	}
	docLoop(name, isa, "Float32ToBFloat16", step, "That is dst[i] = float32ToBFloat16(x, saturate).",
		"for i, x := range src[:len(dst)] {",
		"	b := math.Float32bits(x)",
		"	abs := b & 0x7fffffff",
		"	h := (abs + 0x7fff + (abs>>16)&1) >> 16 // round to nearest even",
		"	if saturate {",
		"		h = min(h, 0x7f7f) // ±Inf and overflow → ±max finite",
		"	}",
		"	if abs > 0x7f800000 {",
		"		h = abs>>16 | 0x40 // NaN: quiet, top payload bits kept",
		"	}",
		"	dst[i] = uint16(b>>16&0x8000 | h)",
		"}")
	gen.ElemArgs()
	// AX = the clamp: 0x7f7f when saturating, 0x7f80 (a no-op) otherwise.
	MOVL(U32(0x7f80), EAX)
	MOVL(U32(0x7f7f), EBX)
	Load(Param("saturate"), EDX)
	TESTB(DL, DL)
	CMOVLNE(EBX, EAX)
	n := gen.Lanes(isa)
	if isa == "AVX512" {
		// The AVX-512 form rounds, clamps and fixes NaNs before the final
		// shift, so that one VPTERNLOGD puts the sign back: h = abs + 0x7fff
		// + kept LSB, then min(h, 0x7f7fffff) saturates, NaN lanes become
		// abs | 0x00400000, and (h | b&0x80000000) >> 16 is the code.
		MOVL(U32(0xffffffff), EAX)
		MOVL(U32(0x7f7fffff), EBX)
		TESTB(DL, DL)
		CMOVLNE(EBX, EAX)
		VMOVD(EAX, X0)
		VPBROADCASTD(X0, Z26)
		gen.Broadcast32(0x7fffffff, Z31, RAX, X0)
		gen.Broadcast32(0x7f800000, Z30, RAX, X0)
		gen.Broadcast32(0x00400000, Z29, RAX, X0)
		gen.Broadcast32(0x00010000, Z28, RAX, X0)
		gen.Broadcast32(0x7fff, Z27, RAX, X0)
		gen.Broadcast32(0x80000000, Z25, RAX, X0)
		gen.Broadcast32(1, Z24, RAX, X0)
		gen.ElemLoop(name, n, 4, 4, 2, nt, func(j int) {
			b, abs, h := gen.Z(3*j), gen.Z(3*j+1), gen.Z(3*j+2)
			lsb, nan := gen.K(1+j), gen.K(5+j%3) // K5 twice: renaming keeps them apart
			VMOVDQU32(Mem{Base: RSI, Disp: 4 * n * j}, b)
			VPANDD(Z31, b, abs)
			VPTESTMD(Z28, abs, lsb) // bit 16: the kept LSB
			VPADDD(Z27, abs, h)
			VPADDD(Z24, h, lsb, h)
			VPMINUD(Z26, h, h)
			VPCMPUD(U8(6), Z30, abs, nan) // abs > Inf: NaN
			VPORD(Z29, abs, nan, h)
			VPTERNLOGD(U8(0xf8), Z25, b, h) // h | b&0x80000000
			VPSRLD(U8(16), h, h)
			// VPMOVDW to a register and a plain store: the memory form of
			// VPMOVDW is several times slower on AMD Zen 4 and 5.
			VPMOVDW(h, h.AsY())
			store(h.AsY(), Mem{Base: RDI, Disp: 2 * n * j})
		})
		return
	}
	VMOVD(EAX, X0)
	VPBROADCASTD(X0, Y12)
	gen.Broadcast32(0x7fffffff, Y15, RAX, X0)
	gen.Broadcast32(0x7f800000, Y14, RAX, X0)
	gen.Broadcast32(0x40, Y13, RAX, X0)
	gen.Broadcast32(1, Y11, RAX, X0)
	gen.Broadcast32(0x7fff, Y10, RAX, X0)
	gen.Broadcast32(0x8000, Y9, RAX, X0)
	// One step is two ymm of floats, packed into one ymm of codes.
	gen.ElemLoop(name, 2*n, 1, 4, 2, nt, func(int) {
		for p := range 2 {
			b, abs, hi, h := gen.Vec(isa, 4*p), gen.Vec(isa, 4*p+1), gen.Vec(isa, 4*p+2), gen.Vec(isa, 4*p+3)
			VMOVDQU(Mem{Base: RSI, Disp: 4 * n * p}, b)
			VPAND(Y15, b, abs)
			VPSRLD(U8(16), abs, hi)
			VPAND(Y11, hi, h)
			VPADDD(abs, h, h)
			VPADDD(Y10, h, h)
			VPSRLD(U8(16), h, h)
			VPMINUD(Y12, h, h)
			VPCMPGTD(Y14, abs, abs) // abs > Inf: NaN
			VPOR(Y13, hi, hi)
			VPBLENDVB(abs, hi, h, h)
			VPSRLD(U8(16), b, b)
			VPAND(Y9, b, b)
			VPOR(b, h, h)
		}
		// Words of Y3 then Y7 per 128-bit lane; VPERMQ restores the order.
		VPACKUSDW(Y7, Y3, Y3)
		VPERMQ(U8(0xd8), Y3, Y3)
		store(Y3, Mem{Base: RDI})
	})
}

// f32ToF16 emits f32ToF16{AVX512,AVX2}: VCVTPS2PH with round-to-nearest-even
// (imm 0), which gives the reference's codes for every input, and, when
// saturating, an infinity code turned into the largest finite one.
func f32ToF16(isa string) {
	name := gen.Name("f32ToF16", nt, isa)
	TEXT(name, NOSPLIT, "func(dst []uint16, src []float32, saturate bool)")
	Pragma("noescape")
	docLoop(name, isa, "Float32ToFloat16", gen.Lanes(isa), "",
		"for i, x := range src[:len(dst)] {",
		"	dst[i] = float32ToFloat16(x, saturate)",
		"}")
	gen.ElemArgs()
	// AX = the magnitude code turned into the largest finite one: 0x7c00 (Inf)
	// when saturating, 0xffff (no code) otherwise.
	MOVL(U32(0xffff), EAX)
	MOVL(U32(0x7c00), EBX)
	Load(Param("saturate"), EDX)
	TESTB(DL, DL)
	CMOVLNE(EBX, EAX)
	gen.Broadcast16(Y14, RAX, X0)
	MOVL(U32(0x7fff), EAX)
	gen.Broadcast16(Y15, RAX, X0)
	n := gen.Lanes(isa)
	gen.ElemLoop(name, n, 4, 4, 2, nt, func(j int) {
		x := gen.Vec(isa, 3*j)
		h, t := gen.Z(3*j+1).AsY(), gen.Z(3*j+2).AsY()
		if isa == "AVX2" {
			h, t = h.(VecPhysical).AsX(), t.(VecPhysical).AsX()
		}
		VMOVUPS(Mem{Base: RSI, Disp: 4 * n * j}, x)
		VCVTPS2PH(U8(0), x, h)
		if isa == "AVX2" {
			VPAND(X15, h, t)
			VPCMPEQW(X14, t, t)
		} else {
			VPAND(Y15, h, t)
			VPCMPEQW(Y14, t, t)
		}
		VPADDW(t, h, h)
		store(h, Mem{Base: RDI, Disp: 2 * n * j})
	})
}
