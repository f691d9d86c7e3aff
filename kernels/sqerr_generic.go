//go:build !amd64 || purego

package kernels

func encodeE2M1Kernel(dst []uint8, src []float32) int { return 0 }

// MulSlice sets dst[i] = src[i]·m for every i of src (len(dst) ≥
// len(src)).
func MulSlice(dst, src []float32, m float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = x * m
	}
}
