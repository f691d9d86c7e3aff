package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

func benchInput(n int) []float32 {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64()) * 0.02
	}
	return x
}

// BenchmarkKQuant times each codec's quantizer on 64 Ki Gaussian values,
// plain and (imp) with an importance vector for rows of 4096, log-normal as
// llama.cpp's matrices are, which takes the weighted search kernels.
func BenchmarkKQuant(b *testing.B) {
	x := benchInput(1 << 16)
	rng := rand.New(rand.NewPCG(3, 4))
	imp := make([]float32, 4096)
	for i := range imp {
		imp[i] = float32(math.Exp(rng.NormFloat64()))
	}
	for _, k := range kqCodecs {
		for _, c := range []struct {
			name string
			imp  []float32
		}{{k.name, nil}, {k.name + "/imp", imp}} {
			b.Run(c.name, func(b *testing.B) {
				dst := make([]byte, len(x)/k.block*k.bytes)
				b.SetBytes(int64(4 * len(x)))
				k.quant(dst[:4096/k.block*k.bytes], x[:4096], c.imp, nil) // the IQ grids' tables
				for b.Loop() {
					k.quant(dst, x, c.imp, nil)
				}
			})
		}
	}
}
