// Command mxbyte generates the MX kernels of package kernels whose elements
// take a byte or less other than E2M1 (MXFP8 with E4M3 and E5M2 elements,
// MXFP6 with E2M3 and E3M2 elements, MXINT8), and the plain FP8 (e4m3fn,
// e5m2) slice codecs: mxbyte_amd64.s and the stub declarations in
// mxbyte_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./mxbyte -out ../mxbyte_amd64.s -stubs ../mxbyte_stubs_amd64.go -pkg kernels
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

// elem is an element float format of the MX kernels.
type elem struct {
	name    string // E4M3, E5M2, E2M3, E3M2
	goName  string // the Go name of the format in doc comments
	man     int    // mantissa bits M
	exp     int    // exponent bits E
	emin    int    // exponent of the smallest normal
	maxMag  uint32 // magnitude code of the largest finite value
	emax    int    // exponent of the largest normal: the scale rule's emax
	nanCode uint32 // element code of a NaN block
	six     bool   // six-bit codes, packed 4 in 3 bytes
	ieee    bool   // IEEE Inf and NaN (E5M2)
}

var (
	e4m3 = elem{name: "E4M3", goName: "e4m3fn", man: 3, exp: 4, emin: -6, maxMag: 0x7e, emax: 8, nanCode: 0x7f}
	e5m2 = elem{name: "E5M2", goName: "e5m2", man: 2, exp: 5, emin: -14, maxMag: 0x7b, emax: 15, nanCode: 0x7e, ieee: true}
	e2m3 = elem{name: "E2M3", goName: "e2m3", man: 3, exp: 2, emin: 0, maxMag: 0x1f, emax: 2, six: true}
	e3m2 = elem{name: "E3M2", goName: "e3m2", man: 2, exp: 3, emin: -2, maxMag: 0x1f, emax: 4, six: true}
)

// sh is the number of float32 mantissa bits the format drops.
func (e elem) sh() int { return 23 - e.man }

// roundAdd is added to the bits of |y| before the shift by sh: the rounding
// bias 2^(sh−1)−1 (the kept LSB is added separately) minus the rebias of the
// exponent, (emin+126)<<23, so that the shift leaves the magnitude code.
func (e elem) roundAdd() uint32 { return uint32(1)<<(e.sh()-1) - 1 - uint32(e.emin+126)<<23 }

// kBits is the float32 2^(emin−M+23), whose ulp is the format's subnormal
// quantum; minNorm the bits of 2^emin.
func (e elem) kBits() uint32   { return uint32(e.emin-e.man+150) << 23 }
func (e elem) minNorm() uint32 { return uint32(e.emin+127) << 23 }

// signPos is the bit of the code's sign.
func (e elem) signPos() int { return e.exp + e.man }

// magMask is the magnitude bits of a code.
func (e elem) magMask() uint32 { return 1<<e.signPos() - 1 }

// decodeMul is 2^(126+emin) as float32 bits: the magnitude code shifted to the
// top of a float32 mantissa (c << sh), read as a float32 and multiplied by it,
// is the element's value, subnormals included.
func (e elem) decodeMul() uint32 { return uint32(126+e.emin+127) << 23 }

func main() {
	gen.Main(func() {
		declareTables()
		declareMXTables()
		for _, isa := range []string{"AVX512", "AVX2"} {
			for _, e := range []elem{e4m3, e5m2, e2m3, e3m2} {
				quantFloat(isa, e)
			}
			quantInt8(isa)
			for _, nt = range []bool{false, true} {
				for _, e := range []elem{e4m3, e5m2} {
					dequantFP8(isa, e, true)
					dequantFP8(isa, e, false)
				}
				for _, e := range []elem{e2m3, e3m2} {
					dequantFP6(isa, e)
					dequantFP8(isa, e, false) // one six-bit code per byte
				}
				dequantInt8(isa)
			}
			for _, e := range []elem{e4m3, e5m2, e2m3, e3m2} {
				encodeFP8(isa, e)
			}
		}
	})
}

// nt selects the non-temporal variants of the dequantizers and decoders: the
// kernel being emitted stores with VMOVNTPS (which bypasses the caches, for
// outputs far larger than them) and ends with SFENCE; dst must then be
// aligned to the vector size.
var nt bool

// ---- constants

// cs holds the 32-bit constants the kernels read from memory, each as 8
// copies (32 bytes), so that AVX2 instructions can take it as a memory
// operand and AVX-512 ones as an embedded broadcast of its first word.
var cs = gen.Consts{Prefix: "mxb"}

// The tables the kernels read.
var (
	treeIdx    [4][2]Mem // the AVX-512 transpose tree's VPERMT2D indexes
	perm8      Mem       // dword order [0,4,1,5,2,6,3,7]
	e8m0Tab    Mem       // float32 bits of 2^(c−127), NaN for 255
	e8m0Tab64  Mem       // float32 bits of 2^(c−127)/64, NaN for 255
	pack6Shuf  Mem       // VPSHUFB: the low 3 bytes of each dword, per 128-bit lane
	pack6Perm  Mem       // VPERMD: dwords [0,1,2,4,5,6,8,9,10,12,13,14,...]
	pairPerm   Mem       // VPERMD: a pair of blocks packed in 128-bit lanes, in order
	unpack6Z   [2]Mem    // AVX-512 VPSHUFB: group bytes into dwords, codes 0–15 and 16–31
	unpack6Y   [4]Mem    // AVX2 VPSHUFB: group bytes into dwords, codes 8k..8k+7
	unpack6Sh  Mem       // VPSRLVD shifts 0, 6, 12, 18 (repeated)
	unpack6Off = [4]int{0, 6, 12, 16}
)

