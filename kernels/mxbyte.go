package kernels

import (
	"math"
)

// The MX kernels whose elements take a byte or less and are not E2M1: MXFP8
// with E5M2 elements, MXFP6 with E2M3 and E3M2 elements (this file), and
// the dispatch of MXFP8 with E4M3 elements and MXINT8 (whose Go references
// are in mx.go) to the assembly of mxbyte_amd64.s. The rules are mx.go's:
// the E8M0 scale of a block of 32 is floor(log2 amax) − emax + 127 clamped to
// 0 below (0 for an all-zero block), the elements are x·2^(127−code) in
// float32 rounded to nearest even in the element format and saturating, and
// a block holding a NaN or an infinity gets scale 0xFF and the element NaN
// code (E5M2: 0x7E), or code 0 where the format has none (E2M3, E3M2).
//
// Six-bit codes are an LSB-first bit stream, 4 codes in 3 bytes
// (docs/NUMERICS.md §10): codes c0..c3 become the bytes of
// c0 | c1<<6 | c2<<12 | c3<<18, low byte first, so a block of 32 takes 24
// bytes.

// mxfp6Bytes is the number of bytes the 32 six-bit codes of one MXFP6 block
// take.
const mxfp6Bytes = mxBlock * 6 / 8

// The element formats of this file, as the dtype package builds e5m2, e2m3
// and e3m2 (OCP; the six-bit ones have no Inf and no NaN and keep −0).
var (
	e5m2Codec = FloatCodec{ManBits: 2, ExpBits: 5, Emin: -14, SignBit: 0x80, MagMask: 0x7f, MaxMag: 0x7b,
		NegZero: true, HasInf: true, InfMag: 0x7c, NaN: NaNIEEE, NaNPos: 0x7e, NaNNeg: 0xfe}
	e2m3Codec = FloatCodec{ManBits: 3, ExpBits: 2, Emin: 0, SignBit: 0x20, MagMask: 0x1f, MaxMag: 0x1f,
		NegZero: true, NaN: NaNNone, NaNPos: 0x20}
	e3m2Codec = FloatCodec{ManBits: 2, ExpBits: 3, Emin: -2, SignBit: 0x20, MagMask: 0x1f, MaxMag: 0x1f,
		NegZero: true, NaN: NaNNone, NaNPos: 0x20}
)

// mxElem is an MX element float format as the block kernels see it: the
// codec, the exponent of its largest normal value (emax of the scale rule),
// the code of the elements of a NaN block, and the decode table of its codes
// (256 entries; bits above the format are ignored).
type mxElem struct {
	codec   *FloatCodec
	emax    int
	nanCode byte
	lut     [256]float32
}

func newMXElem(c *FloatCodec, emax int, nanCode byte) *mxElem {
	e := &mxElem{codec: c, emax: emax, nanCode: nanCode}
	for i := range e.lut {
		e.lut[i] = c.Decode(uint32(i))
	}
	return e
}

var (
	mxE5M2 = newMXElem(&e5m2Codec, 15, 0x7e)
	mxE2M3 = newMXElem(&e2m3Codec, 2, 0)
	mxE3M2 = newMXElem(&e3m2Codec, 4, 0)
)

