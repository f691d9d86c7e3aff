package kernels

import (
	"math"
	"math/rand/v2"
)

// The benchmark set: the kernels `go test -bench` times in this package and
// `tcast bench` times in one process, on the same inputs, so that their
// figures (and their ratios to MemRead) can be compared.

// Benchmark sizes, in float32 values: DRAM streams 256 MiB from memory, far
// beyond any cache; L2 (256 KiB) stays in a core's level-2 cache.
const (
	BenchDRAM = 64 << 20
	BenchL2   = 64 << 10
)

// A Workload is one kernel of the benchmark set.
type Workload struct {
	// Name is the benchmark's name without its "Benchmark" prefix
	// (QuantizeMXFP4, ...).
	Name string
	// Prepare allocates the kernel's outputs (and, for a decoder, its
	// encoded input, made from src) and returns a function that runs the
	// kernel once over them. Every kernel processes len(src) float32 values
	// (4·len(src) bytes read or written on the float32 side).
	Prepare func(src []float32) (run func())
}

// Codecs of float16 and bfloat16 as the dtype package builds them.
var (
	f16Codec = FloatCodec{ManBits: 10, ExpBits: 5, Emin: -14, SignBit: 0x8000, MagMask: 0x7fff, MaxMag: 0x7bff,
		NegZero: true, HasInf: true, InfMag: 0x7c00, NaN: NaNIEEE, NaNPos: 0x7e00, NaNNeg: 0xfe00}
	bf16Codec = FloatCodec{ManBits: 7, ExpBits: 8, Emin: -126, SignBit: 0x8000, MagMask: 0x7fff, MaxMag: 0x7f7f,
		NegZero: true, HasInf: true, InfMag: 0x7f80, NaN: NaNIEEE, NaNPos: 0x7fc0, NaNNeg: 0xffc0}
)

// benchSink keeps the results of reductions alive.
var benchSink uint64

// Workloads returns the benchmark set, MemRead (the memory-read baseline:
// SumFloat32) first.
func Workloads() []Workload {
	quant := func(name string, block, codesPerBlock int, q func(codes, scales []byte, src []float32)) Workload {
		return Workload{name, func(src []float32) func() {
			codes := make([]byte, len(src)/block*codesPerBlock)
			scales := make([]byte, len(src)/block)
			return func() { q(codes, scales, src) }
		}}
	}
	// kquant times a GGUF quantizer without an importance vector (the
	// inputs are whole blocks: the sizes are multiples of 256).
	kquant := func(name string, block, blockBytes int, q func(dst []byte, src, imp []float32)) Workload {
		return Workload{name, func(src []float32) func() {
			dst := make([]byte, len(src)/block*blockBytes)
			return func() { q(dst, src[:len(src)/block*block], nil) }
		}}
	}
	// intGroups times QuantizeIntSym as the int8_g32 and int4_g128
	// datatypes of the tcast package cast.
	intGroups := func(name string, g IntGroups) Workload {
		return Workload{name, func(src []float32) func() {
			codes := make([]byte, g.codeBytes(len(src)))
			scales := make([]byte, len(src)/g.Group*g.Scale.Bytes())
			return func() { QuantizeIntSym(codes, scales, src, g) }
		}}
	}
	return []Workload{
		{"MemRead", func(src []float32) func() {
			return func() { benchSink += SumFloat32(src) }
		}},
		{"Amax32", func(src []float32) func() {
			out := make([]uint32, len(src)/MXBlock)
			return func() { AbsMaxBlocks(out, src, MXBlock) }
		}},
		quant("QuantizeMXFP4", MXBlock, MXBlock/2, QuantizeMXFP4),
		{"DequantizeMXFP4", func(src []float32) func() {
			codes, scales := make([]byte, len(src)/2), make([]byte, len(src)/MXBlock)
			QuantizeMXFP4(codes, scales, src)
			dst := make([]float32, len(src))
			return func() { DequantizeMXFP4(dst, codes, scales) }
		}},
		quant("QuantizeMXFP8", MXBlock, MXBlock, QuantizeMXFP8),
		{"QuantizeNVFP4", func(src []float32) func() {
			codes, scales := make([]byte, len(src)/2), make([]byte, len(src)/NVFP4Block)
			// ModelOpt's tensor scale: amax / (6·448).
			st := math.Float32frombits(AbsMaxBits(src)) / 2688
			return func() { QuantizeNVFP4(codes, scales, src, st) }
		}},
		quant("QuantizeMXINT8", MXBlock, MXBlock, QuantizeMXINT8),
		{"QuantizeQ8_0", func(src []float32) func() {
			dst := make([]byte, len(src)/GGMLBlock*Q8_0BlockBytes)
			return func() { QuantizeQ8_0(dst, src) }
		}},
		kquant("QuantizeQ4_K", QKK, Q4_KBlockBytes, QuantizeQ4_K),
		kquant("QuantizeQ5_K", QKK, Q5_KBlockBytes, QuantizeQ5_K),
		kquant("QuantizeQ6_K", QKK, Q6_KBlockBytes, QuantizeQ6_K),
		kquant("QuantizeQ3_K", QKK, Q3_KBlockBytes, QuantizeQ3_K),
		kquant("QuantizeQ2_K", QKK, Q2_KBlockBytes, QuantizeQ2_K),
		kquant("QuantizeIQ4_XS", QKK, IQ4_XSBlockBytes, QuantizeIQ4XS),
		kquant("QuantizeIQ4_NL", GGMLBlock, IQ4NLBlockBytes, QuantizeIQ4NL),
		{"DequantizeQ4_K", func(src []float32) func() {
			src = src[:len(src)/QKK*QKK]
			blocks := make([]byte, len(src)/QKK*Q4_KBlockBytes)
			QuantizeQ4_K(blocks, src, nil)
			dst := make([]float32, len(src))
			return func() { DequantizeQ4_K(dst, blocks) }
		}},
		intGroups("QuantizeInt8G32", IntGroups{Bits: 8, Group: 32, Scale: ScaleFloat16}),
		intGroups("QuantizeInt4G128", IntGroups{Bits: 4, Group: 128, Scale: ScaleFloat16}),
		{"F32ToF16", func(src []float32) func() {
			dst := make([]uint16, len(src))
			return func() { EncodeFloat(&f16Codec, dst, src, RoundEven, false, 0) }
		}},
		{"F32ToBF16", func(src []float32) func() {
			dst := make([]uint16, len(src))
			return func() { EncodeFloat(&bf16Codec, dst, src, RoundEven, false, 0) }
		}},
		{"BF16ToF32", func(src []float32) func() {
			codes := make([]uint16, len(src))
			EncodeFloat(&bf16Codec, codes, src, RoundEven, false, 0)
			dst := make([]float32, len(src))
			return func() { BFloat16ToFloat32(dst, codes) }
		}},
		{"SelectNM24", func(src []float32) func() {
			dst := make([]byte, PackedLen(len(src)/4*4, 1))
			src = src[:len(src)/4*4]
			return func() { SelectNM(dst, src, 2, 4) }
		}},
	}
}

// BenchInput returns n deterministic float32 values shaped like weights:
// normally distributed, times 2^((i/32 mod 16) − 8), so that neighbouring
// blocks of 32 have different scales.
func BenchInput(n int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Ldexp(1, (i/32)%16-8))
	}
	return x
}
