package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// sqErrValues returns float32 values that reach every code and every
// rounding boundary of E2M1, E4M3 and the small integer formats: all of
// them with their neighbours one ulp away, times powers of two around 1, plus
// random bit patterns (NaN excluded), ±0, ±Inf, subnormals and the largest
// floats.
func sqErrValues(r *rand.Rand) []float32 {
	inf := float32(math.Inf(1))
	base := []float32{0, 0.125, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 12,
		0.5 / 64, 1.5 / 64, 0.001953125, 240, 256, 448, 464, 480, 512, 126.5, 127.5, 128, 1 << 21, inf,
		math.MaxFloat32, math.SmallestNonzeroFloat32, 1e-39}
	var out []float32
	for _, b := range base {
		for e := -8; e <= 8; e++ {
			v := b * float32(math.Ldexp(1, e))
			for _, u := range []float32{v, math.Nextafter32(v, 0), math.Nextafter32(v, inf)} {
				out = append(out, u, -u)
			}
		}
	}
	for range 1 << 16 {
		u := math.Float32frombits(r.Uint32())
		if u == u {
			out = append(out, u)
		}
	}
	return out
}

// TestRoundElements: the one-value rounders equal the codecs' decode of
// their encode (round to nearest even, saturating) bit for bit.
func TestRoundElements(t *testing.T) {
	vals := sqErrValues(rand.New(rand.NewPCG(14, 6)))
	int4 := IntCodec{Bits: 4, Signed: true, Min: -7, Max: 7}
	int8f := IntCodec{Bits: 8, Signed: true, Min: -128, Max: 127}
	for _, x := range vals {
		require.Equal(t, math.Float32bits(e2m1Codec.Decode(e2m1Codec.Encode(x, RoundEven, true, 0))),
			math.Float32bits(roundE2M1(x)), "e2m1 %v (%#x)", x, math.Float32bits(x))
		require.Equal(t, math.Float32bits(e4m3fnCodec.Decode(e4m3fnCodec.Encode(x, RoundEven, true, 0))),
			math.Float32bits(roundE4M3FN(x)), "e4m3fn %v (%#x)", x, math.Float32bits(x))
		require.Equal(t, math.Float32bits(q16Codec.Decode(q16Codec.Encode(x, RoundEven, 0))),
			math.Float32bits(roundInt(x, 64, 1.0/64, -127, 127)), "q1.6 %v", x)
		require.Equal(t, math.Float32bits(int4.Decode(int4.Encode(x, RoundEven, 0))),
			math.Float32bits(roundInt(x, 1, 1, -7, 7)), "int4 %v", x)
		require.Equal(t, math.Float32bits(int8f.Decode(int8f.Encode(x, RoundEven, 0))),
			math.Float32bits(roundInt(x, 1, 1, -128, 127)), "int8 full range %v", x)
	}
}

// sqErrRef is the general path of a candidate error: scale, encode with
// the codec, decode, and sum in index order.
func sqErrRef(b *SqErrBlock, round func(float32) float32) float64 {
	var sum float64
	for i, x := range b.V {
		if b.Keep != nil && !b.Keep[i] {
			continue
		}
		q := x * b.Mul
		if b.Div != 0 {
			q = x / b.Div
		}
		d := float64(x) - float64(round(q)*b.DMul)
		e := d * d
		if b.W != nil {
			e *= float64(b.W[i])
		}
		sum += e
	}
	return sum
}

// TestSqErr: the one-pass candidate errors equal the general path's sums
// bit for bit, for multiplied and divided scales, with and without weights
// and keep flags.
func TestSqErr(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 7))
	int4 := IntCodec{Bits: 4, Signed: true, Min: -7, Max: 7}
	for _, tc := range []struct {
		name string
		fn   func(*SqErrBlock) float64
		ref  func(float32) float32
		blk  SqErrBlock
		lane int // lanes of the sum (1: index order)
	}{
		{"e2m1", sqErrE2M1, func(q float32) float32 { return e2m1Codec.Decode(e2m1Codec.Encode(q, RoundEven, true, 0)) }, SqErrBlock{}, 1},
		{"e4m3fn", sqErrE4M3FN, func(q float32) float32 { return e4m3fnCodec.Decode(e4m3fnCodec.Encode(q, RoundEven, true, 0)) }, SqErrBlock{}, 16},
		{"int4", sqErrInt, func(q float32) float32 { return int4.Decode(int4.Encode(q, RoundEven, 0)) },
			SqErrBlock{IntScale: 1, IntStep: 1, IntLo: -7, IntHi: 7}, 1},
		{"q1.6", sqErrInt, func(q float32) float32 { return q16Codec.Decode(q16Codec.Encode(q, RoundEven, 0)) },
			SqErrBlock{IntScale: 64, IntStep: 1.0 / 64, IntLo: -127, IntHi: 127}, 1},
	} {
		for trial := range 2000 {
			n := 1 + r.IntN(140)
			b := tc.blk
			b.V = make([]float32, n)
			e := r.IntN(80) - 40
			for i := range b.V {
				b.V[i] = float32(r.NormFloat64() * math.Ldexp(1, e))
			}
			if trial%3 == 0 {
				b.W = make([]float32, n)
				for i := range b.W {
					b.W[i] = float32(r.ExpFloat64())
				}
			}
			if trial%5 == 0 {
				b.Keep = make([]bool, n)
				for i := range b.Keep {
					b.Keep[i] = r.IntN(3) != 0
				}
			}
			s := float32(math.Ldexp(1, e+r.IntN(5)-3))
			if trial%2 == 0 {
				b.Mul, b.DMul = 1/s, s
			} else {
				d := s * (1 + float32(r.IntN(8))/8)
				b.Div, b.DMul = d, d
			}
			require.Equal(t, math.Float64bits(sqErrRefLanes(&b, tc.ref, tc.lane)), math.Float64bits(tc.fn(&b)), "%s trial %d", tc.name, trial)
		}
	}
}

