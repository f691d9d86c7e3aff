//go:build !amd64 || purego

package kernels

func quantMXFP4(codes, scales []byte, src []float32) { quantizeMXFP4Go(codes, scales, src) }

func dequantMXFP4(dst []float32, codes, scales []byte) { dequantizeMXFP4Go(dst, codes, scales) }

func quantNVFP4(codes, scales []byte, src []float32, tensorScale float32) {
	quantizeNVFP4Go(codes, scales, src, tensorScale)
}

func dequantNVFP4(dst []float32, codes, scales []byte, tensorScale float32) {
	dequantizeNVFP4Go(dst, codes, scales, tensorScale)
}

func quantMXFP4GGUF(dst []byte, src []float32) { quantizeMXFP4GGUFGo(dst, src) }

func dequantMXFP4GGUF(dst []float32, src []byte) { dequantizeMXFP4GGUFGo(dst, src) }
