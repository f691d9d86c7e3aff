package kernels

import (
	"fmt"
	"math"
)

// The ggml blocks that store one scale per sub-block as a value of a scale
// format, split into one code per element and the scale bytes as stored
// (BlockCodec.Split), and laid out again (BlockCodec.Join): Q8_0 and Q4_0
// (a float16 d, then the codes), MXFP4 (an E8M0 byte, then the codes) and
// NVFP4 (four UE4M3 bytes, then the codes of four sub-blocks of 16). The
// 4-bit codes of a (sub-)block of 2h elements sit in h bytes, byte j holding
// element j in its low nibble and element j+h in its high nibble.

// Geometry of ggml's NVFP4 blocks: four sub-blocks of 16 elements, each
// with a UE4M3 scale byte.
const (
	nvfp4GGUFBlock      = 64
	nvfp4GGUFBlockBytes = 36
	nvfp4GGUFSub        = 16
)

// checkSplit panics unless n codes are whole blocks of block elements, the
// block side holds their blockBytes bytes and the scale side scaleBytes per
// block; it returns the number of blocks.
func checkSplit(kernel string, n, block, blocks, blockBytes, scales, scaleBytes int) int {
	nb := checkBlocksOf(kernel, n, block, blocks, blockBytes)
	if scales < nb*scaleBytes {
		panic(fmt.Sprintf("kernels: %s: %d scale bytes for %d blocks", kernel, scales, nb))
	}
	return nb
}

// unpackHalves writes the 2·len(src) codes of src to codes: byte j holds
// codes[j] (low nibble) and codes[j+len(src)] (high nibble). Each code is
// xor'd with flip.
func unpackHalves(codes, src []byte, flip byte) {
	h := len(src)
	for j, b := range src {
		codes[j] = b&0x0f ^ flip
		codes[j+h] = b>>4 ^ flip
	}
}

// packHalves is the inverse of unpackHalves; it returns the codes (after
// the flip) or'd together, whose high nibble is 0 when every code fits.
func packHalves(dst, codes []byte, flip byte) byte {
	h := len(dst)
	var all byte
	for j := range dst {
		lo, hi := codes[j]^flip, codes[j+h]^flip
		all |= lo | hi
		dst[j] = lo&0x0f | hi<<4
	}
	return all
}

// splitF16 splits blocks of bb bytes, a float16 d and then the codes of 32
// elements, which codesOf writes out.
func splitF16(kernel string, codes, scales, src []byte, bb int, codesOf func(codes, x []byte)) {
	nb := checkSplit(kernel, len(codes), ggmlBlock, len(src), bb, len(scales), 2)
	for b := range nb {
		x := src[b*bb : (b+1)*bb]
		copy(scales[2*b:2*b+2], x[:2])
		codesOf(codes[b*ggmlBlock:(b+1)*ggmlBlock], x[2:])
	}
}

// joinF16 is the inverse of splitF16, with putCodes laying out a block's
// codes and returning them or'd together; it returns that of every block.
func joinF16(kernel string, dst, codes, scales []byte, bb int,
	putCodes func(y, codes []byte) byte) byte {
	nb := checkSplit(kernel, len(codes), ggmlBlock, len(dst), bb, len(scales), 2)
	var all byte
	for b := range nb {
		y := dst[b*bb : (b+1)*bb]
		copy(y[:2], scales[2*b:2*b+2])
		all |= putCodes(y[2:], codes[b*ggmlBlock:(b+1)*ggmlBlock])
	}
	return all
}

// splitQ8_0 is Q8_0's BlockCodec.Split: the int8 codes and the float16
// scale's two bytes of each block.
func splitQ8_0(codes, scales, src []byte) {
	splitF16("splitQ8_0", codes, scales, src, q8_0BlockBytes, func(c, x []byte) { copy(c, x) })
}

// joinQ8_0 is Q8_0's BlockCodec.Join; every byte is a code.
func joinQ8_0(dst, codes, scales []byte) bool {
	joinF16("joinQ8_0", dst, codes, scales, q8_0BlockBytes, func(y, c []byte) byte {
		copy(y, c)
		return 0
	})
	return true
}

