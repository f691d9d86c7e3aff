package kernels

import (
	"fmt"
	"math"
	"unsafe"
)

// The scaled-datatype kernels: quantize and dequantize whole rows of OCP MX
// (MXFP4, MXFP8 with E4M3 elements, MXINT8) and NVIDIA NVFP4 data in one pass,
// instead of choosing scales block by block and encoding through the generic
// codecs. Each equals, bit for bit, the generic path the tcast package takes
// for the same datatype under its defaults (floor scales, round to nearest
// even, saturation; docs/NUMERICS.md §4–§7):
//
//   - An MX block of 32 with largest magnitude amax gets the E8M0 scale code
//     floor(log2 amax) − emax + 127 (emax is 2 for E2M1, 8 for E4M3, 0 for the
//     MXINT8 element), read from the float's bits and clamped to 0 below; an
//     all-zero block gets code 0. Its elements are x·2^(127−code) in float32,
//     rounded to nearest even into the element format, saturating.
//   - A block holding a NaN or an infinity gets the scale's NaN code (0xFF for
//     E8M0, 0x7F for UE4M3), and every element the element format's NaN code,
//     or code 0 where the format has none (E2M1, MXINT8's int8).
//   - NVFP4 blocks of 16 take the float32 tensor scale s_t as input: the block
//     scale is the UE4M3 code of amax / float32(6·s_t), rounded to nearest
//     even and saturating (code 0x38, 1.0, for an all-zero block), the
//     multiplier d = float32(s_b·s_t), and the elements x / d in E2M1; a d of
//     0 stores zeros.
//   - Dequantizers return element × multiplier in float32 (the multiplier
//     being 2^(code−127), or float32(s_b·s_t) for NVFP4), skipping the
//     product when the multiplier is 1; a NaN scale makes the block NaN.
//
// Four-bit codes are packed two per byte, element 2k in bits 3:0 and element
// 2k+1 in bits 7:4. Lengths must be whole blocks; slices that are too short or
// a length that is not a multiple of the block are programmer errors and
// panic.

// Block sizes of the scaled datatypes these kernels handle.
const (
	mxBlock    = 32 // elements per E8M0 scale of MXFP4, MXFP8 and MXINT8
	nvfp4Block = 16 // elements per UE4M3 scale of NVFP4
)

// Scale codes of a block holding a NaN or an infinity.
const (
	e8m0NaN  = 0xFF
	ue4m3NaN = 0x7F
)

// The formats of the MX and NVFP4 parts, with the parameters the dtype
// package gives e8m0, e4m3fn, e2m1, ue4m3 and the MXINT8 element q1.6.
var (
	e8m0Codec   = ExpCodec{Bias: 127, MaxCode: 254, NaNCode: 255}
	e4m3fnCodec = FloatCodec{ManBits: 3, ExpBits: 4, Emin: -6, SignBit: 0x80, MagMask: 0x7f, MaxMag: 0x7e,
		NegZero: true, NaN: NaNAllOnes, NaNPos: 0x7f, NaNNeg: 0xff}
	e2m1Codec = FloatCodec{ManBits: 1, ExpBits: 2, Emin: 0, SignBit: 0x8, MagMask: 0x7, MaxMag: 0x7,
		NegZero: true, NaN: NaNNone, NaNPos: 0x8}
	ue4m3Codec = FloatCodec{ManBits: 3, ExpBits: 4, Emin: -6, MagMask: 0x7f, MaxMag: 0x7e,
		NaN: NaNAllOnes, NaNPos: 0x7f, NaNNeg: 0x7f}
	q16Codec = IntCodec{Bits: 8, FracBits: 6, Signed: true, Min: -127, Max: 127}
)

