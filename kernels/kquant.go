package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The decoders of ggml's other block types: the 32-element Q4_1, Q5_0, Q5_1
// and IQ4_NL blocks, and the 256-element super-blocks of the K-quants (Q2_K,
// Q3_K, Q4_K, Q5_K, Q6_K, Q8_K) and IQ4_XS. Each computes, in float32 and in
// the same order of operations, what ggml's dequantize_row_* function does,
// so the floats are ggml's bit for bit. The block layouts are stated on each
// decoder; "f16" is an IEEE binary16 code stored little-endian.

// Geometry of the blocks decoded here.
const (
	qkk = 256 // elements per K-quant or IQ4_XS super-block

	q4_1BlockBytes  = 20  // f16 d, f16 m, 16 bytes of 4-bit codes
	q5_0BlockBytes  = 22  // f16 d, u32 fifth bits, 16 bytes of 4-bit codes
	q5_1BlockBytes  = 24  // f16 d, f16 m, u32 fifth bits, 16 bytes
	iq4nlBlockBytes = 18  // f16 d, 16 bytes of 4-bit table indices
	q2_KBlockBytes  = 84  // 16 scale/min bytes, 64 bytes of 2-bit codes, f16 d, f16 dmin
	q3_KBlockBytes  = 110 // 32 high-bit bytes, 64 bytes of 2-bit codes, 12 scale bytes, f16 d
	q4_KBlockBytes  = 144 // f16 d, f16 dmin, 12 scale/min bytes, 128 bytes of 4-bit codes
	q5_KBlockBytes  = 176 // f16 d, f16 dmin, 12 scale/min bytes, 32 high-bit bytes, 128 bytes
	q6_KBlockBytes  = 210 // 128 low-nibble bytes, 64 high-bit bytes, 16 int8 scales, f16 d
	q8_KBlockBytes  = 292 // f32 d, 256 int8 codes, 16 int16 sums of 16 codes
	iq4xsBlockBytes = 136 // f16 d, u16 high scale bits, 4 low scale bytes, 128 bytes
)

// IQ4NLValues is ggml's kvalues_iq4nl: the value of each 4-bit IQ4_NL and
// IQ4_XS code, before the block scale.
var IQ4NLValues = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// checkBlocksOf panics unless n elements are whole blocks of size and the
// encoded side holds at least bytesPerBlock bytes per block; it returns the
// number of blocks.
func checkBlocksOf(kernel string, n, size, nbytes, bytesPerBlock int) int {
	if n%size != 0 {
		panic(fmt.Sprintf("kernels: %s: %d elements are not a multiple of the block of %d", kernel, n, size))
	}
	nb := n / size
	if nbytes < nb*bytesPerBlock {
		panic(fmt.Sprintf("kernels: %s: %d bytes for %d blocks of %d", kernel, nbytes, nb, bytesPerBlock))
	}
	return nb
}

// f16At returns the float32 value of the little-endian float16 at b[0:2].
func f16At(b []byte) float32 { return float16To32(binary.LittleEndian.Uint16(b)) }

// dequantizeQ4_1 decodes Q4_1 blocks (32 elements, 20 bytes: f16 d, f16 m,
// then 16 bytes, byte j holding element j in its low nibble and element j+16
// in its high one): value = float32(q·d) + m.
func dequantizeQ4_1(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeQ4_1", len(dst), ggmlBlock, len(src), q4_1BlockBytes)
	dequantQ4_1(dst, src[:nb*q4_1BlockBytes])
}

// dequantQ4_1Go is the reference of dequantizeQ4_1, with len(src) exactly the
// blocks' bytes.
func dequantQ4_1Go(dst []float32, src []byte) {
	for b := range len(dst) / ggmlBlock {
		x := (*[q4_1BlockBytes]byte)(src[b*q4_1BlockBytes:])
		y := (*[ggmlBlock]float32)(dst[b*ggmlBlock:])
		d, m := f16At(x[0:]), f16At(x[2:])
		for j := range 16 {
			c := x[4+j]
			y[j] = float32(float32(c&0x0f)*d) + m // the conversion forbids fusing
			y[j+16] = float32(float32(c>>4)*d) + m
		}
	}
}

// dequantizeQ5_0 decodes Q5_0 blocks (32 elements, 22 bytes: f16 d, a
// little-endian uint32 whose bit j is the fifth bit of element j, then 16
// bytes of low nibbles in Q4_1's order): value = (q−16)·d.
func dequantizeQ5_0(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeQ5_0", len(dst), ggmlBlock, len(src), q5_0BlockBytes)
	dequantQ5_0(dst, src[:nb*q5_0BlockBytes])
}

