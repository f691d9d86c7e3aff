package kernels

import "encoding/binary"

// The 1- and 2-bit block formats of ggml with one float16 scale d per
// block and no search: Q1_0 (signs, 128 elements), Q2_0 (codes −1..2, 64
// elements) and the ternary TQ1_0 and TQ2_0 of 256 elements (BitNet b1.58
// and TriLM models). Their quantizers are ggml's reference rules bit for
// bit; ggml's own ignore an importance vector, and so do these. Each
// element has a stored code c (0..3, 0..2 for TQ1_0, 0..1 for Q1_0) of
// value lowBitValues[c]·d: (c − 1)·d, and (2c − 1)·d for Q1_0.

const (
	q1_0Block      = 128
	q1_0BlockBytes = 18 // float16 d, 16 bytes of signs
	q2_0Block      = 64
	q2_0BlockBytes = 18 // float16 d, 16 bytes of 2-bit codes
	tq1_0Bytes     = 54 // 48 bytes of 5 trits, 4 of 4 trits, float16 d
	tq2_0Bytes     = 66 // 64 bytes of 2-bit codes, float16 d
)

// lowBit is the geometry and code layout of one of the four formats.
type lowBit struct {
	name        string
	block, size int  // elements and bytes of a block
	dAt         int  // the byte offset of the float16 d
	maxCode     byte // the largest code a block holds
	values      *[4]float32
	// codes computes the scale d and the codes of one block.
	codes func(c []byte, x []float32) float32
	// put lays out a block's codes; get reads them back.
	put func(y, c []byte)
	get func(c, x []byte)
}

// The code values: (c − 1) for the ternary types and Q2_0, ±1 for Q1_0.
var (
	offsetValues = [4]float32{-1, 0, 1, 2}
	signValues   = [4]float32{-1, 1}
)

var (
	lowQ1_0 = lowBit{"Q1_0", q1_0Block, q1_0BlockBytes, 0, 1, &signValues,
		codesQ1_0, putQ1_0, getQ1_0}
	lowQ2_0 = lowBit{"Q2_0", q2_0Block, q2_0BlockBytes, 0, 3, &offsetValues,
		codesQ2_0, putQ2_0, getQ2_0}
	lowTQ1_0 = lowBit{"TQ1_0", qkk, tq1_0Bytes, 52, 2, &offsetValues,
		codesTernary, putTQ1_0, getTQ1_0}
	lowTQ2_0 = lowBit{"TQ2_0", qkk, tq2_0Bytes, 64, 3, &offsetValues,
		codesTernary, putTQ2_0, getTQ2_0}
)

// quantize writes the blocks of src to dst, ggml's reference rule.
func (f *lowBit) quantize(dst []byte, src []float32) {
	nb := checkBlocksOf("quantize"+f.name, len(src), f.block, len(dst), f.size)
	var c [qkk]byte
	for b := range nb {
		y := dst[b*f.size : (b+1)*f.size]
		d := f.codes(c[:f.block], src[b*f.block:(b+1)*f.block])
		f.put(y, c[:f.block])
		binary.LittleEndian.PutUint16(y[f.dAt:], half(d))
	}
}

// dequantize decodes the blocks of src: values[c]·d.
func (f *lowBit) dequantize(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantize"+f.name, len(dst), f.block, len(src), f.size)
	var c [qkk]byte
	for b := range nb {
		x := src[b*f.size : (b+1)*f.size]
		y := dst[b*f.block : (b+1)*f.block]
		d := f16At(x[f.dAt:])
		f.get(c[:f.block], x)
		for j, q := range c[:f.block] {
			y[j] = f.values[q] * d
		}
	}
}

// split is the format's BlockCodec.Split: the stored codes and the two
// bytes of d of each block.
func (f *lowBit) split(codes, scales, src []byte) {
	nb := checkSplit("split"+f.name, len(codes), f.block, len(src), f.size, len(scales), 2)
	for b := range nb {
		x := src[b*f.size : (b+1)*f.size]
		copy(scales[2*b:2*b+2], x[f.dAt:f.dAt+2])
		f.get(codes[b*f.block:(b+1)*f.block], x)
	}
}

// join is the format's BlockCodec.Join.
func (f *lowBit) join(dst, codes, scales []byte) bool {
	nb := checkSplit("join"+f.name, len(codes), f.block, len(dst), f.size, len(scales), 2)
	for _, q := range codes[:nb*f.block] {
		if q > f.maxCode {
			return false
		}
	}
	for b := range nb {
		y := dst[b*f.size : (b+1)*f.size]
		f.put(y, codes[b*f.block:(b+1)*f.block])
		copy(y[f.dAt:f.dAt+2], scales[2*b:2*b+2])
	}
	return true
}

// half returns the float16 code ggml stores for v (nearest even, overflow
// to ±Inf, NaN kept quiet).
func half(v float32) uint16 { return float32ToFloat16(v, false) }

// codesQ1_0 is Q1_0's rule: d = (Σ|x|)/128 summed in element order in
// float32, code 1 when x ≥ 0 (0 for a NaN).
func codesQ1_0(c []byte, x []float32) float32 {
	var sum float32
	for j, v := range x {
		sum += abs32(v)
		c[j] = 0
		if v >= 0 {
			c[j] = 1
		}
	}
	return sum / q1_0Block
}

