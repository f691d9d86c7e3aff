// Command kdeq generates the decoders of ggml's K-quant, IQ4 and 32-element
// affine blocks for package kernels, and the importance-weighted error sums
// that check them: kdeq_amd64.s and the stub declarations in
// kdeq_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./kdeq -out ../kdeq_amd64.s -stubs ../kdeq_stubs_amd64.go -pkg kernels
//
// Every kernel decodes one block per step, fully unrolled: the block's
// scales are worked out first (general-purpose bit twiddling, then one
// vector conversion and product) into a small stack frame, from which each
// vector of codes broadcasts its own; the codes are widened to dwords
// (VPMOVZXBD), converted and multiplied in the order of the Go reference, so
// the floats are the same bit for bit. No product is fused with a sum.
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
		shifts = gen.Table("kdeqShifts", []uint32{
			0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
			16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
			0, 4, 8, 12, 16, 20, 24, 28, // nibbles of a dword
			0, 2, 4, 6, 8, 10, 12, 14, // bit pairs of a word
		})
		var b []byte
		for _, v := range iq4nl {
			b = append(b, byte(v))
		}
		iq4Table = gen.Bytes("kdeqIQ4NL", b)
		for _, isa := range []string{"AVX512", "AVX2"} {
			dequantQ4_K(isa)
			dequantQ5_K(isa)
			dequantQ6_K(isa)
			dequantQ3_K(isa)
			dequantQ2_K(isa)
			dequantIQ4XS(isa)
			dequantIQ4NL(isa)
			dequantQ4_1(isa)
			dequantQ5_0(isa)
			dequantQ5_1(isa)
		}
		weightedErrorSumsAVX512()
		weightedErrorSumsAVX2()
	})
}

// iq4nl is ggml's kvalues_iq4nl.
var iq4nl = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

var (
	shifts   Mem // dword shift counts: 0..31, then 0,4,..,28, then 0,2,..,14
	iq4Table Mem // the 16 int8 values of IQ4_NL codes
)

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

// kernel is the frame of one decoder: its name, ISA, block geometry and
// local scale frame.
type kernel struct {
	name    string
	isa     string
	n       int // 32-bit lanes per vector
	elems   int // elements per block
	bytes   int // bytes per block
	scratch Mem // local frame for the block's scales
}

// begin emits the TEXT, doc and argument loading of a decoder: dst's base in
// DI, src's in SI, the number of blocks in CX (jumping to done when zero),
// and frame bytes of local scratch. The loop over blocks starts at loop.
func begin(base, isa string, elems, bytes, frame int, body []string) *kernel {
	k := &kernel{name: base + isa, isa: isa, n: gen.Lanes(isa), elems: elems, bytes: bytes}
	TEXT(k.name, NOSPLIT, "func(dst []float32, src []byte)")
	Pragma("noescape")
	goName := base + "Go"
	doc(fmt.Sprintf("%s is the %s kernel of %s's loop", k.name, gen.ISAName(isa), goName), body,
		fmt.Sprintf("over the len(dst)/%d whole blocks; src must hold %d bytes per block.", elems, bytes))
	if frame > 0 {
		k.scratch = AllocLocal(frame)
	}
	Load(Param("dst").Base(), RDI)
	Load(Param("src").Base(), RSI)
	Load(Param("dst").Len(), RCX)
	log2 := map[int]uint8{32: 5, 256: 8}[elems]
	SHRQ(U8(log2), RCX)
	JZ(LabelRef(k.name + "_done"))
	return k
}

// loop starts the loop over blocks, after the constants are loaded.
func (k *kernel) loop() { Label(k.name + "_block") }

// end closes the block loop and the kernel.
func (k *kernel) end() {
	ADDQ(U32(k.bytes), RSI)
	ADDQ(U32(4*k.elems), RDI)
	DECQ(RCX)
	JNZ(LabelRef(k.name + "_block"))
	Label(k.name + "_done")
	VZEROUPPER()
	RET()
}

// vec returns vector register i at the kernel's width.
func (k *kernel) vec(i int) VecPhysical { return gen.Vec(k.isa, i) }

// local returns the scratch word i (a float32 slot).
func (k *kernel) local(i int) Mem { return k.scratch.Offset(4 * i) }

// out is the destination of element e of the block.
func out(e int) Mem { return Mem{Base: RDI, Disp: 4 * e} }