// mxTables holds what the MX kernels look up, computed once from the codecs
// above so that the tables and the scalar decoders agree by construction.
type mxTables struct {
	e8m0   [256]float32 // 2^(c−127); NaN for 0xFF
	recip  [256]float32 // 1 / e8m0[c] (exact: powers of two, 2^127 down to 2^−127)
	ue4m3  [256]float32 // UE4M3 values (the sign bit is ignored; 0x7F and 0xFF are NaN)
	e4m3fn [256]float32 // E4M3 element values
	q16    [256]float32 // MXINT8 element values, int8(c)/64
	e2m1   [16]float32  // E2M1 element values
	// e2m1Pair[b] holds the values of the two elements of byte b.
	e2m1Pair [256][2]float32
	// e2m1Thr[c] holds the float32 bits t_i of the E2M1 rounding boundaries
	// scaled by the E8M0 value of code c, for the codes below 3: an |x| (as
	// bits) above t_i counts one step up the E2M1 magnitudes (see
	// e2m1Steps).
	e2m1Thr [3][8]uint32
	// e2m1Key[k] is the E2M1 magnitude code of the float32 values with
	// bits u in [0.125, 8) whose key (see e2m1KeyOf) is k.
	e2m1Key [64]uint8
	// e2m1Exp[b][0] is e2m1Pair[b] as the memory image of two float32
	// values (a 64-bit word in native byte order) whose exponent fields are
	// lowered by 126 (the smallest non-zero E2M1 magnitude, 0.5, has
	// exponent field 126), and e2m1Exp[b][1] has all ones in the half of a
	// non-zero element. Adding (c−1)<<23 to the half of a non-zero element
	// multiplies it by 2^(c−127) exactly while the result stays normal
	// (2 ≤ c ≤ 252), without a carry into the other half.
	e2m1Exp [256][2]uint64
}

var mx = newMXTables()

// e2m1Bounds are the E2M1 magnitudes' rounding boundaries, with the side a
// tie goes to (docs/NUMERICS.md §2): between 0 and 0.5 at 0.25 (ties down to
// 0), 0.5 and 1 at 0.75 (up to 1), 1 and 1.5 at 1.25 (down), 1.5 and 2 at
// 1.75 (up), 2 and 3 at 2.5 (down), 3 and 4 at 3.5 (up), 4 and 6 at 5
// (down); 6 is the largest magnitude, so anything from 5 up saturates to it.
var e2m1Bounds = [7]struct {
	at     float32
	tiesUp bool
}{{0.25, false}, {0.75, true}, {1.25, false}, {1.75, true}, {2.5, false}, {3.5, true}, {5, false}}

func newMXTables() *mxTables {
	t := new(mxTables)
	for c := range 256 {
		t.e8m0[c] = e8m0Codec.Decode(uint32(c))
		t.recip[c] = 1 / t.e8m0[c]
		t.ue4m3[c] = ue4m3Codec.Decode(uint32(c))
		t.e4m3fn[c] = e4m3fnCodec.Decode(uint32(c))
		t.q16[c] = q16Codec.Decode(uint32(c))
		if c >= len(t.e2m1Thr) {
			continue
		}
		for i, b := range e2m1Bounds {
			// b.at·2^(c−127) is exact: at most two significant bits.
			thr := math.Float32bits(b.at * t.e8m0[c])
			if b.tiesUp {
				thr-- // |x| ≥ at is |x| > the float just below at
			}
			t.e2m1Thr[c][i] = thr
		}
	}
	for c := range 16 {
		t.e2m1[c] = e2m1Codec.Decode(uint32(c))
	}
	for u := uint32(e2m1KeyLo); u <= e2m1KeyHi; u += 1 << 21 {
		// Every run of 2^21 floats starting at a multiple of 2^21 holds
		// its first value and 2^21−1 others that round alike: the rounding
		// boundaries of E2M1 have at most two significant bits.
		for _, v := range []uint32{u, u + 1} {
			t.e2m1Key[e2m1KeyOf(v)] = uint8(e2m1Codec.Encode(math.Float32frombits(v), RoundEven, true, 0))
		}
	}
	for b := range 256 {
		lo, hi := t.e2m1[b&0xf], t.e2m1[b>>4]
		t.e2m1Pair[b] = [2]float32{lo, hi}
		words := [2][2]uint32{{shiftDown126(lo), shiftDown126(hi)}}
		if lo != 0 {
			words[1][0] = 0xffffffff
		}
		if hi != 0 {
			words[1][1] = 0xffffffff
		}
		t.e2m1Exp[b] = *(*[2]uint64)(unsafe.Pointer(&words))
	}
	return t
}

