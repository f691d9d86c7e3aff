package tcast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zeroPointRows builds a [4, cols] weight whose rows have the ranges below,
// every value on a grid of step 1/q so that the asymmetric cast is exact when
// the zero points are right. Each group of 32 along a row holds the row's
// minimum at its first position and the row's maximum at its second (so every
// group, not only every row, has the row's range); the rest walk the grid
// between them.
//
// Asymmetric quantization (docs/NUMERICS.md §8) maps [min(lo, 0), max(hi, 0)]
// onto the codes 0..qmax with s = (hi − lo)/qmax and zp = round(−lo/s). Each
// row, widened to include 0, spans hi − lo = qmax/q, hence s = 1/q exactly, and
//
//	row 0, [0.5, qmax/q] (wholly positive): lo = 0,          zp = 0
//	row 1, [−qmax/q, −0.5] (wholly negative): lo = −qmax/q, hi = 0, zp = qmax
//	row 2, [−0.5, qmax/q − 0.5] (mixed):     lo = −0.5,      zp = q/2
//	row 3, [−0.25, qmax/q − 0.25] (mixed):   lo = −0.25,     zp = q/4
//
// The range always includes 0, so no zero point is below 0 in unsigned terms:
// row 0 would ideally want zp = −0.5·q if its range were [0.5, max], and gets 0.
// For uint8 (q = 256, qmax = 255): s = 1/256 and zp = 0, 255, 128, 64; row 1
// and row 2 need zero points above 127, which an int8 zero point cannot hold.
// For uint4 (q = 16, qmax = 15): s = 1/16 and zp = 0, 15, 8, 4.
func zeroPointRows(q, qmax, cols int) (x []float32, wantZero []byte) {
	lows := []int{q / 2, -qmax, -q / 2, -q / 4} // row minimum, in steps of 1/q
	highs := []int{qmax, -q / 2, qmax - q/2, qmax - q/4}
	for r := range 4 {
		lo, hi := lows[r], highs[r]
		for k := range cols {
			var n int
			switch k % 32 {
			case 0:
				n = lo
			case 1:
				n = hi
			default:
				n = lo + (k*7)%(hi-lo+1)
			}
			x = append(x, float32(n)/float32(q))
		}
	}
	return x, []byte{0, byte(qmax), byte(q / 2), byte(q / 4)}
}

// TestZeroPointsHoldTheirRange casts rows whose zero points span the whole
// unsigned range: every zero point must be stored as derived by hand in
// zeroPointRows, and every value, being on the quantization grid, must come
// back exactly.
func TestZeroPointsHoldTheirRange(t *testing.T) {
	for _, tc := range []struct {
		name      string
		q, qmax   int
		cols      int
		wantGroup int // groups per row
	}{
		{"uint8_channel", 256, 255, 64, 1},
		{"uint8_g32", 256, 255, 64, 2},
		{"uint8_g64", 256, 255, 128, 2},
		{"uint8_g128", 256, 255, 128, 1},
		{"uint4_channel", 16, 15, 64, 1},
		{"uint4_g32", 16, 15, 64, 2},
		{"uint4_g64", 16, 15, 128, 2},
		{"uint4_g128", 16, 15, 128, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, rowZero := zeroPointRows(tc.q, tc.qmax, tc.cols)
			v, a := castBoth(t, tc.name, x, []int{4, tc.cols}, DefaultOptions())
			require.NotNil(t, a.Zero)
			var want []byte
			for _, z := range rowZero {
				for range tc.wantGroup {
					want = append(want, z)
				}
			}
			got := make([]byte, a.Zero.Len())
			for i := range got {
				got[i] = byte(a.Zero.Format.Decode(getCode(a.Zero, i)))
			}
			assert.Equal(t, want, got, "zero points (row-major [row, group])")
			wrong, first := 0, -1
			for i := range x {
				if math.Float32bits(x[i]) != math.Float32bits(v[i]) {
					if wrong++; first < 0 {
						first = i
					}
				}
			}
			if wrong > 0 {
				t.Errorf("%d of %d values on the grid do not come back exactly; the first, element %d: %v → %v",
					wrong, len(x), first, x[first], v[first])
			}
		})
	}
}

// sqnrDB is 10·log10(Σx² / Σ(x − y)²).
func sqnrDB(x, y []float32) float64 {
	var sig, noise float64
	for i := range x {
		d := float64(x[i]) - float64(y[i])
		sig += float64(x[i]) * float64(x[i])
		noise += d * d
	}
	return 10 * math.Log10(sig/noise)
}

