// Command mx4 generates the E2M1 (FP4) block kernels of package kernels:
// MXFP4 and NVFP4 quantize and dequantize, in the adjacent-pair packing and
// in ggml's split-half MXFP4 blocks; mx4_amd64.s and the stub declarations in
// mx4_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./mx4 -out ../mx4_amd64.s -stubs ../mx4_stubs_amd64.go -pkg kernels
//
// # How the kernels round
//
// A quantizer first finds the largest magnitude of 16 blocks (AVX-512) or 8
// (AVX2) with a transpose tree that leaves one block maximum per lane, picks
// the blocks' scales from those in vector registers, and then encodes each
// block. An element is scaled (x·2^(127−s) for MXFP4, an exact product by a
// power of two; x/d for NVFP4, a division, as the reference divides) to a
// value y with |y| < 8 (NVFP4 clamps |y| to the float below 8, where
// everything saturates). The E2M1 code of |y| then comes from one float
// addition: |y| + m, where m is 2^22, 2^23 or 2^24 as |y| lies below 2, in
// [2, 4) or in [4, 8), rounds |y| to the spacing of the E2M1 values in that
// range (0.5, 1, 2), ties to even, because the sum's ulp is that spacing. The
// sum's low mantissa bits count the steps; a few ulps added to m (an even
// number of them, which keeps the parity that decides ties) tell the three
// ranges apart, and a table maps the low bits to the code. m comes from a
// table indexed by floor(y) (AVX-512, where m takes y's sign and the sum is
// y + m) or trunc(|y|) (AVX2). The sign is bit 31 of y.
//
// Blocks with a NaN or an infinity (and NVFP4 blocks whose multiplier is 0)
// get their scale code in the vector pass and their codes zeroed afterwards,
// from a bit mask, so the element loop has no branch.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

// cs holds the 32-bit constants the kernels read from memory.
var cs = gen.Consts{Prefix: "mx4"}

// Float bits used below.
const (
	f2p22 = 149 << 23 // 2^22: ulp 0.5
	f2p23 = 150 << 23 // 2^23: ulp 1
	f2p24 = 151 << 23 // 2^24: ulp 2
	// keyHi is the float just below 8: NVFP4 clamps |x/d| to it.
	keyHi = 0x40ffffff
	fInf  = 0x7f800000
	// UE4M3 encoding: 2^14 has ulp 2^−9, the subnormal step; 2^−6 is the
	// smallest normal.
	f2p14  = 141 << 23
	f2pm6  = 121 << 23
	ue4Max = 0x7e
	ue4NaN = 0x7f
	ue4One = 0x38
)

// Tables of the kernels.
var (
	// expTab16[floor(y) & 15] is the magic addend for y (AVX-512): ±2^22
	// for |y| up to 2, ±(2^23 + 8 ulps) up to 4, ±(2^24 + 16 ulps) up to 8,
	// with y's sign.
	expTab16 Mem
	// codeTab32[low 5 bits of the sum] is the E2M1 magnitude code, in bits
	// 30:28 (where the sign, bit 31, completes the nibble): steps
	// 0..4 below 2, 8 + (2..4) in [2, 4), 16 + (2..4) in [4, 8) (4 steps
	// there is 8, which saturates to 6); a step count of 0 gives 0 in every
	// range.
	codeTab32 Mem
	// expTab8[trunc(|y|)] is the AVX2 addend: 2^22 below 2, 2^23 + 2 ulps in
	// [2, 4), 2^24 + 4 ulps in [4, 8), so that the sum's low byte is the code
	// before saturation (steps plus 2 or 4).
	expTab8 Mem
	// codeShuf is the VPSHUFB table of the AVX2 codes: min(i, 7) for i ≤ 8,
	// and 0 for the other bytes of a sum (0x00 and 0x4A, 0x4B in the high
	// bytes; 0x80 gives 0 by itself), in both 128-bit lanes.
	codeShuf Mem
	// packIdx and splitIdx gather the nibbles (byte 3 of each code lane) of
	// two vectors for VPERMT2B: the first 16 are the low nibbles of the 16
	// packed bytes and the next 16 the high ones, in adjacent pairs or in
	// split halves.
	packIdx, splitIdx Mem
	// e2m1 holds the 16 E2M1 values as float32.
	e2m1 Mem
	// shiftIdx makes VPMULTISHIFTQB put byte k of a broadcast 64-bit word
	// in lane 2k and its high nibble in lane 2k+1.
	shiftIdx Mem
	// treeIdx are the VPERMT2D index pairs of the AVX-512 transpose tree.
	treeIdx [4][2]Mem
	// treePerm8 puts the AVX2 tree's maxima in order.
	treePerm8 Mem
	// Dequantize control of AVX2: dqShuf[h] zero-extends bytes 4h+k/2 of a
	// broadcast 64-bit word into lane k (k < 8, both halves of the word), and
	// dqShiftR / dqShiftL put each lane's nibble in bits 2:0 and its sign
	// bit at bit 31.
	dqShuf             [2]Mem
	dqShiftR, dqShiftL Mem
	// evenBytes gathers the even bytes of each 128-bit lane into its low 8.
	evenBytes Mem
)