// shiftDown126 returns the bits of v with 126 taken from the exponent field,
// for the non-zero E2M1 values (exponent fields 126 to 129); zeros stay.
func shiftDown126(v float32) uint32 {
	b := math.Float32bits(v)
	if v == 0 {
		return b
	}
	return b - 126<<23
}

// e2m1Steps returns the E2M1 magnitude code (0..7) of |x|·2^(127−c), given
// |x|'s bits and the boundaries thr = e2m1Thr[c]: the number of boundaries
// |x| lies above. Each comparison is a subtraction whose borrow lands in bit
// 31 (both operands are below 2^31), so the loop has no branches.
func e2m1Steps(abs uint32, thr *[8]uint32) uint32 {
	return (thr[0]-abs)>>31 + (thr[1]-abs)>>31 + (thr[2]-abs)>>31 + (thr[3]-abs)>>31 +
		(thr[4]-abs)>>31 + (thr[5]-abs)>>31 + (thr[6]-abs)>>31
}

// The float32 bits e2m1Code clamps to: values below 0.125 round to 0 and
// values from 8 up saturate to 6, as 0.125 and the float below 8 do.
const (
	e2m1KeyLo = 0x3e000000 // 0.125
	e2m1KeyHi = 0x40ffffff // 8 − 2^−21
)

// e2m1KeyOf returns the e2m1Key index of the float32 bits u, which must lie
// in [e2m1KeyLo, e2m1KeyHi]: the exponent and the top two mantissa bits,
// and whether any bit below them is set.
func e2m1KeyOf(u uint32) uint32 {
	return (u>>21-e2m1KeyLo>>21)<<1 | (u&0x1fffff+0x1fffff)>>21
}

// e2m1Code returns the E2M1 magnitude code of the non-negative float32 whose
// bits are s, at most e2m1KeyHi (bits below e2m1KeyLo, negative ones
// included, count as 0): rounded to nearest even. The lower clamp has no
// branch, since small values are common and unpredictable.
func e2m1Code(s int32, keys *[64]uint8) uint32 {
	d := s - e2m1KeyLo
	d &^= d >> 31
	return uint32(keys[e2m1KeyOf(uint32(d)+e2m1KeyLo)&63])
}

// amaxBits returns the largest |x| of a block (a multiple of 4 long) as
// float32 bits, as AbsMaxBits does.
func amaxBits(v []float32) uint32 {
	var m0, m1, m2, m3 uint32
	for i := 0; i+3 < len(v); i += 4 {
		m0 = max(m0, math.Float32bits(v[i])&0x7fffffff)
		m1 = max(m1, math.Float32bits(v[i+1])&0x7fffffff)
		m2 = max(m2, math.Float32bits(v[i+2])&0x7fffffff)
		m3 = max(m3, math.Float32bits(v[i+3])&0x7fffffff)
	}
	return max(m0, m1, m2, m3)
}

// mxScale returns the E8M0 scale code of an MX block whose largest
// magnitude has the float32 bits amax (amaxBits) by the floor rule for an
// element format whose largest normal exponent is emax, and whether the
// block is finite: floor(log2 amax) − emax + 127, which is amax's exponent
// field minus emax, clamped to 0 (subnormal and zero amaxes have exponent
// field 0); e8m0NaN and false for a block holding a NaN or an infinity.
func mxScale(amax uint32, emax int) (uint8, bool) {
	if amax >= 0x7f800000 {
		return e8m0NaN, false
	}
	return uint8(max(int(amax>>23)-emax, 0)), true
}

