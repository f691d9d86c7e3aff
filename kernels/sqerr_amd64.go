//go:build amd64 && !purego

package kernels

// sqErrMaxBytes bounds the gather offsets of sqErrE2M1x3AVX512 (32-bit
// byte offsets of 8 blocks).
const sqErrMaxBytes = 1 << 31

// sqErrE2M1Blocks runs whole groups of 16 blocks of 3 candidates through
// the AVX-512 kernel, a group of 8 left over through its 8-lane version and
// the rest through the Go reference.
func sqErrE2M1Blocks(errs []float64, x []float32, blockLen, nb, nc int, mul, dmul []float32) {
	from := 0
	if active >= tierAVX512 && nc == 3 && nb >= 8 && 16*blockLen*4 < sqErrMaxBytes {
		if g := nb / 16; g > 0 {
			sqErrE2M1x3x16AVX512(errs, x, mul, dmul, blockLen, nb, g)
			from = 16 * g
		}
		if nb-from >= 8 {
			// The 8-lane kernel on blocks from.. (its slices start there;
			// the candidate stride stays nb).
			sqErrE2M1x3AVX512(errs[from:], x[from*blockLen:], mul[from:], dmul[from:], blockLen, nb, 1)
			from += 8
		}
	}
	sqErrE2M1BlocksGo(errs, x, blockLen, nb, nc, from, mul, dmul)
}

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
// len(src)): whole steps of 16 through the AVX-512 kernel, the rest in Go.
func MulSlice(dst, src []float32, m float32) {
	dst = dst[:len(src)]
	n := 0
	if active >= tierAVX512 && len(src) >= 16 {
		n = len(src) &^ 15
		mulSliceAVX512(dst[:n], src[:n], m)
	}
	for i, x := range src[n:] {
		dst[n+i] = x * m
	}
}
