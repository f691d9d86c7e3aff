package gguf

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
)

// Block geometry of the block types with codecs in this package.
const (
	// Q8_0BlockSize and Q8_0BlockBytes: f16 scale d, then 32 int8 codes.
	Q8_0BlockSize, Q8_0BlockBytes = 32, 34
	// Q4_0BlockSize and Q4_0BlockBytes: f16 scale d, then 16 nibble bytes.
	Q4_0BlockSize, Q4_0BlockBytes = 32, 18
	// MXFP4BlockSize and MXFP4BlockBytes: E8M0 scale byte, then 16 nibble
	// bytes.
	MXFP4BlockSize, MXFP4BlockBytes = 32, 17
	// NVFP4BlockSize and NVFP4BlockBytes: four UE4M3 scale bytes (one per
	// 16-element sub-block), then 32 nibble bytes.
	NVFP4BlockSize, NVFP4BlockBytes = 64, 36
	// NVFP4SubBlockSize is the number of elements sharing one NVFP4 scale.
	NVFP4SubBlockSize = 16
)

var (
	fmtF16  = dtype.MustParse("float16")
	fmtE2M1 = dtype.MustParse("e2m1")
	fmtE8M0 = dtype.MustParse("e8m0")

	// f16IEEE converts like ggml's GGML_FP32_TO_FP16 (and F16C): round to
	// nearest even, overflow to ±Inf.
	f16IEEE = dtype.Options{Overflow: dtype.OverflowIEEE}

	// e2m1Value holds the value of each OCP E2M1 code (sign in bit 3).
	e2m1Value [16]float32
	// e8m0Value holds the value of each E8M0 scale byte (0xFF is NaN).
	e8m0Value [256]float32
)

func init() {
	for c := range e2m1Value {
		e2m1Value[c] = fmtE2M1.Decode(uint32(c))
	}
	for c := range e8m0Value {
		e8m0Value[c] = fmtE8M0.Decode(uint32(c))
	}
}

// checkBlocks panics unless nelem elements and nbytes bytes are the same
// whole number of blocks.
func checkBlocks(fn string, nelem, nbytes, blockSize, blockBytes int) int {
	if nelem%blockSize != 0 {
		panic(fmt.Sprintf("gguf: %s: %d elements is not a multiple of the block size %d", fn, nelem, blockSize))
	}
	nb := nelem / blockSize
	if nbytes != nb*blockBytes {
		panic(fmt.Sprintf("gguf: %s: %d elements need %d bytes, got %d", fn, nelem, nb*blockBytes, nbytes))
	}
	return nb
}