// checkBlocks panics unless n is a whole number of blocks and the outputs
// hold what n elements need.
func checkBlocks(kernel string, n, block, codes, codesPerBlock, scales int) {
	switch {
	case n%block != 0:
		panic(fmt.Sprintf("kernels: %s: %d elements are not a multiple of the block of %d", kernel, n, block))
	case codes < n/block*codesPerBlock:
		panic(fmt.Sprintf("kernels: %s: %d code bytes for %d elements", kernel, codes, n))
	case scales < n/block:
		panic(fmt.Sprintf("kernels: %s: %d scales for %d blocks", kernel, scales, n/block))
	}
}

// quantizeMXFP4 quantizes src, a whole number of blocks of 32, to OCP MXFP4:
// one E8M0 scale per block in scales (len(src)/32 of them) and E2M1 codes
// packed two per byte in codes (len(src)/2 bytes, element 2k in bits 3:0).
//
// A block's scale is 2^(floor(log2 amax) − 2), amax being its largest
// magnitude, stored as the E8M0 code floor(log2 amax) + 125 and clamped to 0
// (2^−127) below; an all-zero block gets code 0. Its elements are x/scale
// rounded to nearest even among the E2M1 values, saturating at ±6, with −0
// for negative values that round to zero. A block holding a NaN or an
// infinity gets scale 0xFF and element codes 0 (E2M1 has no NaN). The codes
// are those of tcast.Cast to mxfp4 (docs/NUMERICS.md §4).
func quantizeMXFP4(codes []byte, scales []uint8, src []float32) {
	checkBlocks("quantizeMXFP4", len(src), mxBlock, len(codes), mxBlock/2, len(scales))
	quantMXFP4(codes, scales, src)
}

// quantizeMXFP4Go is the reference of quantizeMXFP4, for whole blocks.
func quantizeMXFP4Go(codes []byte, scales []uint8, src []float32) {
	for b := range len(src) / mxBlock {
		v := (*[mxBlock]float32)(src[b*mxBlock:])
		out := (*[mxBlock / 2]byte)(codes[b*mxBlock/2:])
		sc, ok := mxScale(amaxBits(v[:]), 2)
		scales[b] = sc
		if !ok {
			clear(out[:]) // E2M1 has no NaN: code 0
			continue
		}
		if sc >= 3 {
			quantMXFP4Block(out, v, int32(sc)-127, &mx.e2m1Key)
			continue
		}
		// Scales of at most 2^−125, where subnormal inputs can reach the
		// E2M1 codes: compare with the scaled rounding boundaries.
		thr := &mx.e2m1Thr[sc]
		for j := range out {
			x0, x1 := math.Float32bits(v[2*j]), math.Float32bits(v[2*j+1])
			c0 := e2m1Steps(x0&0x7fffffff, thr) | x0>>31<<3
			c1 := e2m1Steps(x1&0x7fffffff, thr) | x1>>31<<3
			out[j] = byte(c0 | c1<<4)
		}
	}
}

// quantMXFP4Block encodes one block whose scale is 2^k with k ≥ −124. The
// element bits minus k<<23 are the bits of x·2^−k whenever that is a normal
// float32 of at least 2^−126; otherwise they are below the bits of 0.125
// (subnormal inputs stay below 2^−126·2^124), and those values round to 0.
func quantMXFP4Block(out *[mxBlock / 2]byte, v *[mxBlock]float32, k int32, keys *[64]uint8) {
	sh := k << 23
	for j := range out {
		x0, x1 := math.Float32bits(v[2*j]), math.Float32bits(v[2*j+1])
		c0 := e2m1Code(int32(x0&0x7fffffff)-sh, keys) | x0>>31<<3
		c1 := e2m1Code(int32(x1&0x7fffffff)-sh, keys) | x1>>31<<3
		out[j] = byte(c0 | c1<<4)
	}
}

