package kernels

import (
	"math/rand/v2"
	"sync"
	"testing"
)

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
		EncodeFloat(&simdCodecBF16, dst, src, RoundEven, true, 0)
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
	EncodeFloat(&simdCodecBF16, src, benchSrc(), RoundEven, true, 0)
	dst := make([]float32, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		BFloat16ToFloat32(dst, src)
	}
}