// dequantQ5_0Go is the reference of dequantizeQ5_0, with len(src) exactly the
// blocks' bytes.
func dequantQ5_0Go(dst []float32, src []byte) {
	for b := range len(dst) / ggmlBlock {
		x := (*[q5_0BlockBytes]byte)(src[b*q5_0BlockBytes:])
		y := (*[ggmlBlock]float32)(dst[b*ggmlBlock:])
		d := f16At(x[0:])
		qh := binary.LittleEndian.Uint32(x[2:])
		for j := range 16 {
			c := x[6+j]
			lo := int(c&0x0f) | int(qh>>j&1)<<4
			hi := int(c>>4) | int(qh>>(j+16)&1)<<4
			y[j] = float32(lo-16) * d
			y[j+16] = float32(hi-16) * d
		}
	}
}

// dequantizeQ5_1 decodes Q5_1 blocks (32 elements, 24 bytes: f16 d, f16 m,
// the uint32 of fifth bits, then 16 bytes of low nibbles): value =
// float32(q·d) + m.
func dequantizeQ5_1(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeQ5_1", len(dst), ggmlBlock, len(src), q5_1BlockBytes)
	dequantQ5_1(dst, src[:nb*q5_1BlockBytes])
}

// dequantQ5_1Go is the reference of dequantizeQ5_1, with len(src) exactly the
// blocks' bytes.
func dequantQ5_1Go(dst []float32, src []byte) {
	for b := range len(dst) / ggmlBlock {
		x := (*[q5_1BlockBytes]byte)(src[b*q5_1BlockBytes:])
		y := (*[ggmlBlock]float32)(dst[b*ggmlBlock:])
		d, m := f16At(x[0:]), f16At(x[2:])
		qh := binary.LittleEndian.Uint32(x[4:])
		for j := range 16 {
			c := x[8+j]
			lo := uint32(c&0x0f) | (qh>>j&1)<<4
			hi := uint32(c>>4) | (qh>>(j+16)&1)<<4
			y[j] = float32(float32(lo)*d) + m
			y[j+16] = float32(float32(hi)*d) + m
		}
	}
}

// dequantizeIQ4NL decodes IQ4_NL blocks (32 elements, 18 bytes: f16 d, then
// 16 bytes of table indices in Q4_1's order): value = d·IQ4NLValues[q].
func dequantizeIQ4NL(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeIQ4NL", len(dst), ggmlBlock, len(src), iq4nlBlockBytes)
	dequantIQ4NL(dst, src[:nb*iq4nlBlockBytes])
}

// dequantIQ4NLGo is the reference of dequantizeIQ4NL, with len(src) exactly the
// blocks' bytes.
func dequantIQ4NLGo(dst []float32, src []byte) {
	for b := range len(dst) / ggmlBlock {
		x := (*[iq4nlBlockBytes]byte)(src[b*iq4nlBlockBytes:])
		y := (*[ggmlBlock]float32)(dst[b*ggmlBlock:])
		d := f16At(x[0:])
		for j := range 16 {
			c := x[2+j]
			y[j] = d * float32(IQ4NLValues[c&0x0f])
			y[j+16] = d * float32(IQ4NLValues[c>>4])
		}
	}
}

// dequantizeQ8_K decodes Q8_K blocks (256 elements, 292 bytes: a
// little-endian float32 d, 256 int8 codes, then 16 int16 sums that decoding
// ignores): value = d·q.
func dequantizeQ8_K(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeQ8_K", len(dst), qkk, len(src), q8_KBlockBytes)
	for b := range nb {
		x := (*[q8_KBlockBytes]byte)(src[b*q8_KBlockBytes:])
		y := (*[qkk]float32)(dst[b*qkk:])
		d := math.Float32frombits(binary.LittleEndian.Uint32(x[0:]))
		for j := range y {
			y[j] = d * float32(int8(x[4+j]))
		}
	}
}

// dequantizeQ2_K decodes Q2_K super-blocks (256 elements, 84 bytes: 16
// bytes, byte s holding the 4-bit scale of sub-block s (elements 16s..16s+15)
// in its low nibble and its 4-bit min in the high one; 64 bytes of 2-bit
// codes; f16 d; f16 dmin). Element e = 128h + 32k + l (h < 2, k < 4, l < 32)
// has code bits 2k..2k+1 of code byte 32h+l, and value =
// float32(d·sc)·q − float32(dmin·m).
func dequantizeQ2_K(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeQ2_K", len(dst), qkk, len(src), q2_KBlockBytes)
	dequantQ2_K(dst, src[:nb*q2_KBlockBytes])
}

