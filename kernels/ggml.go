package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The GGUF block codecs of ggml's Q8_0 and Q4_0: 32 elements per block, a
// float16 scale d first (little-endian), then the codes. They compute exactly
// what ggml's reference quantizers (quantize_row_q8_0_ref,
// quantize_row_q4_0_ref) do on finite input, with the rules for NaN and
// infinite elements stated below, and the package gguf calls them.

// Geometry of the ggml blocks.
const (
	ggmlBlock      = 32 // elements per Q8_0 or Q4_0 block
	q8_0BlockBytes = 34 // float16 d, then 32 int8 codes
	q4_0BlockBytes = 18 // float16 d, then 16 bytes of two 4-bit codes
)

// checkGGML panics unless n elements are whole blocks of 32 and the encoded
// side holds at least bytesPerBlock bytes per block; it returns the number of
// blocks.
func checkGGML(kernel string, n, nbytes, bytesPerBlock int) int {
	if n%ggmlBlock != 0 {
		panic(fmt.Sprintf("kernels: %s: %d elements are not a multiple of the block of %d", kernel, n, ggmlBlock))
	}
	nb := n / ggmlBlock
	if nbytes < nb*bytesPerBlock {
		panic(fmt.Sprintf("kernels: %s: %d bytes for %d blocks of %d", kernel, nbytes, nb, bytesPerBlock))
	}
	return nb
}

// quantizeQ8_0 quantizes src, a whole number of blocks of 32, into Q8_0
// blocks of 34 bytes in dst (which must hold len(src)/32·34 bytes). For each
// block:
//
//	amax = max |x| over the non-NaN elements (0 if none)
//	d    = amax / 127        (float32)
//	id   = 1/d, or 0 when d = 0
//	q    = round(x·id)       (float32 product, then ties away from zero)
//
// clamped to ±127, with code 0 for an element whose x·id is NaN. d is stored
// as its float16 code, rounded to nearest even with overflow to +Inf; the
// block decodes as q·f16(d).
func quantizeQ8_0(dst []byte, src []float32) {
	nb := checkGGML("quantizeQ8_0", len(src), len(dst), q8_0BlockBytes)
	quantQ8_0(dst[:nb*q8_0BlockBytes], src)
}

// dequantizeQ8_0 decodes Q8_0 blocks from src (len(dst)/32·34 bytes at
// least) into dst, whose length must be a multiple of 32: element j of a
// block is the float32 product int8(code_j)·d, d the block's float16 scale.
func dequantizeQ8_0(dst []float32, src []byte) {
	nb := checkGGML("dequantizeQ8_0", len(dst), len(src), q8_0BlockBytes)
	dequantQ8_0(dst, src[:nb*q8_0BlockBytes])
}

// quantizeQ4_0 quantizes src, a whole number of blocks of 32, into Q4_0
// blocks of 18 bytes in dst (which must hold len(src)/32·18 bytes). For each
// block:
//
//	m  = the non-NaN element of largest magnitude, with its sign (the
//	     first one on ties; +0 if there is none or it is zero)
//	d  = m / −8              (float32)
//	id = 1/d, or 0 when d = 0
//	q  = min(15, trunc(x·id + 8.5))   (float32 product, then sum)
//
// with q = 0 for a negative sum and q = 8 for a NaN one. d is stored as its
// float16 code (nearest even, overflow to ±Inf), then byte j of the 16 code
// bytes holds element j in its low nibble and element j+16 in its high one;
// the block decodes as (q−8)·f16(d).
func quantizeQ4_0(dst []byte, src []float32) {
	nb := checkGGML("quantizeQ4_0", len(src), len(dst), q4_0BlockBytes)
	quantQ4_0(dst[:nb*q4_0BlockBytes], src)
}

