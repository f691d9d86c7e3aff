package tcast

import (
	"math/rand/v2"
	"testing"

	"github.com/tensorcast-go/tensorcast/internal/kbench"
	"github.com/tensorcast-go/tensorcast/mask"
)

const benchN = 1 << 22 // 16 MiB of float32, beyond the caches

func benchInput() []float32 {
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, benchN)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// BenchmarkMemRead is the baseline: summing the same float32 bytes.
func BenchmarkMemRead(b *testing.B) {
	x := benchInput()
	b.SetBytes(4 * benchN)
	var s uint64
	for b.Loop() {
		s += kbench.SumFloat32(x)
	}
	_ = s
}

func benchCast(b *testing.B, name string, form Form) { benchCastOpts(b, name, form, false) }

// benchCastOpts is benchCast, with the scale search when search is set.
func benchCastOpts(b *testing.B, name string, form Form, search bool) {
	x := benchInput()
	dt := MustLookup(name)
	opts := DefaultOptions()
	opts.Form = form
	opts.ScaleSearch = search
	b.SetBytes(4 * benchN)
	for b.Loop() {
		if _, err := Cast(x, []int{benchN / 4096, 4096}, dt, &opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCastMXFP4(b *testing.B)         { benchCast(b, "mxfp4", Compressed) }
func BenchmarkCastNVFP4(b *testing.B)         { benchCast(b, "nvfp4", Compressed) }
func BenchmarkCastMXFP8(b *testing.B)         { benchCast(b, "mxfp8e4", Compressed) }
func BenchmarkCastInt4G128(b *testing.B)      { benchCast(b, "int4_g128", Compressed) }
func BenchmarkCastMXFP4Virtual(b *testing.B)  { benchCast(b, "mxfp4", Virtual) }
func BenchmarkCastFP8E4Block128(b *testing.B) { benchCast(b, "fp8e4_block128", Compressed) }

// The same casts with Options.ScaleSearch (issue 14: at most 3× the plain
// cast).
func BenchmarkSearchMXFP4(b *testing.B)    { benchCastOpts(b, "mxfp4", Compressed, true) }
func BenchmarkSearchNVFP4(b *testing.B)    { benchCastOpts(b, "nvfp4", Compressed, true) }
func BenchmarkSearchMXFP8(b *testing.B)    { benchCastOpts(b, "mxfp8e4", Compressed, true) }
func BenchmarkSearchInt4G128(b *testing.B) { benchCastOpts(b, "int4_g128", Compressed, true) }
func BenchmarkSearchFP8E4Block128(b *testing.B) {
	benchCastOpts(b, "fp8e4_block128", Compressed, true)
}

// benchCastKeep casts with a keep mask (3 in 4 elements kept): the
// streamed path with masked block amaxes, or block by block.
func benchCastKeep(b *testing.B, name string, stream bool) {
	x := benchInput()
	shape := []int{benchN / 4096, 4096}
	r := rand.New(rand.NewPCG(7, 8))
	keep := make([]bool, benchN)
	for i := range keep {
		keep[i] = r.IntN(4) != 0
	}
	m, err := mask.FromBools(shape, keep)
	if err != nil {
		b.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Form, opts.Keep = Compressed, m
	b.SetBytes(4 * benchN)
	for b.Loop() {
		if _, err := castPath(x, shape, MustLookup(name), &opts, true, stream); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCastMXFP4Keep(b *testing.B)          { benchCastKeep(b, "mxfp4", true) }
func BenchmarkCastMXFP4KeepBlockwise(b *testing.B) { benchCastKeep(b, "mxfp4", false) }
func BenchmarkCastNVFP4Keep(b *testing.B)          { benchCastKeep(b, "nvfp4", true) }
func BenchmarkCastNVFP4KeepBlockwise(b *testing.B) { benchCastKeep(b, "nvfp4", false) }

func benchDecompress(b *testing.B, name string) {
	x := benchInput()
	opts := DefaultOptions()
	opts.Form = Compressed
	t, err := Cast(x, []int{benchN / 4096, 4096}, MustLookup(name), &opts)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(4 * benchN) // float32 bytes produced
	for b.Loop() {
		if _, err := Decompress(t); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecompressMXFP4(b *testing.B) { benchDecompress(b, "mxfp4") }
func BenchmarkDecompressNVFP4(b *testing.B) { benchDecompress(b, "nvfp4") }
func BenchmarkDecompressMXFP8(b *testing.B) { benchDecompress(b, "mxfp8e4") }
