package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
)

// IEEE binary16 and bfloat16 as the dtype package builds them.
var (
	simdCodecF16 = FloatCodec{ManBits: 10, ExpBits: 5, Emin: -14, SignBit: 0x8000, MagMask: 0x7fff, MaxMag: 0x7bff,
		NegZero: true, HasInf: true, InfMag: 0x7c00, NaN: NaNIEEE, NaNPos: 0x7e00, NaNNeg: 0xfe00}
	simdCodecBF16 = FloatCodec{ManBits: 7, ExpBits: 8, Emin: -126, SignBit: 0x8000, MagMask: 0x7fff, MaxMag: 0x7f7f,
		NegZero: true, HasInf: true, InfMag: 0x7f80, NaN: NaNIEEE, NaNPos: 0x7fc0, NaNNeg: 0xffc0}
)

// boundaryInputs returns, for both signs, float32 values at and next to every
// rounding boundary of a 16-bit format whose codes decode with dec: each
// finite code's value ±1 and ±2 ulps of float32, the midpoint to the next code
// (the tie) and ±1, ±2 ulps around it, plus infinities, NaNs with payloads in
// the bits the encoders keep and drop, and float32 subnormals.
func boundaryInputs(maxCode uint16, dec func(uint16) float32) []float32 {
	var bits []uint32
	add := func(b uint32, around ...int32) {
		for _, d := range around {
			bits = append(bits, uint32(int32(b)+d))
		}
	}
	for h := uint16(0); h <= maxCode; h++ {
		v := math.Float32bits(dec(h))
		add(v, 0, 1, 2, -1, -2)
		mid := math.Float32bits(float32((float64(dec(h)) + float64(dec(h+1))) / 2))
		add(mid, 0, 1, 2, -1, -2)
	}
	bits = append(bits, 0x7f800000, 0x7f7fffff, 0x00000001, 0x007fffff, 0x00400000, 0x33000000, 0x33000001, 0x32ffffff)
	for _, p := range []uint32{1, 0x1fff, 0x2000, 0x2001, 0xffff, 0x10000, 0x1ffff, 0x3fffff, 0x400000, 0x400001, 0x7fffff, 0x5a5a5a, 0x2a2a2a} {
		bits = append(bits, 0x7f800000|p)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		bits = append(bits, 0x7f800000|(1+r.Uint32N(0x7fffff)), r.Uint32N(0x800000), r.Uint32())
	}
	out := make([]float32, 0, 2*len(bits))
	for _, b := range bits {
		b &= 0x7fffffff
		out = append(out, math.Float32frombits(b), math.Float32frombits(b|0x80000000))
	}
	return out
}

func bf16Inputs() []float32 {
	return boundaryInputs(0x7f7f, func(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) })
}

func f16Inputs() []float32 { return boundaryInputs(0x7bff, float16To32) }

// TestHalfEncoderReferences checks the scalar references of the encoders
// against FloatCodec.Encode (the specification) at every rounding boundary,
// and Float32ToFloat16 against x448/float16 on the non-NaN ones.
func TestHalfEncoderReferences(t *testing.T) {
	for _, sat := range []bool{false, true} {
		for _, x := range bf16Inputs() {
			want := uint16(simdCodecBF16.Encode(x, RoundEven, sat, 0))
			require.Equal(t, want, float32ToBFloat16(x, sat), "bfloat16 %#08x sat=%v", math.Float32bits(x), sat)
		}
		for _, x := range f16Inputs() {
			want := uint16(simdCodecF16.Encode(x, RoundEven, sat, 0))
			require.Equal(t, want, float32ToFloat16(x, sat), "float16 %#08x sat=%v", math.Float32bits(x), sat)
			if !sat && x == x {
				require.Equal(t, uint16(float16.Fromfloat32(x)), float32ToFloat16(x, false), "x448 %#08x", math.Float32bits(x))
			}
		}
	}
	// Hand-derived codes: 1 → 0x3c00 / 0x3f80; 65520 (the tie with 2^16) → Inf or
	// 65504 saturated; 2^-25 (half the smallest subnormal, a tie) → 0; 3·2^-26 → 1;
	// bfloat16 of 1+2^-8 (a tie, even kept digit) → 0x3f80, of 1+3·2^-8 → 0x3f82;
	// the signalling NaN 0x7f800001 → quiet 0x7e00 / 0x7fc0 with its sign.
	require.Equal(t, uint16(0x3c00), float32ToFloat16(1, true))
	require.Equal(t, uint16(0x7c00), float32ToFloat16(65520, false))
	require.Equal(t, uint16(0xfbff), float32ToFloat16(-65520, true))
	require.Equal(t, uint16(0x0000), float32ToFloat16(0x1p-25, true))
	require.Equal(t, uint16(0x0001), float32ToFloat16(0x3p-26, true))
	require.Equal(t, uint16(0x3f80), float32ToBFloat16(1, true))
	require.Equal(t, uint16(0x3f80), float32ToBFloat16(1+0x1p-8, true))
	require.Equal(t, uint16(0x3f82), float32ToBFloat16(1+0x3p-8, true))
	require.Equal(t, uint16(0x7f7f), float32ToBFloat16(float32(math.Inf(1)), true))
	require.Equal(t, uint16(0xff80), float32ToBFloat16(float32(math.Inf(-1)), false))
	require.Equal(t, uint16(0x7e00), float32ToFloat16(math.Float32frombits(0x7f800001), true))
	require.Equal(t, uint16(0xffc0), float32ToBFloat16(math.Float32frombits(0xff800001), true))
}