// dequantizeQ4_0 decodes Q4_0 blocks from src (len(dst)/32·18 bytes at
// least) into dst, whose length must be a multiple of 32: element j of a
// block is (low nibble of byte j − 8)·d and element j+16 is (high nibble −
// 8)·d, float32 products, d the block's float16 scale.
func dequantizeQ4_0(dst []float32, src []byte) {
	nb := checkGGML("dequantizeQ4_0", len(dst), len(src), q4_0BlockBytes)
	dequantQ4_0(dst, src[:nb*q4_0BlockBytes])
}

// quantQ8_0Go is the reference of quantizeQ8_0, with len(dst) exactly the
// blocks' bytes.
func quantQ8_0Go(dst []byte, src []float32) {
	for b := range len(src) / ggmlBlock {
		x := (*[ggmlBlock]float32)(src[b*ggmlBlock:])
		y := (*[q8_0BlockBytes]byte)(dst[b*q8_0BlockBytes:])
		var amax float32
		for _, v := range x {
			amax = max(amax, nanToZero(abs32(v)))
		}
		id := putScale(y[:], amax/127)
		for j, v := range x {
			q := roundAway(float32(v * id)) // the conversion forbids fusing
			switch {
			case q != q:
				q = 0
			case q > 127:
				q = 127
			case q < -127:
				q = -127
			}
			y[2+j] = byte(int8(q))
		}
	}
}

// putScale stores the float16 code of a block's scale d at the start of the
// block y (nearest even, overflow to ±Inf) and returns id, 1/d in float32
// or 0 when d is 0, by which the quantizers multiply the elements.
func putScale(y []byte, d float32) float32 {
	binary.LittleEndian.PutUint16(y, float32ToFloat16(d, false))
	if d == 0 {
		return 0
	}
	return 1 / d
}

// dequantQ8_0Go is the reference of dequantizeQ8_0.
func dequantQ8_0Go(dst []float32, src []byte) {
	for b := range len(dst) / ggmlBlock {
		x := (*[q8_0BlockBytes]byte)(src[b*q8_0BlockBytes:])
		y := (*[ggmlBlock]float32)(dst[b*ggmlBlock:])
		d := float16To32(binary.LittleEndian.Uint16(x[:]))
		for j := range y {
			y[j] = float32(int8(x[2+j])) * d
		}
	}
}

// quantQ4_0Go is the reference of quantizeQ4_0.
func quantQ4_0Go(dst []byte, src []float32) {
	for b := range len(src) / ggmlBlock {
		x := (*[ggmlBlock]float32)(src[b*ggmlBlock:])
		y := (*[q4_0BlockBytes]byte)(dst[b*q4_0BlockBytes:])
		var amax, m float32
		for _, v := range x {
			if a := abs32(v); amax < a {
				amax, m = a, v
			}
		}
		id := putScale(y[:], m/-8)
		code := func(v float32) byte {
			t := float32(v*id) + 8.5 // the conversion forbids fusing
			switch {
			case t != t:
				return 8
			case t < 0:
				return 0
			case t >= 15:
				return 15
			}
			return byte(t)
		}
		for j := range 16 {
			y[2+j] = code(x[j]) | code(x[j+16])<<4
		}
	}
}

// dequantQ4_0Go is the reference of dequantizeQ4_0.
func dequantQ4_0Go(dst []float32, src []byte) {
	for b := range len(dst) / ggmlBlock {
		x := (*[q4_0BlockBytes]byte)(src[b*q4_0BlockBytes:])
		y := (*[ggmlBlock]float32)(dst[b*ggmlBlock:])
		d := float16To32(binary.LittleEndian.Uint16(x[:]))
		for j := range 16 {
			c := x[2+j]
			y[j] = float32(int(c&0x0f)-8) * d
			y[j+16] = float32(int(c>>4)-8) * d
		}
	}
}

// roundAway rounds x to an integer, ties away from zero (C's roundf).
func roundAway(x float32) float32 {
	return float32(math.Round(float64(x)))
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// nanToZero returns 0 for a NaN and x otherwise.
func nanToZero(x float32) float32 {
	if x != x {
		return 0
	}
	return x
}
