package kernels

import (
	"math"
	"testing"
)

// Benchmarks of the E2M1 kernels outside the benchmark set (Workloads), at
// the same two sizes (see benchSizes).

func BenchmarkQuantizeMXFP4GGUF(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		dst := make([]byte, len(src)/MXBlock*MXFP4GGUFBlockBytes)
		return func() { QuantizeMXFP4GGUF(dst, src) }
	})
}

func BenchmarkDequantizeMXFP4GGUF(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		blocks := make([]byte, len(src)/MXBlock*MXFP4GGUFBlockBytes)
		QuantizeMXFP4GGUF(blocks, src)
		dst := make([]float32, len(src))
		return func() { DequantizeMXFP4GGUF(dst, blocks) }
	})
}

func BenchmarkDequantizeNVFP4(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		codes, scales := make([]byte, len(src)/2), make([]byte, len(src)/NVFP4Block)
		st := math.Float32frombits(AbsMaxBits(src)) / 2688
		QuantizeNVFP4(codes, scales, src, st)
		dst := make([]float32, len(src))
		return func() { DequantizeNVFP4(dst, codes, scales, st) }
	})
}

func BenchmarkSearchMXFP4(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		codes, scales := make([]byte, len(src)/2), make([]byte, len(src)/MXBlock)
		return func() { SearchMXFP4(codes, scales, src) }
	})
}

func BenchmarkSearchNVFP4(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		codes, scales := make([]byte, len(src)/2), make([]byte, len(src)/NVFP4Block)
		st := math.Float32frombits(AbsMaxBits(src)) / 2688
		return func() { SearchNVFP4(codes, scales, src, st) }
	})
}