// dequantQ2_KGo is the reference of dequantizeQ2_K, with len(src) exactly the
// blocks' bytes.
func dequantQ2_KGo(dst []float32, src []byte) {
	for b := range len(dst) / qkk {
		x := (*[q2_KBlockBytes]byte)(src[b*q2_KBlockBytes:])
		y := (*[qkk]float32)(dst[b*qkk:])
		d, dmin := f16At(x[80:]), f16At(x[82:])
		for e := range qkk {
			sc := x[e/16]
			dl := d * float32(sc&0x0f)
			ml := dmin * float32(sc>>4)
			q := x[16+e/128*32+e%32] >> (2 * (e / 32 % 4)) & 3
			y[e] = float32(dl*float32(q)) - ml // the conversion forbids fusing
		}
	}
}

// dequantizeQ3_K decodes Q3_K super-blocks (256 elements, 110 bytes: 32
// bytes of high bits, 64 bytes of 2-bit codes, 12 bytes of 6-bit scales,
// f16 d). Element e = 128h + 32k + l has its low two bits at bits 2k..2k+1
// of code byte 32h+l and its high bit at bit 4h+k of high-bit byte l; its
// code is the three bits minus 4 (−4..3). The scale of sub-block s
// (elements 16s..16s+15) has its low nibble in byte s (s < 8) or the high
// nibble of byte s−8, and its top two bits at bits 2(s/4)..2(s/4)+1 of byte
// 8+s%4; value = float32(d·(sc−32))·q.
func dequantizeQ3_K(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeQ3_K", len(dst), qkk, len(src), q3_KBlockBytes)
	dequantQ3_K(dst, src[:nb*q3_KBlockBytes])
}

// dequantQ3_KGo is the reference of dequantizeQ3_K, with len(src) exactly the
// blocks' bytes.
func dequantQ3_KGo(dst []float32, src []byte) {
	for b := range len(dst) / qkk {
		x := (*[q3_KBlockBytes]byte)(src[b*q3_KBlockBytes:])
		y := (*[qkk]float32)(dst[b*qkk:])
		d := f16At(x[108:])
		var dl [16]float32
		for s := range dl {
			dl[s] = d * float32(int(q3Scale(x[96:108], s))-32)
		}
		for e := range qkk {
			k := e / 32 % 4
			q := int(x[32+e/128*32+e%32]>>(2*k)&3) | int(x[e%32]>>(4*(e/128)+k)&1)<<2
			y[e] = dl[e/16] * float32(q-4)
		}
	}
}

// q3Scale returns the 6-bit stored scale (0..63) of sub-block s from the 12
// scale bytes of a Q3_K block.
func q3Scale(sc []byte, s int) uint8 {
	lo := sc[s%8] >> (4 * (s / 8)) & 0x0f
	return lo | (sc[8+s%4]>>(2*(s/4))&3)<<4
}

// kScaleMin returns the 6-bit scale and min of sub-block j (0..7) from the 12
// scale bytes of a Q4_K or Q5_K block: for j < 4, the low six bits of bytes j
// and j+4; for j ≥ 4, the low and high nibbles of byte j+4 below the top two
// bits of bytes j−4 and j.
func kScaleMin(sc []byte, j int) (s, m uint8) {
	if j < 4 {
		return sc[j] & 63, sc[j+4] & 63
	}
	return sc[j+4]&0x0f | sc[j-4]>>6<<4, sc[j+4]>>4 | sc[j]>>6<<4
}

// dequantizeQ4_K decodes Q4_K super-blocks (256 elements, 144 bytes: f16 d,
// f16 dmin, 12 bytes of 6-bit scales and mins (see kScaleMin), 128 bytes of
// 4-bit codes). Element e = 64c + l has its code in the low nibble of code
// byte 32c+l (l < 32) or the high nibble of byte 32c+l−32; sub-block s = e/32
// has value float32(d·sc)·q − float32(dmin·m).
func dequantizeQ4_K(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeQ4_K", len(dst), qkk, len(src), q4_KBlockBytes)
	dequantQ4_K(dst, src[:nb*q4_KBlockBytes])
}

// dequantQ4_KGo is the reference of dequantizeQ4_K, with len(src) exactly the
// blocks' bytes.
func dequantQ4_KGo(dst []float32, src []byte) {
	for b := range len(dst) / qkk {
		x := (*[q4_KBlockBytes]byte)(src[b*q4_KBlockBytes:])
		y := (*[qkk]float32)(dst[b*qkk:])
		d, dmin := f16At(x[0:]), f16At(x[2:])
		for s := range 8 {
			sc, m := kScaleMin(x[4:16], s)
			dl, ml := d*float32(sc), dmin*float32(m)
			q := x[16+32*(s/2):]
			sh := 4 * (s % 2)
			for l := range 32 {
				y[32*s+l] = float32(dl*float32(q[l]>>sh&0x0f)) - ml
			}
		}
	}
}

