package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refLUTIndex counts the bounds ≤ x one by one.
func refLUTIndex(bounds []float32, x float32) int {
	n := 0
	for _, b := range bounds {
		if x >= b {
			n++
		}
	}
	return n
}

// refLUTEncode is the definition of LUTEncoder.Encode, written out plainly.
func refLUTEncode(bounds []float32, codes []uint8, signBit uint8, negZero bool, nan uint8, x float32) uint8 {
	switch {
	case math.IsNaN(float64(x)):
		return nan
	case signBit == 0:
		return codes[refLUTIndex(bounds, x)]
	}
	c := codes[refLUTIndex(bounds, float32(math.Abs(float64(x))))]
	if x < 0 || (negZero && math.Signbit(float64(x))) {
		c |= signBit
	}
	return c
}

func TestLUTEncodeHand(t *testing.T) {
	// Entries −1, 0, 2 with bounds −0.5 (x ≥ −0.5 leaves −1) and 1.
	e := NewLUTEncoder([]float32{-0.5, 1}, []uint8{5, 6, 7}, 0, false, 9)
	for _, c := range []struct {
		x    float32
		want uint8
	}{
		{-100, 5}, {-0.5000001, 5}, {-0.5, 6}, {0, 6}, {float32(math.Copysign(0, -1)), 6},
		{0.9999999, 6}, {1, 7}, {float32(math.Inf(1)), 7}, {float32(math.Inf(-1)), 5}, {float32(math.NaN()), 9},
	} {
		assert.Equal(t, c.want, e.Encode(c.x), "x=%v", c.x)
	}
	assert.Equal(t, 3, e.Entries())
	// Sign-magnitude: magnitudes 0, 1 (bound 0.5), sign bit 2.
	for _, negZero := range []bool{false, true} {
		s := NewLUTEncoder([]float32{0.5}, []uint8{0, 1}, 2, negZero, 0)
		negZeroCode := uint8(0)
		if negZero {
			negZeroCode = 2
		}
		for _, c := range []struct {
			x    float32
			want uint8
		}{
			{0.25, 0}, {0.5, 1}, {-0.25, 2}, {-0.5, 3}, {-7, 3}, {0, 0},
			{float32(math.Copysign(0, -1)), negZeroCode}, {float32(math.NaN()), 0},
		} {
			assert.Equal(t, c.want, s.Encode(c.x), "negZero=%v x=%v", negZero, c.x)
		}
	}
}

func TestLUTEncoderPanics(t *testing.T) {
	assert.Panics(t, func() { NewLUTEncoder([]float32{1, 1}, []uint8{0, 1, 2}, 0, false, 0) })
	assert.Panics(t, func() { NewLUTEncoder([]float32{2, 1}, []uint8{0, 1, 2}, 0, false, 0) })
	assert.Panics(t, func() { NewLUTEncoder([]float32{float32(math.NaN())}, []uint8{0, 1}, 0, false, 0) })
	assert.Panics(t, func() { NewLUTEncoder([]float32{1}, []uint8{0}, 0, false, 0) })
	assert.Panics(t, func() { NewLUTEncoder(make([]float32, 256), make([]uint8, 257), 0, false, 0) })
	assert.NotPanics(t, func() { NewLUTEncoder(nil, []uint8{3}, 0, false, 0) })
	assert.NotPanics(t, func() { NewLUTEncoder([]float32{1, float32(math.Inf(1))}, []uint8{0, 1, 2}, 0, false, 0) })
}

// randomBounds returns n strictly ascending finite bounds.
func randomBounds(r *rand.Rand, n int) []float32 {
	b := make([]float32, 0, n)
	x := float32(-r.Float64() * 10)
	for len(b) < n {
		x += float32(r.Float64()*2) + 1e-3
		b = append(b, x)
	}
	return b
}

func TestLUTEncodeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, entries := range []int{1, 2, 3, 5, 8, 15, 16, 17, 100, 256} {
		bounds := randomBounds(r, entries-1)
		codes := make([]uint8, entries)
		for i := range codes {
			codes[i] = uint8(r.IntN(256))
		}
		for _, signBit := range []uint8{0, 0x80} {
			for _, negZero := range []bool{false, true} {
				e := NewLUTEncoder(bounds, codes, signBit, negZero, 0x55)
				src := make([]float32, 0, 3000)
				for range 2000 {
					src = append(src, float32(r.NormFloat64()*8))
				}
				for _, b := range bounds {
					src = append(src, b, math.Nextafter32(b, float32(math.Inf(-1))), -b, math.Nextafter32(-b, 0))
				}
				src = append(src, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
					float32(math.NaN()), 1e-45, -1e-45, math.MaxFloat32, -math.MaxFloat32)
				got := make([]uint8, len(src))
				e.EncodeSlice(got, src)
				scaled := make([]uint8, len(src))
				e.EncodeScaled(scaled, src, 0.75)
				for i, x := range src {
					require.Equal(t, refLUTEncode(bounds, codes, signBit, negZero, 0x55, x), got[i], "entries %d sign %x x=%v", entries, signBit, x)
					require.Equal(t, refLUTEncode(bounds, codes, signBit, negZero, 0x55, x*0.75), scaled[i], "scaled x=%v", x)
				}
			}
		}
	}
}

func TestLUTDecode(t *testing.T) {
	var lut [256]float32
	for i := range lut {
		lut[i] = float32(i) - 100.5
	}
	src := []uint8{0, 1, 255, 100, 7}
	dst := make([]float32, len(src))
	LUTDecode(dst, src, &lut)
	assert.Equal(t, []float32{-100.5, -99.5, 154.5, -0.5, -93.5}, dst)
	LUTDecodeScaled(dst, src, &lut, 2)
	assert.Equal(t, []float32{-201, -199, 309, -1, -187}, dst)

}

func FuzzLUTEncode(f *testing.F) {
	f.Add(bytesOf(-0.5, 1, 0, 3), bytesOf(0, 0.4999, 1, -2, 1e30))
	f.Fuzz(func(t *testing.T, bb, xb []byte) {
		raw := floatsOf(bb)
		var bounds []float32
		for _, b := range raw {
			if len(bounds) < 255 && !math.IsNaN(float64(b)) && !math.IsInf(float64(b), 0) &&
				(len(bounds) == 0 || b > bounds[len(bounds)-1]) {
				bounds = append(bounds, b)
			}
		}
		codes := make([]uint8, len(bounds)+1)
		for i := range codes {
			codes[i] = uint8(i*37 + 1)
		}
		for _, signBit := range []uint8{0, 0x80} {
			e := NewLUTEncoder(bounds, codes, signBit, true, 3)
			for _, x := range floatsOf(xb) {
				if got, want := e.Encode(x), refLUTEncode(bounds, codes, signBit, true, 3, x); got != want {
					t.Fatalf("bounds %v sign %x x=%v: got %d want %d", bounds, signBit, x, got, want)
				}
			}
		}
	})
}

// nf4Bench is a 16-entry table like NF4: bounds at the midpoints of 16
// ascending values in [−1, 1].
func nf4Bench() (*LUTEncoder, *[256]float32) {
	vals := []float32{-1, -0.696, -0.525, -0.395, -0.284, -0.185, -0.091, 0, 0.080, 0.161, 0.246, 0.338, 0.441, 0.563, 0.723, 1}
	bounds := make([]float32, 15)
	codes := make([]uint8, 16)
	var lut [256]float32
	for i := range vals {
		codes[i] = uint8(i)
		lut[i] = vals[i]
		if i > 0 {
			bounds[i-1] = (vals[i-1] + vals[i]) / 2
		}
	}
	return NewLUTEncoder(bounds, codes, 0, false, 7), &lut
}

// BenchmarkLUTEncode encodes 64 Ki floats through a 16-entry table (compare
// with BenchmarkMemRead/L2 of the same run).
func BenchmarkLUTEncode(b *testing.B) {
	e, _ := nf4Bench()
	src := weightsInput(simdBenchSizes[1].n)
	dst := make([]uint8, len(src))
	b.Run("L2", func(b *testing.B) {
		b.SetBytes(int64(4 * len(src)))
		for b.Loop() {
			e.EncodeScaled(dst, src, 0.25)
		}
	})
}

// BenchmarkLUTDecode decodes 64 Ki codes through a 16-entry table.
func BenchmarkLUTDecode(b *testing.B) {
	e, lut := nf4Bench()
	src := weightsInput(simdBenchSizes[1].n)
	codes := make([]uint8, len(src))
	e.EncodeScaled(codes, src, 0.25)
	dst := make([]float32, len(src))
	b.Run("L2", func(b *testing.B) {
		b.SetBytes(int64(4 * len(src)))
		for b.Loop() {
			LUTDecodeScaled(dst, codes, lut, 4)
		}
	})
}