func tables() {
	w := []uint32{f2p22, f2p22, f2p23 + 8, f2p23 + 8, f2p24 + 16, f2p24 + 16, f2p24 + 16, f2p24 + 16}
	for i := range 8 {
		// Index 8+i is floor(y) = i−8: |y| in (7−i, 8−i], the range of
		// the positive floor 7−i but for its bottom end.
		w = append(w, w[7-i]|0x80000000)
	}
	expTab16 = gen.Table("mx4Exp16", w)

	c := make([]uint32, 32)
	for d := range 5 {
		c[d] = uint32(d)
	}
	for d := 2; d <= 4; d++ {
		c[8+d] = uint32(2 + d)
		c[16+d] = uint32(min(4+d, 7))
	}
	for i := range c {
		c[i] <<= 28
	}
	codeTab32 = gen.Table("mx4Code32", c)

	expTab8 = gen.Table("mx4Exp8", []uint32{f2p22, f2p22, f2p23 + 2, f2p23 + 2, f2p24 + 4, f2p24 + 4, f2p24 + 4, f2p24 + 4})

	sh := make([]byte, 32)
	for i := range 9 {
		sh[i], sh[16+i] = byte(min(i, 7)), byte(min(i, 7))
	}
	codeShuf = gen.Bytes("mx4CodeShuf", sh)

	// Byte 3 of 32-bit lane i of two vectors A (lanes 0..15) and B
	// (16..31) is at 4i+3 of A|B: the even lanes into bytes 0..15 and the
	// odd ones into 16..31, or (split) A's lanes into 0..15 and B's into
	// 16..31.
	p := make([]byte, 64)
	q := make([]byte, 64)
	for k := range 16 {
		p[k], p[16+k] = byte(8*k+3), byte(8*k+7)
		q[k], q[16+k] = byte(4*k+3), byte(64+4*k+3)
	}
	packIdx = gen.Bytes("mx4Pack", p)
	splitIdx = gen.Bytes("mx4Split", q)
	f := make([]uint32, 16)
	for i := range 8 {
		v := []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}[i]
		f[i] = math.Float32bits(v)
		f[8+i] = math.Float32bits(-v)
	}
	e2m1 = gen.Table("mx4E2M1", f)

	s := make([]uint32, 16)
	for k := range 8 {
		s[2*k], s[2*k+1] = uint32(8*k), uint32(8*k+4)
	}
	shiftIdx = gen.Table("mx4Shift", s)

	treeIdx = gen.TreeIndexes("mx4Tree")
	treePerm8 = gen.Perm8("mx4TreePerm8")

	for h := range 2 {
		b := make([]byte, 32)
		for k := range 8 {
			for i := range 4 {
				b[4*k+i] = 0x80
			}
			// Lanes 0..3 are the low 128 bits, 4..7 the high; both
			// hold the same 8 bytes.
			b[4*k] = byte(4*h + k/2)
		}
		dqShuf[h] = gen.Bytes(fmt.Sprintf("mx4DqShuf%d", h), b)
	}
	dqShiftR = gen.Table("mx4DqShiftR", []uint32{0, 4, 0, 4, 0, 4, 0, 4})
	dqShiftL = gen.Table("mx4DqShiftL", []uint32{28, 24, 28, 24, 28, 24, 28, 24})

	eb := make([]byte, 32)
	for l := range 2 {
		for i := range 16 {
			eb[16*l+i] = 0x80
			if i < 8 {
				eb[16*l+i] = byte(2 * i)
			}
		}
	}
	evenBytes = gen.Bytes("mx4EvenBytes", eb)
}

func main() {
	gen.Main(func() {
		tables()
		for _, avx512 := range []bool{true, false} {
			for _, k := range []qkind{kMXFP4, kGGUF, kNVFP4} {
				quantKernel(qspec{k, avx512})
			}
		}
		for _, nt := range []bool{false, true} {
			dequantAVX512(MXBlock, nt)
			dequantAVX512(NVFP4Block, nt)
			dequantGGUFAVX512(nt)
			dequantAVX2(MXBlock, nt)
			dequantAVX2(NVFP4Block, nt)
			dequantGGUFAVX2(nt)
		}
	})
}

const (
	MXBlock    = 32
	NVFP4Block = 16
	ggufBytes  = 17
)

// paramAddr returns the stack address of a scalar argument, for broadcast
// operands.
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// ---------------------------------------------------------------- AVX-512

// AVX-512 constant registers of the quantizers.
var (
	zExp   = Z25 // expTab16
	zCodeL = Z26 // codeTab32[0:16]
	zCodeH = Z27 // codeTab32[16:32]
	zPack  = Z28 // packIdx or splitIdx
	zAbs   = Z29 // 0x7fffffff
)

func quantConsts512(pack Mem) {
	gen.LoadTree(treeIdx)
	VMOVDQU32(expTab16, zExp)
	VMOVDQU32(codeTab32, zCodeL)
	VMOVDQU32(codeTab32.Offset(64), zCodeH)
	VMOVDQU32(pack, zPack)
	VPBROADCASTD(cs.Word(0x7fffffff), zAbs)
}

// code512 turns y (16 scaled elements, |y| < 8 or clamped) into their E2M1
// codes, the nibble in bits 31:28 (the sign is y's), in c; t is scratch.
// When clamp, |y| is first limited to keyHi (NVFP4), in place.
//
// The addend m carries y's sign, which makes the sum −(|y| + m) for a
// negative y, rounded as |y| + m is. floor(y) indexes it: 0..7 for positive
// y, 8..15 (−8..−1) for negative y (−0 floors to 0 and takes +m, which
// rounds it to 0 all the same). A negative y at the bottom of a range (−2,
// −4) floors into the range below and rounds with its spacing, which holds
// the range's bottom too.
func code512(y, c, t VecPhysical, clamp bool) {
	if clamp {
		VRANGEPS_BCST(U8(0x02), cs.Word(keyHi), y, y) // min(|y|, keyHi), y's sign
	}
	VCVTPS2DQ_RD_SAE(y, t)
	VPERMD(zExp, t, t)
	VADDPS(t, y, c)
	VPERMI2D(zCodeH, zCodeL, c)
	VPTERNLOGD_BCST(U8(0xF8), cs.Word(0x80000000), y, c) // c | y&sign
}