// TestUint8ChannelSQNR casts a realistic [1024, 256] weight (Gaussian rows with
// per-row spreads and a few rows shifted to be wholly positive or wholly
// negative) per channel. With a zero point that holds 0..255, asymmetric uint8
// spends its 256 codes on [min, max] and is never worse than symmetric int8's
// 255 codes on [−amax, amax], so its SQNR must be at least int8_channel's
// (less a small margin for rounding noise); every channel's zero point must
// be round(−lo/s) with s = f32(hi − lo)/255 as docs/NUMERICS.md §8 states,
// unsaturated.
func TestUint8ChannelSQNR(t *testing.T) {
	const rows, cols = 1024, 256
	r := rand.New(rand.NewPCG(9, 1024))
	x := make([]float32, rows*cols)
	for i := range rows {
		spread := 0.01 + 0.05*r.Float64()
		shift := 0.0
		switch i % 16 {
		case 3:
			shift = 5 * spread // nearly wholly positive
		case 7:
			shift = -5 * spread // nearly wholly negative
		}
		for j := range cols {
			v := shift + spread*r.NormFloat64()
			switch i % 16 {
			case 11:
				v = math.Abs(v) // wholly positive
			case 13:
				v = -math.Abs(v) // wholly negative
			}
			x[i*cols+j] = float32(v)
		}
	}
	shape := []int{rows, cols}
	u8, a := castBoth(t, "uint8_channel", x, shape, DefaultOptions())
	i8, _ := castBoth(t, "int8_channel", x, shape, DefaultOptions())
	su, si := sqnrDB(x, u8), sqnrDB(x, i8)
	t.Logf("SQNR uint8_channel %.2f dB, int8_channel %.2f dB", su, si)
	assert.GreaterOrEqual(t, su, si-0.5)

	require.Equal(t, []int{rows, 1}, a.Zero.Shape)
	bad := 0
	for i := range rows {
		lo, hi := float32(0), float32(0)
		for _, v := range x[i*cols : (i+1)*cols] {
			lo, hi = min(lo, v), max(hi, v)
		}
		s := math.Float32frombits(uint32(a.Scale.Bytes[4*i]) | uint32(a.Scale.Bytes[4*i+1])<<8 |
			uint32(a.Scale.Bytes[4*i+2])<<16 | uint32(a.Scale.Bytes[4*i+3])<<24)
		require.Equal(t, (hi-lo)/255, s, "row %d: scale", i)
		want := math.RoundToEven(float64(-lo / s))
		got := float64(a.Zero.Format.Decode(getCode(a.Zero, i)))
		if want != got {
			bad++
			if bad <= 5 {
				t.Errorf("row %d: zero point %v, want %v (lo %v, s %v)", i, got, want, lo, s)
			}
		}
	}
	assert.Zero(t, bad, fmt.Sprintf("%d of %d channels have a wrong (saturated) zero point", bad, rows))
}

// TestZeroPointStaysWithinTheCodes: a scale that rounds down can put
// round(−lo/s) one past the largest code; the zero point is then kept at the
// largest code, so that 0 still has an exact code. uint4_nic is uint4 data
// with an IEEE e4m3 scale and an int8 zero point per channel (TensorCast's
// name). By hand, for the row [−15.9, 0, −7, −0.4]:
//
//	lo = −15.9, hi = 0, (hi − lo)/15 = 1.06, which e4m3 (steps of 1/8 in
//	[1, 2)) rounds to s = 1 (1.06 is below the midpoint 1.0625);
//	round(−lo/s) = round(15.9) = 16, past the codes 0..15, so zp = 15;
//	q = clip(round(x/s) + 15, 0, 15) = clip(−1) = 0, 15, 8, 15;
//	x' = (q − 15)·s = −15, 0, −7, 0.
//
// With zp = 16 the zeros would decode to (15 − 16)·s = −1.
func TestZeroPointStaysWithinTheCodes(t *testing.T) {
	x := []float32{-15.9, 0, -7, -0.4}
	v, a := castBoth(t, "uint4_nic", x, []int{1, 4}, DefaultOptions())
	assert.Equal(t, float32(15), a.Zero.Format.Decode(getCode(a.Zero, 0)))
	assert.Equal(t, []byte{0, 15, 8, 15}, a.Data.Bytes)
	assertBits(t, []float32{-15, 0, -7, 0}, v)
}