// in is the source byte at offset off of the block.
func in(off int) Mem { return Mem{Base: RSI, Disp: off} }

// half broadcasts the float16 at offset off of the block, as float32, to v
// (any width), through X15's low lane when v is not an xmm of its own.
func half(off int, v VecPhysical) {
	MOVWLZX(in(off), EAX)
	VMOVD(EAX, v.AsX())
	VCVTPH2PS(v.AsX(), v.AsX())
	VBROADCASTSS(v.AsX(), v)
}

// bcast fills v (any width) with the 32-bit constant c.
func bcast(c uint32, v VecPhysical) { gen.Broadcast32(c, v, RAX, v) }

// storeScaled converts the eight dwords of the ymm register s to float32,
// multiplies them by the ymm register d (op = VMULPS) and stores them at m.
func storeScaled(s, d VecPhysical, m Mem) {
	VCVTDQ2PS(s, s)
	VMULPS(d, s, s)
	VMOVUPS(s, m)
}

// pand and por are VPAND and VPOR at any width (VPANDD and VPORD for a
// zmm).
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

// kScales works out the eight 6-bit scales and mins of a Q4_K or Q5_K block
// (12 bytes at offset 4) and stores d·sc at scratch words 0..7 and dmin·m at
// 8..15, with d and dmin the float16s at offsets 0 and 2. It uses Y8..Y11.
func (k *kernel) kScales() {
	half(0, Y8)
	half(2, Y9)
	MOVL(in(4), R8L)   // u0
	MOVL(in(8), R9L)   // u1
	MOVL(in(12), R10L) // u2
	// scales: bytes 0..3 u0 & 0x3f3f3f3f, bytes 4..7 (u2 & 0x0f0f0f0f) | ((u0>>6) & 0x03030303)<<4
	MOVL(R10L, R11L)
	ANDL(U32(0x0f0f0f0f), R11L)
	MOVL(R8L, EAX)
	SHRL(U8(6), EAX)
	ANDL(U32(0x03030303), EAX)
	SHLL(U8(4), EAX)
	ORL(EAX, R11L)
	SHLQ(U8(32), R11)
	ANDL(U32(0x3f3f3f3f), R8L)
	ORQ(R8, R11)
	VMOVQ(R11, X10)
	// mins: bytes 0..3 u1 & 0x3f3f3f3f, bytes 4..7 ((u2>>4) & 0x0f0f0f0f) | ((u1>>6) & 0x03030303)<<4
	SHRL(U8(4), R10L)
	ANDL(U32(0x0f0f0f0f), R10L)
	MOVL(R9L, EAX)
	SHRL(U8(6), EAX)
	ANDL(U32(0x03030303), EAX)
	SHLL(U8(4), EAX)
	ORL(EAX, R10L)
	SHLQ(U8(32), R10)
	ANDL(U32(0x3f3f3f3f), R9L)
	ORQ(R9, R10)
	VMOVQ(R10, X11)
	VPMOVZXBD(X10, Y10)
	VPMOVZXBD(X11, Y11)
	storeScaled(Y10, Y8, k.local(0))
	storeScaled(Y11, Y9, k.local(8))
}

func dequantQ4_K(isa string) {
	k := begin("dequantQ4_K", isa, 256, 144, 64, []string{
		"for b := range len(dst) / 256 {",
		"	x, y := src[144*b:144*b+144], dst[256*b:256*b+256]",
		"	d, dmin := f16At(x[0:]), f16At(x[2:])",
		"	for s := range 8 {",
		"		sc, m := kScaleMin(x[4:16], s)",
		"		dl, ml := d*float32(sc), dmin*float32(m)",
		"		q := x[16+32*(s/2):]",
		"		for l := range 32 {",
		"			y[32*s+l] = float32(dl*float32(q[l]>>(4*(s%2))&0x0f)) - ml",
		"		}",
		"	}",
		"}",
	})
	n := k.n
	nib := k.vec(15)
	bcast(0x0f, nib)
	k.loop()
	k.kScales()
	for c := range 4 {
		dl0, ml0, dl1, ml1 := k.vec(10), k.vec(11), k.vec(12), k.vec(13)
		VBROADCASTSS(k.local(2*c), dl0)
		VBROADCASTSS(k.local(8+2*c), ml0)
		VBROADCASTSS(k.local(2*c+1), dl1)
		VBROADCASTSS(k.local(8+2*c+1), ml1)
		for i := range 32 / n {
			lo, hi := k.vec(0), k.vec(1)
			VPMOVZXBD(in(16+32*c+n*i), lo)
			VPSRLD(U8(4), lo, hi)
			pand(nib, lo, lo)
			VCVTDQ2PS(lo, lo)
			VCVTDQ2PS(hi, hi)
			VMULPS(dl0, lo, lo)
			VMULPS(dl1, hi, hi)
			VSUBPS(ml0, lo, lo)
			VSUBPS(ml1, hi, hi)
			VMOVUPS(lo, out(64*c+n*i))
			VMOVUPS(hi, out(64*c+32+n*i))
		}
	}
	k.end()
}

