//go:build amd64 && !purego

package kernels

import "unsafe"

// The dispatchers of the MX byte kernels (mxbyte.go): the assembly of the
// active tier over whole groups of blocks (16 for AVX-512, 8 for AVX2, the
// quantizers' transpose tree) or every block (the dequantizers), and the Go
// reference for the rest. Their callers (the codec table's entry points)
// check the lengths.

// quantGroup returns how many of the first nb blocks the active tier's
// quantizers take: whole groups of 16 (AVX-512) or 8 (AVX2) blocks.
func quantGroup(nb int) int { return vecLen(nb, 16, 8) }

// quantMX runs a quantizer of the active tier (avx512, avx2) over the
// leading groups of blocks and ref over the rest; per is the number of code
// bytes per block.
func quantMX(codes []byte, scales []uint8, src []float32, per int,
	avx512, avx2, ref func(codes []byte, scales []uint8, src []float32)) {
	nb := len(src) / mxBlock
	g := quantGroup(nb)
	switch {
	case g == 0:
	case active >= tierAVX512:
		avx512(codes[:g*per], scales[:g], src[:g*mxBlock])
	default:
		avx2(codes[:g*per], scales[:g], src[:g*mxBlock])
	}
	ref(codes[g*per:], scales[g:nb], src[g*mxBlock:])
}

func quantMXFP8(codes []byte, scales []uint8, src []float32) {
	quantMX(codes, scales, src, mxBlock, quantMXFP8E4M3AVX512, quantMXFP8E4M3AVX2, quantizeMXFP8Go)
}

func quantMXFP8E5M2(codes []byte, scales []uint8, src []float32) {
	quantMX(codes, scales, src, mxBlock, quantMXFP8E5M2AVX512, quantMXFP8E5M2AVX2, quantizeMXFP8E5M2Go)
}

func quantMXINT8(codes []byte, scales []uint8, src []float32) {
	quantMX(codes, scales, src, mxBlock, quantMXINT8AVX512, quantMXINT8AVX2, quantizeMXINT8Go)
}

func quantizeMXFP6(codes []byte, scales []uint8, src []float32, e *mxElem) {
	ref := func(codes []byte, scales []uint8, src []float32) { quantMXFP6Go(codes, scales, src, e) }
	if e == mxE2M3 {
		quantMX(codes, scales, src, mxfp6Bytes, quantMXFP6E2M3AVX512, quantMXFP6E2M3AVX2, ref)
		return
	}
	quantMX(codes, scales, src, mxfp6Bytes, quantMXFP6E3M2AVX512, quantMXFP6E3M2AVX2, ref)
}

// dequantKernels are the four assembly variants of a dequantizer.
type dequantKernels struct {
	avx512, avx512NT, avx2, avx2NT func(dst []float32, codes []byte, scales []uint8)
}

// dequantMX runs the dequantizer of the active tier over every block of
// dst, with non-temporal stores when dst is large and 64-byte aligned, or
// ref on the generic tier.
func dequantMX(dst []float32, codes []byte, scales []uint8, per int, k *dequantKernels,
	ref func(dst []float32, codes []byte, scales []uint8)) {
	nb := len(dst) / mxBlock
	if nb == 0 || active == tierGeneric {
		ref(dst, codes, scales)
		return
	}
	codes, scales = codes[:nb*per], scales[:nb]
	nt := len(dst)*4 >= nonTemporalMin && uintptr(unsafe.Pointer(&dst[0]))%64 == 0
	switch {
	case active >= tierAVX512 && nt:
		k.avx512NT(dst, codes, scales)
	case active >= tierAVX512:
		k.avx512(dst, codes, scales)
	case nt:
		k.avx2NT(dst, codes, scales)
	default:
		k.avx2(dst, codes, scales)
	}
}

var (
	dequantE4M3 = dequantKernels{dequantMXFP8E4M3AVX512, dequantMXFP8E4M3NTAVX512, dequantMXFP8E4M3AVX2, dequantMXFP8E4M3NTAVX2}
	dequantE5M2 = dequantKernels{dequantMXFP8E5M2AVX512, dequantMXFP8E5M2NTAVX512, dequantMXFP8E5M2AVX2, dequantMXFP8E5M2NTAVX2}
	dequantE2M3 = dequantKernels{dequantMXFP6E2M3AVX512, dequantMXFP6E2M3NTAVX512, dequantMXFP6E2M3AVX2, dequantMXFP6E2M3NTAVX2}
	dequantE3M2 = dequantKernels{dequantMXFP6E3M2AVX512, dequantMXFP6E3M2NTAVX512, dequantMXFP6E3M2AVX2, dequantMXFP6E3M2NTAVX2}
	dequantQ16  = dequantKernels{dequantMXINT8AVX512, dequantMXINT8NTAVX512, dequantMXINT8AVX2, dequantMXINT8NTAVX2}
)