// QuantizeQ8_0 quantizes src into Q8_0 blocks in dst, exactly as ggml's
// quantize_row_q8_0_ref does for finite input. For each block of 32:
//
//	amax = max |x|          (NaN elements are ignored)
//	d    = amax / 127       (float32)
//	id   = 1/d, or 0 when d = 0
//	q    = roundf(x·id)     (round half away from zero, as C roundf)
//
// d is stored as float16, rounded to nearest even with overflow to Inf
// (GGML_FP32_TO_FP16), so the decoded value is q·f16(d), not q·d. A NaN
// element gets code 0; codes are clamped to ±127.
//
// len(src) must be a multiple of 32 and len(dst) must be len(src)/32·34;
// it panics otherwise.
func QuantizeQ8_0(dst []byte, src []float32) {
	nb := checkBlocks("QuantizeQ8_0", len(src), len(dst), Q8_0BlockSize, Q8_0BlockBytes)
	// Blocks go a group at a time: their amaxes in one kernel call, their
	// scales converted to float16 in another.
	const group = 64
	var amax [group]uint32
	var d [group]float32
	var h [group]uint16
	for g0 := 0; g0 < nb; g0 += group {
		n := min(group, nb-g0)
		x := src[g0*Q8_0BlockSize : (g0+n)*Q8_0BlockSize]
		kernels.AbsMaxBlocks(amax[:n], x, Q8_0BlockSize)
		for k := range n {
			d[k] = math.Float32frombits(amax[k]) / 127
		}
		kernels.Float32ToFloat16(h[:n], d[:n], false)
		for k := range n {
			b := g0 + k
			y := dst[b*Q8_0BlockBytes : (b+1)*Q8_0BlockBytes : (b+1)*Q8_0BlockBytes]
			xb := x[k*Q8_0BlockSize : (k+1)*Q8_0BlockSize : (k+1)*Q8_0BlockSize]
			if amax[k] >= 0x7f800000 || d[k] < minQ8Scale {
				// A NaN or an infinity, or a scale whose reciprocal
				// overflows: ggml's rules element by element.
				quantizeQ8_0Block(y, xb)
				continue
			}
			binary.LittleEndian.PutUint16(y, h[k])
			var id float32
			if d[k] != 0 {
				id = 1 / d[k]
			}
			q := y[2:34:34]
			for j, v := range xb {
				// |v·id| < 127.5 here (v ≤ amax, id ≈ 127/amax), so roundf
				// is floor(|p| + 0.5) with p's sign, in exact float64.
				p := v * id
				bits := math.Float32bits(p)
				t := int32(float64(math.Float32frombits(bits&0x7fffffff)) + 0.5)
				sign := int32(bits) >> 31
				q[j] = byte(int8((t ^ sign) - sign))
			}
		}
	}
}

// minQ8Scale is the smallest Q8_0 scale d whose reciprocal 1/d is finite in
// float32 (1/2^-128 overflows): smaller nonzero scales go element by
// element.
const minQ8Scale = 0x1p-127

// quantizeQ8_0Block is QuantizeQ8_0 of one block, element by element.
func quantizeQ8_0Block(y []byte, x []float32) {
	var amax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax = a
		}
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(y, uint16(fmtF16.EncodeWith(d, f16IEEE)))
	for j, v := range x {
		q := float32(math.Round(float64(float32(v * id)))) // roundf; the conversion forbids FMA fusion
		switch {
		case q != q: // NaN
			q = 0
		case q > 127:
			q = 127
		case q < -127:
			q = -127
		}
		y[2+j] = byte(int8(q))
	}
}

// DequantizeQ8_0 decodes Q8_0 blocks: value = q·d. The products are exact.
// len(src) must be len(dst)/32·34; it panics otherwise.
func DequantizeQ8_0(dst []float32, src []byte) {
	nb := checkBlocks("DequantizeQ8_0", len(dst), len(src), Q8_0BlockSize, Q8_0BlockBytes)
	const group = 64 // blocks whose scales are decoded in one call
	var h [group]uint16
	var d [group]float32
	for g0 := 0; g0 < nb; g0 += group {
		n := min(group, nb-g0)
		for k := range n {
			h[k] = binary.LittleEndian.Uint16(src[(g0+k)*Q8_0BlockBytes:])
		}
		kernels.Float16ToFloat32(d[:n], h[:n])
		for k := range n {
			b := g0 + k
			x := src[b*Q8_0BlockBytes+2 : (b+1)*Q8_0BlockBytes : (b+1)*Q8_0BlockBytes]
			y := dst[b*Q8_0BlockSize : (b+1)*Q8_0BlockSize : (b+1)*Q8_0BlockSize]
			for j, q := range x {
				y[j] = float32(int8(q)) * d[k]
			}
		}
	}
}