func declareTables() {
	treeIdx = gen.TreeIndexes("mxbTree")
	perm8 = gen.Perm8("mxbPerm8")
	var t, t64 []uint32
	for c := range 256 {
		t = append(t, e8m0Bits(c, 0))
		t64 = append(t64, e8m0Bits(c, 6))
	}
	e8m0Tab = gen.Table("mxbE8M0", t)
	e8m0Tab64 = gen.Table("mxbE8M0Div64", t64)
	// Per 128-bit lane: bytes 0-2, 4-6, 8-10, 12-14, then zeros.
	pack6Shuf = pack6ShufTable()
	pack6Perm = gen.Table("mxbPack6Perm", []uint32{0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 3, 7, 11, 15})
	// Dword 4v+L of the packed pair of blocks comes from dword 4L+v.
	var pp []uint32
	for i := range 16 {
		pp = append(pp, uint32(i%4*4+i/4))
	}
	pairPerm = gen.Table("mxbPairPerm", pp)
	// AVX-512: lane L of the 16 codes 0–15 (groups 0–3, bytes 0–11 of
	// the block, loaded from byte 0) holds group L in all four dwords;
	// codes 16–31 (groups 4–7, bytes 12–23) are loaded from byte 8, so
	// group 4+L starts at byte 4+3L of the load.
	for h := range 2 {
		var w []uint32
		for l := range 4 {
			g := 3*l + 4*h
			d := groupDword(g)
			w = append(w, d, d, d, d)
		}
		unpack6Z[h] = gen.Table(fmt.Sprintf("mxbUnpack6Z%d", h), w)
	}
	// AVX2: codes 8k..8k+7 are groups 2k and 2k+1, loaded as the 8 bytes
	// from unpack6Off[k] (broadcast to both halves of each lane).
	for k := range 4 {
		var w []uint32
		for l := range 2 {
			d := groupDword(6*k + 3*l - unpack6Off[k])
			w = append(w, d, d, d, d)
		}
		unpack6Y[k] = gen.Table(fmt.Sprintf("mxbUnpack6Y%d", k), w)
	}
	unpack6Sh = gen.Table("mxbUnpack6Sh", []uint32{0, 6, 12, 18, 0, 6, 12, 18, 0, 6, 12, 18, 0, 6, 12, 18})
}

// pack6ShufTable is the VPSHUFB index that keeps the low 3 bytes of each
// dword of a 128-bit lane, packed to its first 12 bytes.
func pack6ShufTable() Mem {
	b := make([]byte, 32)
	for i := range b {
		b[i] = 0x80
		if i%16 < 12 {
			b[i] = byte(i%16/3*4 + i%16%3)
		}
	}
	return gen.Bytes("mxbPack6Idx", b)
}

// groupDword is the VPSHUFB index dword that gathers the 3 bytes from byte
// at into the low 3 bytes of a dword, with a zero top byte.
func groupDword(at int) uint32 {
	return uint32(at) | uint32(at+1)<<8 | uint32(at+2)<<16 | 0x80<<24
}

// e8m0Bits returns the float32 bits of 2^(c−127−s), or the quiet NaN for
// code 255.
func e8m0Bits(c, s int) uint32 {
	if c == 255 {
		return 0x7fc00000
	}
	return math.Float32bits(float32(math.Ldexp(1, c-127-s)))
}

// bcast fills v (a ymm or zmm) with constant c.
func bcast(c uint32, v VecPhysical) { VPBROADCASTD(cs.Vec(c), v) }

// ---- quantizers

// quantDoc writes the doc comment of a quantizer: the Go function it
// computes, over whole groups of blocks; codes holds per bytes per block.
func quantDoc(name, isa, ref string, per int) {
	group := gen.Lanes(isa) // blocks of the transpose tree: one a lane
	Doc(fmt.Sprintf("%s is the %s kernel of", name, gen.ISAName(isa)), "", "\t"+ref, "",
		fmt.Sprintf("over len(scales) blocks of 32, a multiple of %d; src holds 32 floats and codes", group),
		fmt.Sprintf("%d bytes per block.", per))
}

// The AVX-512 quantizers take 16 blocks (512 floats) per step: a transpose
// tree of the block maxima (gen.AbsMaxTree512, on the bits of |x|: VRANGEPS,
// which would take the larger magnitude of two vectors in one instruction,
// lets a NaN operand through as the other one on the development machine),
// the 16 scales at
// once, their reciprocals spilled to the stack and broadcast per block, then
// the elements, two blocks at a time, whose codes in a block holding NaN or
// Inf are fixed up afterwards. The AVX2 ones take 8 blocks per step the same
// way. The second pass over a step reads it from the level-1 cache; software
// prefetch of the input ahead of the tree (PREFETCHT0 2–8 KiB ahead, one per
// line) made the DRAM-sized runs a quarter slower on the development VM, so
// the sequential reads are left to the hardware prefetcher.

// quantFloat emits quantMX{FP8E4M3,FP8E5M2,FP6E2M3,FP6E3M2}{AVX512,AVX2}.
func quantFloat(isa string, e elem) {
	base, ref, per := "quantMXFP8"+e.name, "quantizeMXFP8Go(codes, scales, src)", 32
	switch {
	case e.six:
		base, ref, per = "quantMXFP6"+e.name, "quantMXFP6Go(codes, scales, src, mx"+e.name+")", 24
	case e.name == "E5M2":
		ref = "quantizeMXFP8E5M2Go(codes, scales, src)"
	}
	name := base + isa
	TEXT(name, NOSPLIT, "func(codes []byte, scales []uint8, src []float32)")
	Pragma("noescape")
	quantDoc(name, isa, ref, per)
	quantBody(name, isa, e, false)
}

