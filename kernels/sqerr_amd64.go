//go:build amd64 && !purego

package kernels

// encodeE2M1Kernel encodes src into dst through the AVX-512 kernel up to the
// first 16 values holding a NaN (or the last whole 16) and returns how many
// it encoded: 0 below the AVX-512 tier.
func encodeE2M1Kernel(dst []uint8, src []float32) int {
	if active < tierAVX512 || len(src) < 16 {
		return 0
	}
	return encodeE2M1AVX512(dst[:len(src)], src)
}

// MulSlice sets dst[i] = src[i]·m for every i of src (len(dst) ≥
// len(src)): whole steps of 16 (8) through the AVX-512 (AVX2) kernel, the
// rest in Go.
func MulSlice(dst, src []float32, m float32) {
	dst = dst[:len(src)]
	n := 0
	switch {
	case active >= tierAVX512 && len(src) >= 16:
		n = len(src) &^ 15
		mulSliceAVX512(dst[:n], src[:n], m)
	case active >= tierAVX2 && len(src) >= 8:
		n = len(src) &^ 7
		mulSliceAVX2(dst[:n], src[:n], m)
	}
	for i, x := range src[n:] {
		dst[n+i] = x * m
	}
}