func dequantQ5_K(isa string) {
	k := begin("dequantQ5_K", isa, 256, 176, 64, []string{
		"for b := range len(dst) / 256 {",
		"	x, y := src[176*b:176*b+176], dst[256*b:256*b+256]",
		"	d, dmin := f16At(x[0:]), f16At(x[2:])",
		"	for s := range 8 {",
		"		sc, m := kScaleMin(x[4:16], s)",
		"		dl, ml := d*float32(sc), dmin*float32(m)",
		"		q := x[48+32*(s/2):]",
		"		for l := range 32 {",
		"			c := q[l]>>(4*(s%2))&0x0f | (x[16+l]>>s&1)<<4",
		"			y[32*s+l] = float32(dl*float32(c)) - ml",
		"		}",
		"	}",
		"}",
	})
	n := k.n
	nib, sixteen := k.vec(15), k.vec(14)
	bcast(0x0f, nib)
	bcast(0x10, sixteen)
	k.loop()
	k.kScales()
	// The fifth bits, shifted to bit 4 + s: register 3+i holds high-bit
	// bytes n·i.. as dwords, times 16.
	for i := range 32 / n {
		h := k.vec(3 + i)
		VPMOVZXBD(in(16+n*i), h)
		VPSLLD(U8(4), h, h)
	}
	for c := range 4 {
		dl0, ml0, dl1, ml1 := k.vec(10), k.vec(11), k.vec(12), k.vec(13)
		VBROADCASTSS(k.local(2*c), dl0)
		VBROADCASTSS(k.local(8+2*c), ml0)
		VBROADCASTSS(k.local(2*c+1), dl1)
		VBROADCASTSS(k.local(8+2*c+1), ml1)
		for i := range 32 / n {
			lo, hi, t, h := k.vec(0), k.vec(1), k.vec(2), k.vec(3+i)
			VPMOVZXBD(in(48+32*c+n*i), lo)
			VPSRLD(U8(4), lo, hi)
			pand(nib, lo, lo)
			for j, v := range []VecPhysical{lo, hi} {
				s := 2*c + j
				if s > 0 {
					VPSRLD(U8(s), h, t)
					pand(sixteen, t, t)
				} else {
					pand(sixteen, h, t)
				}
				por(t, v, v)
			}
			VCVTDQ2PS(lo, lo)
			VCVTDQ2PS(hi, hi)
			VMULPS(dl0, lo, lo)
			VMULPS(dl1, hi, hi)
			VSUBPS(ml0, lo, lo)
			VSUBPS(ml1, hi, hi)
			VMOVUPS(lo, out(64*c+n*i))
			VMOVUPS(hi, out(64*c+32+n*i))
		}
	}
	k.end()
}

// scales16 converts 16 dwords of scales, held in the vector registers s
// (one zmm, or two ymm), to float32, multiplies them by d (of the same width)
// and stores them at scratch words base..base+15.
func (k *kernel) scales16(s []VecPhysical, d VecPhysical, base int) {
	for i, v := range s {
		VCVTDQ2PS(v, v)
		VMULPS(d, v, v)
		VMOVUPS(v, k.local(base+k.n*i))
	}
}

// widen16 sign- or zero-extends the 16 bytes at m to dwords in one zmm, or
// two ymm (registers r and r+1), and returns them.
func (k *kernel) widen16(m Mem, r int, signed bool) []VecPhysical {
	ext := VPMOVZXBD
	if signed {
		ext = VPMOVSXBD
	}
	if k.n == 16 {
		ext(m, k.vec(r))
		return []VecPhysical{k.vec(r)}
	}
	ext(m, k.vec(r))
	ext(m.Offset(8), k.vec(r+1))
	return []VecPhysical{k.vec(r), k.vec(r + 1)}
}