// quantInt8 emits quantMXINT8{AVX512,AVX2}.
func quantInt8(isa string) {
	name := "quantMXINT8" + isa
	TEXT(name, NOSPLIT, "func(codes []byte, scales []uint8, src []float32)")
	Pragma("noescape")
	quantDoc(name, isa, "quantizeMXINT8Go(codes, scales, src)", 32)
	quantBody(name, isa, elem{name: "INT8"}, true)
}

// codeBytes is the number of code bytes of a block.
func codeBytes(e elem) int {
	if e.six {
		return 24
	}
	return 32
}

func quantBody(name, isa string, e elem, int8 bool) {
	l := func(s string) string { return name + "_" + s }
	Load(Param("codes").Base(), RDI)
	Load(Param("scales").Base(), RDX)
	Load(Param("scales").Len(), RCX)
	Load(Param("src").Base(), RSI)
	emax := uint32(e.emax)
	// (254 − sc) << 23 is 2^(127−sc), except for sc = 254 (possible for
	// MXINT8 only), whose 2^−127 is the subnormal 0x00400000.
	recipTop := uint32(254)
	nanCode := e.nanCode * 0x01010101
	cb := codeBytes(e)
	if isa == "AVX512" {
		local := AllocLocal(64)
		SHRQ(Imm(4), RCX)
		JZ(LabelRef(l("done")))
		bcast(0x7fffffff, Z31)
		gen.LoadTree(treeIdx)
		if int8 {
			bcast(0xffffff81, Z30) // −127
			bcast(math.Float32bits(64), Z29)
		} else {
			bcast(uint32(e.emin+127), Z30)
			t := mxTables[e.name]
			VMOVDQU32(t.c, Z29)
			VMOVDQU32(t.d, Z28)
			bcast(e.maxMag, Z26)
			bcast(1<<e.signPos(), Z25)
		}
		Label(l("loop"))
		gen.AbsMaxTree512(RSI, 32, Z31)
		// Scales: K1 = blocks holding NaN or Inf; Z1 = the floor codes.
		VPCMPUD_BCST(U8(5), cs.Vec(0x7f800000), Z0, K1) // amax ≥ Inf
		VPSRLD(U8(23), Z0, Z1)
		if emax != 0 {
			VPSUBD_BCST(cs.Vec(emax), Z1, Z1)
			VPMAXSD_BCST(cs.Vec(0), Z1, Z1)
		}
		VMOVDQA32(Z1, Z2)
		VPBROADCASTD(cs.Vec(0xff), K1, Z2)
		VPMOVDB(Z2, X2)
		VMOVDQU(X2, Mem{Base: RDX})
		bcast(recipTop, Z3)
		VPSUBD(Z1, Z3, Z3)
		VPSLLD(U8(23), Z3, Z3)
		if int8 {
			VPMAXUD_BCST(cs.Vec(0x00400000), Z3, Z3)
		}
		VMOVDQU32(Z3, local)
		KMOVW(K1, R11L)
		// Pairs of blocks: four vectors of codes (one per dword), packed to
		// bytes by VPACKUSDW/VPACKUSWB (signed for MXINT8) within 128-bit
		// lanes, put in order by one VPERMD (Z15).
		VMOVDQU32(pairPerm, Z15)
		for b := 0; b < 16; b += 2 {
			VBROADCASTSS(local.Offset(4*b), Z1)
			VBROADCASTSS(local.Offset(4*b+4), Z2)
			for v := range 4 {
				n := gen.Z(3 + v)
				y, a, t, sc := gen.Z(7+4*(v%2)), gen.Z(8+4*(v%2)), gen.Z(9+4*(v%2)), gen.Z(10+4*(v%2))
				VMULPS(Mem{Base: RSI, Disp: 128*b + 64*v}, gen.Z(1+v/2), y)
				if int8 {
					VMULPS(Z29, y, y) // ·64, as the reference: x·2^(127−sc) may be subnormal
					VCVTPS2DQ_RN_SAE(y, n)
					VPMAXSD(Z30, n, n)
					continue
				}
				roundMX512(e, y, a, t, n, sc)
			}
			gen.Pack4([4]VecPhysical{Z3, Z4, Z5, Z6}, int8)
			VPERMD(Z3, Z15, Z3)
			if e.six {
				pack6(Z3, Z24) // 48 bytes
				VMOVDQU(Y3, Mem{Base: RDI, Disp: cb * b})
				VEXTRACTI32X4(Imm(2), Z3, X4)
				VMOVDQU(X4, Mem{Base: RDI, Disp: cb*b + 32})
			} else {
				VMOVDQU32(Z3, Mem{Base: RDI, Disp: cb * b})
			}
		}
		stepEnd(name, e, 16, cb, nanCode, Y2)
		return
	}
	// AVX2: 8 blocks per step.
	local := AllocLocal(32)
	SHRQ(Imm(3), RCX)
	JZ(LabelRef(l("done")))
	VMOVDQU(cs.Vec(0x7fffffff), Y15)
	VMOVDQU(perm8, Y14)
	Label(l("loop"))
	gen.AbsMaxTree256(RSI, 32, Y15, Y14)
	VPCMPGTD(cs.Vec(0x7f7fffff), Y0, Y3) // amax > max finite: NaN or Inf
	VMOVMSKPS(Y3, R11L)
	VPSRLD(U8(23), Y0, Y1)
	if emax != 0 {
		VPSUBD(cs.Vec(emax), Y1, Y1)
		VPXOR(Y2, Y2, Y2)
		VPMAXSD(Y2, Y1, Y1)
	}
	VPSRLD(U8(24), Y3, Y4) // 0xff in NaN blocks
	VPOR(Y1, Y4, Y4)
	gen.StoreBytes8(Y4, Y5, Mem{Base: RDX})
	VMOVDQU(cs.Vec(recipTop), Y5)
	VPSUBD(Y1, Y5, Y5)
	VPSLLD(U8(23), Y5, Y5)
	if int8 {
		VPMAXUD(cs.Vec(0x00400000), Y5, Y5)
	}
	VMOVDQU(Y5, local)
	if int8 {
		VMOVDQU(cs.Vec(0xffffff81), Y9)
		VMOVDQU(cs.Vec(math.Float32bits(64)), Y10)
	} else {
		VMOVDQU(cs.Vec(e.roundAdd()), Y9)
		VMOVDQU(cs.Vec(e.kBits()), Y10)
		VMOVDQU(cs.Vec(e.minNorm()), Y12)
		VMOVDQU(cs.Vec(e.maxMag), Y13)
	}
	for b := range 8 {
		VBROADCASTSS(local.Offset(4*b), Y8)
		for v := range 4 {
			n := gen.Y(v)
			y := Y4
			VMULPS(Mem{Base: RSI, Disp: 128*b + 32*v}, Y8, y)
			if int8 {
				VMULPS(Y10, y, y)
				VCVTPS2DQ(y, n)
				VPMAXSD(Y9, n, n)
				continue
			}
			round256(e, y, Y5, Y6, n, Y7)
		}
		gen.Pack4([4]VecPhysical{Y0, Y1, Y2, Y3}, int8)
		VPERMD(Y0, Y14, Y0)
		if e.six {
			pack6(Y0, Y8)
			VMOVDQU(X0, Mem{Base: RDI, Disp: cb * b})
			VEXTRACTI128(Imm(1), Y0, X1)
			VMOVQ(X1, Mem{Base: RDI, Disp: cb*b + 16})
		} else {
			VMOVDQU(Y0, Mem{Base: RDI, Disp: cb * b})
		}
	}
	stepEnd(name, e, 8, cb, nanCode, Y4)
}

