package kernels

import "testing"

// Benchmarks of the MX byte kernels outside the benchmark set (kbench), at
// the sizes of benchSizes (compare each with MemRead of the same size, in
// the same run).

func benchQuant(b *testing.B, per int, q func(codes []byte, scales []uint8, src []float32)) {
	benchSizes(b, func(src []float32) func() {
		codes, scales := make([]byte, len(src)/mxBlock*per), make([]byte, len(src)/mxBlock)
		return func() { q(codes, scales, src) }
	})
}

func benchDequant(b *testing.B, per int, q func(codes []byte, scales []uint8, src []float32),
	d func(dst []float32, codes []byte, scales []uint8)) {
	benchSizes(b, func(src []float32) func() {
		codes, scales := make([]byte, len(src)/mxBlock*per), make([]byte, len(src)/mxBlock)
		q(codes, scales, src)
		dst := make([]float32, len(src))
		return func() { d(dst, codes, scales) }
	})
}

func BenchmarkQuantizeMXFP8E5M2(b *testing.B) { benchQuant(b, mxBlock, quantizeMXFP8E5M2) }
func BenchmarkQuantizeMXFP6E2M3(b *testing.B) { benchQuant(b, mxfp6Bytes, quantizeMXFP6E2M3) }
func BenchmarkQuantizeMXFP6E3M2(b *testing.B) { benchQuant(b, mxfp6Bytes, quantizeMXFP6E3M2) }

func BenchmarkDequantizeMXFP8(b *testing.B) { benchDequant(b, mxBlock, quantizeMXFP8, dequantizeMXFP8) }
func BenchmarkDequantizeMXFP8E5M2(b *testing.B) {
	benchDequant(b, mxBlock, quantizeMXFP8E5M2, dequantizeMXFP8E5M2)
}
func BenchmarkDequantizeMXINT8(b *testing.B) {
	benchDequant(b, mxBlock, quantizeMXINT8, dequantizeMXINT8)
}
func BenchmarkDequantizeMXFP6E2M3(b *testing.B) {
	benchDequant(b, mxfp6Bytes, quantizeMXFP6E2M3, dequantizeMXFP6E2M3)
}

func BenchmarkF32ToE4M3(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		dst := make([]byte, len(src))
		return func() { EncodeFloat(&e4m3fnCodec, dst, src, RoundEven, true, 0) }
	})
}

func BenchmarkE4M3ToF32(b *testing.B) {
	benchSizes(b, func(src []float32) func() {
		codes := make([]byte, len(src))
		EncodeFloat(&e4m3fnCodec, codes, src, RoundEven, true, 0)
		lut := new([256]float32)
		for c := range lut {
			lut[c] = e4m3fnCodec.Decode(uint32(c))
		}
		dst := make([]float32, len(src))
		return func() { DecodeFloat8(&e4m3fnCodec, dst, codes, lut) }
	})
}
