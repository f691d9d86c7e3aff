// Package kbench is the benchmark set of the kernels package: the kernels
// `go test -bench . ./kernels` times and `tcast bench` times in one process,
// on the same inputs, so that their figures (and their ratios to MemRead,
// a plain read of the same floats) can be compared. Block formats are
// reached through the kernels' codec table.
package kbench

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	"github.com/tensorcast-go/tensorcast/kernels"
)

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
	f16Codec = kernels.FloatCodec{ManBits: 10, ExpBits: 5, Emin: -14, SignBit: 0x8000, MagMask: 0x7fff, MaxMag: 0x7bff,
		NegZero: true, HasInf: true, InfMag: 0x7c00, NaN: kernels.NaNIEEE, NaNPos: 0x7e00, NaNNeg: 0xfe00}
	bf16Codec = kernels.FloatCodec{ManBits: 7, ExpBits: 8, Emin: -126, SignBit: 0x8000, MagMask: 0x7fff,
		MaxMag: 0x7f7f, NegZero: true, HasInf: true, InfMag: 0x7f80, NaN: kernels.NaNIEEE, NaNPos: 0x7fc0,
		NaNNeg: 0xffc0}
)

// benchSink keeps the results of reductions alive; workers add to it
// atomically (once per run, so the adds cost nothing measurable).
var benchSink atomic.Uint64

// Workloads returns the benchmark set, MemRead (the memory-read baseline:
// SumFloat32) first.
func Workloads() []Workload {
	ws := []Workload{
		{"MemRead", func(src []float32) func() {
			return func() { benchSink.Add(SumFloat32(src)) }
		}},
		{"Amax32", func(src []float32) func() {
			out := make([]uint32, len(src)/32)
			return func() { kernels.AbsMaxBlocks(out, src, 32) }
		}},
		scaledQuant("QuantizeMXFP4", "MXFP4"),
		scaledDequant("DequantizeMXFP4", "MXFP4"),
		scaledQuant("QuantizeMXFP8", "MXFP8"),
		scaledQuant("QuantizeNVFP4", "NVFP4"),
		scaledQuant("QuantizeMXINT8", "MXINT8"),
		blockQuant("QuantizeQ8_0", "Q8_0"),
	}
	for _, t := range []string{"Q4_K", "Q5_K", "Q6_K", "Q3_K", "Q2_K", "IQ4_XS", "IQ4_NL"} {
		ws = append(ws, blockQuant("Quantize"+t, t))
	}
	for _, t := range []string{"Q4_K", "Q5_K", "Q6_K", "IQ4_XS"} {
		ws = append(ws, blockDequant("Dequantize"+t, t))
	}
	return append(append(ws, []Workload{
		intGroups("QuantizeInt8G32", kernels.IntGroups{Bits: 8, Group: 32, Scale: kernels.ScaleFloat16}),
		intGroups("QuantizeInt4G128", kernels.IntGroups{Bits: 4, Group: 128, Scale: kernels.ScaleFloat16}),
		{"F32ToF16", func(src []float32) func() {
			dst := make([]uint16, len(src))
			return func() { kernels.EncodeFloat(&f16Codec, dst, src, kernels.RoundEven, false, 0) }
		}},
		{"F32ToBF16", func(src []float32) func() {
			dst := make([]uint16, len(src))
			return func() { kernels.EncodeFloat(&bf16Codec, dst, src, kernels.RoundEven, false, 0) }
		}},
		{"BF16ToF32", func(src []float32) func() {
			codes := make([]uint16, len(src))
			kernels.EncodeFloat(&bf16Codec, codes, src, kernels.RoundEven, false, 0)
			dst := make([]float32, len(src))
			return func() { kernels.BFloat16ToFloat32(dst, codes) }
		}},
		selectNM("SelectNM24", 2, 4),
		selectNM("SelectNM48", 4, 8),
	}...), codebookWorkloads()...)
}

// scaled returns the kernels' scaled codec of the given name.
func scaled(name string) kernels.ScaledCodec {
	c, ok := kernels.LookupScaled(name)
	if !ok {
		panic("kbench: no scaled codec " + name)
	}
	return c
}

