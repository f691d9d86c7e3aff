package kernels

import "encoding/binary"

// The 1- and 2-bit block formats of ggml with one float16 scale per block
// and no search: Q1_0 (signs, 128 elements), Q2_0 (codes −1..2, 64
// elements) and the ternary TQ1_0 and TQ2_0 of 256 elements (BitNet b1.58
// and TriLM models). Their quantizers are ggml's reference rules bit for
// bit; ggml's own ignore an importance vector, and so do these.

const (
	q1_0Block      = 128
	q1_0BlockBytes = 18 // float16 d, 16 bytes of signs
	q2_0Block      = 64
	q2_0BlockBytes = 18 // float16 d, 16 bytes of 2-bit codes
	tq1_0Bytes     = 54 // 48 bytes of 5 trits, 4 of 4 trits, float16 d
	tq2_0Bytes     = 66 // 64 bytes of 2-bit codes, float16 d
)

// half returns the float16 code ggml stores for v (nearest even, overflow
// to ±Inf, NaN kept quiet).
func half(v float32) uint16 { return float32ToFloat16(v, false) }

// quantizeQ1_0 quantizes src, whole blocks of 128, into Q1_0 blocks of 18
// bytes: d = (Σ|x|)/128 summed in element order in float32, stored as a
// float16, and bit j%8 of code byte j/8 set when x_j ≥ 0 (NaN clear). The
// block decodes as +d for a set bit and −d for a clear one.
func quantizeQ1_0(dst []byte, src []float32) {
	nb := checkBlocksOf("quantizeQ1_0", len(src), q1_0Block, len(dst), q1_0BlockBytes)
	for b := range nb {
		x := src[b*q1_0Block : (b+1)*q1_0Block]
		y := dst[b*q1_0BlockBytes : (b+1)*q1_0BlockBytes]
		var sum float32
		for _, v := range x {
			sum += abs32(v)
		}
		binary.LittleEndian.PutUint16(y, half(sum/q1_0Block))
		clear(y[2:])
		for j, v := range x {
			if v >= 0 {
				y[2+j/8] |= 1 << (j % 8)
			}
		}
	}
}

// dequantizeQ1_0 decodes Q1_0 blocks: d for a set bit, −d for a clear one.
func dequantizeQ1_0(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeQ1_0", len(dst), q1_0Block, len(src), q1_0BlockBytes)
	for b := range nb {
		x := src[b*q1_0BlockBytes : (b+1)*q1_0BlockBytes]
		y := dst[b*q1_0Block : (b+1)*q1_0Block]
		d := f16At(x)
		for j := range y {
			if x[2+j/8]>>(j%8)&1 != 0 {
				y[j] = d
			} else {
				y[j] = -d
			}
		}
	}
}

// blockAmax is ggml's largest magnitude of a block for Q2_0: NaNs are
// skipped, +0 when there is nothing else.
func blockAmax(x []float32) float32 {
	var m float32
	for _, v := range x {
		if a := abs32(v); a > m {
			m = a
		}
	}
	return m
}

// ternaryAmax is the largest magnitude of TQ1_0 and TQ2_0 as ggml's MAX
// macro gives it: m > |x| ? m : |x|, so that a NaN is taken and then
// replaced by the next element.
func ternaryAmax(x []float32) float32 {
	var m float32
	for _, v := range x {
		if a := abs32(v); !(m > a) {
			m = a
		}
	}
	return m
}