func dequantQ6_K(isa string) {
	k := begin("dequantQ6_K", isa, 256, 210, 64, []string{
		"for b := range len(dst) / 256 {",
		"	x, y := src[210*b:210*b+210], dst[256*b:256*b+256]",
		"	d := f16At(x[208:])",
		"	for e := range 256 {",
		"		h, k, l := e/128, e/32%4, e%32",
		"		lo := x[64*h+32*(k%2)+l] >> (4 * (k / 2)) & 0x0f",
		"		hi := x[128+32*h+l] >> (2 * k) & 3",
		"		q := int(lo|hi<<4) - 32",
		"		y[e] = d * float32(int8(x[192+e/16])) * float32(q)",
		"	}",
		"}",
	})
	n := k.n
	c15, c30, c32 := k.vec(13), k.vec(14), k.vec(15)
	bcast(0x0f, c15)
	bcast(0x30, c30)
	bcast(32, c32)
	k.loop()
	d := k.vec(9)
	half(208, d)
	k.scales16(k.widen16(in(192), 10, true), d, 0)
	for h := range 2 {
		for i := range 32 / n {
			a, b, hb := k.vec(0), k.vec(1), k.vec(2)
			VPMOVZXBD(in(64*h+n*i), a)
			VPMOVZXBD(in(64*h+32+n*i), b)
			VPMOVZXBD(in(128+32*h+n*i), hb)
			q := [4]VecPhysical{k.vec(3), k.vec(4), k.vec(5), k.vec(6)}
			t := k.vec(7)
			// q0 = a&15 | (hb<<4)&0x30, q1 = b&15 | (hb<<2)&0x30,
			// q2 = a>>4 | hb&0x30,      q3 = b>>4 | (hb>>2)&0x30.
			pand(c15, a, q[0])
			VPSLLD(U8(4), hb, t)
			pand(c30, t, t)
			por(t, q[0], q[0])
			pand(c15, b, q[1])
			VPSLLD(U8(2), hb, t)
			pand(c30, t, t)
			por(t, q[1], q[1])
			VPSRLD(U8(4), a, q[2])
			pand(c30, hb, t)
			por(t, q[2], q[2])
			VPSRLD(U8(4), b, q[3])
			VPSRLD(U8(2), hb, t)
			pand(c30, t, t)
			por(t, q[3], q[3])
			for kk, v := range q {
				e := 128*h + 32*kk + n*i
				dl := k.vec(8)
				VBROADCASTSS(k.local(e/16), dl)
				VPSUBD(c32, v, v)
				VCVTDQ2PS(v, v)
				VMULPS(v, dl, v) // (d·sc)·q
				VMOVUPS(v, out(e))
			}
		}
	}
	k.end()
}