// dequantizeMXFP4 decodes MXFP4 blocks (codes packed as quantizeMXFP4 writes
// them, one E8M0 scale per 32 elements) into dst, whose length must be a
// multiple of 32: each value is the float32 product of the E2M1 element and
// 2^(code−127), and a block with scale code 0xFF is NaN.
func dequantizeMXFP4(dst []float32, codes []byte, scales []uint8) {
	checkBlocks("dequantizeMXFP4", len(dst), mxBlock, len(codes), mxBlock/2, len(scales))
	dequantMXFP4(dst, codes, scales)
}

// dequantizeMXFP4Go is the reference of dequantizeMXFP4, for whole blocks.
func dequantizeMXFP4Go(dst []float32, codes []byte, scales []uint8) {
	t := mx
	for b := range len(dst) / mxBlock {
		in := (*[mxBlock / 2]byte)(codes[b*mxBlock/2:])
		out := (*[mxBlock]float32)(dst[b*mxBlock:])
		sc := scales[b]
		if sc < 2 || sc > 252 {
			// Results below the normal range, above it, or NaN: float32
			// products, as the generic decoder computes them.
			m := t.e8m0[sc]
			for j, c := range in {
				p := &t.e2m1Pair[c]
				out[2*j], out[2*j+1] = p[0]*m, p[1]*m
			}
			continue
		}
		// Exact multiplication by 2^(sc−127) as an exponent addition on both
		// elements of a byte at once, zeros masked out of the addition; each
		// pair is stored as one 64-bit word.
		// Unrolled: a loop counter would not stay in a register.
		d := uint64(sc-1) << 23 * (1 | 1<<32)
		w := (*[mxBlock / 2]uint64)(unsafe.Pointer(out))
		e := &t.e2m1Exp
		w[0], w[1], w[2], w[3] = e[in[0]][0]+d&e[in[0]][1], e[in[1]][0]+d&e[in[1]][1], e[in[2]][0]+d&e[in[2]][1], e[in[3]][0]+d&e[in[3]][1]
		w[4], w[5], w[6], w[7] = e[in[4]][0]+d&e[in[4]][1], e[in[5]][0]+d&e[in[5]][1], e[in[6]][0]+d&e[in[6]][1], e[in[7]][0]+d&e[in[7]][1]
		w[8], w[9], w[10], w[11] = e[in[8]][0]+d&e[in[8]][1], e[in[9]][0]+d&e[in[9]][1], e[in[10]][0]+d&e[in[10]][1], e[in[11]][0]+d&e[in[11]][1]
		w[12], w[13], w[14], w[15] = e[in[12]][0]+d&e[in[12]][1], e[in[13]][0]+d&e[in[13]][1], e[in[14]][0]+d&e[in[14]][1], e[in[15]][0]+d&e[in[15]][1]
	}
}

// quantizeMXFP8 quantizes src, a whole number of blocks of 32, to OCP MXFP8
// with E4M3 (e4m3fn) elements: one E8M0 scale per block in scales and one
// code per element in codes. The rules are quantizeMXFP4's with E4M3's
// largest exponent, 8 (scale 2^(floor(log2 amax) − 8), saturation at ±448),
// and a block holding a NaN or an infinity gets element codes 0x7F, the E4M3
// NaN.
func quantizeMXFP8(codes []byte, scales []uint8, src []float32) {
	checkBlocks("quantizeMXFP8", len(src), mxBlock, len(codes), mxBlock, len(scales))
	quantMXFP8(codes, scales, src)
}

