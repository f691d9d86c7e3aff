package codebook

import (
	"math/rand/v2"
	"testing"
)

func benchInput(n int) []float32 {
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 2)
	}
	return x
}

// BenchmarkSelect times the selection among the 16 tables of icb44fi on
// subtiles of 8 (bytes are those of the float32 input).
func BenchmarkSelect(b *testing.B) {
	cb, err := Parse("icb44fi_e2m3fnuz")
	if err != nil {
		b.Fatal(err)
	}
	x := benchInput(1 << 16)
	codes := make([]uint8, len(x))
	meta := make([]uint8, len(x)/8)
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		if err := cb.Select(codes, meta, x, 8, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSelectWeighted is BenchmarkSelect with importance weights that
// vary within the groups: through the signed plan (the cells), and through
// the general path (every table encodes).
func BenchmarkSelectWeighted(b *testing.B) {
	cb, err := Parse("icb44fi_e2m3fnuz")
	if err != nil {
		b.Fatal(err)
	}
	x := benchInput(1 << 16)
	w := make([]float32, len(x))
	for i := range w {
		w[i] = float32(1 + i%7)
	}
	codes := make([]uint8, len(x))
	meta := make([]uint8, len(x)/8)
	sel := cb.NewSelector()
	b.Run("plan", func(b *testing.B) {
		b.SetBytes(int64(4 * len(x)))
		for b.Loop() {
			if err := cb.Select(codes, meta, x, 8, &SelectOptions{Weights: w}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("general", func(b *testing.B) {
		b.SetBytes(int64(4 * len(x)))
		for b.Loop() {
			sel.selectWSSEGo(codes, meta, x, w, 8, 1, 1)
		}
	})
}

// BenchmarkEncodeNF4 times one table's encoding (bytes of the float32 input).
func BenchmarkEncodeNF4(b *testing.B) {
	x := benchInput(1 << 16)
	codes := make([]uint8, len(x))
	t := NF4()
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		t.EncodeScaled(codes, x, 0.25)
	}
}