// stepEnd ends a quantizer's step of g blocks (cb code bytes each) and the
// kernel: the codes of the blocks holding NaN or Inf fixed (nanFix, with the
// ymm register v), SI, DI and DX moved to the next step, and the loop back.
func stepEnd(name string, e elem, g, cb int, nanCode uint32, v VecPhysical) {
	nanFix(name, e, cb, nanCode, v)
	ADDQ(U32(uint32(g*128)), RSI)
	ADDQ(U32(uint32(g*cb)), RDI)
	ADDQ(Imm(uint64(g)), RDX)
	DECQ(RCX)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	gen.End(false)
}

// nanFix overwrites the codes of the blocks whose bits are set in R11 (a
// block holding NaN or Inf) with the element NaN code; DI points at the
// step's first block. It uses AX, BX and the ymm register v.
func nanFix(name string, e elem, cb int, nanCode uint32, v VecPhysical) {
	l := func(s string) string { return name + "_" + s }
	TESTL(R11L, R11L)
	JZ(LabelRef(l("nanDone")))
	VMOVDQU(cs.Vec(nanCode), v)
	Label(l("nan"))
	BSFL(R11L, EAX)
	if e.six {
		LEAQ(Mem{Base: RAX, Index: RAX, Scale: 2}, RAX) // 3·index
		SHLQ(Imm(3), RAX)                               // 24·index
		VMOVDQU(v.AsX(), Mem{Base: RDI, Index: RAX, Scale: 1})
		VMOVQ(v.AsX(), Mem{Base: RDI, Index: RAX, Scale: 1, Disp: 16})
	} else {
		SHLQ(Imm(5), RAX)
		VMOVDQU(v, Mem{Base: RDI, Index: RAX, Scale: 1})
	}
	LEAL(Mem{Base: R11, Disp: -1}, EBX)
	ANDL(EBX, R11L)
	JNZ(LabelRef(l("nan")))
	Label(l("nanDone"))
}

// roundMX512 leaves in n the codes (one per dword) of the scaled values y
// of a finite MX block, below 2^(emax+1) in magnitude, rounded to nearest
// even in e and saturating. With F the exponent field of |y| raised to at
// least that of 2^emin, the float addition of C = 2^(F−127+23−M), whose ulp
// is the quantum of |y| in the format (that of its subnormals below 2^emin),
// rounds |y| to nearest even, and the difference of the bits of |y|+C and C
// is |y| in quanta; adding the binades above 2^emin ((F−emin−127)·2^M) gives
// the magnitude code, which is clamped to the largest and given the sign of
// y. C and D = bits(C) − (F−emin−127)·2^M are looked up by F (Z29 and Z28,
// tables of 16 entries, or of 32 for E5M2, whose upper halves are read from
// memory); a, t and s are scratch. Constants: Z31 = 0x7fffffff, Z30 = the
// exponent field of 2^emin, Z26 = the clamp (maxMag), Z25 = the sign bit of
// a code.
func roundMX512(e elem, y, a, t, n, s VecPhysical) { roundTab512(e, y, a, t, n, s, false) }