// QuantizeQ4_0 quantizes src into Q4_0 blocks in dst, exactly as ggml's
// quantize_row_q4_0_ref does for finite input. For each block of 32:
//
//	max = the element of largest magnitude, with its sign (the first
//	      such element on ties; NaN elements are ignored)
//	d   = max / −8          (float32)
//	id  = 1/d, or 0 when d = 0
//	q   = min(15, trunc(x·id + 8.5))
//
// so the element of largest magnitude gets code 0 (value −8·d = max) and
// ties of x·id round half up (toward +∞). Codes are clamped to 0..15 and a
// NaN element gets code 8 (zero). d is stored as float16 (round to nearest
// even, overflow to Inf); the decoded value is (q−8)·f16(d). Byte j of the
// 16 code bytes holds element j in its low nibble and element j+16 in its
// high nibble.
//
// len(src) must be a multiple of 32 and len(dst) must be len(src)/32·18;
// it panics otherwise.
func QuantizeQ4_0(dst []byte, src []float32) {
	nb := checkBlocks("QuantizeQ4_0", len(src), len(dst), Q4_0BlockSize, Q4_0BlockBytes)
	for i := range nb {
		x := src[i*Q4_0BlockSize : (i+1)*Q4_0BlockSize]
		y := dst[i*Q4_0BlockBytes : (i+1)*Q4_0BlockBytes]
		var amax, mx float32
		for _, v := range x {
			if a := abs32(v); amax < a {
				amax, mx = a, v
			}
		}
		d := mx / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(y, uint16(fmtF16.EncodeWith(d, f16IEEE)))
		code := func(v float32) byte {
			t := float32(v*id) + 8.5 // the conversion forbids FMA fusion
			switch {
			case t != t: // NaN
				return 8
			case t < 0:
				return 0
			case t >= 15:
				return 15
			}
			return byte(t) // truncation toward zero, as C's (int8_t) cast
		}
		for j := range 16 {
			y[2+j] = code(x[j]) | code(x[j+16])<<4
		}
	}
}

// DequantizeQ4_0 decodes Q4_0 blocks: element j of a block is
// (low nibble of byte j − 8)·d and element j+16 is (high nibble − 8)·d.
// The products are exact. len(src) must be len(dst)/32·18; it panics
// otherwise.
func DequantizeQ4_0(dst []float32, src []byte) {
	nb := checkBlocks("DequantizeQ4_0", len(dst), len(src), Q4_0BlockSize, Q4_0BlockBytes)
	for i := range nb {
		x := src[i*Q4_0BlockBytes : (i+1)*Q4_0BlockBytes]
		y := dst[i*Q4_0BlockSize : (i+1)*Q4_0BlockSize]
		d := fmtF16.Decode(uint32(binary.LittleEndian.Uint16(x)))
		for j := range 16 {
			b := x[2+j]
			y[j] = float32(int(b&0x0F)-8) * d
			y[j+16] = float32(int(b>>4)-8) * d
		}
	}
}

// PackQ8_0 lays out already-computed Q8_0 data as ggml block_q8_0 blocks.
// codes holds one int8 code per element in row order, as its two's
// complement byte, and scales one float16 bit pattern d per 32 elements.
// Each 34-byte block is d (little-endian) followed by the 32 code bytes;
// element j of a block decodes to int8(code)·d. It is the inverse of
// UnpackQ8_0, and PackQ8_0 of the codes and scales QuantizeQ8_0 chose
// gives QuantizeQ8_0's blocks.
//
// len(codes) must be 32·len(scales) and len(dst) 34·len(scales); it
// panics otherwise.
func PackQ8_0(dst []byte, codes []uint8, scales []uint16) {
	nb := checkBlocks("PackQ8_0", len(codes), len(dst), Q8_0BlockSize, Q8_0BlockBytes)
	if len(scales) != nb {
		panic(fmt.Sprintf("gguf: PackQ8_0: %d elements need %d scales, got %d", len(codes), nb, len(scales)))
	}
	for i := range nb {
		y := dst[i*Q8_0BlockBytes : (i+1)*Q8_0BlockBytes]
		binary.LittleEndian.PutUint16(y, scales[i])
		copy(y[2:], codes[i*Q8_0BlockSize:(i+1)*Q8_0BlockSize])
	}
}