// FuzzSqErr compares the one-pass candidate errors with the general path
// on fuzzed blocks of four values and a fuzzed scale.
func FuzzSqErr(f *testing.F) {
	f.Add(uint32(0x3f800000), uint32(0x40200000), uint32(0xc0b00000), uint32(0x3e800000), uint32(0x3f000000), false)
	f.Add(uint32(0x00000001), uint32(0x7f7fffff), uint32(0x80000000), uint32(0x43e00000), uint32(0x3c800000), true)
	int4 := IntCodec{Bits: 4, Signed: true, Min: -7, Max: 7}
	f.Fuzz(func(t *testing.T, a, b, c, d, s uint32, div bool) {
		v := []float32{math.Float32frombits(a), math.Float32frombits(b), math.Float32frombits(c), math.Float32frombits(d)}
		sc := math.Float32frombits(s &^ (1 << 31))
		for _, x := range append(v, sc) {
			if x != x || math.IsInf(float64(x), 0) {
				return
			}
		}
		if sc == 0 {
			return
		}
		blk := SqErrBlock{V: v, DMul: sc, Mul: 1 / sc}
		if div {
			blk.Div, blk.Mul = sc, 0
		}
		require.Equal(t, math.Float64bits(sqErrRef(&blk, func(q float32) float32 { return e2m1Codec.Decode(e2m1Codec.Encode(q, RoundEven, true, 0)) })),
			math.Float64bits(sqErrE2M1(&blk)))
		require.Equal(t, math.Float64bits(sqErrRefLanes(&blk, func(q float32) float32 { return e4m3fnCodec.Decode(e4m3fnCodec.Encode(q, RoundEven, true, 0)) }, 16)),
			math.Float64bits(sqErrE4M3FN(&blk)))
		ib := blk
		ib.IntScale, ib.IntStep, ib.IntLo, ib.IntHi = 1, 1, -7, 7
		require.Equal(t, math.Float64bits(sqErrRef(&ib, func(q float32) float32 { return int4.Decode(int4.Encode(q, RoundEven, 0)) })),
			math.Float64bits(sqErrInt(&ib)))
	})
}

// TestEncodeIntRNE: EncodeInt's float path for RoundEven equals
// IntCodec.Encode value by value, NaN included.
func TestEncodeIntRNE(t *testing.T) {
	vals := append(sqErrValues(rand.New(rand.NewPCG(14, 8))), float32(math.NaN()), -float32(math.NaN()))
	for _, c := range []IntCodec{
		{Bits: 4, Signed: true, Min: -7, Max: 7},
		{Bits: 4, Signed: true, Min: -8, Max: 7},
		{Bits: 4, Min: 0, Max: 15},
		{Bits: 8, Signed: true, Min: -127, Max: 127},
		{Bits: 8, FracBits: 6, Signed: true, Min: -127, Max: 127},
		{Bits: 16, Signed: true, Min: -32768, Max: 32767},
	} {
		require.True(t, c.rneFast())
		got := make([]uint32, len(vals))
		EncodeInt(&c, got, vals, RoundEven, 0)
		for i, x := range vals {
			require.Equal(t, c.Encode(x, RoundEven, 0), got[i], "%+v %v (%#x)", c, x, math.Float32bits(x))
		}
	}
}

// TestEncodeE2M1: EncodeFloat's E2M1 path equals FloatCodec.Encode value by
// value, NaN included.
func TestEncodeE2M1(t *testing.T) {
	vals := append(sqErrValues(rand.New(rand.NewPCG(14, 9))), float32(math.NaN()), -float32(math.NaN()))
	got := make([]uint8, len(vals))
	EncodeFloat(&e2m1Codec, got, vals, RoundEven, true, 0)
	for i, x := range vals {
		require.Equal(t, uint8(e2m1Codec.Encode(x, RoundEven, true, 0)), got[i], "%v (%#x)", x, math.Float32bits(x))
	}
}
