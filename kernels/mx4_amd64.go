//go:build amd64 && !purego

package kernels

import (
	"math"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The dispatchers of the E2M1 kernels (MXFP4, NVFP4, ggml MXFP4 blocks): the
// assembly of the active tier over whole groups of blocks, and the Go
// reference for the rest. The AVX-512 kernels also need AVX-512 DQ
// (VRANGEPS) and VBMI (VPERMT2B, VPMULTISHIFTQB); without them the AVX2
// kernels run.
// Their callers (the codec table's entry points) have checked the lengths.

// hasMX4AVX512 reports whether the CPU has what the AVX-512 E2M1 kernels use
// beyond the AVX-512 tier.
var hasMX4AVX512 = cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VBMI

// mx4Tier returns the tier the E2M1 kernels run on.
func mx4Tier() tier {
	switch {
	case active >= tierAVX512 && hasMX4AVX512:
		return tierAVX512
	case active >= tierAVX2:
		return tierAVX2
	}
	return tierGeneric
}

// dequantNT reports whether a dequantizer writing the n floats at dst (n > 0)
// stores them non-temporally: a large output that starts on a vector-aligned
// address (every block then does).
func dequantNT(dst []float32, t tier) bool {
	align := uintptr(32)
	if t == tierAVX512 {
		align = 64
	}
	return 4*len(dst) >= nonTemporalMin && uintptr(unsafe.Pointer(&dst[0]))%align == 0
}

// quantLen returns how many of the n elements the E2M1 quantizers of tier t
// take: whole groups of 16 (AVX-512) or 8 (AVX2) blocks of block elements,
// the blocks of one transpose tree; none on the generic tier.
func quantLen(n, block int, t tier) int {
	switch t {
	case tierAVX512:
		return n &^ (16*block - 1)
	case tierAVX2:
		return n &^ (8*block - 1)
	}
	return 0
}

func quantMXFP4(codes, scales []byte, src []float32) {
	t := mx4Tier()
	n := quantLen(len(src), mxBlock, t) // elements done by the assembly
	switch {
	case n == 0:
	case t == tierAVX512:
		quantizeMXFP4AVX512(codes[:n/2], scales[:n/mxBlock], src[:n])
	default:
		quantizeMXFP4AVX2(codes[:n/2], scales[:n/mxBlock], src[:n])
	}
	quantizeMXFP4Go(codes[n/2:], scales[n/mxBlock:], src[n:])
}

func quantMXFP4GGUF(dst []byte, src []float32) {
	t := mx4Tier()
	n := quantLen(len(src), mxBlock, t)
	m := n / mxBlock * mxfp4GGUFBlockBytes
	switch {
	case n == 0:
	case t == tierAVX512:
		quantizeMXFP4GGUFAVX512(dst[:m], src[:n])
	default:
		quantizeMXFP4GGUFAVX2(dst[:m], src[:n])
	}
	quantizeMXFP4GGUFGo(dst[m:], src[n:])
}

// nvfp4AsmScale reports whether the NVFP4 assembly handles the tensor scale
// st: +0 or positive and finite (negative, infinite and NaN tensor scales
// take the Go reference).
func nvfp4AsmScale(st float32) bool { return math.Float32bits(st) < 0x7f800000 }

func quantNVFP4(codes, scales []byte, src []float32, tensorScale float32) {
	t := mx4Tier()
	var n int
	if nvfp4AsmScale(tensorScale) {
		n = quantLen(len(src), nvfp4Block, t)
	}
	switch denom := 6 * tensorScale; {
	case n == 0:
	case t == tierAVX512:
		quantizeNVFP4AVX512(codes[:n/2], scales[:n/nvfp4Block], src[:n], tensorScale, denom)
	default:
		quantizeNVFP4AVX2(codes[:n/2], scales[:n/nvfp4Block], src[:n], tensorScale, denom)
	}
	quantizeNVFP4Go(codes[n/2:], scales[n/nvfp4Block:], src[n:], tensorScale)
}

func dequantMXFP4(dst []float32, codes, scales []byte) {
	t := mx4Tier()
	if len(dst) == 0 || t == tierGeneric {
		dequantizeMXFP4Go(dst, codes, scales)
		return
	}
	lut := &mx.e8m0
	switch nt := dequantNT(dst, t); {
	case t == tierAVX512 && nt:
		dequantizeMXFP4NTAVX512(dst, codes, scales, lut)
	case t == tierAVX512:
		dequantizeMXFP4AVX512(dst, codes, scales, lut)
	case nt:
		dequantizeMXFP4NTAVX2(dst, codes, scales, lut)
	default:
		dequantizeMXFP4AVX2(dst, codes, scales, lut)
	}
}

func dequantMXFP4GGUF(dst []float32, src []byte) {
	t := mx4Tier()
	if len(dst) == 0 || t == tierGeneric {
		dequantizeMXFP4GGUFGo(dst, src)
		return
	}
	lut := &mx.e8m0
	switch nt := dequantNT(dst, t); {
	case t == tierAVX512 && nt:
		dequantizeMXFP4GGUFNTAVX512(dst, src, lut)
	case t == tierAVX512:
		dequantizeMXFP4GGUFAVX512(dst, src, lut)
	case nt:
		dequantizeMXFP4GGUFNTAVX2(dst, src, lut)
	default:
		dequantizeMXFP4GGUFAVX2(dst, src, lut)
	}
}

// nvfp4DequantMin is the number of elements from which dequantizeNVFP4 runs
// the assembly, which first multiplies the 256 UE4M3 values by the tensor
// scale.
const nvfp4DequantMin = 512

func dequantNVFP4(dst []float32, codes, scales []byte, tensorScale float32) {
	t := mx4Tier()
	if len(dst) < nvfp4DequantMin || t == tierGeneric {
		dequantizeNVFP4Go(dst, codes, scales, tensorScale)
		return
	}
	// The block multipliers float32(s_b·s_t), as the reference computes
	// them.
	var lut [256]float32
	for c, v := range &mx.ue4m3 {
		lut[c] = v * tensorScale
	}
	switch nt := dequantNT(dst, t); {
	case t == tierAVX512 && nt:
		dequantizeNVFP4NTAVX512(dst, codes, scales, &lut)
	case t == tierAVX512:
		dequantizeNVFP4AVX512(dst, codes, scales, &lut)
	case nt:
		dequantizeNVFP4NTAVX2(dst, codes, scales, &lut)
	default:
		dequantizeNVFP4AVX2(dst, codes, scales, &lut)
	}
}
