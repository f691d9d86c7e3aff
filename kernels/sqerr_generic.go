//go:build !amd64 || purego

package kernels

func sqErrE2M1Blocks(errs []float64, x []float32, blockLen, nb, nc int, mul, dmul []float32) {
	sqErrE2M1BlocksGo(errs, x, blockLen, nb, nc, 0, mul, dmul)
}

func encodeE2M1Kernel(dst []uint8, src []float32) int { return 0 }

// MulSlice sets dst[i] = src[i]·m for every i of src (len(dst) ≥
// len(src)).
func MulSlice(dst, src []float32, m float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = x * m
	}
}
