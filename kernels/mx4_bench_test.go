package kernels

import (
	"math"
	"testing"
)

// Benchmarks of the E2M1 kernels outside the benchmark set (kbench), at
// the same two sizes (see benchSizes).

func BenchmarkQuantizeMXFP4GGUF(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		dst := make([]byte, len(src)/mxBlock*mxfp4GGUFBlockBytes)
		return func() { quantizeMXFP4GGUF(dst, src) }
	})
}

func BenchmarkDequantizeMXFP4GGUF(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		blocks := make([]byte, len(src)/mxBlock*mxfp4GGUFBlockBytes)
		quantizeMXFP4GGUF(blocks, src)
		dst := make([]float32, len(src))
		return func() { dequantizeMXFP4GGUF(dst, blocks) }
	})
}

func BenchmarkDequantizeNVFP4(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		codes, scales := make([]byte, len(src)/2), make([]byte, len(src)/nvfp4Block)
		st := math.Float32frombits(AbsMaxBits(src)) / 2688
		quantizeNVFP4(codes, scales, src, st)
		dst := make([]float32, len(src))
		return func() { dequantizeNVFP4(dst, codes, scales, st) }
	})
}

func BenchmarkSearchMXFP4(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		codes, scales := make([]byte, len(src)/2), make([]byte, len(src)/mxBlock)
		return func() { searchMXFP4(codes, scales, src) }
	})
}

func BenchmarkSearchNVFP4(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		codes, scales := make([]byte, len(src)/2), make([]byte, len(src)/nvfp4Block)
		st := math.Float32frombits(AbsMaxBits(src)) / 2688
		return func() { searchNVFP4(codes, scales, src, st) }
	})
}