// splitQ4_0 is Q4_0's BlockCodec.Split: a stored code q (0..15, value
// (q−8)·d) becomes q−8 in 4-bit two's complement, q^8.
func splitQ4_0(codes, scales, src []byte) {
	splitF16("splitQ4_0", codes, scales, src, q4_0BlockBytes, func(c, x []byte) { unpackHalves(c, x, 8) })
}

// joinQ4_0 is Q4_0's BlockCodec.Join.
func joinQ4_0(dst, codes, scales []byte) bool {
	return joinF16("joinQ4_0", dst, codes, scales, q4_0BlockBytes, func(y, c []byte) byte {
		return packHalves(y, c, 8)
	}) < 16
}

// splitMXFP4GGUF is MXFP4's BlockCodec.Split.
func splitMXFP4GGUF(codes, scales, src []byte) { unpackMXFP4GGUF(codes, scales, src) }

// joinMXFP4GGUF is MXFP4's BlockCodec.Join.
func joinMXFP4GGUF(dst, codes, scales []byte) bool { return packMXFP4GGUF(dst, codes, scales) }

// splitNVFP4GGUF is NVFP4's BlockCodec.Split: the E2M1 codes and the four
// UE4M3 scale bytes of each block.
func splitNVFP4GGUF(codes, scales, src []byte) {
	nb := checkSplit("splitNVFP4GGUF", len(codes), nvfp4GGUFBlock, len(src), nvfp4GGUFBlockBytes,
		len(scales), 4)
	for b := range nb {
		x := src[b*nvfp4GGUFBlockBytes : (b+1)*nvfp4GGUFBlockBytes]
		copy(scales[4*b:4*b+4], x[:4])
		for s := range 4 {
			o := b*nvfp4GGUFBlock + nvfp4GGUFSub*s
			unpackHalves(codes[o:o+nvfp4GGUFSub], x[4+8*s:12+8*s], 0)
		}
	}
}

// joinNVFP4GGUF is NVFP4's BlockCodec.Join.
func joinNVFP4GGUF(dst, codes, scales []byte) bool {
	nb := checkSplit("joinNVFP4GGUF", len(codes), nvfp4GGUFBlock, len(dst), nvfp4GGUFBlockBytes,
		len(scales), 4)
	var all byte
	for b := range nb {
		y := dst[b*nvfp4GGUFBlockBytes : (b+1)*nvfp4GGUFBlockBytes]
		copy(y[:4], scales[4*b:4*b+4])
		for s := range 4 {
			o := b*nvfp4GGUFBlock + nvfp4GGUFSub*s
			all |= packHalves(y[4+8*s:12+8*s], codes[o:o+nvfp4GGUFSub], 0)
		}
	}
	return all < 16
}

// dequantizeNVFP4GGUF decodes ggml NVFP4 blocks: value = e2m1(q)·scale,
// with the scale byte decoded as ggml's ggml_ue4m3_to_fp32 does (times 2,
// since ggml halves it to match its doubled E2M1 table): bytes 0x00 and
// 0x7F give 0, otherwise bits 6..3 are the exponent (bias 7) and bits 2..0
// the mantissa, with subnormals for exponent 0. The products are exact.
// Code 8 decodes to −0 (ggml: +0).
func dequantizeNVFP4GGUF(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeNVFP4GGUF", len(dst), nvfp4GGUFBlock, len(src), nvfp4GGUFBlockBytes)
	for b := range nb {
		x := src[b*nvfp4GGUFBlockBytes : (b+1)*nvfp4GGUFBlockBytes]
		for s := range 4 {
			d := ue4m3GGML(x[s])
			y := dst[b*nvfp4GGUFBlock+nvfp4GGUFSub*s : b*nvfp4GGUFBlock+nvfp4GGUFSub*(s+1)]
			for j := range 8 {
				c := x[4+8*s+j]
				y[j] = mx.e2m1[c&0x0f] * d
				y[j+8] = mx.e2m1[c>>4] * d
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