// roundTab512 is roundMX512 for any y when clampTop is set: F is also
// lowered to the exponent field of 2^emax (Z27), which leaves |y| from
// 2^(emax+1) up (infinities included) far above the largest magnitude, and
// the clamp to Z26 gives their code. NaN lanes are the caller's.
func roundTab512(e elem, y, a, t, n, s VecPhysical, clampTop bool) {
	VPANDD(Z31, y, a)
	VPSRLD(U8(23), a, t)
	VPMAXUD(Z30, t, t) // F
	if clampTop {
		VPMINUD(Z27, t, t)
	}
	if e.emax-e.emin < 16 {
		VPERMD(Z29, t, s) // C
		VPERMD(Z28, t, n) // D
	} else {
		tb := mxTables[e.name]
		VMOVDQA32(t, n)
		VPERMI2D(tb.c.Offset(64), Z29, t)
		VPERMI2D(tb.d.Offset(64), Z28, n)
		s = t
	}
	VADDPS(s, a, s)
	VPSUBD(n, s, n)
	VPMINSD(Z26, n, n)
	VPSRLD(U8(31-e.signPos()), y, t)
	VPTERNLOGD(U8(0xf8), Z25, t, n) // n | t&sign
}

// mxTables holds, per element format, the tables of roundMX512: for the
// exponent fields F of 2^emin to 2^emax, at index F mod 16 (or mod 32),
// the bits of C = 2^(F−127+23−M) and D = bits(C) − (F−emin−127)<<M.
var mxTables = map[string]struct{ c, d Mem }{}

func declareMXTables() {
	for _, e := range []elem{e4m3, e5m2, e2m3, e3m2} {
		size := 16
		if e.emax-e.emin >= 16 {
			size = 32
		}
		c, d := make([]uint32, size), make([]uint32, size)
		for f := e.emin + 127; f <= e.emax+127; f++ {
			cb := uint32(f+23-e.man) << 23
			c[f%size] = cb
			d[f%size] = cb - uint32(f-e.emin-127)<<e.man
		}
		mxTables[e.name] = struct{ c, d Mem }{gen.Table("mxbC"+e.name, c), gen.Table("mxbD"+e.name, d)}
	}
}

// round256 leaves in n the codes (one per dword) of the float32 values y
// rounded to nearest even in e, clamped to the magnitude in Y13: the normal
// result by integer rounding of the bits (adding 2^(sh−1)−1 and the kept
// LSB, minus the exponent rebias, then shifting), the subnormal one by the
// float addition of K = 2^(emin−M+23), whose ulp is the format's quantum,
// selected by |y| < 2^emin; the sign put back. y is overwritten with the
// sign at its place in the code; a, t and s are scratch. Constants: Y9 =
// roundAdd, Y10 = K (also its bits), Y12 = the bits of 2^emin, Y15 =
// 0x7fffffff. (AVX2 has no VPERMD of 16 entries, so the table form of
// roundMX512 would not save instructions here.)
func round256(e elem, y, a, t, n, s VecPhysical) {
	sh := U8(e.sh())
	VPAND(Y15, y, a)
	VPSRLD(U8(31), y, y)
	VPSLLD(U8(e.signPos()), y, y) // the sign at its place in the code
	VPSLLD(U8(31-e.sh()), a, t)
	VPSRLD(U8(31), t, t)
	VPADDD(Y9, a, n)
	VPADDD(t, n, n)
	VPSRAD(sh, n, n)
	VADDPS(Y10, a, s)
	VPSUBD(Y10, s, s)
	VPCMPGTD(a, Y12, t) // 2^emin > |y|
	VPBLENDVB(t, s, n, n)
	VPMINSD(Y13, n, n)
	VPOR(y, n, n)
}

// pack6 packs the six-bit codes, one per byte of c (32 in a ymm, 64 in a
// zmm), into its first 24 or 48 bytes (4 codes in 3 bytes, LSB first); it
// uses tmp, a register of c's size.
func pack6(c, tmp VecPhysical) {
	if c.Size() == 64 {
		VBROADCASTI32X4(cs.Vec(0x40014001), tmp)
		VPMADDUBSW(tmp, c, c)
		VBROADCASTI32X4(cs.Vec(0x10000001), tmp)
		VPMADDWD(tmp, c, c)
		VBROADCASTI32X4(pack6Shuf, tmp)
		VPSHUFB(tmp, c, c)
		VMOVDQU32(pack6Perm, tmp)
		VPERMD(c, tmp, c)
		return
	}
	VPMADDUBSW(cs.Vec(0x40014001), c, c) // words c0 + 64·c1
	VPMADDWD(cs.Vec(0x10000001), c, c)   // dwords w0 + 4096·w1: 24 bits
	VPSHUFB(pack6Shuf, c, c)             // 12 bytes per 128-bit lane
	VMOVDQU(pack6Perm, tmp)              // [0,1,2,4,5,6] then bytes past the 24
	VPERMD(c, tmp, c)
}

// ---- dequantizers

func dequantDoc(name, isa, ref string, step int, note string) {
	lines := []string{fmt.Sprintf("%s is the %s kernel of", name, gen.ISAName(isa)), "", "\t" + ref, "",
		fmt.Sprintf("over len(scales) blocks of 32 (dst holds 32 floats per block%s).", note)}
	if nt {
		lines = append(lines, gen.NTNote("VMOVNTPS", step))
	}
	Doc(lines...)
}

func dequantArgs() {
	Load(Param("dst").Base(), RDI)
	Load(Param("codes").Base(), RSI)
	Load(Param("scales").Base(), RDX)
	Load(Param("scales").Len(), RCX)
}

// blockLoop runs body once per block: CX counts the blocks, DX walks the
// scales, SI the codes (inBytes per block) and DI dst; the block's scale
// multiplier (from tab) is broadcast to m first.
func blockLoop(name string, inBytes int, tab Mem, m VecPhysical, body func()) {
	l := func(s string) string { return name + "_" + s }
	TESTQ(RCX, RCX)
	JZ(LabelRef(l("done")))
	LEAQ(tab, R8)
	Label(l("loop"))
	MOVBLZX(Mem{Base: RDX}, EAX)
	VBROADCASTSS(Mem{Base: R8, Index: RAX, Scale: 4}, m)
	body()
	ADDQ(Imm(uint64(inBytes)), RSI)
	ADDQ(U32(128), RDI)
	INCQ(RDX)
	DECQ(RCX)
	JNZ(LabelRef(l("loop")))
	Label(l("done"))
	gen.End(nt)
}

