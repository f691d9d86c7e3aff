//go:build !amd64 || purego

package kernels

func searchMXFP4Blocks(codes, scales []byte, src []float32) { searchMXFP4Go(codes, scales, src) }

func searchNVFP4Blocks(codes, scales []byte, src []float32, tensorScale float32) {
	searchNVFP4Go(codes, scales, src, tensorScale)
}