// UnpackQ8_0 is the inverse of PackQ8_0: it splits Q8_0 blocks into one
// int8 code byte per element (in row order) and one float16 bit pattern
// per block. len(codes) must be 32·len(scales) and len(src) 34·len(scales);
// it panics otherwise.
func UnpackQ8_0(codes []uint8, scales []uint16, src []byte) {
	nb := checkBlocks("UnpackQ8_0", len(codes), len(src), Q8_0BlockSize, Q8_0BlockBytes)
	if len(scales) != nb {
		panic(fmt.Sprintf("gguf: UnpackQ8_0: %d elements need %d scales, got %d", len(codes), nb, len(scales)))
	}
	for i := range nb {
		x := src[i*Q8_0BlockBytes : (i+1)*Q8_0BlockBytes]
		scales[i] = binary.LittleEndian.Uint16(x)
		copy(codes[i*Q8_0BlockSize:(i+1)*Q8_0BlockSize], x[2:])
	}
}

// PackQ4_0 lays out already-computed Q4_0 data as ggml block_q4_0 blocks.
// codes holds one stored code q (0..15) per element in row order, which
// decodes to (q−8)·d, and scales one float16 bit pattern d per 32
// elements. Each 18-byte block is d (little-endian) followed by 16 bytes,
// byte j holding element j in its low nibble and element j+16 in its high
// nibble. It is the inverse of UnpackQ4_0, and PackQ4_0 of the codes and
// scales QuantizeQ4_0 chose gives QuantizeQ4_0's blocks.
//
// len(codes) must be 32·len(scales) and len(dst) 18·len(scales), and every
// code must be below 16; it panics otherwise.
func PackQ4_0(dst []byte, codes []uint8, scales []uint16) {
	nb := checkBlocks("PackQ4_0", len(codes), len(dst), Q4_0BlockSize, Q4_0BlockBytes)
	if len(scales) != nb {
		panic(fmt.Sprintf("gguf: PackQ4_0: %d elements need %d scales, got %d", len(codes), nb, len(scales)))
	}
	for i := range nb {
		y := dst[i*Q4_0BlockBytes : (i+1)*Q4_0BlockBytes]
		binary.LittleEndian.PutUint16(y, scales[i])
		packSplit(y[2:], codes[i*Q4_0BlockSize:(i+1)*Q4_0BlockSize], "PackQ4_0")
	}
}

// UnpackQ4_0 is the inverse of PackQ4_0: it splits Q4_0 blocks into one
// stored code q (0..15, value (q−8)·d) per element, in row order, and one
// float16 bit pattern d per block. len(codes) must be 32·len(scales) and
// len(src) 18·len(scales); it panics otherwise.
func UnpackQ4_0(codes []uint8, scales []uint16, src []byte) {
	nb := checkBlocks("UnpackQ4_0", len(codes), len(src), Q4_0BlockSize, Q4_0BlockBytes)
	if len(scales) != nb {
		panic(fmt.Sprintf("gguf: UnpackQ4_0: %d elements need %d scales, got %d", len(codes), nb, len(scales)))
	}
	for i := range nb {
		x := src[i*Q4_0BlockBytes : (i+1)*Q4_0BlockBytes]
		scales[i] = binary.LittleEndian.Uint16(x)
		unpackSplit(codes[i*Q4_0BlockSize:(i+1)*Q4_0BlockSize], x[2:])
	}
}

// PackMXFP4 lays out already-computed MXFP4 data as ggml block_mxfp4
// blocks. codes holds one OCP E2M1 code (0..15, sign in bit 3) per element
// in row order, and scales one E8M0 byte per 32 elements (bias 127, as the
// toolkit's MX casts produce them). Each 17-byte block is the scale byte
// followed by 16 bytes, byte j holding element j in its low nibble and
// element j+16 in its high nibble (ggml's split-half order, not the
// adjacent-pair order of PyTorch and Hugging Face).
//
// len(codes) must be 32·len(scales) and len(dst) 17·len(scales), and
// every code must be below 16; it panics otherwise.
func PackMXFP4(dst []byte, codes, scales []uint8) {
	nb := checkBlocks("PackMXFP4", len(codes), len(dst), MXFP4BlockSize, MXFP4BlockBytes)
	if len(scales) != nb {
		panic(fmt.Sprintf("gguf: PackMXFP4: %d elements need %d scales, got %d", len(codes), nb, len(scales)))
	}
	for i := range nb {
		c := codes[i*MXFP4BlockSize : (i+1)*MXFP4BlockSize]
		y := dst[i*MXFP4BlockBytes : (i+1)*MXFP4BlockBytes]
		y[0] = scales[i]
		packSplit(y[1:], c, "PackMXFP4")
	}
}