// dequantFP8 emits the MXFP8 dequantizers (scaled, E4M3 and E5M2) and the
// plain slice decoders of one code per byte (unscaled, all four formats).
func dequantFP8(isa string, e elem, scaled bool) {
	w := 16
	if isa == "AVX2" {
		w = 8
	}
	var name string
	if scaled {
		name = gen.Name("dequantMXFP8"+e.name, nt, isa)
		TEXT(name, NOSPLIT, "func(dst []float32, codes []byte, scales []uint8)")
		ref := "dequantizeMXFP8Go(dst, codes, scales)"
		if e.name == "E5M2" {
			ref = "dequantizeMXFP8E5M2Go(dst, codes, scales)"
		}
		Pragma("noescape")
		dequantDoc(name, isa, ref, 4*w, " and codes 32 bytes")
		dequantArgs()
	} else {
		name = gen.Name("decode"+e.name, nt, isa)
		TEXT(name, NOSPLIT, "func(dst []float32, src []byte)")
		Pragma("noescape")
		docDecode(name, isa, e, 4*w)
		gen.ElemArgs()
	}
	if isa == "AVX512" {
		bcast(e.magMask()<<e.sh(), Z31)
		bcast(e.decodeMul(), Z30)
		bcast(0x80000000, Z28)
		if e.ieee {
			bcast(0x0f800000, Z29)
			bcast(0x70000000, Z27)
			bcast(0x00400000, Z26)
		} else {
			bcast(0x7fc00000, Z29)
		}
		one := func(c VecPhysical, in, out Mem, k1, k2 Register, m VecPhysical) {
			f, sg := gen.Z(gen.Num(c)+1), gen.Z(gen.Num(c)+2)
			VPMOVZXBD(in, c)
			dec512(e, c, f, sg, k1, k2)
			if m != nil {
				VMULPS(m, c, c)
			}
			gen.StoreFloats(c, out, nt)
		}
		if scaled {
			blockLoop(name, 32, e8m0Tab, Z0, func() {
				one(Z1, Mem{Base: RSI}, Mem{Base: RDI}, K1, K2, Z0)
				one(Z4, Mem{Base: RSI, Disp: 16}, Mem{Base: RDI, Disp: 64}, K3, K4, Z0)
			})
			return
		}
		gen.ElemLoop(name, 16, 4, 1, 4, nt, func(j int) {
			one(gen.Z(3*j), Mem{Base: RSI, Disp: 16 * j}, Mem{Base: RDI, Disp: 64 * j}, gen.K(1+j), gen.K(5+j%3), nil)
		})
		return
	}
	VMOVDQU(cs.Vec(e.magMask()<<e.sh()), Y15)
	VMOVDQU(cs.Vec(e.decodeMul()), Y14)
	VMOVDQU(cs.Vec(0x80000000), Y12)
	if e.ieee {
		VMOVDQU(cs.Vec(0x7f800000), Y13)
		VMOVDQU(cs.Vec(0x7f7fffff), Y9)
		VMOVDQU(cs.Vec(0x70000000), Y11)
		VMOVDQU(cs.Vec(0x00400000), Y10)
	} else {
		VMOVDQU(cs.Vec(0x7fc00000), Y13)
	}
	one := func(c VecPhysical, in, out Mem, m VecPhysical) {
		f, sg, t := gen.Y(gen.Num(c)+1), gen.Y(gen.Num(c)+2), gen.Y(gen.Num(c)+3)
		VPMOVZXBD(in, c)
		dec256(e, c, f, sg, t)
		if m != nil {
			VMULPS(m, c, c)
		}
		gen.StoreFloats(c, out, nt)
	}
	if scaled {
		blockLoop(name, 32, e8m0Tab, Y0, func() {
			for v := range 4 {
				one(gen.Y(1+4*(v%2)), Mem{Base: RSI, Disp: 8 * v}, Mem{Base: RDI, Disp: 32 * v}, Y0)
			}
		})
		return
	}
	gen.ElemLoop(name, 8, 2, 1, 4, nt, func(j int) {
		one(gen.Y(4*j), Mem{Base: RSI, Disp: 8 * j}, Mem{Base: RDI, Disp: 32 * j}, nil)
	})
}

// dec512 turns the codes of e in the dwords of c into their float32 values
// in c; f and sg are scratch. Constants: Z31 = the magnitude bits at <<sh,
// Z30 = the decode multiplier, Z28 = 0x80000000; E4M3: Z29 = quiet NaN;
// E5M2: Z29 = 0x0f800000 (Inf at <<sh), Z27 = 0x70000000, Z26 = the quiet
// bit.
func dec512(e elem, c, f, sg VecPhysical, k1, k2 Register) {
	VPSLLD(U8(31-e.signPos()), c, sg)
	VPSLLD(U8(e.sh()), c, f)
	VPANDD(Z31, f, f)
	VMULPS(Z30, f, c)
	switch {
	case e.ieee:
		VPCMPUD(U8(5), Z29, f, k1) // ≥ Inf
		VPCMPUD(U8(6), Z29, f, k2) // NaN
		VPADDD(Z27, f, k1, c)
		VPORD(Z26, c, k2, c)
	case e.name == "E4M3":
		VPCMPEQD(Z31, f, k1) // the NaN magnitude
		VMOVDQA32(Z29, k1, c)
	}
	VPTERNLOGD(U8(0xf8), Z28, sg, c)
}

