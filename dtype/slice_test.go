package dtype

import (
	"math"
	"math/rand/v2"
	"testing"
)

// specialValues are inputs every codec must get right in slices as in scalars.
var specialValues = []float32{
	0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
	float32(math.NaN()), math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800001),
	math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
	1, -1, 0.5, 1.5, 2.5, 3.5, 448, 464, 465, 480, 57344, 61440, 65504, 65520, 1e-30, -1e-40,
	// bfloat16's overflow boundary (max finite 0x7f7f, the tie with Inf at
	// 0x7f7f8000) and ties among its subnormals.
	math.Float32frombits(0x7f7f7fff), math.Float32frombits(0x7f7f8000), math.Float32frombits(0xff7f8001),
	math.Float32frombits(0x00008000), math.Float32frombits(0x00018000), math.Float32frombits(0x80018001),
}

func randomInputs(n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 99))
	src := make([]float32, 0, n+len(specialValues))
	src = append(src, specialValues...)
	for range n {
		switch rng.IntN(3) {
		case 0:
			src = append(src, math.Float32frombits(rng.Uint32()))
		case 1:
			src = append(src, float32(rng.NormFloat64()*math.Pow(2, float64(rng.IntN(40)-20))))
		default:
			src = append(src, float32(rng.IntN(64))*0.125-4) // many exact ties
		}
	}
	return src
}

func checkSliceAgrees[C Code](t *testing.T, f *Format, src []float32, o Options) {
	t.Helper()
	codes := make([]C, len(src))
	EncodeSlice(f, codes, src, o)
	for i, x := range src {
		want := f.EncodeWith(x, o)
		if o.Rounding == RoundStochastic {
			oi := o
			oi.Seed = o.Seed
			// element i draws Rand32(seed, i): compare through a one-element slice
			// positioned at index i.
			one := make([]C, i+1)
			pad := make([]float32, i+1)
			pad[i] = x
			EncodeSlice(f, one, pad, oi)
			want = uint32(one[i])
		}
		if uint32(codes[i]) != want {
			t.Fatalf("%s %+v: EncodeSlice[%d](%g) = %#x, EncodeWith = %#x", f, o, i, x, codes[i], want)
		}
	}
	vals := make([]float32, len(src))
	DecodeSlice(f, vals, codes)
	for i, c := range codes {
		w, g := f.Decode(uint32(c)), vals[i]
		if math.Float32bits(w) != math.Float32bits(g) {
			t.Fatalf("%s: DecodeSlice(%#x) = %g, Decode = %g", f, c, g, w)
		}
	}
}

// TestSlicesAgreeWithScalar checks the slice kernels (including the RNE fast path
// and the decode tables) element by element against the scalar codec.
func TestSlicesAgreeWithScalar(t *testing.T) {
	src := randomInputs(20000, 1)
	formats := testFormats(t, 12)
	for _, n := range []string{"float16", "bfloat16", "float32", "e8m15", "e5m10b20", "int16", "uint16", "q7.8"} {
		formats = append(formats, MustParse(n))
	}
	for _, f := range formats {
		for _, o := range []Options{{}, {Overflow: OverflowIEEE}, {Rounding: RoundAway}, {Rounding: RoundZero}, {FullRange: true}} {
			switch f.CodeBytes() {
			case 1:
				checkSliceAgrees[uint8](t, f, src, o)
				checkSliceAgrees[uint16](t, f, src[:500], o)
			case 2:
				checkSliceAgrees[uint16](t, f, src, o)
			}
			checkSliceAgrees[uint32](t, f, src[:500], o)
		}
		checkSliceAgrees[uint32](t, f, src[:60], Options{Rounding: RoundStochastic, Seed: 5})
	}
}

// TestDecodeSlice16AllCodes checks the float16 and bfloat16 slice decoders on
// every code, NaNs of every payload included, against the scalar codec.
func TestDecodeSlice16AllCodes(t *testing.T) {
	codes := make([]uint16, 1<<16)
	for i := range codes {
		codes[i] = uint16(i)
	}
	vals := make([]float32, len(codes))
	for _, name := range []string{"float16", "bfloat16"} {
		f := MustParse(name)
		DecodeSlice(f, vals, codes)
		for i, c := range codes {
			if w := f.Decode(uint32(c)); math.Float32bits(w) != math.Float32bits(vals[i]) {
				t.Fatalf("%s: DecodeSlice(%#04x) = %#08x, Decode = %#08x", name, c, math.Float32bits(vals[i]), math.Float32bits(w))
			}
		}
	}
}

func TestSlicePanicsOnMisuse(t *testing.T) {
	f := MustParse("float16")
	mustPanic := func(name string, fn func()) {
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		fn()
	}
	mustPanic("narrow code type", func() { EncodeSlice(f, make([]uint8, 2), make([]float32, 2), Options{}) })
	mustPanic("length mismatch", func() { DecodeSlice(f, make([]float32, 3), make([]uint16, 2)) })
}