func dequantMXFP8(dst []float32, codes []byte, scales []uint8) {
	dequantMX(dst, codes, scales, mxBlock, &dequantE4M3, dequantizeMXFP8Go)
}

func dequantMXFP8E5M2(dst []float32, codes []byte, scales []uint8) {
	dequantMX(dst, codes, scales, mxBlock, &dequantE5M2, dequantizeMXFP8E5M2Go)
}

func dequantMXINT8(dst []float32, codes []byte, scales []uint8) {
	dequantMX(dst, codes, scales, mxBlock, &dequantQ16, dequantizeMXINT8Go)
}

func dequantizeMXFP6(dst []float32, codes []byte, scales []uint8, e *mxElem) {
	ref := func(dst []float32, codes []byte, scales []uint8) { dequantMXFP6Go(dst, codes, scales, e) }
	if e == mxE2M3 {
		dequantMX(dst, codes, scales, mxfp6Bytes, &dequantE2M3, ref)
		return
	}
	dequantMX(dst, codes, scales, mxfp6Bytes, &dequantE3M2, ref)
}

// encodeFloat8 encodes src into dst (as long) rounding to nearest even when
// f is e4m3fn, e5m2, e2m3 or e3m2 (one code per byte) and the active tier
// has their kernels, and reports whether it did.
func encodeFloat8(f *FloatCodec, dst []uint8, src []float32, saturate bool) bool {
	var avx512, avx2 func(dst []byte, src []float32, saturate bool)
	switch {
	case active == tierGeneric:
		return false
	case *f == e4m3fnCodec:
		avx512, avx2 = encodeE4M3AVX512, encodeE4M3AVX2
	case *f == e5m2Codec:
		avx512, avx2 = encodeE5M2AVX512, encodeE5M2AVX2
	case *f == e2m3Codec:
		avx512, avx2 = encodeE2M3AVX512, encodeE2M3AVX2
	case *f == e3m2Codec:
		avx512, avx2 = encodeE3M2AVX512, encodeE3M2AVX2
	default:
		return false
	}
	m := vecLen(len(src), 16, 16)
	switch {
	case m == 0:
	case active >= tierAVX512:
		avx512(dst[:m], src[:m], saturate)
	default:
		avx2(dst[:m], src[:m], saturate)
	}
	encodeFloatRNE(f, dst[m:len(src)], src[m:], saturate)
	return true
}

// decodeFloat8 decodes src into dst (as long) when f is e4m3fn, e5m2, e2m3
// or e3m2 and the active tier has their kernels, and reports whether it
// did; lut is the format's table, for the elements before and after the
// vectors.
func decodeFloat8(f *FloatCodec, dst []float32, src []uint8, lut *[256]float32) bool {
	var k [4]func(dst []float32, src []byte) // AVX-512, its NT variant, AVX2, its NT variant
	switch {
	case active == tierGeneric:
		return false
	case *f == e4m3fnCodec:
		k = [4]func(dst []float32, src []byte){decodeE4M3AVX512, decodeE4M3NTAVX512, decodeE4M3AVX2, decodeE4M3NTAVX2}
	case *f == e5m2Codec:
		k = [4]func(dst []float32, src []byte){decodeE5M2AVX512, decodeE5M2NTAVX512, decodeE5M2AVX2, decodeE5M2NTAVX2}
	case *f == e2m3Codec:
		k = [4]func(dst []float32, src []byte){decodeE2M3AVX512, decodeE2M3NTAVX512, decodeE2M3AVX2, decodeE2M3NTAVX2}
	case *f == e3m2Codec:
		k = [4]func(dst []float32, src []byte){decodeE3M2AVX512, decodeE3M2NTAVX512, decodeE3M2AVX2, decodeE3M2NTAVX2}
	default:
		return false
	}
	dst = dst[:len(src)]
	if len(dst) == 0 {
		return true
	}
	h, nt := ntHead(unsafe.Pointer(&dst[0]), len(dst), 4)
	DecodeLUT8(dst[:h], src[:h], lut)
	dst, src = dst[h:], src[h:]
	m := vecLen(len(dst), 16, 8)
	switch {
	case m == 0:
	case active >= tierAVX512 && nt:
		k[1](dst[:m], src[:m])
	case active >= tierAVX512:
		k[0](dst[:m], src[:m])
	case nt:
		k[3](dst[:m], src[:m])
	default:
		k[2](dst[:m], src[:m])
	}
	DecodeLUT8(dst[m:], src[m:], lut)
	return true
}