// UnpackMXFP4 is the inverse of PackMXFP4: it splits MXFP4 blocks into one
// E2M1 code per element (in row order) and one E8M0 scale byte per block.
// len(codes) must be 32·len(scales) and len(src) 17·len(scales); it panics
// otherwise.
func UnpackMXFP4(codes, scales []uint8, src []byte) {
	nb := checkBlocks("UnpackMXFP4", len(codes), len(src), MXFP4BlockSize, MXFP4BlockBytes)
	if len(scales) != nb {
		panic(fmt.Sprintf("gguf: UnpackMXFP4: %d elements need %d scales, got %d", len(codes), nb, len(scales)))
	}
	for i := range nb {
		x := src[i*MXFP4BlockBytes : (i+1)*MXFP4BlockBytes]
		scales[i] = x[0]
		unpackSplit(codes[i*MXFP4BlockSize:(i+1)*MXFP4BlockSize], x[1:])
	}
}

// DequantizeMXFP4 decodes MXFP4 blocks: value = e2m1(q)·2^(e−127), exactly.
// This equals ggml's kvalues_mxfp4[q]·ggml_e8m0_to_fp32_half(e) except in
// two cases that follow the toolkit's conventions instead: code 8 decodes
// to −0 (ggml: +0), and scale byte 0xFF is NaN, so the whole block decodes
// to NaN (ggml: 2^128 times the element). len(src) must be len(dst)/32·17;
// it panics otherwise.
func DequantizeMXFP4(dst []float32, src []byte) {
	nb := checkBlocks("DequantizeMXFP4", len(dst), len(src), MXFP4BlockSize, MXFP4BlockBytes)
	for i := range nb {
		x := src[i*MXFP4BlockBytes : (i+1)*MXFP4BlockBytes]
		y := dst[i*MXFP4BlockSize : (i+1)*MXFP4BlockSize]
		s := e8m0Value[x[0]]
		for j := range 16 {
			b := x[1+j]
			y[j] = e2m1Value[b&0x0F] * s
			y[j+16] = e2m1Value[b>>4] * s
		}
	}
}

// PackNVFP4 lays out NVFP4 data as ggml block_nvfp4 blocks. codes holds
// one OCP E2M1 code (0..15) per element in row order, and scales one UE4M3
// byte per 16 elements (an E4M3 block scale with the sign bit clear). Each
// 36-byte block of 64 elements is its four scale bytes followed by 32
// bytes; sub-block s (elements 16s..16s+15) uses bytes 8s..8s+7, byte j of
// which holds sub-block element j in its low nibble and j+8 in its high
// nibble. The per-tensor FP32 scale of NVFP4 has no place in the block;
// llama.cpp stores it as a separate tensor.
//
// len(codes) must be 64·len(scales)/4 and len(dst) 36·len(scales)/4 (whole
// 64-element blocks), and every code must be below 16; it panics
// otherwise.
func PackNVFP4(dst []byte, codes, scales []uint8) {
	nb := checkBlocks("PackNVFP4", len(codes), len(dst), NVFP4BlockSize, NVFP4BlockBytes)
	if len(scales) != nb*4 {
		panic(fmt.Sprintf("gguf: PackNVFP4: %d elements need %d scales, got %d", len(codes), nb*4, len(scales)))
	}
	for i := range nb {
		c := codes[i*NVFP4BlockSize : (i+1)*NVFP4BlockSize]
		y := dst[i*NVFP4BlockBytes : (i+1)*NVFP4BlockBytes]
		copy(y[:4], scales[4*i:4*i+4])
		for s := range 4 {
			packSplit(y[4+8*s:4+8*s+8], c[16*s:16*s+16], "PackNVFP4")
		}
	}
}

