//go:build amd64 && !purego

package kernels

// The dispatchers of the float16 and bfloat16 conversions: the assembly of the
// active tier over whole vectors (16 elements for AVX-512, 8 for AVX2, 16 for
// the AVX2 bfloat16 encoder), and the Go reference for the rest. The exported
// callers make len(dst) = len(src) (in elements).

// vecLen returns n rounded down to whole vectors of the active tier: w512
// elements for AVX-512, w256 for AVX2, none for the generic tier.
func vecLen(n, w512, w256 int) int {
	switch active {
	case tierAVX512:
		return n &^ (w512 - 1)
	case tierAVX2:
		return n &^ (w256 - 1)
	}
	return 0
}

func f16ToF32(dst []float32, src []uint16) {
	m := vecLen(len(dst), 16, 8)
	switch {
	case m == 0:
	case active >= tierAVX512:
		f16ToF32AVX512(dst[:m], src[:m])
	default:
		f16ToF32AVX2(dst[:m], src[:m])
	}
	f16ToF32Go(dst[m:], src[m:])
}

func bf16ToF32(dst []float32, src []uint16) {
	m := vecLen(len(dst), 16, 8)
	switch {
	case m == 0:
	case active >= tierAVX512:
		bf16ToF32AVX512(dst[:m], src[:m])
	default:
		bf16ToF32AVX2(dst[:m], src[:m])
	}
	bf16ToF32Go(dst[m:], src[m:])
}

func f16BytesToF32(dst []float32, src []byte) {
	m := vecLen(len(dst), 16, 8)
	switch {
	case m == 0:
	case active >= tierAVX512:
		f16BytesToF32AVX512(dst[:m], src[:2*m])
	default:
		f16BytesToF32AVX2(dst[:m], src[:2*m])
	}
	f16BytesToF32Go(dst[m:], src[2*m:])
}

func bf16BytesToF32(dst []float32, src []byte) {
	m := vecLen(len(dst), 16, 8)
	switch {
	case m == 0:
	case active >= tierAVX512:
		bf16BytesToF32AVX512(dst[:m], src[:2*m])
	default:
		bf16BytesToF32AVX2(dst[:m], src[:2*m])
	}
	bf16BytesToF32Go(dst[m:], src[2*m:])
}

func f32ToBF16(dst []uint16, src []float32, saturate bool) {
	m := vecLen(len(dst), 16, 16)
	switch {
	case m == 0:
	case active >= tierAVX512:
		f32ToBF16AVX512(dst[:m], src[:m], saturate)
	default:
		f32ToBF16AVX2(dst[:m], src[:m], saturate)
	}
	f32ToBF16Go(dst[m:], src[m:], saturate)
}

func f32ToF16(dst []uint16, src []float32, saturate bool) {
	m := vecLen(len(dst), 16, 8)
	switch {
	case m == 0:
	case active >= tierAVX512:
		f32ToF16AVX512(dst[:m], src[:m], saturate)
	default:
		f32ToF16AVX2(dst[:m], src[:m], saturate)
	}
	f32ToF16Go(dst[m:], src[m:], saturate)
}