// putQ1_0 sets bit j%8 of code byte j/8 for a code 1.
func putQ1_0(y, c []byte) {
	clear(y[2:])
	for j, q := range c {
		y[2+j/8] |= q << (j % 8)
	}
}

func getQ1_0(c, x []byte) {
	for j := range c {
		c[j] = x[2+j/8] >> (j % 8) & 1
	}
}

// codesQ2_0 is Q2_0's rule: d = the largest magnitude (NaNs skipped),
// id = 1/d (0 for d = 0), code = clamp(round(x·id) + 1, 0, 3) with ties
// away from zero and 0 for a NaN.
func codesQ2_0(c []byte, x []float32) float32 {
	var d float32
	for _, v := range x {
		if a := abs32(v); a > d {
			d = a
		}
	}
	var id float32
	if d > 0 {
		id = 1 / d
	}
	for j, v := range x {
		c[j] = q2_0Code(v * id)
	}
	return d
}

// q2_0Code is ggml's clamp((int)roundf(v) + 1, 0, 3): C's conversion of
// a NaN or of a value beyond int32 gives INT_MIN, so code 0.
func q2_0Code(v float32) byte {
	r := roundAway(v)
	if !(r > -(1<<31) && r < 1<<31) {
		return 0
	}
	return byte(min(max(int(r)+1, 0), 3))
}

// putQ2_0 puts element j in bits 2(j%4) of code byte j/4.
func putQ2_0(y, c []byte) {
	clear(y[2:])
	for j, q := range c {
		y[2+j/4] |= q << (2 * (j % 4))
	}
}

func getQ2_0(c, x []byte) {
	for j := range c {
		c[j] = x[2+j/4] >> (2 * (j % 4)) & 3
	}
}

// codesTernary is the rule of TQ1_0 and TQ2_0: d = the largest magnitude
// as ggml's MAX macro gives it (m > |x| ? m : |x|, so that a NaN is taken
// and then replaced by the next element), id = 1/d (0 for d = 0), codes
// the trits of x·id.
func codesTernary(c []byte, x []float32) float32 {
	var d float32
	for _, v := range x {
		if a := abs32(v); !(d > a) {
			d = a
		}
	}
	var id float32
	if d != 0 {
		id = 1 / d
	}
	for j, v := range x {
		c[j] = trit(v, id)
	}
	return d
}

// trit returns ggml's ternary digit of x·id: lroundf(x·id) + 1, ties away
// from zero, as the low byte (ggml adds it in uint8 arithmetic). C's
// lroundf gives LONG_MIN for a NaN or a value beyond int64, so 1.
func trit(x, id float32) uint8 {
	r := roundAway(x * id)
	if !(r > -(1<<63) && r < 1<<63) {
		return 1
	}
	return uint8(int64(r) + 1)
}

// tq1Group is one run of TQ1_0's code bytes: bytes at at..at+bytes hold
// trits trits each, of elements first + m + n·bytes (n = 0 the most
// significant).
type tq1Group struct{ at, bytes, trits, first int }

// tq1Groups lists TQ1_0's three runs of code bytes: bytes 0..31 hold
// elements m + 32n (n = 0..4), bytes 32..47 elements 160 + m + 16n, bytes
// 48..51 elements 240 + m + 4n (n = 0..3, and a zero fifth trit).
var tq1Groups = [...]tq1Group{{0, 32, 5, 0}, {32, 16, 5, 160}, {48, 4, 4, 240}}

// putTQ1_0 stores each byte as ⌈q·256/243⌉ of the base-3 number q of its
// trits, in uint8 arithmetic as ggml's.
func putTQ1_0(y, c []byte) {
	for _, g := range tq1Groups {
		for m := range g.bytes {
			var q uint8
			for n := range 5 {
				q *= 3
				if n < g.trits {
					q += c[g.first+m+n*g.bytes]
				}
			}
			y[g.at+m] = byte((uint16(q)*256 + 242) / 243)
		}
	}
}

// getTQ1_0 reads trit n of a byte b as ggml does: ((b·3ⁿ mod 256)·3) >> 8.
func getTQ1_0(c, x []byte) {
	for _, g := range tq1Groups {
		for n := range g.trits {
			p := [5]uint8{1, 3, 9, 27, 81}[n]
			for m := range g.bytes {
				c[g.first+m+n*g.bytes] = byte(uint16(x[g.at+m]*p) * 3 >> 8)
			}
		}
	}
}

// putTQ2_0 puts element 128k + 32n + m in bits 2n of byte 32k + m (the
// code's low two bits, as ggml's q & 3).
func putTQ2_0(y, c []byte) {
	for i := range 64 {
		k, m := i/32, i%32
		var q byte
		for n := range 4 {
			q |= (c[128*k+32*n+m] & 3) << (2 * n)
		}
		y[i] = q
	}
}

func getTQ2_0(c, x []byte) {
	for e := range c {
		k, n, m := e/128, e%128/32, e%32
		c[e] = x[32*k+m] >> (2 * n) & 3
	}
}