// UnpackNVFP4 is the inverse of PackNVFP4: it splits NVFP4 blocks into one
// E2M1 code per element (in row order) and one UE4M3 byte per 16 elements.
// len(codes) must be 16·len(scales), a multiple of 64, and len(src)
// 36·len(codes)/64; it panics otherwise.
func UnpackNVFP4(codes, scales []uint8, src []byte) {
	nb := checkBlocks("UnpackNVFP4", len(codes), len(src), NVFP4BlockSize, NVFP4BlockBytes)
	if len(scales) != nb*4 {
		panic(fmt.Sprintf("gguf: UnpackNVFP4: %d elements need %d scales, got %d", len(codes), nb*4, len(scales)))
	}
	for i := range nb {
		x := src[i*NVFP4BlockBytes : (i+1)*NVFP4BlockBytes]
		copy(scales[4*i:4*i+4], x[:4])
		for s := range 4 {
			o := i*NVFP4BlockSize + 16*s
			unpackSplit(codes[o:o+16], x[4+8*s:4+8*s+8])
		}
	}
}

// DequantizeNVFP4 decodes NVFP4 blocks: value = e2m1(q)·scale, with the
// scale byte decoded as ggml's ggml_ue4m3_to_fp32 does (times 2, since ggml
// halves it to match its doubled E2M1 table): bytes 0x00 and 0x7F give 0,
// otherwise bits 6..3 are the exponent (bias 7) and bits 2..0 the
// mantissa, with subnormals for exponent 0. The products are exact. Code 8
// decodes to −0 (ggml: +0). len(src) must be len(dst)/64·36; it panics
// otherwise.
func DequantizeNVFP4(dst []float32, src []byte) {
	nb := checkBlocks("DequantizeNVFP4", len(dst), len(src), NVFP4BlockSize, NVFP4BlockBytes)
	for i := range nb {
		x := src[i*NVFP4BlockBytes : (i+1)*NVFP4BlockBytes]
		for s := range 4 {
			d := ue4m3GGML(x[s])
			y := dst[i*NVFP4BlockSize+16*s : i*NVFP4BlockSize+16*s+16]
			for j := range 8 {
				b := x[4+8*s+j]
				y[j] = e2m1Value[b&0x0F] * d
				y[j+8] = e2m1Value[b>>4] * d
			}
		}
	}
}

// ue4m3GGML decodes an NVFP4 scale byte as ggml does (without ggml's
// halving).
func ue4m3GGML(b byte) float32 {
	if b == 0 || b == 0x7F {
		return 0
	}
	exp := int(b>>3) & 0xF
	man := float64(b & 7)
	if exp == 0 {
		return float32(math.Ldexp(man, -9))
	}
	return float32(math.Ldexp(1+man/8, exp-7))
}

// packSplit packs 2·len(dst) codes in ggml's split-half order: byte j
// holds codes[j] (low nibble) and codes[j+len(dst)] (high nibble).
func packSplit(dst []byte, codes []uint8, fn string) {
	h := len(dst)
	for j := range h {
		lo, hi := codes[j], codes[j+h]
		if lo > 15 || hi > 15 {
			panic(fmt.Sprintf("gguf: %s: code %d is not a 4-bit code", fn, max(lo, hi)))
		}
		dst[j] = lo | hi<<4
	}
}

// unpackSplit is the inverse of packSplit.
func unpackSplit(codes []uint8, src []byte) {
	h := len(src)
	for j, b := range src {
		codes[j] = b & 0x0F
		codes[j+h] = b >> 4
	}
}

func abs32(x float32) float32 {
	return math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
}
