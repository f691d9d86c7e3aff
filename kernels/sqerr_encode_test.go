package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// e2m1EncodeTies are the E2M1 rounding boundaries (midpoints of neighbouring
// values, from the value table 0, 0.5, 1, 1.5, 2, 3, 4, 6) and the values
// themselves.
var e2m1EncodeTies = []float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 0, 0.5, 1, 1.5, 2, 3, 4, 6, 7, 8}

// e2m1EncodeInput returns n values for the E2M1 encoder: ties and E2M1
// values ±1 ulp scaled by small powers of two, edge bit patterns (NaN, Inf,
// zeros, subnormals, huge) and gaussians, mixed.
func e2m1EncodeInput(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch r.IntN(3) {
		case 0:
			t := e2m1EncodeTies[r.IntN(len(e2m1EncodeTies))]
			bits := math.Float32bits(float32(math.Ldexp(float64(t), r.IntN(3)-1))) + uint32(r.IntN(3)) - 1
			x[i] = math.Float32frombits(bits | r.Uint32()&0x80000000)
		case 1:
			x[i] = math.Float32frombits(edgeBits(r))
		default:
			x[i] = float32(r.NormFloat64() * 3)
		}
	}
	return x
}

// checkEncodeE2M1 compares EncodeFloat's E2M1 codes with the codec's,
// value by value.
func checkEncodeE2M1(t *testing.T, dst []uint8, src []float32, msg string, args ...any) {
	t.Helper()
	EncodeFloat(&e2m1Codec, dst, src, RoundEven, true, 0)
	for i, x := range src {
		if want := uint8(e2m1Codec.Encode(x, RoundEven, true, 0)); dst[i] != want {
			require.Equal(t, want, dst[i], "%s: value %d = %v (%#x)", fmt.Sprintf(msg, args...), i, x, math.Float32bits(x))
		}
	}
}

// TestEncodeE2M1Tiers: the E2M1 slice encoder of every tier equals the codec
// for every length up to three vectors and more, unaligned slices, and
// slices with and without NaNs.
func TestEncodeE2M1Tiers(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 30))
		for _, n := range testLengths() {
			off := r.IntN(4)
			src := e2m1EncodeInput(r, n+off)[off:]
			if r.IntN(2) == 0 {
				for i := range src {
					if src[i] != src[i] {
						src[i] = 1.25
					}
				}
			}
			checkEncodeE2M1(t, make([]uint8, n+off)[off:], src, "n=%d", n)
		}
	})
}

// FuzzEncodeE2M1 compares the E2M1 slice encoder of the active tier with
// the codec on fuzzed bit patterns.
func FuzzEncodeE2M1(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0x20, 0x40, 0, 0, 0xa0, 0x40, 0, 0, 0xc0, 0x7f})
	f.Add(make([]byte, 4*40))
	f.Fuzz(func(t *testing.T, data []byte) {
		src := make([]float32, len(data)/4)
		for i := range src {
			src[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		checkEncodeE2M1(t, make([]uint8, len(src)), src, "fuzz")
	})
}

// TestMulSlice: MulSlice of every tier gives each product as float32
// multiplication rounds it (edge values, powers of two, every length).
func TestMulSlice(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(8, 80))
		for _, n := range testLengths() {
			off := r.IntN(4)
			src := edgeFloats(r, n+off)[off:]
			dst := make([]float32, n+off)[off:]
			for _, m := range []float32{0.5, 0x1p-127, 3, float32(r.NormFloat64())} {
				MulSlice(dst, src, m)
				for i, x := range src {
					want := x * m
					if want != want {
						require.True(t, dst[i] != dst[i], "n=%d m=%v i=%d", n, m, i)
						continue
					}
					require.Equal(t, math.Float32bits(want), math.Float32bits(dst[i]), "n=%d m=%v i=%d", n, m, i)
				}
			}
		}
	})
}
