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
	f.Add(bytesOf(127, 0.5, -0.5, 2.5, float32(math.NaN()), -16, 16))
	f.Add(bytesOf(float32(math.Inf(-1)), 1e-45, -3e38))
	f.Add(make([]byte, 4*32*17))
	f.Fuzz(func(t *testing.T, data []byte) {
		nb := (len(data)/4 + ggmlBlock - 1) / ggmlBlock
		src := make([]float32, nb*ggmlBlock)
		copy(src, floatsOf(data))
		want8, want4 := make([]byte, nb*q8_0BlockBytes), make([]byte, nb*q4_0BlockBytes)
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
			quantizeQ8_0(got8, src)
			quantizeQ4_0(got4, src)
			d8, d4 := make([]float32, len(src)), make([]float32, len(src))
			dequantizeQ8_0(d8, raw8)
			dequantizeQ4_0(d4, raw4)
			restore()
			requireSame(t, bytesAsU16(want8), bytesAsU16(got8), "%v quantizeQ8_0", tr)
			requireSame(t, bytesAsU16(want4), bytesAsU16(got4), "%v quantizeQ4_0", tr)
			requireSame(t, floatBits(wantD8), floatBits(d8), "%v dequantizeQ8_0", tr)
			requireSame(t, floatBits(wantD4), floatBits(d4), "%v dequantizeQ4_0", tr)
		}
	})
}