// pack512 packs the nibbles of c0 and c1 (from code512; elements 0..15 and
// 16..31 of a block, or two NVFP4 blocks) two per byte and stores the 16
// bytes to m: adjacent pairs (element 2k in bits 3:0 of byte k) with
// packIdx, split halves (element k in bits 3:0, k+16 in bits 7:4) with
// splitIdx. t is scratch.
func pack512(c0, c1, t VecPhysical, idx VecPhysical, m Mem) {
	VPERMT2B(c1, idx, c0)
	VPSRLW(U8(4), c0.AsX(), t.AsX())
	VEXTRACTI128(U8(1), c0.AsY(), c0.AsX())
	VPOR(c0.AsX(), t.AsX(), t.AsX())
	VMOVDQU(t.AsX(), m)
}

// zeroBlocks zeroes n bytes at base + stride·i + off for every bit i set in
// the 64-bit register m (clobbering m, AX and BX).
func zeroBlocks(name string, base, m GPPhysical, stride, off, n int) {
	l := func(s string) string { return name + "_" + s }
	TESTQ(m, m)
	JZ(LabelRef(l("fixed")))
	Label(l("fix"))
	BSFQ(m, RBX)
	IMUL3Q(U32(uint32(stride)), RBX, RAX)
	switch n {
	case 8:
		MOVQ(U32(0), Mem{Base: base, Index: RAX, Scale: 1, Disp: off})
	case 16:
		MOVQ(U32(0), Mem{Base: base, Index: RAX, Scale: 1, Disp: off})
		MOVQ(U32(0), Mem{Base: base, Index: RAX, Scale: 1, Disp: off + 8})
	default:
		panic("zeroBlocks: size")
	}
	LEAQ(Mem{Base: m, Disp: -1}, RBX)
	ANDQ(RBX, m)
	JNZ(LabelRef(l("fix")))
	Label(l("fixed"))
}

// prefetchAhead is how far ahead of the block being encoded the quantizers
// prefetch: they read each block twice (amax, then encode), and the hardware
// prefetchers alone do not keep up.
const prefetchAhead = 8 << 10

func quantDoc(name, isa string, group, block int, gguf bool, extra string) {
	lines := []string{fmt.Sprintf("%s is the %s kernel of the loop", name, isa), ""}
	switch {
	case gguf:
		lines = append(lines,
			"\tfor b := range len(src) / 32 {",
			"\t\tquantizeMXFP4GGUFGo(dst[17*b:17*b+17], src[32*b:32*b+32])",
			"\t}")
	case block == NVFP4Block:
		lines = append(lines,
			"\tfor b := range len(src) / 16 {",
			"\t\tquantizeNVFP4Go(codes[8*b:8*b+8], scales[b:b+1], src[16*b:16*b+16], tensorScale)",
			"\t}")
	default:
		lines = append(lines,
			"\tfor b := range len(src) / 32 {",
			"\t\tquantizeMXFP4Go(codes[16*b:16*b+16], scales[b:b+1], src[32*b:32*b+32])",
			"\t}")
	}
	lines = append(lines, "", fmt.Sprintf("over whole groups of %d blocks (len(src) a multiple of %d); the outputs must hold as much.", group, group*block))
	if extra != "" {
		lines = append(lines, extra)
	}
	Doc(lines...)
}

func dqDoc(name, isa string, block int, gguf, nt bool) {
	lines := []string{fmt.Sprintf("%s is the %s kernel of the loop", name, isa), ""}
	if gguf {
		lines = append(lines,
			"\tfor b := range len(dst) / 32 {",
			"\t\tx := src[17*b : 17*b+17]",
			"\t\tfor j, c := range x[1:] {",
			"\t\t\tdst[32*b+j] = mx.e2m1[c&15] * lut[x[0]]",
			"\t\t\tdst[32*b+j+16] = mx.e2m1[c>>4] * lut[x[0]]",
			"\t\t}",
			"\t}")
	} else {
		lines = append(lines,
			fmt.Sprintf("\tfor b := range len(dst) / %d {", block),
			fmt.Sprintf("\t\tfor j, c := range codes[%d*b : %d*b+%d] {", block/2, block/2, block/2),
			fmt.Sprintf("\t\t\tdst[%d*b+2*j] = mx.e2m1[c&15] * lut[scales[b]]", block),
			fmt.Sprintf("\t\t\tdst[%d*b+2*j+1] = mx.e2m1[c>>4] * lut[scales[b]]", block),
			"\t\t}",
			"\t}")
	}
	what := "the E8M0 values (mx.e8m0)"
	if block == NVFP4Block {
		what = "the UE4M3 values times the tensor scale, float32(mx.ue4m3[c]·s_t)"
	}
	lines = append(lines, "", fmt.Sprintf("for len(dst) a multiple of %d; lut holds %s.", block, what))
	if nt {
		align := 64
		if isa == "AVX2" {
			align = 32
		}
		lines = append(lines, gen.NTNote("VMOVNTPS", align))
	}
	Doc(lines...)
}

