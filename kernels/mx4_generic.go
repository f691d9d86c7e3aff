//go:build !amd64 || purego

package kernels

func quantizeMXFP4(codes, scales []byte, src []float32) { quantizeMXFP4Go(codes, scales, src) }

func dequantizeMXFP4(dst []float32, codes, scales []byte) { dequantizeMXFP4Go(dst, codes, scales) }

func quantizeNVFP4(codes, scales []byte, src []float32, tensorScale float32) {
	quantizeNVFP4Go(codes, scales, src, tensorScale)
}

func dequantizeNVFP4(dst []float32, codes, scales []byte, tensorScale float32) {
	dequantizeNVFP4Go(dst, codes, scales, tensorScale)
}

func quantizeMXFP4GGUF(dst []byte, src []float32) { quantizeMXFP4GGUFGo(dst, src) }

func dequantizeMXFP4GGUF(dst []float32, src []byte) { dequantizeMXFP4GGUFGo(dst, src) }
