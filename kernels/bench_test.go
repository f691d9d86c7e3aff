package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The benchmarks of Workloads run at two sizes, each a sub-benchmark: DRAM
// (BenchDRAM floats, streamed from memory as a real conversion is) and L2
// (BenchL2 floats, cache-resident). The ratio of any benchmark's MB/s to
// MemRead's of the same size, measured in the same run, is the figure to
// report. Inputs are made on first use, so `go test` without -bench
// allocates none of them.
var (
	dramInput = sync.OnceValue(func() []float32 { return BenchInput(BenchDRAM) })
	l2Input   = sync.OnceValue(func() []float32 { return BenchInput(BenchL2) })
)

func benchWorkload(b *testing.B, name string) {
	var w *Workload
	for _, x := range Workloads() {
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
	src := BenchInput(4 * QKK)
	for _, w := range Workloads() {
		names = append(names, w.Name)
		w.Prepare(src)()
	}
	assert.Equal(t, []string{"MemRead", "Amax32", "QuantizeMXFP4", "DequantizeMXFP4", "QuantizeMXFP8",
		"QuantizeNVFP4", "QuantizeMXINT8", "QuantizeQ8_0", "QuantizeQ4_K", "QuantizeQ5_K", "QuantizeQ6_K", "QuantizeQ3_K",
		"QuantizeQ2_K", "QuantizeIQ4_XS", "QuantizeIQ4_NL", "DequantizeQ4_K", "DequantizeQ5_K", "DequantizeQ6_K", "DequantizeIQ4_XS",
		"QuantizeInt8G32", "QuantizeInt4G128", "F32ToF16", "F32ToBF16", "BF16ToF32",
		"SelectNM24", "SelectNM48", "EncodeNF4", "SelectCodebook2", "SelectCodebook16", "DecodeCodebook16"}, names)
}

// benchN normally distributed floats (64 MiB) time the generic element
// codecs, on the same input as before the benchmark set existed.
const benchN = 1 << 24

var benchSrc = sync.OnceValue(func() []float32 {
	rng := rand.New(rand.NewPCG(1, 2))
	s := make([]float32, benchN)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
})

// Parameters of e4m3fn and e2m1 (OCP FP4) as the dtype package builds them.
var (
	codecE4M3 = e4m3fnCodec
	codecE2M1 = e2m1Codec
)

func BenchmarkEncodeE4M3(b *testing.B) {
	src, dst := benchSrc(), make([]uint8, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		EncodeFloat(&codecE4M3, dst, src, RoundEven, true, 0)
	}
}

func BenchmarkEncodeE2M1(b *testing.B) {
	src, dst := benchSrc(), make([]uint8, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		EncodeFloat(&codecE2M1, dst, src, RoundEven, true, 0)
	}
}

func BenchmarkEncodeBF16(b *testing.B) {
	src, dst := benchSrc(), make([]uint16, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		EncodeFloat(&bf16Codec, dst, src, RoundEven, true, 0)
	}
}

func BenchmarkEncodeE4M3Scalar(b *testing.B) {
	src, dst := benchSrc(), make([]uint8, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		for i, x := range src {
			dst[i] = uint8(codecE4M3.Encode(x, RoundEven, true, 0))
		}
	}
}

func lut8(c *FloatCodec) *[256]float32 {
	var t [256]float32
	for i := range t {
		t[i] = c.Decode(uint32(i))
	}
	return &t
}

func BenchmarkDecodeE4M3(b *testing.B) {
	src := make([]uint8, benchN)
	EncodeFloat(&codecE4M3, src, benchSrc(), RoundEven, true, 0)
	dst := make([]float32, benchN)
	lut := lut8(&codecE4M3)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		DecodeLUT8(dst, src, lut)
	}
}

func BenchmarkDecodeBF16(b *testing.B) {
	src := make([]uint16, benchN)
	EncodeFloat(&bf16Codec, src, benchSrc(), RoundEven, true, 0)
	dst := make([]float32, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		BFloat16ToFloat32(dst, src)
	}
}

func TestSumFloat32(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 16, 17, 33} {
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(i) + 0.5
		}
		// The checksum adds little-endian 64-bit words, the last odd float alone.
		var want uint64
		for i := 0; i+1 < n; i += 2 {
			want += uint64(math.Float32bits(src[i])) | uint64(math.Float32bits(src[i+1]))<<32
		}
		if n%2 == 1 {
			want += uint64(math.Float32bits(src[n-1]))
		}
		if got := SumFloat32(src); got != want {
			t.Fatalf("n=%d: %d, want %d", n, got, want)
		}
	}
}

// TestMeasure checks that Measure runs the kernel on every worker's own
// copy of the input and reports a positive speed.
func TestMeasure(t *testing.T) {
	var mu sync.Mutex
	seen := map[*float32]int{}
	w := Workload{"Count", func(src []float32) func() {
		return func() {
			mu.Lock()
			seen[&src[0]]++
			mu.Unlock()
		}
	}}
	src := make([]float32, 64)
	assert.Greater(t, w.Measure(src, 3, 2), 0.0)
	assert.Len(t, seen, 3, "three workers, three inputs")
	assert.Contains(t, seen, &src[0], "the first worker reads src itself")
	n := -1
	for _, c := range seen {
		if n >= 0 {
			assert.Equal(t, n, c, "every worker runs as often")
		}
		n = c
	}
}

// TestWorkloadsParallel runs every workload on two workers at once, as
// Measure does with workers > 1 (tcast bench -workers): under -race (.ci/run
// races this package) a workload writing state its workers share fails.
func TestWorkloadsParallel(t *testing.T) {
	src := BenchInput(4 * QKK)
	for _, w := range Workloads() {
		parallel([]func(){w.Prepare(src), w.Prepare(slices.Clone(src))}, 2)
	}
}