// block returns the kernels' block codec of the given name.
func block(name string) kernels.BlockCodec {
	c, ok := kernels.LookupBlock(name)
	if !ok {
		panic("kbench: no block codec " + name)
	}
	return c
}

// scaledPlanes returns the planes of codec c for src: NVFP4's tensor scale
// is ModelOpt's, amax / (6·448).
func scaledPlanes(c kernels.ScaledCodec, src []float32) kernels.Planes {
	p := kernels.Planes{
		Codes:  make([]byte, kernels.PackedLen(len(src), uint(c.Bits))),
		Scales: make([]byte, len(src)/c.Block),
	}
	if c.Name == "NVFP4" {
		p.TensorScale = math.Float32frombits(kernels.AbsMaxBits(src)) / 2688
	}
	return p
}

// scaledQuant times the quantizer of the scaled codec codec.
func scaledQuant(name, codec string) Workload {
	c := scaled(codec)
	return Workload{name, func(src []float32) func() {
		p := scaledPlanes(c, src)
		return func() { c.Quantize(p, src) }
	}}
}

// scaledDequant times the decoder of the scaled codec codec on what its
// quantizer made of the input.
func scaledDequant(name, codec string) Workload {
	c := scaled(codec)
	return Workload{name, func(src []float32) func() {
		p := scaledPlanes(c, src)
		c.Quantize(p, src)
		dst := make([]float32, len(src))
		return func() { c.Dequantize(dst, p) }
	}}
}

// blockQuant times a GGUF block quantizer without an importance vector, on
// the whole blocks of the input.
func blockQuant(name, codec string) Workload {
	c := block(codec)
	return Workload{name, func(src []float32) func() {
		src = src[:len(src)/c.BlockLen*c.BlockLen]
		dst := make([]byte, len(src)/c.BlockLen*c.BlockBytes)
		return func() { c.Quantize(dst, src, nil, nil) }
	}}
}

// blockDequant times a GGUF block decoder on the blocks its quantizer made
// of the input (whole blocks).
func blockDequant(name, codec string) Workload {
	c := block(codec)
	return Workload{name, func(src []float32) func() {
		src = src[:len(src)/c.BlockLen*c.BlockLen]
		blocks := make([]byte, len(src)/c.BlockLen*c.BlockBytes)
		c.Quantize(blocks, src, nil, nil)
		dst := make([]float32, len(src))
		return func() { c.Dequantize(dst, blocks) }
	}}
}

// intGroups times the IntSym codec as the int8_g32 and int4_g128 datatypes
// of the tcast package cast.
func intGroups(name string, g kernels.IntGroups) Workload {
	c := scaled("IntSym")
	return Workload{name, func(src []float32) func() {
		p := kernels.Planes{
			Codes:  make([]byte, kernels.PackedLen(len(src), uint(g.Bits))),
			Scales: make([]byte, len(src)/g.Group*g.Scale.Bytes()),
			Groups: g,
		}
		return func() { c.Quantize(p, src) }
	}}
}

// selectNM times the N:M selection of n in every m elements.
func selectNM(name string, n, m int) Workload {
	return Workload{name, func(src []float32) func() {
		src = src[:len(src)/m*m]
		dst := make([]byte, kernels.PackedLen(len(src), 1))
		return func() { kernels.SelectNM(dst, src, n, m) }
	}}
}