func dequantQ3_K(isa string) {
	k := begin("dequantQ3_K", isa, 256, 110, 64, []string{
		"for b := range len(dst) / 256 {",
		"	x, y := src[110*b:110*b+110], dst[256*b:256*b+256]",
		"	d := f16At(x[108:])",
		"	var dl [16]float32",
		"	for s := range dl {",
		"		dl[s] = d * float32(int(q3Scale(x[96:108], s))-32)",
		"	}",
		"	for e := range 256 {",
		"		k := e / 32 % 4",
		"		q := int(x[32+e/128*32+e%32]>>(2*k)&3) | int(x[e%32]>>(4*(e/128)+k)&1)<<2",
		"		y[e] = dl[e/16] * float32(q-4)",
		"	}",
		"}",
	})
	n := k.n
	c3, c4 := k.vec(14), k.vec(15)
	bcast(3, c3)
	bcast(4, c4)
	c32 := k.vec(13)
	bcast(32, c32)
	k.loop()
	d := k.vec(9)
	half(108, d)
	// The 16 scales, a byte each: a = the first 8 scale bytes, t = the
	// last 4 twice over (the second copy shifted right by 2);
	// lo = a&0x0f.. | (t&0x03..)<<4, hi = (a>>4)&0x0f.. | ((t>>4)&0x03..)<<4.
	MOVQ(in(96), R8)
	MOVL(in(104), R9L)
	MOVL(R9L, R10L)
	SHRL(U8(2), R10L)
	SHLQ(U8(32), R10)
	ORQ(R10, R9)
	MOVQ(U64(0x0f0f0f0f0f0f0f0f), R11)
	MOVQ(U64(0x0303030303030303), R12)
	MOVQ(R8, R10)
	ANDQ(R11, R10)
	MOVQ(R9, RAX)
	ANDQ(R12, RAX)
	SHLQ(U8(4), RAX)
	ORQ(RAX, R10)
	VMOVQ(R10, X10)
	SHRQ(U8(4), R8)
	ANDQ(R11, R8)
	SHRQ(U8(4), R9)
	ANDQ(R12, R9)
	SHLQ(U8(4), R9)
	ORQ(R9, R8)
	VPINSRQ(U8(1), R8, X10, X10)
	var s []VecPhysical
	if n == 16 {
		VPMOVZXBD(X10, Z10)
		s = []VecPhysical{Z10}
	} else {
		VPSRLDQ(U8(8), X10, X11)
		VPMOVZXBD(X10, Y10)
		VPMOVZXBD(X11, Y11)
		s = []VecPhysical{Y10, Y11}
	}
	for _, v := range s {
		VPSUBD(c32, v, v)
	}
	k.scales16(s, d, 0)
	for i := range 32 / n {
		hm := k.vec(2)
		VPMOVZXBD(in(n*i), hm)
		VPSLLD(U8(2), hm, hm) // the high bit of (h, k) at bit 2+4h+k
		for h := range 2 {
			qs := k.vec(0)
			VPMOVZXBD(in(32+32*h+n*i), qs)
			for kk := range 4 {
				v, t, dl := k.vec(3), k.vec(4), k.vec(5)
				e := 128*h + 32*kk + n*i
				if kk > 0 {
					VPSRLD(U8(2*kk), qs, v)
					pand(c3, v, v)
				} else {
					pand(c3, qs, v)
				}
				if sh := 4*h + kk; sh > 0 {
					VPSRLD(U8(sh), hm, t)
					pand(c4, t, t)
				} else {
					pand(c4, hm, t)
				}
				por(t, v, v)
				VPSUBD(c4, v, v)
				VCVTDQ2PS(v, v)
				VBROADCASTSS(k.local(e/16), dl)
				VMULPS(v, dl, v)
				VMOVUPS(v, out(e))
			}
		}
	}
	k.end()
}

func dequantQ2_K(isa string) {
	k := begin("dequantQ2_K", isa, 256, 84, 128, []string{
		"for b := range len(dst) / 256 {",
		"	x, y := src[84*b:84*b+84], dst[256*b:256*b+256]",
		"	d, dmin := f16At(x[80:]), f16At(x[82:])",
		"	for e := range 256 {",
		"		sc := x[e/16]",
		"		dl := d * float32(sc&0x0f)",
		"		ml := dmin * float32(sc>>4)",
		"		q := x[16+e/128*32+e%32] >> (2 * (e / 32 % 4)) & 3",
		"		y[e] = float32(dl*float32(q)) - ml",
		"	}",
		"}",
	})
	n := k.n
	c3, c15 := k.vec(14), k.vec(15)
	bcast(3, c3)
	bcast(0x0f, c15)
	k.loop()
	d, dmin := k.vec(8), k.vec(9)
	half(80, d)
	half(82, dmin)
	sc := k.widen16(in(0), 10, false)
	var mins []VecPhysical
	for i, v := range sc {
		m := k.vec(12 + i)
		VPSRLD(U8(4), v, m)
		pand(c15, v, v)
		mins = append(mins, m)
	}
	k.scales16(sc, d, 0)
	k.scales16(mins, dmin, 16)
	for h := range 2 {
		for i := range 32 / n {
			qs := k.vec(0)
			VPMOVZXBD(in(16+32*h+n*i), qs)
			for kk := range 4 {
				v, dl, ml := k.vec(1), k.vec(2), k.vec(3)
				e := 128*h + 32*kk + n*i
				if kk > 0 {
					VPSRLD(U8(2*kk), qs, v)
					pand(c3, v, v)
				} else {
					pand(c3, qs, v)
				}
				VCVTDQ2PS(v, v)
				VBROADCASTSS(k.local(e/16), dl)
				VBROADCASTSS(k.local(16+e/16), ml)
				VMULPS(v, dl, v)
				VSUBPS(ml, v, v)
				VMOVUPS(v, out(e))
			}
		}
	}
	k.end()
}

