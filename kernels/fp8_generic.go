//go:build !amd64 || purego

package kernels

func quantE4M3Tiles(codes, scales []byte, src []float32, t FP8Tiles) {
	quantE4M3Go(codes, scales, src, t)
}

func dequantE4M3Tiles(dst []float32, codes, scales []byte, t FP8Tiles) {
	dequantE4M3Go(dst, codes, scales, t)
}