// codebookWorkloads times the lookup-table encoders, selectors and decoder
// as the codebook datatypes use them.
func codebookWorkloads() []Workload {
	return []Workload{
		{"EncodeNF4", func(src []float32) func() {
			e := benchNF4()
			muls, _ := benchBlockScales(src, 64, 1)
			codes := make([]uint8, len(src))
			return func() { e.EncodeBlocks(codes, src, 64, muls) }
		}},
		{"SelectCodebook2", func(src []float32) func() {
			s := benchCodebook(2)
			muls, scales := benchBlockScales(src, 32, 6)
			codes, meta := make([]uint8, len(src)), make([]uint8, (len(src)+3)/4)
			return func() { s.Select(codes, meta, src, 4, 32, muls, scales) }
		}},
		{"SelectCodebook16", func(src []float32) func() {
			s := benchCodebook(16)
			muls, scales := benchBlockScales(src, 32, 7.75)
			codes, meta := make([]uint8, len(src)), make([]uint8, (len(src)+7)/8)
			return func() { s.Select(codes, meta, src, 8, 32, muls, scales) }
		}},
		{"DecodeCodebook16", func(src []float32) func() {
			s := benchCodebook(16)
			muls, scales := benchBlockScales(src, 32, 7.75)
			codes, meta := make([]uint8, len(src)), make([]uint8, (len(src)+7)/8)
			s.Select(codes, meta, src, 8, 32, muls, scales)
			luts := make([]float32, 16*16)
			for k := range 16 {
				for c := range 8 {
					m := benchCodebookMag(k, c)
					luts[16*k+c], luts[16*k+8+c] = m, -m
				}
			}
			dst := make([]float32, len(src))
			return func() { kernels.LUTDecodeGroups(dst, codes, meta, 8, 32, 16, luts, scales) }
		}},
	}
}

// benchNF4 is an encoder of bitsandbytes' NF4 table (its 16 values, bounds
// at the float32 midpoints), the table of the nf4 datatype.
func benchNF4() *kernels.LUTEncoder {
	vals := []float32{-1, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
		-0.18477343022823334, -0.09105003625154495, 0, 0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
		0.33791524171829224, 0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1}
	bounds := make([]float32, 15)
	codes := make([]uint8, 16)
	for i := range vals {
		codes[i] = uint8(i)
		if i > 0 {
			bounds[i-1] = (vals[i-1] + vals[i]) / 2
		}
	}
	return kernels.NewLUTEncoder(bounds, codes, 0, false, 7)
}

// benchCodebookMag is magnitude c (0 to 7) of table k of the benchmark
// codebooks: grid points i/4 (i < 32) at a step of 1 + k%4 from an offset of
// k/4, as implicit codebooks pick entries of a compute format.
func benchCodebookMag(k, c int) float32 {
	if c == 0 {
		return 0
	}
	return float32(k/4+c*(1+k%4)) / 4
}

// benchCodebook is a selector among nt (up to 16) sign-magnitude tables of
// eight magnitudes (benchCodebookMag), sign bit 8, as the implicit
// codebooks have: their bounds (the midpoints) cut the magnitudes into at
// most 62 cells.
func benchCodebook(nt int) *kernels.LUTSelector {
	seen := map[float32]bool{}
	var bounds []float32
	for k := range nt {
		for c := 1; c < 8; c++ {
			b := (benchCodebookMag(k, c-1) + benchCodebookMag(k, c)) / 2
			if !seen[b] {
				seen[b] = true
				bounds = append(bounds, b)
			}
		}
	}
	slices.Sort(bounds)
	mags, codes := make([][]float32, nt), make([][]uint8, nt)
	for k := range nt {
		for cell := range len(bounds) + 1 {
			lo := float32(0) // the cell's lowest magnitude encodes like the cell
			if cell > 0 {
				lo = bounds[cell-1]
			}
			c := 0
			for c < 7 && lo >= (benchCodebookMag(k, c)+benchCodebookMag(k, c+1))/2 {
				c++
			}
			mags[k] = append(mags[k], benchCodebookMag(k, c))
			codes[k] = append(codes[k], uint8(c))
		}
	}
	return kernels.NewLUTSelector(bounds, mags, codes, make([]uint8, nt), 8, true)
}

// benchBlockScales returns, for blocks of block values of src, the scale
// amax/top (1 for an all-zero block) and its reciprocal, the multiplier.
func benchBlockScales(src []float32, block int, top float32) (muls, scales []float32) {
	amax := make([]uint32, (len(src)+block-1)/block)
	kernels.AbsMaxBlocks(amax, src, block)
	muls, scales = make([]float32, len(amax)), make([]float32, len(amax))
	for i, a := range amax {
		scales[i] = 1
		if s := math.Float32frombits(a) / top; s > 0 {
			scales[i] = s
		}
		muls[i] = 1 / scales[i]
	}
	return muls, scales
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
