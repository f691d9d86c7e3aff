package kernels

import (
	"math"
	"testing"
)

// FuzzGGML compares every tier's Q8_0 and Q4_0 kernels with the Go
// references: the fuzzer's bytes as float32 values (padded with zeros to
// whole blocks) for the quantizers, and as encoded blocks for the
// dequantizers.
func FuzzGGML(f *testing.F) {
	seed := func(xs ...float32) []byte {
		b := make([]byte, 4*len(xs))
		for i, x := range xs {
			u := math.Float32bits(x)
			b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		}
		return b
	}
	f.Add(seed(127, 0.5, -0.5, 2.5, float32(math.NaN()), -16, 16))
	f.Add(seed(float32(math.Inf(-1)), 1e-45, -3e38))
	f.Add(make([]byte, 4*32*17))
	f.Fuzz(func(t *testing.T, data []byte) {
		nb := (len(data)/4 + GGMLBlock - 1) / GGMLBlock
		src := make([]float32, nb*GGMLBlock)
		copy(src, floatsOf(data))
		want8, want4 := make([]byte, nb*Q8_0BlockBytes), make([]byte, nb*Q4_0BlockBytes)
		quantQ8_0Go(want8, src)
		quantQ4_0Go(want4, src)
		raw8, raw4 := make([]byte, len(want8)), make([]byte, len(want4))
		copy(raw8, data)
		copy(raw4, data)
		wantD8, wantD4 := make([]float32, len(src)), make([]float32, len(src))
		dequantQ8_0Go(wantD8, raw8)
		dequantQ4_0Go(wantD4, raw4)
		for _, tr := range tiers() {
			restore := useTier(tr)
			got8, got4 := make([]byte, len(want8)), make([]byte, len(want4))
			QuantizeQ8_0(got8, src)
			QuantizeQ4_0(got4, src)
			d8, d4 := make([]float32, len(src)), make([]float32, len(src))
			DequantizeQ8_0(d8, raw8)
			DequantizeQ4_0(d4, raw4)
			restore()
			for i := range want8 {
				if got8[i] != want8[i] {
					t.Fatalf("%v QuantizeQ8_0 byte %d: %#x, want %#x", tr, i, got8[i], want8[i])
				}
			}
			for i := range want4 {
				if got4[i] != want4[i] {
					t.Fatalf("%v QuantizeQ4_0 byte %d: %#x, want %#x", tr, i, got4[i], want4[i])
				}
			}
			requireSame(t, f32bits(wantD8), f32bits(d8), "%v DequantizeQ8_0", tr)
			requireSame(t, f32bits(wantD4), f32bits(d4), "%v DequantizeQ4_0", tr)
		}
	})
}