// iq4Codes looks the 16 code bytes at m up in IQ4_NL's table (X13, with 0x0f
// in every byte of X12): the low nibbles' values go to X0, the high ones' to
// X1, as int8.
func iq4Codes(m Mem) {
	VMOVDQU(m, X1)
	VPAND(X12, X1, X0)
	VPSRLW(U8(4), X1, X1)
	VPAND(X12, X1, X1)
	VPSHUFB(X0, X13, X0)
	VPSHUFB(X1, X13, X1)
}

// iq4Store converts the 16 int8 values of x (an xmm) to float32, multiplies
// them by dl and stores them at element e, using registers 4 and 5.
func (k *kernel) iq4Store(x VecPhysical, dl VecPhysical, e int) {
	if k.n == 16 {
		VPMOVSXBD(x, Z4)
		VCVTDQ2PS(Z4, Z4)
		VMULPS(Z4, dl, Z4)
		VMOVUPS(Z4, out(e))
		return
	}
	VPSRLDQ(U8(8), x, X5)
	VPMOVSXBD(x, Y4)
	VPMOVSXBD(X5, Y5)
	VCVTDQ2PS(Y4, Y4)
	VCVTDQ2PS(Y5, Y5)
	VMULPS(Y4, dl, Y4)
	VMULPS(Y5, dl, Y5)
	VMOVUPS(Y4, out(e))
	VMOVUPS(Y5, out(e+8))
}

// iq4Consts loads the IQ4_NL table into X13 and 0x0f bytes into X12.
func iq4Consts() {
	VMOVDQU(iq4Table, X13)
	MOVL(U32(0x0f0f0f0f), EAX)
	VMOVD(EAX, X12)
	VPBROADCASTD(X12, X12)
}

func dequantIQ4XS(isa string) {
	k := begin("dequantIQ4XS", isa, 256, 136, 32, []string{
		"for b := range len(dst) / 256 {",
		"	x, y := src[136*b:136*b+136], dst[256*b:256*b+256]",
		"	d := f16At(x[0:])",
		"	sh := binary.LittleEndian.Uint16(x[2:])",
		"	for s := range 8 {",
		"		ls := int(x[4+s/2]>>(4*(s%2))&0x0f) | int(sh>>(2*s)&3)<<4",
		"		dl := d * float32(ls-32)",
		"		q := x[8+16*s:]",
		"		for j := range 16 {",
		"			y[32*s+j] = dl * float32(IQ4NLValues[q[j]&0x0f])",
		"			y[32*s+j+16] = dl * float32(IQ4NLValues[q[j]>>4])",
		"		}",
		"	}",
		"}",
	})
	iq4Consts()
	bcast(0x0f, Y14)
	bcast(3, Y15)
	bcast(32, Y6)
	k.loop()
	// The eight scales: nibble s of the dword at 4 and bit pair s of the
	// word at 2, shifted into place lane by lane.
	half(0, Y8)
	VPBROADCASTD(in(4), Y9)
	VPSRLVD(shifts.Offset(4*32), Y9, Y9)
	VPAND(Y14, Y9, Y9)
	VPBROADCASTW(in(2), Y10)
	VPSRLVD(shifts.Offset(4*40), Y10, Y10)
	VPAND(Y15, Y10, Y10)
	VPSLLD(U8(4), Y10, Y10)
	VPOR(Y10, Y9, Y9)
	VPSUBD(Y6, Y9, Y9)
	storeScaled(Y9, Y8, k.local(0))
	for s := range 8 {
		dl := k.vec(8)
		VBROADCASTSS(k.local(s), dl)
		iq4Codes(in(8 + 16*s))
		k.iq4Store(X0, dl, 32*s)
		k.iq4Store(X1, dl, 32*s+16)
	}
	k.end()
}

func dequantIQ4NL(isa string) {
	k := begin("dequantIQ4NL", isa, 32, 18, 0, []string{
		"for b := range len(dst) / 32 {",
		"	x, y := src[18*b:18*b+18], dst[32*b:32*b+32]",
		"	d := f16At(x[0:])",
		"	for j := range 16 {",
		"		c := x[2+j]",
		"		y[j] = d * float32(IQ4NLValues[c&0x0f])",
		"		y[j+16] = d * float32(IQ4NLValues[c>>4])",
		"	}",
		"}",
	})
	iq4Consts()
	k.loop()
	d := k.vec(8)
	half(0, d)
	iq4Codes(in(2))
	k.iq4Store(X0, d, 0)
	k.iq4Store(X1, d, 16)
	k.end()
}

