package mask

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tensorcast-go/tensorcast/internal/kbench"
	"github.com/tensorcast-go/tensorcast/kernels"
)

// Benchmarks of the bulk operations at the sizes of the kernels' benchmark
// set: DRAM (kbench.BenchDRAM elements, streamed from memory) and L2
// (kbench.BenchL2, cache-resident). MB/s count the float32 bytes of one
// input (4 per element), as the kernels' benchmarks do, except Count's,
// which count mask bytes (one per 8 elements). BenchmarkMemRead is the
// memory-read loop to report the others against, measured in the same run.

var benchSizes = []struct {
	name string
	n    int
}{{"DRAM", kbench.BenchDRAM}, {"L2", kbench.BenchL2}}

// benchData returns the input floats and a mask of about 3 in 4 elements
// kept, in no pattern a branch predictor learns, for each size.
var benchData = sync.OnceValue(func() map[int]struct {
	x    []float32
	keep *Mask
} {
	out := map[int]struct {
		x    []float32
		keep *Mask
	}{}
	for _, sz := range benchSizes {
		r := rand.New(rand.NewPCG(1, uint64(sz.n)))
		keep := make([]bool, sz.n)
		for i := range keep {
			keep[i] = r.IntN(4) != 0
		}
		m, err := FromBools([]int{sz.n}, keep)
		if err != nil {
			panic(err)
		}
		out[sz.n] = struct {
			x    []float32
			keep *Mask
		}{kbench.BenchInput(sz.n), m}
	}
	return out
})

var sink int

func bench(b *testing.B, bytesPer func(n int) int64, prepare func(x []float32, m *Mask) func()) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			d := benchData()[sz.n]
			run := prepare(d.x, d.keep)
			run() // fault the outputs in
			b.SetBytes(bytesPer(sz.n))
			b.ResetTimer()
			for b.Loop() {
				run()
			}
		})
	}
}

func floatBytes(n int) int64 { return 4 * int64(n) }

func BenchmarkMemRead(b *testing.B) {
	bench(b, floatBytes, func(x []float32, _ *Mask) func() {
		return func() { sink += int(kbench.SumFloat32(x)) }
	})
}

// BenchmarkCount's MB/s are mask bytes.
func BenchmarkCount(b *testing.B) {
	bench(b, func(n int) int64 { return int64(n+7) / 8 }, func(_ []float32, m *Mask) func() {
		return func() { sink += m.Count() }
	})
}

func BenchmarkSelect(b *testing.B) {
	bench(b, floatBytes, func(x []float32, m *Mask) func() {
		other, dst := make([]float32, len(x)), make([]float32, len(x))
		return func() { _ = m.Select(dst, x, other) }
	})
}

func BenchmarkCompact(b *testing.B) {
	bench(b, floatBytes, func(x []float32, m *Mask) func() {
		dst := make([]float32, len(x))
		return func() { _, _ = m.Compact(dst, x) }
	})
}

func BenchmarkApply(b *testing.B) {
	bench(b, floatBytes, func(x []float32, m *Mask) func() {
		y := make([]float32, len(x))
		shape := []int{len(x)}
		return func() {
			copy(y, x) // Apply works in place; the copy is part of the figure
			_ = m.Apply(y, shape)
		}
	})
}

// BenchmarkAmaxMasked32 is the masked amax of blocks of 32 as tcast.Cast
// takes it for a keep mask: kernels.AbsMaxBlocksMasked over the mask's flags
// (unpacked once per cast, outside the loop here).
func BenchmarkAmaxMasked32(b *testing.B) {
	bench(b, floatBytes, func(x []float32, m *Mask) func() {
		keep := m.Bools()
		out := make([]uint32, len(x)/32)
		return func() { kernels.AbsMaxBlocksMasked(out, x, keep, 32) }
	})
}

// BenchmarkAmaxMasked32Unpack is BenchmarkAmaxMasked32 with the unpacking of
// the mask's bits to flags inside the loop.
func BenchmarkAmaxMasked32Unpack(b *testing.B) {
	bench(b, floatBytes, func(x []float32, m *Mask) func() {
		keep := make([]bool, len(x))
		out := make([]uint32, len(x)/32)
		return func() {
			kernels.UnpackMask(keep, m.bits)
			kernels.AbsMaxBlocksMasked(out, x, keep, 32)
		}
	})
}

// BenchmarkAmax32 is the same amax without a mask, for comparison.
func BenchmarkAmax32(b *testing.B) {
	bench(b, floatBytes, func(x []float32, _ *Mask) func() {
		out := make([]uint32, len(x)/32)
		return func() { kernels.AbsMaxBlocks(out, x, 32) }
	})
}
