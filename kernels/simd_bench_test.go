package kernels

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// Benchmarks of the SIMD kernels, each at two sizes: DRAM (64 Mi floats,
// streamed from memory) and L2 (64 Ki floats, cache-resident), with
// b.SetBytes the float32 bytes processed. BenchmarkMemRead (of the
// benchmark set, workload_bench_test.go) is the memory-read baseline at the
// same sizes and on the same input: report each figure as a ratio to it,
// measured in the same run. They run on the active tier (TCAST_KERNELS caps it).

var simdBenchSizes = []struct {
	name string
	n    int
}{{"DRAM", 64 << 20}, {"L2", 64 << 10}}

// weightsInput returns n floats shaped like weights: normal, times
// 2^((i/32 mod 16) − 8) so that neighbouring blocks have different scales
// (the input of the benchmark set, kbench.BenchInput).
func weightsInput(n int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Ldexp(1, (i/32)%16-8))
	}
	return x
}

// simdBenchInput returns the inputs of the two sizes.
var simdBenchInput = sync.OnceValues(func() ([]float32, []float32) {
	return weightsInput(simdBenchSizes[0].n), weightsInput(simdBenchSizes[1].n)
})

// benchSizes runs prepare(src) for each size and times the function it returns.
func benchSizes(b *testing.B, prepare func(src []float32) func()) {
	for i, sz := range simdBenchSizes {
		b.Run(sz.name, func(b *testing.B) {
			dram, l2 := simdBenchInput()
			src := [][]float32{dram, l2}[i]
			run := prepare(src)
			run() // fault the output pages in before timing
			b.SetBytes(int64(4 * len(src)))
			b.ResetTimer()
			for b.Loop() {
				run()
			}
		})
	}
}

var simdSink uint64

func BenchmarkAbsMaxBlocks32(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		dst := make([]uint32, len(src)/32)
		return func() { AbsMaxBlocks(dst, src, 32) }
	})
}

func BenchmarkAbsMaxBlocks16(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		dst := make([]uint32, len(src)/16)
		return func() { AbsMaxBlocks(dst, src, 16) }
	})
}

// BenchmarkAbsMaxBits32 calls AbsMaxBits once per block of 32, as callers
// that walk blocks themselves do.
func BenchmarkAbsMaxBits32(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		dst := make([]uint32, len(src)/32)
		return func() {
			for i := range dst {
				dst[i] = AbsMaxBits(src[32*i : 32*i+32])
			}
		}
	})
}

func BenchmarkAbsMaxBits(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		return func() { simdSink += uint64(AbsMaxBits(src)) }
	})
}

func BenchmarkFloat32ToBFloat16(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		dst := make([]uint16, len(src))
		return func() { Float32ToBFloat16(dst, src, true) }
	})
}

func BenchmarkFloat32ToFloat16(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		dst := make([]uint16, len(src))
		return func() { Float32ToFloat16(dst, src, true) }
	})
}

func BenchmarkBFloat16ToFloat32(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		codes := make([]uint16, len(src))
		Float32ToBFloat16(codes, src, true)
		dst := make([]float32, len(src))
		return func() { BFloat16ToFloat32(dst, codes) }
	})
}

func BenchmarkFloat16ToFloat32(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		codes := make([]uint16, len(src))
		Float32ToFloat16(codes, src, true)
		dst := make([]float32, len(src))
		return func() { Float16ToFloat32(dst, codes) }
	})
}
