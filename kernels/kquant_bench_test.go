package kernels

import (
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

func BenchmarkKQuant(b *testing.B) {
	x := benchInput(1 << 16)
	for _, k := range kqCodecs {
		b.Run(k.name, func(b *testing.B) {
			dst := make([]byte, len(x)/k.block*k.bytes)
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				k.quant(dst, x, nil)
			}
		})
	}
}