// TestHalfEncodersTiers checks every tier's encoders against the references
// on all boundary inputs and on every length up to three vectors plus one at
// every offset into a vector.
func TestHalfEncodersTiers(t *testing.T) {
	inputs := map[string][]float32{"bfloat16": bf16Inputs(), "float16": f16Inputs()}
	// The expected codes come from the scalar references, which
	// TestHalfEncoderReferences checks against FloatCodec.Encode.
	scalar := func(f func(float32, bool) uint16) func([]uint16, []float32, bool) {
		return func(dst []uint16, src []float32, sat bool) {
			for i, x := range src {
				dst[i] = f(x, sat)
			}
		}
	}
	encs := map[string][2]func([]uint16, []float32, bool){
		"bfloat16": {Float32ToBFloat16, scalar(float32ToBFloat16)},
		"float16":  {Float32ToFloat16, scalar(float32ToFloat16)},
	}
	forEachTier(t, func(t *testing.T) {
		forEachStore(t, func(t *testing.T) {
			for name, src := range inputs {
				enc, ref := encs[name][0], encs[name][1]
				for _, sat := range []bool{false, true} {
					want, got := make([]uint16, len(src)), make([]uint16, len(src))
					ref(want, src, sat)
					enc(got, src, sat)
					requireSame(t, want, got, "%s sat=%v", name, sat)
					for n := 0; n <= 3*16+1; n++ {
						off := n % 16
						s := src[off : off+n]
						// dst at another offset than src, so that the
						// non-temporal kernels peel a different head.
						w, g := make([]uint16, n+1), make([]uint16, n+1+n%7)[n%7:]
						w[n], g[n] = 0xbeef, 0xbeef
						ref(w[:n], s, sat)
						enc(g, s, sat)
						requireSame(t, w, g, "%s sat=%v n=%d", name, sat, n)
					}
				}
			}
		})
	})
}

// TestHalfDecodersTiers checks every tier's decoders, code and byte forms,
// against the references over all 65536 codes, at every offset (the byte
// forms at odd byte offsets too) and every length up to three vectors plus one.
func TestHalfDecodersTiers(t *testing.T) {
	const n = 1 << 16
	codes := make([]uint16, n+16)
	raw := make([]byte, 2*len(codes)+1)
	for i := range codes {
		codes[i] = uint16(i)
		binary.LittleEndian.PutUint16(raw[1+2*i:], uint16(i))
	}
	type dec struct {
		name   string
		codes  func([]float32, []uint16)
		bytes  func([]float32, []byte)
		refC   func([]float32, []uint16)
		refB   func([]float32, []byte)
		scalar func(uint16) float32
	}
	decs := []dec{
		{"float16", Float16ToFloat32, Float16BytesToFloat32, f16ToF32Go, f16BytesToF32Go,
			func(h uint16) float32 { return float16.Frombits(h).Float32() }},
		{"bfloat16", BFloat16ToFloat32, BFloat16BytesToFloat32, bf16ToF32Go, bf16BytesToF32Go,
			func(h uint16) float32 { return math.Float32frombits(quiet(uint32(h) << 16)) }},
	}
	bitsOf := func(f []float32) []uint32 {
		b := make([]uint32, len(f))
		for i, x := range f {
			b[i] = math.Float32bits(x)
		}
		return b
	}
	forEachTier(t, func(t *testing.T) {
		forEachStore(t, func(t *testing.T) {
			for _, d := range decs {
				want := make([]float32, n)
				for h := range n {
					want[h] = d.scalar(uint16(h))
				}
				got := make([]float32, n)
				d.codes(got, codes[:n])
				requireSame(t, bitsOf(want), bitsOf(got), "%s", d.name)
				clear(got)
				d.bytes(got, raw[1:1+2*n])
				requireSame(t, bitsOf(want), bitsOf(got), "%s bytes", d.name)
				for m := 0; m <= 3*16+1; m++ {
					for _, off := range []int{m % 16, 16 - m%16} {
						w, g := make([]float32, m+1), make([]float32, m+1+m%5)[m%5:]
						w[m], g[m] = 42, 42
						d.refC(w[:m], codes[off:off+m])
						d.codes(g, codes[off:off+m])
						requireSame(t, bitsOf(w), bitsOf(g), "%s n=%d off=%d", d.name, m, off)
						clear(g[:m])
						d.bytes(g[:m], raw[2*off+1:])
						requireSame(t, bitsOf(w), bitsOf(g), "%s bytes n=%d off=%d", d.name, m, off)
						d.refB(w[:m], raw[2*off:])
						d.bytes(g[:m], raw[2*off:])
						requireSame(t, bitsOf(w), bitsOf(g), "%s bytes n=%d even off=%d", d.name, m, off)
					}
				}
			}
		})
	})
}
