package kernels_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tensorcast-go/tensorcast/internal/kbench"
)

// The benchmarks of the benchmark set (kbench.Workloads) run at two sizes,
// each a sub-benchmark: DRAM (kbench.BenchDRAM floats, streamed from memory
// as a real conversion is) and L2 (kbench.BenchL2 floats, cache-resident). The ratio of any benchmark's MB/s to
// MemRead's of the same size, measured in the same run, is the figure to
// report. Inputs are made on first use, so `go test` without -bench
// allocates none of them.
var (
	dramInput = sync.OnceValue(func() []float32 { return kbench.BenchInput(kbench.BenchDRAM) })
	l2Input   = sync.OnceValue(func() []float32 { return kbench.BenchInput(kbench.BenchL2) })
)

func benchWorkload(b *testing.B, name string) {
	var w *kbench.Workload
	for _, x := range kbench.Workloads() {
		if x.Name == name {
			w = &x
		}
	}
	if w == nil {
		b.Fatalf("no workload %s", name)
	}
	for _, size := range []struct {
		name  string
		input func() []float32
	}{{"DRAM", dramInput}, {"L2", l2Input}} {
		b.Run(size.name, func(b *testing.B) {
			src := size.input()
			run := w.Prepare(src)
			run() // page in the outputs
			b.SetBytes(int64(4 * len(src)))
			for b.Loop() {
				run()
			}
		})
	}
}

func BenchmarkMemRead(b *testing.B)         { benchWorkload(b, "MemRead") }
func BenchmarkAmax32(b *testing.B)          { benchWorkload(b, "Amax32") }
func BenchmarkQuantizeMXFP4(b *testing.B)   { benchWorkload(b, "QuantizeMXFP4") }
func BenchmarkDequantizeMXFP4(b *testing.B) { benchWorkload(b, "DequantizeMXFP4") }
func BenchmarkQuantizeMXFP8(b *testing.B)   { benchWorkload(b, "QuantizeMXFP8") }
func BenchmarkQuantizeNVFP4(b *testing.B)   { benchWorkload(b, "QuantizeNVFP4") }
func BenchmarkQuantizeMXINT8(b *testing.B)  { benchWorkload(b, "QuantizeMXINT8") }
func BenchmarkQuantizeQ8_0(b *testing.B)    { benchWorkload(b, "QuantizeQ8_0") }
func BenchmarkQuantizeInt8G32(b *testing.B) { benchWorkload(b, "QuantizeInt8G32") }
func BenchmarkSelectNM24(b *testing.B)      { benchWorkload(b, "SelectNM24") }
func BenchmarkSelectNM48(b *testing.B)      { benchWorkload(b, "SelectNM48") }
func BenchmarkEncodeNF4(b *testing.B)       { benchWorkload(b, "EncodeNF4") }
func BenchmarkSelectCodebook2(b *testing.B) { benchWorkload(b, "SelectCodebook2") }
func BenchmarkSelectCodebook16(b *testing.B) {
	benchWorkload(b, "SelectCodebook16")
}
func BenchmarkDecodeCodebook16(b *testing.B) { benchWorkload(b, "DecodeCodebook16") }
func BenchmarkQuantizeInt4G128(b *testing.B) {
	benchWorkload(b, "QuantizeInt4G128")
}
func BenchmarkQuantizeQ4_K(b *testing.B)   { benchWorkload(b, "QuantizeQ4_K") }
func BenchmarkQuantizeQ5_K(b *testing.B)   { benchWorkload(b, "QuantizeQ5_K") }
func BenchmarkQuantizeQ6_K(b *testing.B)   { benchWorkload(b, "QuantizeQ6_K") }
func BenchmarkQuantizeQ3_K(b *testing.B)   { benchWorkload(b, "QuantizeQ3_K") }
func BenchmarkQuantizeQ2_K(b *testing.B)   { benchWorkload(b, "QuantizeQ2_K") }
func BenchmarkQuantizeIQ4_XS(b *testing.B) { benchWorkload(b, "QuantizeIQ4_XS") }
func BenchmarkQuantizeIQ4_NL(b *testing.B) { benchWorkload(b, "QuantizeIQ4_NL") }
func BenchmarkDequantizeQ4_K(b *testing.B) { benchWorkload(b, "DequantizeQ4_K") }
func BenchmarkDequantizeQ5_K(b *testing.B) { benchWorkload(b, "DequantizeQ5_K") }
func BenchmarkDequantizeQ6_K(b *testing.B) { benchWorkload(b, "DequantizeQ6_K") }

func BenchmarkDequantizeIQ4_XS(b *testing.B) { benchWorkload(b, "DequantizeIQ4_XS") }
func BenchmarkF32ToF16(b *testing.B)         { benchWorkload(b, "F32ToF16") }
func BenchmarkF32ToBF16(b *testing.B)        { benchWorkload(b, "F32ToBF16") }
func BenchmarkBF16ToF32(b *testing.B)        { benchWorkload(b, "BF16ToF32") }

// TestWorkloadsHaveBenchmarks checks that every workload runs on a small input
// and that the set is the one the benchmarks above name.
func TestWorkloadsHaveBenchmarks(t *testing.T) {
	var names []string
	src := kbench.BenchInput(4 * 256)
	for _, w := range kbench.Workloads() {
		names = append(names, w.Name)
		w.Prepare(src)()
	}
	assert.Equal(t, []string{"MemRead", "Amax32", "QuantizeMXFP4", "DequantizeMXFP4", "QuantizeMXFP8",
		"QuantizeNVFP4", "QuantizeMXINT8", "QuantizeQ8_0", "QuantizeQ4_K", "QuantizeQ5_K", "QuantizeQ6_K", "QuantizeQ3_K",
		"QuantizeQ2_K", "QuantizeIQ4_XS", "QuantizeIQ4_NL", "DequantizeQ4_K", "DequantizeQ5_K", "DequantizeQ6_K", "DequantizeIQ4_XS",
		"QuantizeInt8G32", "QuantizeInt4G128", "F32ToF16", "F32ToBF16", "BF16ToF32",
		"SelectNM24", "SelectNM48", "EncodeNF4", "SelectCodebook2", "SelectCodebook16", "DecodeCodebook16"}, names)
}