// dec256 is dec512 for AVX2, with f, sg and t scratch. Constants: Y15 = the
// magnitude bits at <<sh, Y14 = the decode multiplier, Y12 = 0x80000000;
// E4M3: Y13 = quiet NaN; E5M2: Y13 = 0x7f800000, Y9 = 0x7f7fffff, Y11 =
// 0x70000000, Y10 = the quiet bit.
func dec256(e elem, c, f, sg, t VecPhysical) {
	VPSLLD(U8(31-e.signPos()), c, sg)
	VPAND(Y12, sg, sg)
	VPSLLD(U8(e.sh()), c, f)
	VPAND(Y15, f, f)
	VMULPS(Y14, f, c)
	switch {
	case e.ieee:
		// f + 0x70000000 is Inf's exponent with the payload for the
		// magnitudes from Inf's up; NaNs (above Inf) also get the quiet bit.
		VPADDD(Y11, f, f)
		VPCMPGTD(Y13, f, t)
		VPAND(Y10, t, t)
		VPOR(f, t, t)
		VPCMPGTD(Y9, f, f) // ≥ Inf
		VPBLENDVB(f, t, c, c)
	case e.name == "E4M3":
		VPCMPEQD(Y15, f, f) // the NaN magnitude
		VPBLENDVB(f, Y13, c, c)
	}
	VPOR(sg, c, c)
}

func docDecode(name, isa string, e elem, align int) {
	lines := []string{fmt.Sprintf("%s is the %s kernel of the loop", name, gen.ISAName(isa)), "",
		"\tfor i, c := range src[:len(dst)] {",
		fmt.Sprintf("\t\tdst[i] = %sCodec.Decode(uint32(c))", e.goName),
		"\t}", "",
		fmt.Sprintf("over len(dst), a multiple of %d.", align/4)}
	if nt {
		lines = append(lines, gen.NTNote("VMOVNTPS", align))
	}
	Doc(lines...)
}

// dequantFP6 emits dequantMXFP6{E2M3,E3M2}[NT]{AVX512,AVX2}.
func dequantFP6(isa string, e elem) {
	name := gen.Name("dequantMXFP6"+e.name, nt, isa)
	TEXT(name, NOSPLIT, "func(dst []float32, codes []byte, scales []uint8)")
	Pragma("noescape")
	w := 16
	if isa == "AVX2" {
		w = 8
	}
	dequantDoc(name, isa, fmt.Sprintf("dequantMXFP6Go(dst, codes, scales, mx%s)", e.name), 4*w, " and codes 24 bytes")
	dequantArgs()
	if isa == "AVX512" {
		VMOVDQU32(unpack6Z[0], Z25)
		VMOVDQU32(unpack6Z[1], Z24)
		VMOVDQU32(unpack6Sh, Z23)
		bcast(e.magMask()<<e.sh(), Z31)
		bcast(e.decodeMul(), Z30)
		bcast(0x80000000, Z28)
		blockLoop(name, 24, e8m0Tab, Z0, func() {
			for h := range 2 {
				c, f, sg := gen.Z(1+3*h), gen.Z(2+3*h), gen.Z(3+3*h)
				VBROADCASTI32X4(Mem{Base: RSI, Disp: 8 * h}, c)
				VPSHUFB(gen.Z(25-h), c, c)
				VPSRLVD(Z23, c, c)
				dec512(e, c, f, sg, K1, K2)
				VMULPS(Z0, c, c)
				gen.StoreFloats(c, Mem{Base: RDI, Disp: 64 * h}, nt)
			}
		})
		return
	}
	VMOVDQU(cs.Vec(e.magMask()<<e.sh()), Y15)
	VMOVDQU(cs.Vec(e.decodeMul()), Y14)
	VMOVDQU(cs.Vec(0x80000000), Y12)
	VMOVDQU(unpack6Sh, Y11)
	blockLoop(name, 24, e8m0Tab, Y0, func() {
		for k := range 4 {
			c, f, sg, t := gen.Y(1+4*(k%2)), gen.Y(2+4*(k%2)), gen.Y(3+4*(k%2)), gen.Y(4+4*(k%2))
			VPBROADCASTQ(Mem{Base: RSI, Disp: unpack6Off[k]}, c)
			VPSHUFB(unpack6Y[k], c, c)
			VPSRLVD(Y11, c, c)
			dec256(e, c, f, sg, t)
			VMULPS(Y0, c, c)
			gen.StoreFloats(c, Mem{Base: RDI, Disp: 32 * k}, nt)
		}
	})
}

// dequantInt8 emits dequantMXINT8[NT]{AVX512,AVX2}: int8 codes widened,
// converted exactly to float32 and multiplied by 2^(code−127)/64 (one
// rounding of the same product the reference makes).
func dequantInt8(isa string) {
	name := gen.Name("dequantMXINT8", nt, isa)
	TEXT(name, NOSPLIT, "func(dst []float32, codes []byte, scales []uint8)")
	Pragma("noescape")
	w := 16
	if isa == "AVX2" {
		w = 8
	}
	dequantDoc(name, isa, "dequantizeMXINT8Go(dst, codes, scales)", 4*w, " and codes 32 bytes")
	dequantArgs()
	if isa == "AVX512" {
		blockLoop(name, 32, e8m0Tab64, Z0, func() {
			for h := range 2 {
				c := gen.Z(1 + h)
				VPMOVSXBD(Mem{Base: RSI, Disp: 16 * h}, c)
				VCVTDQ2PS(c, c)
				VMULPS(Z0, c, c)
				gen.StoreFloats(c, Mem{Base: RDI, Disp: 64 * h}, nt)
			}
		})
		return
	}
	blockLoop(name, 32, e8m0Tab64, Y0, func() {
		for v := range 4 {
			c := gen.Y(1 + v)
			VPMOVSXBD(Mem{Base: RSI, Disp: 8 * v}, c)
			VCVTDQ2PS(c, c)
			VMULPS(Y0, c, c)
			gen.StoreFloats(c, Mem{Base: RDI, Disp: 32 * v}, nt)
		}
	})
}