// fifth ors the fifth bits of elements e..e+n−1 of a 32-element block into
// v (n dwords): bit e+lane of the dword broadcast in qh, moved to bit 4.
func (k *kernel) fifth(v, qh, t, sixteen VecPhysical, e int) {
	VPSRLVD(shifts.Offset(4*e), qh, t)
	VPSLLD(U8(4), t, t)
	pand(sixteen, t, t)
	por(t, v, v)
}

// small32 emits the body of the 32-element affine decoders: the codes'
// bytes at codes, the fifth bits' dword at qhOff (negative: none), offset
// the codes by off (0 for none), multiplied by d and then plus m when
// withMin (float32(q·d) + m), else (q−off)·d.
func (k *kernel) small32(codes, qhOff int, withMin bool) {
	n := k.n
	nib, sixteen, d, m, qh := k.vec(15), k.vec(14), k.vec(8), k.vec(9), k.vec(10)
	bcast(0x0f, nib)
	bcast(0x10, sixteen)
	c16 := k.vec(13)
	bcast(16, c16)
	k.loop()
	half(0, d)
	if withMin {
		half(2, m)
	}
	if qhOff >= 0 {
		VPBROADCASTD(in(qhOff), qh)
	}
	for i := range 16 / n {
		lo, hi, t := k.vec(0), k.vec(1), k.vec(2)
		VPMOVZXBD(in(codes+n*i), lo)
		VPSRLD(U8(4), lo, hi)
		pand(nib, lo, lo)
		if qhOff >= 0 {
			k.fifth(lo, qh, t, sixteen, n*i)
			k.fifth(hi, qh, t, sixteen, 16+n*i)
		}
		for j, v := range []VecPhysical{lo, hi} {
			if !withMin {
				VPSUBD(c16, v, v)
			}
			VCVTDQ2PS(v, v)
			VMULPS(d, v, v)
			if withMin {
				VADDPS(m, v, v)
			}
			VMOVUPS(v, out(16*j+n*i))
		}
	}
}

func dequantQ4_1(isa string) {
	k := begin("dequantQ4_1", isa, 32, 20, 0, []string{
		"for b := range len(dst) / 32 {",
		"	x, y := src[20*b:20*b+20], dst[32*b:32*b+32]",
		"	d, m := f16At(x[0:]), f16At(x[2:])",
		"	for j := range 16 {",
		"		c := x[4+j]",
		"		y[j] = float32(float32(c&0x0f)*d) + m",
		"		y[j+16] = float32(float32(c>>4)*d) + m",
		"	}",
		"}",
	})
	k.small32(4, -1, true)
	k.end()
}

func dequantQ5_0(isa string) {
	k := begin("dequantQ5_0", isa, 32, 22, 0, []string{
		"for b := range len(dst) / 32 {",
		"	x, y := src[22*b:22*b+22], dst[32*b:32*b+32]",
		"	d := f16At(x[0:])",
		"	qh := binary.LittleEndian.Uint32(x[2:])",
		"	for j := range 16 {",
		"		c := x[6+j]",
		"		lo := int(c&0x0f) | int(qh>>j&1)<<4",
		"		hi := int(c>>4) | int(qh>>(j+16)&1)<<4",
		"		y[j] = float32(lo-16) * d",
		"		y[j+16] = float32(hi-16) * d",
		"	}",
		"}",
	})
	k.small32(6, 2, false)
	k.end()
}

func dequantQ5_1(isa string) {
	k := begin("dequantQ5_1", isa, 32, 24, 0, []string{
		"for b := range len(dst) / 32 {",
		"	x, y := src[24*b:24*b+24], dst[32*b:32*b+32]",
		"	d, m := f16At(x[0:]), f16At(x[2:])",
		"	qh := binary.LittleEndian.Uint32(x[4:])",
		"	for j := range 16 {",
		"		c := x[8+j]",
		"		lo := uint32(c&0x0f) | (qh>>j&1)<<4",
		"		hi := uint32(c>>4) | (qh>>(j+16)&1)<<4",
		"		y[j] = float32(float32(lo)*d) + m",
		"		y[j+16] = float32(float32(hi)*d) + m",
		"	}",
		"}",
	})
	k.small32(8, 4, true)
	k.end()
}
