package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// benchN floats (64 MiB) do not fit in any cache, so the benchmarks measure
// streaming from memory like a real conversion does.
const benchN = 1 << 24

var benchSrc = func() []float32 {
	rng := rand.New(rand.NewPCG(1, 2))
	s := make([]float32, benchN)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}()

var sinkU64 uint64

// BenchmarkMemRead is the baseline: the ratio of any other benchmark's MB/s to this
// one, measured in the same run, is the figure to report.
func BenchmarkMemRead(b *testing.B) {
	b.SetBytes(4 * benchN)
	for b.Loop() {
		sinkU64 += SumFloat32(benchSrc)
	}
}

// Parameters of e4m3fn, e2m1 (OCP FP4) and bfloat16 as the dtype package builds them.
var (
	codecE4M3 = FloatCodec{ManBits: 3, ExpBits: 4, Emin: -6, SignBit: 0x80, MagMask: 0x7f, MaxMag: 0x7e,
		NegZero: true, NaN: NaNAllOnes, NaNPos: 0x7f, NaNNeg: 0xff}
	codecE2M1 = FloatCodec{ManBits: 1, ExpBits: 2, Emin: 0, SignBit: 0x8, MagMask: 0x7, MaxMag: 0x7,
		NegZero: true, NaN: NaNNone, NaNPos: 0x8}
	codecBF16 = FloatCodec{ManBits: 7, ExpBits: 8, Emin: -126, SignBit: 0x8000, MagMask: 0x7fff, MaxMag: 0x7f7f,
		NegZero: true, HasInf: true, InfMag: 0x7f80, NaN: NaNIEEE, NaNPos: 0x7fc0, NaNNeg: 0xffc0}
)

func BenchmarkEncodeE4M3(b *testing.B) {
	dst := make([]uint8, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		EncodeFloat(&codecE4M3, dst, benchSrc, RoundEven, true, 0)
	}
}

func BenchmarkEncodeE2M1(b *testing.B) {
	dst := make([]uint8, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		EncodeFloat(&codecE2M1, dst, benchSrc, RoundEven, true, 0)
	}
}

func BenchmarkEncodeBF16(b *testing.B) {
	dst := make([]uint16, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		EncodeFloat(&codecBF16, dst, benchSrc, RoundEven, true, 0)
	}
}

func BenchmarkEncodeE4M3Scalar(b *testing.B) {
	dst := make([]uint8, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		for i, x := range benchSrc {
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
	EncodeFloat(&codecE4M3, src, benchSrc, RoundEven, true, 0)
	dst := make([]float32, benchN)
	lut := lut8(&codecE4M3)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		DecodeLUT8(dst, src, lut)
	}
}

func BenchmarkDecodeBF16(b *testing.B) {
	src := make([]uint16, benchN)
	EncodeFloat(&codecBF16, src, benchSrc, RoundEven, true, 0)
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