// ---- plain FP8 encoders

// encodeFP8 emits encode{E4M3,E5M2,E2M3,E3M2}{AVX512,AVX2}: the round to
// nearest even of roundTab512 (AVX-512) or round256 (AVX2) with the
// specials of FloatCodec.Encode: NaN to the NaN code (E5M2 keeps the top
// payload bit), and values past the largest finite one (infinities
// included) to ±max when saturating, else to the NaN code (E4M3) or ±Inf
// (E5M2), which is the magnitude one above max. The six-bit formats, one
// code per byte, have neither: overflow gives ±max, +NaN the code of −0 and
// −NaN that of +0.
func encodeFP8(isa string, e elem) {
	name := "encode" + e.name + isa
	TEXT(name, NOSPLIT, "func(dst []byte, src []float32, saturate bool)")
	Pragma("noescape")
	step := 16
	Doc(fmt.Sprintf("%s is the %s kernel of the loop", name, gen.ISAName(isa)), "",
		"\tfor i, x := range src[:len(dst)] {",
		fmt.Sprintf("\t\tdst[i] = byte(%sCodec.Encode(x, RoundEven, saturate, 0))", e.goName),
		"\t}", "",
		fmt.Sprintf("over len(dst), a multiple of %d.", step))
	gen.ElemArgs()
	// BX = the magnitude overflow clamps to: max, or max+1 (NaN or Inf)
	// when not saturating; max for the six-bit formats either way.
	MOVL(U32(e.maxMag), EBX)
	if !e.six {
		MOVL(U32(e.maxMag+1), EBX)
		MOVL(U32(e.maxMag), EAX)
		Load(Param("saturate"), EDX)
		TESTB(DL, DL)
		CMOVLNE(EAX, EBX)
	}
	if isa == "AVX512" {
		bcast(0x7fffffff, Z31)
		bcast(uint32(e.emin+127), Z30)
		t := mxTables[e.name]
		VMOVDQU32(t.c, Z29)
		VMOVDQU32(t.d, Z28)
		bcast(uint32(e.emax+127), Z27)
		VPBROADCASTD(EBX, Z26)
		bcast(1<<e.signPos(), Z25)
		bcast(0x7f800000, Z24)
		bcast(e.nanCode, Z23)
		gen.ElemLoop(name, 16, 4, 4, 1, nt, func(j int) {
			y, a, t, n, s := gen.Z(5*j), gen.Z(5*j+1), gen.Z(5*j+2), gen.Z(5*j+3), gen.Z(5*j+4)
			VMOVUPS(Mem{Base: RSI, Disp: 64 * j}, y)
			roundTab512(e, y, a, t, n, s, true)
			// NaN: the NaN code with the sign n already holds, and E5M2's
			// top payload bit; for the six-bit formats, which have no NaN,
			// −0's code for +NaN and 0 for −NaN.
			VPCMPUD(U8(6), Z24, a, gen.K(1+j))
			if e.six {
				VPTERNLOGD(U8(0x0c), Z23, Z25, gen.K(1+j), n) // ^n & sign
			} else {
				VPTERNLOGD(U8(0xea), Z23, Z25, gen.K(1+j), n) // n&sign | nanCode
			}
			if e.ieee {
				VPSLLD(U8(31-(23-e.man)), a, t)
				VPSRLD(U8(31), t, t)
				VPORD(t, n, gen.K(1+j), n)
			}
			VPMOVDB(n, n.AsX())
			VMOVDQU32(n.AsX(), Mem{Base: RDI, Disp: 16 * j})
		})
		return
	}
	VMOVDQU(cs.Vec(0x7fffffff), Y15)
	VMOVDQU(cs.Vec(e.roundAdd()), Y9)
	VMOVDQU(cs.Vec(e.kBits()), Y10)
	VMOVDQU(cs.Vec(e.minNorm()), Y12)
	VMOVD(EBX, X13)
	VPBROADCASTD(X13, Y13)
	VMOVDQU(cs.Vec(0x7f800000), Y11)
	if e.six {
		VMOVDQU(cs.Vec(1<<e.signPos()), Y14) // −0
	} else {
		VMOVDQU(cs.Vec(e.nanCode), Y14)
	}
	gen.ElemLoop(name, 16, 1, 4, 1, nt, func(int) {
		for v := range 2 {
			n := gen.Y(v)
			y, a, t, s := Y4, Y5, Y6, Y7
			VMOVUPS(Mem{Base: RSI, Disp: 32 * v}, y)
			round256(e, y, a, t, n, s) // y: the sign at its place in the code
			// NaN lanes: the NaN code (with E5M2's payload bit) and the
			// sign; for the six-bit formats, sign ^ −0's code.
			VPCMPGTD(Y11, a, t)
			if e.six {
				VPBLENDVB(t, Y14, n, n)
				VPAND(t, y, s)
				VPXOR(s, n, n)
				continue
			}
			VPBLENDVB(t, Y14, n, n)
			if e.ieee {
				VPSLLD(U8(31-(23-e.man)), a, s)
				VPSRLD(U8(31), s, s)
				VPAND(t, s, s)
				VPOR(s, n, n)
			}
			VPOR(y, n, n)
		}
		gen.Pack2(Y0, Y1, Y1, false)
		VMOVDQU(X0, Mem{Base: RDI})
	})
}