// dequantFrame emits an E2M1 dequantizer but for its constants and its work
// per block: the arguments (DI dst, CX the number of blocks, SI the codes or
// the ggml blocks, DX the scales but for ggml blocks, R8 lut), setup (the
// constant registers), then per block scale(m), m the lut entry of the
// block's scale byte, and body (SI and DI at the block), after which SI, DI
// and DX step to the next block. base names the kernel and isa its
// instruction set in the doc comment.
func dequantFrame(base, isa string, block int, gguf, nt bool, setup func(), scale func(m Mem), body func()) {
	a := "AVX2"
	if isa != "AVX2" {
		a = "AVX512"
	}
	name := gen.Name(base, nt, a)
	if gguf {
		TEXT(name, NOSPLIT, "func(dst []float32, src []byte, lut *[256]float32)")
	} else {
		TEXT(name, NOSPLIT, "func(dst []float32, codes []byte, scales []uint8, lut *[256]float32)")
	}
	Pragma("noescape")
	dqDoc(name, isa, block, gguf, nt)
	Load(Param("dst").Base(), RDI)
	Load(Param("dst").Len(), RCX)
	scaleByte := Mem{Base: RSI}
	if gguf {
		Load(Param("src").Base(), RSI)
	} else {
		Load(Param("codes").Base(), RSI)
		Load(Param("scales").Base(), RDX)
		scaleByte = Mem{Base: RDX}
	}
	Load(Param("lut"), R8)
	l := func(s string) string { return name + "_" + s }
	if block == MXBlock {
		SHRQ(U8(5), RCX)
	} else {
		SHRQ(U8(4), RCX)
	}
	JZ(LabelRef(l("done")))
	setup()
	Label(l("block"))
	MOVBLZX(scaleByte, EAX)
	scale(Mem{Base: R8, Index: RAX, Scale: 4})
	body()
	if gguf {
		ADDQ(U8(ggufBytes), RSI)
		ADDQ(U32(128), RDI)
	} else {
		ADDQ(U8(block/2), RSI)
		INCQ(RDX)
		ADDQ(U32(uint32(4*block)), RDI)
	}
	DECQ(RCX)
	JNZ(LabelRef(l("block")))
	Label(l("done"))
	gen.End(nt)
}

// dqBase is the name of the dequantizer of blocks of block elements, before
// its variant and instruction set.
func dqBase(block int) string {
	if block == NVFP4Block {
		return "dequantizeNVFP4"
	}
	return "dequantizeMXFP4"
}

// dequantAVX512 emits dequantize{MXFP4,NVFP4}[NT]AVX512: per block, the 16
// E2M1 values times the block's multiplier in one vector, and per 16
// elements one VPMULTISHIFTQB (the nibbles of 8 bytes, one per lane) and one
// VPERMPS.
func dequantAVX512(block int, nt bool) {
	dequantFrame(dqBase(block), "AVX-512 (F, BW, VL, VBMI)", block, false, nt, func() {
		VMOVUPS(e2m1, Z31)
		VMOVDQU32(shiftIdx, Z30)
	}, func(m Mem) {
		VMULPS_BCST(m, Z31, Z0)
	}, func() {
		for u := range block / 16 {
			VPMULTISHIFTQB_BCST(Mem{Base: RSI, Disp: 8 * u}, Z30, gen.Z(1+u))
			VPERMPS(Z0, gen.Z(1+u), gen.Z(1+u))
			gen.StoreFloats(gen.Z(1+u), Mem{Base: RDI, Disp: 64 * u}, nt)
		}
	})
}

// dequantGGUFAVX512 emits dequantizeMXFP4GGUF[NT]AVX512.
func dequantGGUFAVX512(nt bool) {
	dequantFrame("dequantizeMXFP4GGUF", "AVX-512 (F, BW, VL)", MXBlock, true, nt, func() {
		VMOVUPS(e2m1, Z31)
	}, func(m Mem) {
		VMULPS_BCST(m, Z31, Z0)
	}, func() {
		VPMOVZXBD(Mem{Base: RSI, Disp: 1}, Z1)
		VPSRLD(U8(4), Z1, Z2)
		VPERMPS(Z0, Z1, Z1)
		VPERMPS(Z0, Z2, Z2)
		gen.StoreFloats(Z1, Mem{Base: RDI}, nt)
		gen.StoreFloats(Z2, Mem{Base: RDI, Disp: 64}, nt)
	})
}

// ---------------------------------------------------------------- AVX2

// AVX2 constant registers of the quantizers' encode phase.
var (
	yAbs  = Y15 // 0x7fffffff
	yPerm = Y14 // treePerm8
	yShuf = Y13 // codeShuf
	yMul  = Y12 // the block's multiplier or divisor
)

// code256 turns y (8 scaled elements) into their E2M1 magnitude codes in c
// (t is scratch); when clamp, |y| is first limited to keyHi.
func code256(y, c, t VecPhysical, clamp bool) {
	VPAND(yAbs, y, c)
	if clamp {
		VPMINUD(cs.Vec(keyHi), c, c)
	}
	VCVTTPS2DQ(c, t)
	VPERMD(expTab8, t, t)
	VADDPS(t, c, c)
	VPSHUFB(c, yShuf, c)
}

// pack256 merges the magnitude codes c0..c3 (elements 0..31 of a block, 8
// per vector) with the signs of y0..y3 and writes the 16 code bytes to m:
// adjacent pairs, or split halves when gguf. It clobbers all of them and Y8.
//
// After the packs, byte i of the 128-bit lane h holds element
// 8·(i/4) + 4h + i%4.
func pack256(c, y [4]VecPhysical, m Mem, gguf bool) {
	gen.Pack4(c, false)
	gen.Pack4(y, true)
	// The sign bytes are negative where y is: bit 7 to bit 3.
	VPSRLW(U8(4), y[0], y[0])
	VPAND(cs.Vec(0x08080808), y[0], y[0])
	VPOR(y[0], c[0], c[0])
	if gguf {
		// Elements j and j+16 sit 8 bytes apart in a lane.
		VPSRLDQ(U8(8), c[0], Y8)
		VPSLLW(U8(4), Y8, Y8)
		VPOR(Y8, c[0], c[0])
		VEXTRACTI128(U8(1), c[0], X8)
		VPUNPCKLDQ(X8, c[0].AsX(), c[0].AsX())
	} else {
		VPSRLW(U8(4), c[0], Y8)
		VPOR(Y8, c[0], c[0])
		VPSHUFB(evenBytes, c[0], c[0])
		VEXTRACTI128(U8(1), c[0], X8)
		VPUNPCKLWD(X8, c[0].AsX(), c[0].AsX())
	}
	VMOVDQU(c[0].AsX(), m)
}