// quantizeMXFP8Go is quantizeMXFP8 in Go, the reference of its assembly. It
// is quantMXFloatGo for E4M3 with the format's numbers as constants, which
// makes the generic tier about a third faster than the general loop.
func quantizeMXFP8Go(codes []byte, scales []uint8, src []float32) {
	// Round to 3 mantissa bits, ties to even (see encodeFloatRNE): normal
	// results by integer rounding of the float32 bits, subnormal ones (below
	// 2^−6) by the float32 addition of 2^14, whose ulp is E4M3's 2^−9.
	const (
		minNorm = 121 << 23 // 2^−6
		kBits   = 141 << 23 // 2^14
		rebias  = 120 << 3
	)
	k := math.Float32frombits(kBits)
	for b := range len(src) / mxBlock {
		v := (*[mxBlock]float32)(src[b*mxBlock:])
		out := (*[mxBlock]byte)(codes[b*mxBlock:])
		sc, ok := mxScale(amaxBits(v[:]), 8)
		scales[b] = sc
		if !ok {
			for j := range out {
				out[j] = 0x7f
			}
			continue
		}
		mul := mx.recip[sc]
		for j, x := range v {
			y := math.Float32bits(x * mul)
			abs := y & 0x7fffffff
			sub := int32(math.Float32bits(math.Float32frombits(abs)+k) - kBits)
			mag := int32((abs+(1<<19-1)+(abs>>20)&1)>>20) - rebias
			isSub := (int32(abs) - minNorm) >> 31
			mag ^= (mag ^ sub) & isSub
			mag = min(mag, 0x7e) // saturate: |x·mul| < 512
			out[j] = byte(uint32(mag) | y>>31<<7)
		}
	}
}

// dequantizeMXFP8 decodes MXFP8 (E4M3) blocks into dst, whose length must be
// a multiple of 32, as dequantizeMXFP4 does.
func dequantizeMXFP8(dst []float32, codes []byte, scales []uint8) {
	checkBlocks("dequantizeMXFP8", len(dst), mxBlock, len(codes), mxBlock, len(scales))
	dequantMXFP8(dst, codes, scales)
}

// dequant8 decodes blocks of 32 one-byte codes through lut and multiplies
// each block by its E8M0 scale.
func dequant8(dst []float32, codes []byte, scales []uint8, lut *[256]float32) {
	for b := range len(dst) / mxBlock {
		in := (*[mxBlock]byte)(codes[b*mxBlock:])
		out := (*[mxBlock]float32)(dst[b*mxBlock:])
		m := mx.e8m0[scales[b]]
		if m == 1 {
			for j, c := range in {
				out[j] = lut[c]
			}
			continue
		}
		for j, c := range in {
			out[j] = lut[c] * m
		}
	}
}

// quantizeMXINT8 quantizes src, a whole number of blocks of 32, to OCP
// MXINT8: one E8M0 scale per block and one two's-complement code per element,
// read as fixed point 1.6 (code/64). The rules are quantizeMXFP4's with the
// element's largest exponent, 0 (scale 2^floor(log2 amax)); elements are
// 64·x/scale rounded to nearest even and kept within −127..127 (docs/NUMERICS.md
// §5). A block holding a NaN or an infinity gets element codes 0.
func quantizeMXINT8(codes []byte, scales []uint8, src []float32) {
	checkBlocks("quantizeMXINT8", len(src), mxBlock, len(codes), mxBlock, len(scales))
	quantMXINT8(codes, scales, src)
}

// quantizeMXINT8Go is quantizeMXINT8 in Go, the reference of its assembly.
func quantizeMXINT8Go(codes []byte, scales []uint8, src []float32) {
	// Adding 1.5·2^23 rounds a float32 below 2^22 in magnitude to an integer,
	// ties to even, which the low bits of the sum then hold.
	const magic = 0x1.8p23
	for b := range len(src) / mxBlock {
		v := (*[mxBlock]float32)(src[b*mxBlock:])
		out := (*[mxBlock]byte)(codes[b*mxBlock:])
		sc, ok := mxScale(amaxBits(v[:]), 0)
		scales[b] = sc
		if !ok {
			clear(out[:])
			continue
		}
		mul := mx.recip[sc]
		for j, x := range v {
			// x·mul lies in (−2, 2); times 64 (exact) in (−128, 128).
			r := int32(math.Float32bits(float32(x*mul)*64+magic)) - 0x4b400000
			out[j] = byte(min(max(r, -127), 127))
		}
	}
}