// quantMXFloatGo quantizes whole blocks of src to the element format e, one
// code per byte in codes (32 per block) and one E8M0 scale per block: the Go
// reference of the MXFP8 E5M2 and MXFP6 kernels (the MXFP6 ones pack the
// codes afterwards). The rounding is encodeFloatRNE's, without its special
// cases: the scaled values of a finite block are finite and below
// 2^(emax+1), so only saturation remains.
func quantMXFloatGo(codes []byte, scales []uint8, src []float32, e *mxElem) {
	f := e.codec
	sh := 23 - f.ManBits
	rb := uint32(1)<<(sh-1) - 1
	minNorm := int32(f.Emin+127) << 23
	kBits := uint32(f.Emin-int(f.ManBits)+23+127) << 23
	k := math.Float32frombits(kBits)
	rebias := int32(f.Emin+126) << f.ManBits
	maxMag := int32(f.MaxMag)
	signShift := f.ExpBits + f.ManBits
	for b := range len(src) / mxBlock {
		v := (*[mxBlock]float32)(src[b*mxBlock:])
		out := (*[mxBlock]byte)(codes[b*mxBlock:])
		sc, ok := mxScale(amaxBits(v[:]), e.emax)
		scales[b] = sc
		if !ok {
			for j := range out {
				out[j] = e.nanCode
			}
			continue
		}
		mul := mx.recip[sc]
		for j, x := range v {
			y := math.Float32bits(x * mul)
			abs := y & 0x7fffffff
			sub := int32(math.Float32bits(math.Float32frombits(abs)+k) - kBits)
			mag := int32((abs+rb+(abs>>sh)&1)>>sh) - rebias
			isSub := (int32(abs) - minNorm) >> 31
			mag ^= (mag ^ sub) & isSub
			mag = min(mag, maxMag)
			out[j] = byte(uint32(mag) | y>>31<<signShift)
		}
	}
}

// pack6 packs the 32 six-bit codes of a block into 24 bytes.
func pack6(out *[mxfp6Bytes]byte, c *[mxBlock]byte) {
	for g := range mxBlock / 4 {
		w := uint32(c[4*g]) | uint32(c[4*g+1])<<6 | uint32(c[4*g+2])<<12 | uint32(c[4*g+3])<<18
		out[3*g], out[3*g+1], out[3*g+2] = byte(w), byte(w>>8), byte(w>>16)
	}
}

// unpack6 unpacks the 24 bytes of a block into its 32 six-bit codes.
func unpack6(c *[mxBlock]byte, in *[mxfp6Bytes]byte) {
	for g := range mxBlock / 4 {
		w := uint32(in[3*g]) | uint32(in[3*g+1])<<8 | uint32(in[3*g+2])<<16
		c[4*g], c[4*g+1], c[4*g+2], c[4*g+3] = byte(w&63), byte(w>>6&63), byte(w>>12&63), byte(w>>18)
	}
}

// quantMXFP6Go is quantMXFloatGo followed by the six-bit packing, a block at
// a time.
func quantMXFP6Go(codes []byte, scales []uint8, src []float32, e *mxElem) {
	var c [mxBlock]byte
	for b := range len(src) / mxBlock {
		quantMXFloatGo(c[:], scales[b:b+1], src[b*mxBlock:(b+1)*mxBlock], e)
		pack6((*[mxfp6Bytes]byte)(codes[b*mxfp6Bytes:]), &c)
	}
}

// dequantMXFP6Go unpacks MXFP6 blocks and decodes them as dequant8 does
// bytes, a block at a time.
func dequantMXFP6Go(dst []float32, codes []byte, scales []uint8, e *mxElem) {
	var c [mxBlock]byte
	for b := range len(dst) / mxBlock {
		unpack6(&c, (*[mxfp6Bytes]byte)(codes[b*mxfp6Bytes:]))
		dequant8(dst[b*mxBlock:(b+1)*mxBlock], c[:], scales[b:b+1], &e.lut)
	}
}

// quantizeMXFP8E5M2 quantizes src, a whole number of blocks of 32, to OCP
// MXFP8 with E5M2 elements: one E8M0 scale per block in scales and one code
// per element in codes. The rules are quantizeMXFP8's with E5M2's largest
// exponent, 15 (scale 2^(floor(log2 amax) − 15), saturation at ±57344), and a
// block holding a NaN or an infinity gets element codes 0x7E, the E5M2 NaN.
// The codes are those of tcast.Cast to mxfp8e5.
func quantizeMXFP8E5M2(codes []byte, scales []uint8, src []float32) {
	checkBlocks("quantizeMXFP8E5M2", len(src), mxBlock, len(codes), mxBlock, len(scales))
	quantMXFP8E5M2(codes, scales, src)
}

