//go:build !amd64 || purego

package kernels

func searchMXFP8Blocks(codes []byte, scales []uint8, src []float32) {
	searchMXFP8Go(codes, scales, src)
}

func searchE4M3Tiles(codes, scales []byte, src []float32, t FP8Tiles) {
	searchE4M3Go(codes, scales, src, t)
}