// quantizeQ2_0 quantizes src, whole blocks of 64, into Q2_0 blocks of 18
// bytes: d = the largest magnitude (NaNs skipped), id = 1/d (0 for d = 0),
// code = clamp(round(x·id) + 1, 0, 3) with ties away from zero and 0 for a
// NaN, element j in bits 2(j%4) of code byte j/4; d is stored as a
// float16. A code c decodes as (c − 1)·d.
func quantizeQ2_0(dst []byte, src []float32) {
	nb := checkBlocksOf("quantizeQ2_0", len(src), q2_0Block, len(dst), q2_0BlockBytes)
	for b := range nb {
		x := src[b*q2_0Block : (b+1)*q2_0Block]
		y := dst[b*q2_0BlockBytes : (b+1)*q2_0BlockBytes]
		d := blockAmax(x)
		var id float32
		if d > 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(y, half(d))
		clear(y[2:])
		for j, v := range x {
			y[2+j/4] |= q2_0Code(v*id) << (2 * (j % 4))
		}
	}
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

// dequantizeQ2_0 decodes Q2_0 blocks: code c gives (c − 1)·d.
func dequantizeQ2_0(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeQ2_0", len(dst), q2_0Block, len(src), q2_0BlockBytes)
	for b := range nb {
		x := src[b*q2_0BlockBytes : (b+1)*q2_0BlockBytes]
		y := dst[b*q2_0Block : (b+1)*q2_0Block]
		d := f16At(x)
		for j := range y {
			y[j] = float32(int(x[2+j/4]>>(2*(j%4))&3)-1) * d
		}
	}
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

// packTrits returns the byte of ggml's TQ1_0 for n trits (first the most
// significant), padded with zero trits to 5: ⌈q·256/243⌉ of the base-3
// number q, in uint8 arithmetic as ggml's.
func packTrits(t [5]uint8) byte {
	var q uint8
	for _, v := range t {
		q = q*3 + v
	}
	return byte((uint16(q)*256 + 242) / 243)
}

// unpackTrit returns trit n (0 the most significant) of a TQ1_0 byte.
func unpackTrit(c byte, n int) int {
	q := c * [5]uint8{1, 3, 9, 27, 81}[n]
	return int(uint16(q)*3>>8) - 1
}

// quantizeTQ1_0 quantizes src, whole blocks of 256, into TQ1_0 blocks of
// 54 bytes, as ggml's reference: d = the largest magnitude (ternaryAmax),
// id = 1/d (0 for d = 0), trits round(x·id) + 1; bytes 0..31 hold elements
// m + 32n (n = 0..4, n = 0 the most significant trit), bytes 32..47
// elements 160 + m + 16n, bytes 48..51 elements 240 + j + 4n (n = 0..3, a
// zero fifth trit), each byte ⌈q·256/243⌉ of its base-3 number q; d is
// stored as a float16 at byte 52.
func quantizeTQ1_0(dst []byte, src []float32) {
	nb := checkBlocksOf("quantizeTQ1_0", len(src), qkk, len(dst), tq1_0Bytes)
	for b := range nb {
		x := src[b*qkk : (b+1)*qkk]
		y := dst[b*tq1_0Bytes : (b+1)*tq1_0Bytes]
		d := ternaryAmax(x)
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(y[52:], half(d))
		for _, g := range tq1Groups {
			for m := range g.bytes {
				var t [5]uint8
				for n := range g.trits {
					t[n] = trit(x[g.first+m+n*g.bytes], id)
				}
				if g.trits == 4 {
					t[4] = 0
				}
				y[g.at+m] = packTrits(t)
			}
		}
	}
}

// tq1Group is one run of TQ1_0's code bytes: bytes at at..at+bytes hold
// trits trits each, of elements first + m + n·bytes.
type tq1Group struct{ at, bytes, trits, first int }

// tq1Groups lists TQ1_0's three runs of code bytes.
var tq1Groups = [...]tq1Group{{0, 32, 5, 0}, {32, 16, 5, 160}, {48, 4, 4, 240}}

// dequantizeTQ1_0 decodes TQ1_0 blocks: trit t gives (t − 1)·d.
func dequantizeTQ1_0(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeTQ1_0", len(dst), qkk, len(src), tq1_0Bytes)
	for b := range nb {
		x := src[b*tq1_0Bytes : (b+1)*tq1_0Bytes]
		y := dst[b*qkk : (b+1)*qkk]
		d := f16At(x[52:])
		for _, g := range tq1Groups {
			for n := range g.trits {
				for m := range g.bytes {
					y[g.first+m+n*g.bytes] = float32(unpackTrit(x[g.at+m], n)) * d
				}
			}
		}
	}
}

// quantizeTQ2_0 quantizes src, whole blocks of 256, into TQ2_0 blocks of
// 66 bytes: d and the trits as quantizeTQ1_0, element 128c + 32n + m in
// bits 2n of byte 32c + m, d as a float16 at byte 64. A code c decodes as
// (c − 1)·d.
func quantizeTQ2_0(dst []byte, src []float32) {
	nb := checkBlocksOf("quantizeTQ2_0", len(src), qkk, len(dst), tq2_0Bytes)
	for b := range nb {
		x := src[b*qkk : (b+1)*qkk]
		y := dst[b*tq2_0Bytes : (b+1)*tq2_0Bytes]
		d := ternaryAmax(x)
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(y[64:], half(d))
		for i := range 64 {
			c, m := i/32, i%32
			var q byte
			for n := range 4 {
				q |= (trit(x[128*c+32*n+m], id) & 3) << (2 * n)
			}
			y[i] = q
		}
	}
}

// dequantizeTQ2_0 decodes TQ2_0 blocks: code c gives (c − 1)·d.
func dequantizeTQ2_0(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeTQ2_0", len(dst), qkk, len(src), tq2_0Bytes)
	for b := range nb {
		x := src[b*tq2_0Bytes : (b+1)*tq2_0Bytes]
		y := dst[b*qkk : (b+1)*qkk]
		d := f16At(x[64:])
		for e := range y {
			c, n, m := e/128, e%128/32, e%32
			y[e] = float32(int(x[32*c+m]>>(2*n)&3)-1) * d
		}
	}
}