// dequantizeMXFP8E5M2 decodes MXFP8 (E5M2) blocks into dst, whose length
// must be a multiple of 32, as dequantizeMXFP8 does: each value is the
// float32 product of the element (E5M2 infinities and NaNs included) and
// 2^(code−127), and a block with scale code 0xFF is NaN.
func dequantizeMXFP8E5M2(dst []float32, codes []byte, scales []uint8) {
	checkBlocks("dequantizeMXFP8E5M2", len(dst), mxBlock, len(codes), mxBlock, len(scales))
	dequantMXFP8E5M2(dst, codes, scales)
}

// quantizeMXFP6E2M3 quantizes src, a whole number of blocks of 32, to OCP
// MXFP6 with E2M3 elements: one E8M0 scale per block in scales and the
// six-bit codes packed 4 in 3 bytes in codes (24 bytes per block, see
// mxfp6Bytes). The rules are quantizeMXFP8's with E2M3's largest exponent, 2
// (saturation at ±7.5), and a block holding a NaN or an infinity gets
// element codes 0 (E2M3 has no NaN). The bytes are those of tcast.Cast to
// mxfp6e2 in Compressed form.
func quantizeMXFP6E2M3(codes []byte, scales []uint8, src []float32) {
	checkBlocks("quantizeMXFP6E2M3", len(src), mxBlock, len(codes), mxfp6Bytes, len(scales))
	quantizeMXFP6(codes, scales, src, mxE2M3)
}

// quantizeMXFP6E3M2 is quantizeMXFP6E2M3 with E3M2 elements: largest
// exponent 4, saturation at ±28. The bytes are those of tcast.Cast to
// mxfp6e3 in Compressed form.
func quantizeMXFP6E3M2(codes []byte, scales []uint8, src []float32) {
	checkBlocks("quantizeMXFP6E3M2", len(src), mxBlock, len(codes), mxfp6Bytes, len(scales))
	quantizeMXFP6(codes, scales, src, mxE3M2)
}

// dequantizeMXFP6E2M3 decodes MXFP6 (E2M3) blocks, packed as
// quantizeMXFP6E2M3 writes them, into dst, whose length must be a multiple
// of 32: each value is the float32 product of the element and 2^(code−127),
// and a block with scale code 0xFF is NaN.
func dequantizeMXFP6E2M3(dst []float32, codes []byte, scales []uint8) {
	checkBlocks("dequantizeMXFP6E2M3", len(dst), mxBlock, len(codes), mxfp6Bytes, len(scales))
	dequantizeMXFP6(dst, codes, scales, mxE2M3)
}

// dequantizeMXFP6E3M2 is dequantizeMXFP6E2M3 for E3M2 elements.
func dequantizeMXFP6E3M2(dst []float32, codes []byte, scales []uint8) {
	checkBlocks("dequantizeMXFP6E3M2", len(dst), mxBlock, len(codes), mxfp6Bytes, len(scales))
	dequantizeMXFP6(dst, codes, scales, mxE3M2)
}

// The Go references of the dispatched kernels.

func quantizeMXFP8E5M2Go(codes []byte, scales []uint8, src []float32) {
	quantMXFloatGo(codes, scales, src, mxE5M2)
}

func dequantizeMXFP8E5M2Go(dst []float32, codes []byte, scales []uint8) {
	dequant8(dst, codes, scales, &mxE5M2.lut)
}

func dequantizeMXFP8Go(dst []float32, codes []byte, scales []uint8) {
	dequant8(dst, codes, scales, &mx.e4m3fn)
}

func dequantizeMXINT8Go(dst []float32, codes []byte, scales []uint8) {
	dequant8(dst, codes, scales, &mx.q16)
}

// DecodeFloat8 decodes the byte codes src of the format f into dst (at least
// as long), as DecodeLUT8 does with lut, f's decode table: through the
// assembly of the active tier when f is e4m3fn, e5m2, e2m3 or e3m2, through
// lut otherwise.
func DecodeFloat8(f *FloatCodec, dst []float32, src []uint8, lut *[256]float32) {
	if !decodeFloat8(f, dst, src, lut) {
		DecodeLUT8(dst, src, lut)
	}
}