func quantConsts256() {
	VPCMPEQD(yAbs, yAbs, yAbs)
	VPSRLD(U8(1), yAbs, yAbs)
	VMOVDQU(codeShuf, yShuf)
	VMOVDQU(treePerm8, yPerm)
}

// dq8AVX2 decodes the 8 code bytes at src (adjacent pairs) into 16 floats at
// dst with the table halves lo (codes 0..7) and hi (8..15).
func dq8AVX2(src, dst Mem, lo, hi VecPhysical, nt bool) {
	VPBROADCASTQ(src, Y3)
	for h := range 2 {
		VPSHUFB(gen.Y(12+h), Y3, Y4)
		VPSLLVD(Y10, Y4, Y5)
		VPSRLVD(Y11, Y4, Y4)
		VPERMPS(lo, Y4, Y6)
		VPERMPS(hi, Y4, Y4)
		VBLENDVPS(Y5, Y4, Y6, Y6)
		gen.StoreFloats(Y6, dst.Offset(32*h), nt)
	}
}

// scale256 sets Y1 and Y2 to the E2M1 values of codes 0..7 and 8..15 (Y15,
// Y14) times the block multiplier at m.
func scale256(m Mem) {
	VBROADCASTSS(m, Y0)
	VMULPS(Y15, Y0, Y1)
	VMULPS(Y14, Y0, Y2)
}

// dequantAVX2 emits dequantize{MXFP4,NVFP4}[NT]AVX2.
func dequantAVX2(block int, nt bool) {
	dequantFrame(dqBase(block), "AVX2", block, false, nt, func() {
		VMOVUPS(e2m1, Y15)
		VMOVUPS(e2m1.Offset(32), Y14)
		VMOVDQU(dqShuf[0], Y12)
		VMOVDQU(dqShuf[1], Y13)
		VMOVDQU(dqShiftR, Y11)
		VMOVDQU(dqShiftL, Y10)
	}, scale256, func() {
		for u := range block / 16 {
			dq8AVX2(Mem{Base: RSI, Disp: 8 * u}, Mem{Base: RDI, Disp: 64 * u}, Y1, Y2, nt)
		}
	})
}

// dequantGGUFAVX2 emits dequantizeMXFP4GGUF[NT]AVX2.
func dequantGGUFAVX2(nt bool) {
	dequantFrame("dequantizeMXFP4GGUF", "AVX2", MXBlock, true, nt, func() {
		VMOVUPS(e2m1, Y15)
		VMOVUPS(e2m1.Offset(32), Y14)
	}, scale256, func() {
		for u := range 2 {
			// Bytes 8u..8u+7: elements 8u+k (low nibbles) and 16+8u+k (high).
			VPMOVZXBD(Mem{Base: RSI, Disp: 1 + 8*u}, Y3)
			for h := range 2 {
				if h == 0 {
					VPSLLD(U8(28), Y3, Y5)
					VMOVDQA(Y3, Y4)
				} else {
					VPSLLD(U8(24), Y3, Y5)
					VPSRLD(U8(4), Y3, Y4)
				}
				VPERMPS(Y1, Y4, Y6)
				VPERMPS(Y2, Y4, Y4)
				VBLENDVPS(Y5, Y4, Y6, Y6)
				gen.StoreFloats(Y6, Mem{Base: RDI, Disp: 32*u + 64*h}, nt)
			}
		}
	})
}

// ---------------------------------------------------------------- quantizers

type qkind int

const (
	kMXFP4 qkind = iota // MXFP4, adjacent pairs
	kGGUF               // MXFP4 in ggml blocks
	kNVFP4              // NVFP4, adjacent pairs
)

// qspec names one quantizer.
type qspec struct {
	kind   qkind
	avx512 bool
}

func (q qspec) name() string {
	n := [...]string{"quantizeMXFP4", "quantizeMXFP4GGUF", "quantizeNVFP4"}[q.kind]
	if q.avx512 {
		return n + "AVX512"
	}
	return n + "AVX2"
}

func (q qspec) isa() string {
	switch {
	case q.avx512 && q.kind == kNVFP4:
		return "AVX-512 (F, BW, DQ, VL, VBMI)"
	case q.avx512:
		return "AVX-512 (F, BW, VL, VBMI)"
	}
	return "AVX2"
}

// block is the block size in elements.
func (q qspec) block() int {
	if q.kind == kNVFP4 {
		return NVFP4Block
	}
	return MXBlock
}

// group is the number of blocks whose maxima one transpose tree finds.
func (q qspec) group() int {
	if q.avx512 {
		return 16
	}
	return 8
}

// chunk is the number of groups a kernel finds the scales of before
// encoding them: the trees of a chunk overlap, and the chunk (8 KiB of MXFP4
// input, 4 KiB of NVFP4) stays in the level-1 cache for the encoding pass.
// A chunk's blocks to zero fit a 64-bit mask.
func (q qspec) chunk() int { return 64 / q.group() }