// dequantizeMXINT8 decodes MXINT8 blocks into dst, whose length must be a
// multiple of 32, as dequantizeMXFP4 does.
func dequantizeMXINT8(dst []float32, codes []byte, scales []uint8) {
	checkBlocks("dequantizeMXINT8", len(dst), mxBlock, len(codes), mxBlock, len(scales))
	dequantMXINT8(dst, codes, scales)
}

// quantizeNVFP4 quantizes src, a whole number of blocks of 16, to NVIDIA
// NVFP4 given the float32 tensor scale s_t (tensorScale): one UE4M3 scale per
// block in scales and E2M1 codes packed two per byte in codes, in ModelOpt's
// order of operations (docs/NUMERICS.md §7). The block scale s_b is the UE4M3
// code of amax / float32(6·s_t), rounded to nearest even and saturating (an
// all-zero block gets 1.0, code 0x38); the elements are x / float32(s_b·s_t)
// in E2M1, or zeros when that multiplier is 0. A block holding a NaN or an
// infinity gets scale 0x7F (the UE4M3 NaN) and element codes 0. The tensor
// scale is the caller's: ModelOpt's, which tcast.Cast uses, is
// float32(amax_t / 2688), or 1 for a tensor without a finite non-zero value.
func quantizeNVFP4(codes []byte, scales []uint8, src []float32, tensorScale float32) {
	checkBlocks("quantizeNVFP4", len(src), nvfp4Block, len(codes), nvfp4Block/2, len(scales))
	quantNVFP4(codes, scales, src, tensorScale)
}

// quantizeNVFP4Go is the reference of quantizeNVFP4, for whole blocks.
func quantizeNVFP4Go(codes []byte, scales []uint8, src []float32, tensorScale float32) {
	denom := 6 * tensorScale
	one := uint8(ue4m3Codec.Encode(1, RoundEven, true, 0))
	for b := range len(src) / nvfp4Block {
		v := (*[nvfp4Block]float32)(src[b*nvfp4Block:])
		out := (*[nvfp4Block / 2]byte)(codes[b*nvfp4Block/2:])
		amax := amaxBits(v[:])
		if amax >= 0x7f800000 {
			scales[b] = ue4m3NaN
			clear(out[:])
			continue
		}
		sc := one
		if amax != 0 {
			sc = uint8(ue4m3Codec.Encode(math.Float32frombits(amax)/denom, RoundEven, true, 0))
		}
		scales[b] = sc
		d := mx.ue4m3[sc] * tensorScale
		if d == 0 {
			clear(out[:])
			continue
		}
		encodeE2M1Div(out[:], v[:], d)
	}
}

// dequantizeNVFP4 decodes NVFP4 blocks of 16 (codes packed as quantizeNVFP4
// writes them) with the tensor scale tensorScale into dst, whose length must
// be a multiple of 16: each value is the float32 product of the element and
// float32(s_b·s_t), and a block whose scale is NaN (0x7F, 0xFF) is NaN.
func dequantizeNVFP4(dst []float32, codes []byte, scales []uint8, tensorScale float32) {
	checkBlocks("dequantizeNVFP4", len(dst), nvfp4Block, len(codes), nvfp4Block/2, len(scales))
	dequantNVFP4(dst, codes, scales, tensorScale)
}

// dequantizeNVFP4Go is the reference of dequantizeNVFP4, for whole blocks.
func dequantizeNVFP4Go(dst []float32, codes []byte, scales []uint8, tensorScale float32) {
	for b := range len(dst) / nvfp4Block {
		in := (*[nvfp4Block / 2]byte)(codes[b*nvfp4Block/2:])
		out := (*[nvfp4Block]float32)(dst[b*nvfp4Block:])
		m := mx.ue4m3[scales[b]] * tensorScale
		if m == 1 {
			for j, c := range in {
				p := &mx.e2m1Pair[c]
				out[2*j], out[2*j+1] = p[0], p[1]
			}
			continue
		}
		for j, c := range in {
			p := &mx.e2m1Pair[c]
			out[2*j], out[2*j+1] = p[0]*m, p[1]*m
		}
	}
}
