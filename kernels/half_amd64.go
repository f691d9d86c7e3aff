//go:build amd64 && !purego

package kernels

import "unsafe"

// The dispatchers of the float16 and bfloat16 conversions: the assembly of the
// active tier over whole vectors (16 elements for AVX-512, 8 for AVX2, 16 for
// the AVX2 bfloat16 encoder), and the Go reference for the rest. The exported
// callers make len(dst) = len(src) (in elements).

// nonTemporalMin is the output size in bytes from which the conversions store
// with non-temporal hints. Those bypass the caches: about a third faster when
// the output streams to memory, several times slower when it would have fit in
// a cache, so only outputs of a typical last-level cache's size or more use
// them. A variable so that tests can run the non-temporal kernels on small
// slices.
var nonTemporalMin = 32 << 20

// ntHead reports whether to write the n elements of size bytes at p with
// non-temporal stores and, if so, how many leading elements to leave to the
// ordinary path so that the rest starts on a 64-byte boundary.
func ntHead(p unsafe.Pointer, n, size int) (head int, nt bool) {
	if n*size < nonTemporalMin || active == tierGeneric {
		return 0, false
	}
	return min(int(-uintptr(p)&63)/size, n), true
}

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
	if len(dst) == 0 {
		return
	}
	h, nt := ntHead(unsafe.Pointer(&dst[0]), len(dst), 4)
	f16ToF32Go(dst[:h], src[:h])
	dst, src = dst[h:], src[h:]
	m := vecLen(len(dst), 16, 8)
	switch {
	case m == 0:
	case active >= tierAVX512 && nt:
		f16ToF32NTAVX512(dst[:m], src[:m])
	case active >= tierAVX512:
		f16ToF32AVX512(dst[:m], src[:m])
	case nt:
		f16ToF32NTAVX2(dst[:m], src[:m])
	default:
		f16ToF32AVX2(dst[:m], src[:m])
	}
	f16ToF32Go(dst[m:], src[m:])
}

func bf16ToF32(dst []float32, src []uint16) {
	if len(dst) == 0 {
		return
	}
	h, nt := ntHead(unsafe.Pointer(&dst[0]), len(dst), 4)
	bf16ToF32Go(dst[:h], src[:h])
	dst, src = dst[h:], src[h:]
	m := vecLen(len(dst), 16, 8)
	switch {
	case m == 0:
	case active >= tierAVX512 && nt:
		bf16ToF32NTAVX512(dst[:m], src[:m])
	case active >= tierAVX512:
		bf16ToF32AVX512(dst[:m], src[:m])
	case nt:
		bf16ToF32NTAVX2(dst[:m], src[:m])
	default:
		bf16ToF32AVX2(dst[:m], src[:m])
	}
	bf16ToF32Go(dst[m:], src[m:])
}

func f16BytesToF32(dst []float32, src []byte) {
	if len(dst) == 0 {
		return
	}
	h, nt := ntHead(unsafe.Pointer(&dst[0]), len(dst), 4)
	f16BytesToF32Go(dst[:h], src[:2*h])
	dst, src = dst[h:], src[2*h:]
	m := vecLen(len(dst), 16, 8)
	switch {
	case m == 0:
	case active >= tierAVX512 && nt:
		f16BytesToF32NTAVX512(dst[:m], src[:2*m])
	case active >= tierAVX512:
		f16BytesToF32AVX512(dst[:m], src[:2*m])
	case nt:
		f16BytesToF32NTAVX2(dst[:m], src[:2*m])
	default:
		f16BytesToF32AVX2(dst[:m], src[:2*m])
	}
	f16BytesToF32Go(dst[m:], src[2*m:])
}

func bf16BytesToF32(dst []float32, src []byte) {
	if len(dst) == 0 {
		return
	}
	h, nt := ntHead(unsafe.Pointer(&dst[0]), len(dst), 4)
	bf16BytesToF32Go(dst[:h], src[:2*h])
	dst, src = dst[h:], src[2*h:]
	m := vecLen(len(dst), 16, 8)
	switch {
	case m == 0:
	case active >= tierAVX512 && nt:
		bf16BytesToF32NTAVX512(dst[:m], src[:2*m])
	case active >= tierAVX512:
		bf16BytesToF32AVX512(dst[:m], src[:2*m])
	case nt:
		bf16BytesToF32NTAVX2(dst[:m], src[:2*m])
	default:
		bf16BytesToF32AVX2(dst[:m], src[:2*m])
	}
	bf16BytesToF32Go(dst[m:], src[2*m:])
}

func f32ToBF16(dst []uint16, src []float32, saturate bool) {
	if len(dst) == 0 {
		return
	}
	h, nt := ntHead(unsafe.Pointer(&dst[0]), len(dst), 2)
	f32ToBF16Go(dst[:h], src[:h], saturate)
	dst, src = dst[h:], src[h:]
	m := vecLen(len(dst), 16, 16)
	switch {
	case m == 0:
	case active >= tierAVX512 && nt:
		f32ToBF16NTAVX512(dst[:m], src[:m], saturate)
	case active >= tierAVX512:
		f32ToBF16AVX512(dst[:m], src[:m], saturate)
	case nt:
		f32ToBF16NTAVX2(dst[:m], src[:m], saturate)
	default:
		f32ToBF16AVX2(dst[:m], src[:m], saturate)
	}
	f32ToBF16Go(dst[m:], src[m:], saturate)
}

func f32ToF16(dst []uint16, src []float32, saturate bool) {
	if len(dst) == 0 {
		return
	}
	h, nt := ntHead(unsafe.Pointer(&dst[0]), len(dst), 2)
	f32ToF16Go(dst[:h], src[:h], saturate)
	dst, src = dst[h:], src[h:]
	m := vecLen(len(dst), 16, 8)
	switch {
	case m == 0:
	case active >= tierAVX512 && nt:
		f32ToF16NTAVX512(dst[:m], src[:m], saturate)
	case active >= tierAVX512:
		f32ToF16AVX512(dst[:m], src[:m], saturate)
	case nt:
		f32ToF16NTAVX2(dst[:m], src[:m], saturate)
	default:
		f32ToF16AVX2(dst[:m], src[:m], saturate)
	}
	f32ToF16Go(dst[m:], src[m:], saturate)
}