// outBytes is the number of output bytes per block.
func (q qspec) outBytes() int {
	switch q.kind {
	case kGGUF:
		return ggufBytes
	case kNVFP4:
		return NVFP4Block / 2
	}
	return MXBlock / 2
}

// quantKernel emits one quantizer. Per chunk of groups of blocks it first
// finds each group's block maxima, scale bytes and block multipliers (a
// stack array) and which blocks to zero, then encodes the groups, then zeroes
// the blocks marked.
//
// Registers: SI, DI, DX walk src, the codes (or ggml blocks) and the scales;
// CX counts the groups left, R9 holds the groups of the chunk, R10 walks src
// in the first pass and keeps the chunk's output in the second, R12 walks
// the multipliers, R8 the ggml scale bytes, R13 counts; R11 is the mask.
func quantKernel(q qspec) {
	name := q.name()
	sig := "func(codes []byte, scales []uint8, src []float32)"
	switch q.kind {
	case kGGUF:
		sig = "func(dst []byte, src []float32)"
	case kNVFP4:
		sig = "func(codes []byte, scales []uint8, src []float32, tensorScale, denom float32)"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	extra := ""
	if q.kind == kNVFP4 {
		extra = "denom must be 6·tensorScale (float32), and tensorScale +0 or positive and finite."
	}
	quantDoc(name, q.isa(), q.group(), q.block(), q.kind == kGGUF, extra)
	g, c, b := q.group(), q.chunk(), q.block()
	mul := AllocLocal(4 * g * c)
	mask := AllocLocal(8)
	var sc Mem
	if q.kind == kGGUF {
		sc = AllocLocal(g * c)
		Load(Param("dst").Base(), RDI)
	} else {
		Load(Param("codes").Base(), RDI)
		Load(Param("scales").Base(), RDX)
	}
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	l := func(s string) string { return name + "_" + s }
	groupLog := map[int]uint8{512: 9, 256: 8, 128: 7}[g*b]
	SHRQ(U8(groupLog), RCX)
	JZ(LabelRef(l("done")))
	if q.avx512 {
		if q.kind == kGGUF {
			quantConsts512(splitIdx)
		} else {
			quantConsts512(packIdx)
		}
	} else {
		quantConsts256()
	}

	Label(l("chunk"))
	MOVQ(U32(uint32(c)), R9)
	CMPQ(RCX, R9)
	CMOVQLT(RCX, R9)
	MOVQ(U32(0), mask)
	MOVQ(RSI, R10)
	LEAQ(mul, R12)
	if q.kind == kGGUF {
		LEAQ(sc, R8)
	}
	XORL(R13L, R13L)
	Label(l("amax"))
	scales := Mem{Base: RDX}
	if q.kind == kGGUF {
		scales = Mem{Base: R8}
	}
	switch {
	case q.avx512 && q.kind == kNVFP4:
		amaxNVFP4AVX512(scales)
	case q.avx512:
		amaxMXFP4AVX512(scales)
	case q.kind == kNVFP4:
		amaxNVFP4AVX2(scales)
	default:
		amaxMXFP4AVX2(scales)
	}
	if q.avx512 {
		MOVW(AX, mask.Idx(R13, 2))
	} else {
		MOVB(AL, mask.Idx(R13, 1))
	}
	ADDQ(U32(uint32(4*g*b)), R10)
	ADDQ(U8(4*g), R12)
	if q.kind == kGGUF {
		ADDQ(U8(g), R8)
	} else {
		ADDQ(U8(g), RDX)
	}
	INCQ(R13)
	CMPQ(R13, R9)
	JB(LabelRef(l("amax")))

	LEAQ(mul, R12)
	if q.kind == kGGUF {
		LEAQ(sc, R8)
	}
	MOVQ(RDI, R10)
	MOVQ(R9, R13)
	Label(l("encode"))
	switch {
	case q.avx512 && q.kind == kNVFP4:
		encodeNVFP4AVX512()
	case q.avx512:
		encodeMXFP4AVX512(q.kind == kGGUF)
	case q.kind == kNVFP4:
		encodeNVFP4AVX2()
	default:
		encodeMXFP4AVX2(q.kind == kGGUF)
	}
	ADDQ(U32(uint32(4*g*b)), RSI)
	ADDQ(U32(uint32(g*q.outBytes())), RDI)
	ADDQ(U8(4*g), R12)
	if q.kind == kGGUF {
		ADDQ(U8(g), R8)
	}
	DECQ(R13)
	JNZ(LabelRef(l("encode")))

	MOVQ(mask, R11)
	off := 0
	if q.kind == kGGUF {
		off = 1
	}
	zeroBlocks(name, R10, R11, q.outBytes(), off, b/2)
	SUBQ(R9, RCX)
	JNZ(LabelRef(l("chunk")))
	Label(l("done"))
	gen.End(false)
}

// amaxMXFP4AVX512 finds the 16 block maxima of the group at R10, stores the
// scale bytes to scales and the reciprocals to (R12), and leaves the mask of
// blocks with a NaN or an infinity in AX.
func amaxMXFP4AVX512(scales Mem) {
	// The magnitudes as integers: VRANGEPS, which would take the larger
	// magnitude of two vectors in one instruction, passes over quiet NaNs.
	gen.AbsMaxTree512(R10, MXBlock, zAbs)
	// Scales: max(field, 2) − 2, and 0xFF where amax ≥ Inf.
	VPSRLD(U8(23), Z0, Z1)
	VPMAXUD_BCST(cs.Word(2), Z1, Z1)
	VPSUBD_BCST(cs.Word(2), Z1, Z1)
	VPCMPUD_BCST(U8(5), cs.Word(fInf), Z0, K1)
	VPBROADCASTD(cs.Word(255), K1, Z1)
	VPMOVDB(Z1, scales)
	// Reciprocals 2^(127−s): bits (254 − s) << 23.
	VPBROADCASTD(cs.Word(254), Z2)
	VPSUBD(Z1, Z2, Z2)
	VPSLLD(U8(23), Z2, Z2)
	VMOVDQU32(Z2, Mem{Base: R12})
	KMOVW(K1, EAX)
}

// encodeMXFP4AVX512 encodes the 16 blocks at SI with the reciprocals at
// (R12) into DI (and, for ggml blocks, the scale bytes at (R8)).
func encodeMXFP4AVX512(gguf bool) {
	for b := range 16 {
		PREFETCHT0(Mem{Base: RSI, Disp: prefetchAhead + 128*b})
		PREFETCHT0(Mem{Base: RSI, Disp: prefetchAhead + 128*b + 64})
		VBROADCASTSS(Mem{Base: R12, Disp: 4 * b}, Z15)
		for h := range 2 {
			VMULPS(Mem{Base: RSI, Disp: 128*b + 64*h}, Z15, gen.Z(1+h))
			code512(gen.Z(1+h), gen.Z(3+h), gen.Z(5+h), false)
		}
		if gguf {
			pack512(Z3, Z4, Z5, zPack, Mem{Base: RDI, Disp: ggufBytes*b + 1})
			MOVBLZX(Mem{Base: R8, Disp: b}, EAX)
			MOVB(AL, Mem{Base: RDI, Disp: ggufBytes * b})
		} else {
			pack512(Z3, Z4, Z5, zPack, Mem{Base: RDI, Disp: 16 * b})
		}
	}
}

// amaxNVFP4AVX512 finds the 16 block maxima of the group at R10, stores the
// UE4M3 scale bytes to scales and the multipliers d to (R12), and leaves the
// mask of blocks to zero (NaN or infinity, or d = 0) in AX.
func amaxNVFP4AVX512(scales Mem) {
	st, den := paramAddr("tensorScale"), paramAddr("denom")
	gen.AbsMaxTree512(R10, NVFP4Block, zAbs)
	// s_b = UE4M3(amax/denom), rounded to nearest even and saturating:
	// normal results by integer rounding of the bits to 3 mantissa bits,
	// subnormal ones (below 2^−6) by the float addition of 2^14.
	VDIVPS_BCST(den, Z0, Z1)
	VPSRLD(U8(20), Z1, Z2)
	VPANDD_BCST(cs.Word(1), Z2, Z2)
	VPADDD(Z1, Z2, Z2)
	VPADDD_BCST(cs.Word(0x7ffff), Z2, Z2)
	VPSRLD(U8(20), Z2, Z2)
	VPSUBD_BCST(cs.Word(120<<3), Z2, Z2)
	VADDPS_BCST(cs.Word(f2p14), Z1, Z3)
	VPSUBD_BCST(cs.Word(f2p14), Z3, Z3)
	VPCMPUD_BCST(U8(1), cs.Word(f2pm6), Z1, K2)
	VMOVDQA32(Z3, K2, Z2)
	VPMINUD_BCST(cs.Word(ue4Max), Z2, Z2)
	VPTESTNMD(Z0, Z0, K3)
	VPBROADCASTD(cs.Word(ue4One), K3, Z2)
	VPCMPUD_BCST(U8(5), cs.Word(fInf), Z0, K1)
	VPBROADCASTD(cs.Word(ue4NaN), K1, Z2)
	VPMOVDB(Z2, scales)
	// d = float32(UE4M3 value · s_t): codes of 8 and up are normal,
	// (c << 20) + (120 << 23); below 8, c·2^−9 = 2^−6·(1 + c/8) − 2^−6.
	VPSLLD(U8(20), Z2, Z3)
	VPADDD_BCST(cs.Word(120<<23), Z3, Z4)
	VPADDD_BCST(cs.Word(121<<23), Z3, Z5)
	VSUBPS_BCST(cs.Word(f2pm6), Z5, Z5)
	VPCMPUD_BCST(U8(1), cs.Word(8), Z2, K4)
	VMOVDQA32(Z5, K4, Z4)
	VMULPS_BCST(st, Z4, Z4)
	VMOVUPS(Z4, Mem{Base: R12})
	// Blocks to zero: NaN or Inf (scale 0x7F) and d = 0.
	VPTESTNMD(Z4, Z4, K5)
	KORW(K5, K1, K1)
	KMOVW(K1, EAX)
}

// encodeNVFP4AVX512 encodes the 16 blocks at SI, dividing by the multipliers
// at (R12), into DI.
func encodeNVFP4AVX512() {
	for b := 0; b < 16; b += 2 {
		PREFETCHT0(Mem{Base: RSI, Disp: prefetchAhead + 64*b})
		PREFETCHT0(Mem{Base: RSI, Disp: prefetchAhead + 64*b + 64})
		for h := range 2 {
			VMOVUPS(Mem{Base: RSI, Disp: 64 * (b + h)}, gen.Z(1+h))
			VDIVPS_BCST(Mem{Base: R12, Disp: 4 * (b + h)}, gen.Z(1+h), gen.Z(1+h))
			code512(gen.Z(1+h), gen.Z(3+h), gen.Z(5+h), true)
		}
		pack512(Z3, Z4, Z5, zPack, Mem{Base: RDI, Disp: 8 * b})
	}
}

// amaxMXFP4AVX2 is amaxMXFP4AVX512 for 8 blocks.
func amaxMXFP4AVX2(scales Mem) {
	gen.AbsMaxTree256(R10, MXBlock, yAbs, yPerm)
	// Scales max(field, 2) − 2, or 0xFF where amax ≥ Inf (amax is below
	// 2^31, a positive int32).
	VPSRLD(U8(23), Y0, Y1)
	VPMAXUD(cs.Vec(2), Y1, Y1)
	VPSUBD(cs.Vec(2), Y1, Y1)
	VPCMPGTD(cs.Vec(fInf-1), Y0, Y2)
	VPAND(cs.Vec(255), Y2, Y3)
	VPOR(Y3, Y1, Y1)
	VMOVMSKPS(Y2, EAX)
	VMOVDQU(cs.Vec(254), Y3)
	VPSUBD(Y1, Y3, Y3)
	VPSLLD(U8(23), Y3, Y3)
	VMOVDQU(Y3, Mem{Base: R12})
	gen.StoreBytes8(Y1, Y3, scales)
}

// encodeMXFP4AVX2 is encodeMXFP4AVX512 for 8 blocks.
func encodeMXFP4AVX2(gguf bool) {
	for b := range 8 {
		PREFETCHT0(Mem{Base: RSI, Disp: prefetchAhead + 128*b})
		PREFETCHT0(Mem{Base: RSI, Disp: prefetchAhead + 128*b + 64})
		VBROADCASTSS(Mem{Base: R12, Disp: 4 * b}, yMul)
		for h := range 4 {
			VMULPS(Mem{Base: RSI, Disp: 128*b + 32*h}, yMul, gen.Y(h))
			code256(gen.Y(h), gen.Y(4+h), Y8, false)
		}
		c := [4]VecPhysical{Y4, Y5, Y6, Y7}
		y := [4]VecPhysical{Y0, Y1, Y2, Y3}
		if gguf {
			pack256(c, y, Mem{Base: RDI, Disp: ggufBytes*b + 1}, true)
			MOVBLZX(Mem{Base: R8, Disp: b}, EAX)
			MOVB(AL, Mem{Base: RDI, Disp: ggufBytes * b})
		} else {
			pack256(c, y, Mem{Base: RDI, Disp: 16 * b}, false)
		}
	}
}

// amaxNVFP4AVX2 is amaxNVFP4AVX512 for 8 blocks.
func amaxNVFP4AVX2(scales Mem) {
	st, den := paramAddr("tensorScale"), paramAddr("denom")
	gen.AbsMaxTree256(R10, NVFP4Block, yAbs, yPerm)
	// s_b = UE4M3(amax/denom) as in the AVX-512 kernel, with blends.
	VBROADCASTSS(den, Y9)
	VDIVPS(Y9, Y0, Y1)
	VPSRLD(U8(20), Y1, Y2)
	VPAND(cs.Vec(1), Y2, Y2)
	VPADDD(Y1, Y2, Y2)
	VPADDD(cs.Vec(0x7ffff), Y2, Y2)
	VPSRLD(U8(20), Y2, Y2)
	VPSUBD(cs.Vec(120<<3), Y2, Y2)
	VADDPS(cs.Vec(f2p14), Y1, Y3)
	VPSUBD(cs.Vec(f2p14), Y3, Y3)
	VPCMPGTD(cs.Vec(f2pm6-1), Y1, Y4) // normal: v ≥ 2^−6 (v is not negative)
	VPBLENDVB(Y4, Y2, Y3, Y2)
	VPMINSD(cs.Vec(ue4Max), Y2, Y2)
	VPXOR(Y5, Y5, Y5)
	VPCMPEQD(Y5, Y0, Y4)
	VPBLENDVB(Y4, cs.Vec(ue4One), Y2, Y2)
	VPCMPGTD(cs.Vec(fInf-1), Y0, Y6) // NaN or Inf
	VPBLENDVB(Y6, cs.Vec(ue4NaN), Y2, Y1)
	// d = float32(UE4M3 value · s_t).
	VPSLLD(U8(20), Y1, Y3)
	VPADDD(cs.Vec(120<<23), Y3, Y4)
	VPADDD(cs.Vec(121<<23), Y3, Y7)
	VSUBPS(cs.Vec(f2pm6), Y7, Y7)
	VMOVDQU(cs.Vec(8), Y3)
	VPCMPGTD(Y1, Y3, Y3) // c < 8: subnormal
	VBLENDVPS(Y3, Y7, Y4, Y4)
	VBROADCASTSS(st, Y9)
	VMULPS(Y9, Y4, Y4)
	VMOVUPS(Y4, Mem{Base: R12})
	VPCMPEQD(Y5, Y4, Y3)
	VPOR(Y3, Y6, Y6)
	VMOVMSKPS(Y6, EAX)
	gen.StoreBytes8(Y1, Y3, scales)
}

// encodeNVFP4AVX2 is encodeNVFP4AVX512 for 8 blocks.
func encodeNVFP4AVX2() {
	for b := 0; b < 8; b += 2 {
		PREFETCHT0(Mem{Base: RSI, Disp: prefetchAhead + 64*b})
		PREFETCHT0(Mem{Base: RSI, Disp: prefetchAhead + 64*b + 64})
		for h := range 4 {
			if h%2 == 0 {
				VBROADCASTSS(Mem{Base: R12, Disp: 4 * (b + h/2)}, yMul)
			}
			VMOVUPS(Mem{Base: RSI, Disp: 64*b + 32*h}, gen.Y(h))
			VDIVPS(yMul, gen.Y(h), gen.Y(h))
			code256(gen.Y(h), gen.Y(4+h), Y8, true)
		}
		pack256([4]VecPhysical{Y4, Y5, Y6, Y7}, [4]VecPhysical{Y0, Y1, Y2, Y3}, Mem{Base: RDI, Disp: 8 * b}, false)
	}
}