// dequantizeQ5_K decodes Q5_K super-blocks (256 elements, 176 bytes: f16 d,
// f16 dmin, 12 bytes of scales and mins as in Q4_K, 32 bytes of high bits,
// 128 bytes of low nibbles as in Q4_K). Element 32s+l (sub-block s) has its
// fifth bit at bit s of high-bit byte l; value = float32(d·sc)·q −
// float32(dmin·m).
func dequantizeQ5_K(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeQ5_K", len(dst), qkk, len(src), q5_KBlockBytes)
	dequantQ5_K(dst, src[:nb*q5_KBlockBytes])
}

// dequantQ5_KGo is the reference of dequantizeQ5_K, with len(src) exactly the
// blocks' bytes.
func dequantQ5_KGo(dst []float32, src []byte) {
	for b := range len(dst) / qkk {
		x := (*[q5_KBlockBytes]byte)(src[b*q5_KBlockBytes:])
		y := (*[qkk]float32)(dst[b*qkk:])
		d, dmin := f16At(x[0:]), f16At(x[2:])
		for s := range 8 {
			sc, m := kScaleMin(x[4:16], s)
			dl, ml := d*float32(sc), dmin*float32(m)
			q := x[48+32*(s/2):]
			sh := 4 * (s % 2)
			for l := range 32 {
				c := q[l]>>sh&0x0f | (x[16+l]>>s&1)<<4
				y[32*s+l] = float32(dl*float32(c)) - ml
			}
		}
	}
}

// dequantizeQ6_K decodes Q6_K super-blocks (256 elements, 210 bytes: 128
// bytes of low nibbles, 64 bytes of high bit pairs, 16 int8 scales, f16 d).
// Element e = 128h + 32k + l (h < 2, k < 4, l < 32) has its low nibble in
// byte 64h + 32(k%2) + l (the low nibble for k < 2, the high one for k ≥ 2)
// and its top two bits at bits 2k..2k+1 of byte 128 + 32h + l; its code is
// the six bits minus 32, and value = float32(d·sc)·q with sc the scale of
// sub-block e/16.
func dequantizeQ6_K(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeQ6_K", len(dst), qkk, len(src), q6_KBlockBytes)
	dequantQ6_K(dst, src[:nb*q6_KBlockBytes])
}

// dequantQ6_KGo is the reference of dequantizeQ6_K, with len(src) exactly the
// blocks' bytes.
func dequantQ6_KGo(dst []float32, src []byte) {
	for b := range len(dst) / qkk {
		x := (*[q6_KBlockBytes]byte)(src[b*q6_KBlockBytes:])
		y := (*[qkk]float32)(dst[b*qkk:])
		d := f16At(x[208:])
		for e := range qkk {
			h, k, l := e/128, e/32%4, e%32
			lo := x[64*h+32*(k%2)+l] >> (4 * (k / 2)) & 0x0f
			hi := x[128+32*h+l] >> (2 * k) & 3
			q := int(lo|hi<<4) - 32
			y[e] = d * float32(int8(x[192+e/16])) * float32(q)
		}
	}
}

// dequantizeIQ4XS decodes IQ4_XS super-blocks (256 elements, 136 bytes: f16
// d, a little-endian uint16 holding the top two bits of sub-block s's 6-bit
// scale at bits 2s..2s+1, 4 bytes holding the low nibbles (sub-block s in
// byte s/2, even s low), then 16 bytes of table indices per sub-block of 32
// in IQ4_NL's order): value = float32(d·(sc−32))·IQ4NLValues[q].
func dequantizeIQ4XS(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeIQ4XS", len(dst), qkk, len(src), iq4xsBlockBytes)
	dequantIQ4XS(dst, src[:nb*iq4xsBlockBytes])
}

// dequantIQ4XSGo is the reference of dequantizeIQ4XS, with len(src) exactly the
// blocks' bytes.
func dequantIQ4XSGo(dst []float32, src []byte) {
	for b := range len(dst) / qkk {
		x := (*[iq4xsBlockBytes]byte)(src[b*iq4xsBlockBytes:])
		y := (*[qkk]float32)(dst[b*qkk:])
		d := f16At(x[0:])
		sh := binary.LittleEndian.Uint16(x[2:])
		for s := range 8 {
			ls := int(x[4+s/2]>>(4*(s%2))&0x0f) | int(sh>>(2*s)&3)<<4
			dl := d * float32(ls-32)
			q := x[8+16*s:]
			for j := range 16 {
				y[32*s+j] = dl * float32(IQ4NLValues[q[j]&0x0f])
				y[32*s+j+16] = dl * float32(IQ4NLValues[q[j]>>4])
			}
		}
	}
}
