package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE4M3HandDerived checks quantizeE4M3 on tiles whose scales are exact:
// amax 896 gives s = 2 (0x40000000), so 896 → 448 (0x7E), 3 → 1.5 (0x3C),
// 2^−9 → 2^−10, a tie between 0 and the smallest subnormal that goes to 0,
// and its negative to −0 (0x80); a NaN tile gets the float32 NaN and codes
// 0x7F; a tile of the smallest subnormal gets a scale that underflows to 0,
// and codes 0 whatever the sign.
func TestE4M3HandDerived(t *testing.T) {
	sub := math.Float32frombits(1)
	x := []float32{896, 3, 0x1p-9, -0x1p-9, 1, float32(math.NaN()), -5, 0, -sub, sub, -sub, 0}
	tiles := FP8Tiles{Cols: 4}
	forEachTier(t, func(t *testing.T) {
		codes, scales := make([]byte, 12), make([]byte, 12)
		quantizeE4M3(codes, scales, x, tiles)
		assert.Equal(t, []byte{0x7e, 0x3c, 0x00, 0x80, 0x7f, 0x7f, 0x7f, 0x7f, 0, 0, 0, 0}, codes)
		assert.Equal(t, []uint32{0x40000000, 0x7fc00000, 0}, words(scales))
		back := make([]float32, 12)
		dequantizeE4M3(back, codes, scales, tiles)
		assert.Equal(t, []float32{896, 3, 0, 0}, back[:4])
		assert.Equal(t, uint32(0x80000000), math.Float32bits(back[3]))
	})
}

func words(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// fp8Cases are the geometries of the differential tests: per tensor, per
// channel (rows of several lengths), 128×128 tiles on matrices that are
// and are not whole tiles, small square tiles, tiles of columns that are
// not a multiple of 16, and rows of tiles that the amd64 drivers take in
// several chunks (16 tiles of 128×128, 4 to a chunk; 600 tiles of 1×16,
// 512 to a chunk).
var fp8Cases = []struct{ rows, cols, tr, tc int }{
	{1, 5000, 0, 0}, {4, 1000, 1, 0}, {7, 48, 1, 0}, {256, 256, 128, 128}, {130, 300, 128, 128},
	{33, 70, 32, 32}, {5, 20, 2, 3}, {40, 96, 16, 16}, {3, 4100, 128, 128}, {1, 17, 0, 0},
	{200, 2048, 128, 128}, {2, 9600, 1, 16},
}

// fp8Input returns n floats on the edges of E4M3 quantization: the ties of
// every neighbouring pair of E4M3 values and the floats next to them at
// several scales (with a tile-wide amax of 448 times the scale), NaN and
// ±Inf, zeros, float32 subnormals, huge values.
func fp8Input(r *rand.Rand, n int) []float32 {
	x := groupInput(r, n)
	for i := 0; i < n; i += 1 + r.IntN(40) {
		p := float32(math.Ldexp(1, r.IntN(60)-30))
		c := uint32(r.IntN(0x7e))
		a, b := mx.e4m3fn[c], mx.e4m3fn[c+1]
		tie := (a + b) / 2 * p
		switch r.IntN(4) {
		case 0:
			x[i] = tie
		case 1:
			x[i] = -math.Nextafter32(tie, 0)
		case 2:
			x[i] = math.Nextafter32(tie, float32(math.Inf(1)))
		default:
			x[i] = 448 * p
		}
	}
	return x
}

// TestE4M3Tiers compares every tier's E4M3 kernels with the Go references
// for every geometry, with src one float off alignment.
func TestE4M3Tiers(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, tc := range fp8Cases {
		n := tc.rows * tc.cols
		buf := fp8Input(r, n+1)
		src := buf[1:]
		tl := FP8Tiles{Cols: tc.cols, TileRows: tc.tr, TileCols: tc.tc}
		msg := fmt.Sprintf("%+v rows %d", tl, tc.rows)
		_, _, _, _, _, tiles := tl.geometry("test", n)
		wc, ws := make([]byte, n), make([]byte, 4*tiles)
		quantE4M3Go(wc, ws, src, tl)
		want := make([]float32, n)
		dequantE4M3Go(want, wc, ws, tl)
		forEachTier(t, func(t *testing.T) {
			c, s := make([]byte, n), make([]byte, 4*tiles)
			quantizeE4M3(c, s, src, tl)
			require.Equal(t, wc, c, "%s codes", msg)
			require.Equal(t, ws, s, "%s scales", msg)
			got := make([]float32, n)
			dequantizeE4M3(got, wc, ws, tl)
			requireSame(t, floatBits(want), floatBits(got), "%s values", msg)
		})
	}
}

// TestE4M3Encoder checks the kernels' encoding against the codec on every
// tie of E4M3 and its neighbours, at every scale code from 2^−20 to 2^20 and
// at subnormal scales: one tile per scale, amax 448·s.
func TestE4M3Encoder(t *testing.T) {
	var x []float32
	for e := -20; e <= 20; e++ {
		p := float32(math.Ldexp(1, e))
		row := []float32{448 * p}
		for c := range uint32(0x7e) {
			tie := (mx.e4m3fn[c] + mx.e4m3fn[c+1]) / 2 * p
			row = append(row, tie, -tie, math.Nextafter32(tie, 0), -math.Nextafter32(tie, float32(math.Inf(1))),
				mx.e4m3fn[c]*p)
		}
		for len(row)%128 != 0 {
			row = append(row, 0)
		}
		x = append(x, row...)
	}
	tl := FP8Tiles{Cols: 128}
	tiles := len(x) / 128
	wc, ws := make([]byte, len(x)), make([]byte, 4*tiles)
	quantE4M3Go(wc, ws, x, tl)
	forEachTier(t, func(t *testing.T) {
		c, s := make([]byte, len(x)), make([]byte, 4*tiles)
		quantizeE4M3(c, s, x, tl)
		require.Equal(t, wc, c)
		require.Equal(t, ws, s)
	})
	// By hand: at scale 1 (amax 448) the tie between 1 and 1.125 (1.0625)
	// goes to the even 1 (0x38), the tie between 1.125 and 1.25 to 1.25
	// (0x3A).
	one := []float32{448, 1.0625, 1.1875, -1.0625}
	c, s := make([]byte, 4), make([]byte, 4)
	quantizeE4M3(c, s, one, FP8Tiles{})
	assert.Equal(t, []byte{0x7e, 0x38, 0x3a, 0xb8}, c)
}

// TestE4M3DecoderExhaustive decodes every code byte under special and
// random float32 scales (NaNs with payloads, infinities, zeros,
// subnormals) on every tier.
func TestE4M3DecoderExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	specials := []uint32{0, 0x80000000, 1, 0x3f800000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffa5a5a5, 0x7f7fffff, 0x00800000}
	var scales []byte
	for _, s := range specials {
		scales = binary.LittleEndian.AppendUint32(scales, s)
	}
	for range 200 {
		scales = binary.LittleEndian.AppendUint32(scales, edgeBits(r))
	}
	tiles := len(scales) / 4
	codes := make([]byte, 256*tiles)
	for i := range codes {
		codes[i] = byte(i)
	}
	tl := FP8Tiles{Cols: 256}
	want := make([]float32, len(codes))
	dequantE4M3Go(want, codes, scales, tl)
	forEachTier(t, func(t *testing.T) {
		got := make([]float32, len(codes))
		dequantizeE4M3(got, codes, scales, tl)
		requireSame(t, floatBits(want), floatBits(got), "dequantizeE4M3")
	})
}

// TestE4M3RNEMatchesCodec checks the reference's fast rounding against the
// codec (the specification) at every E4M3 value, tie and their float32
// neighbours, both signs, and on random float32 bits (NaN excepted).
func TestE4M3RNEMatchesCodec(t *testing.T) {
	var vs []float32
	for c := range uint32(0x7f) {
		a := mx.e4m3fn[c]
		vs = append(vs, a, math.Nextafter32(a, 0), math.Nextafter32(a, 1e9))
		if c < 0x7e {
			tie := (a + mx.e4m3fn[c+1]) / 2
			vs = append(vs, tie, math.Nextafter32(tie, 0), math.Nextafter32(tie, 1e9))
		}
	}
	vs = append(vs, 464, 465, 480, 512, 1e30, float32(math.Inf(1)), 0x1p-10, 0x1p-11, 0x3p-11, math.Float32frombits(1))
	r := rand.New(rand.NewPCG(65, 66))
	for range 200000 {
		if v := math.Float32frombits(r.Uint32()); v == v {
			vs = append(vs, v)
		}
	}
	for _, v := range vs {
		for _, x := range []float32{v, -v} {
			require.Equal(t, byte(e4m3fnCodec.Encode(x, RoundEven, true, 0)), e4m3RNE(x), "%#08x", math.Float32bits(x))
		}
	}
}

func TestE4M3Panics(t *testing.T) {
	assert.Panics(t, func() { quantizeE4M3(make([]byte, 8), make([]byte, 4), make([]float32, 8), FP8Tiles{Cols: 3}) })
	assert.Panics(t, func() { quantizeE4M3(make([]byte, 7), make([]byte, 4), make([]float32, 8), FP8Tiles{}) })
	assert.Panics(t, func() { quantizeE4M3(make([]byte, 8), make([]byte, 4), make([]float32, 8), FP8Tiles{Cols: 4}) })
	assert.NotPanics(t, func() { quantizeE4M3(nil, nil, nil, FP8Tiles{TileRows: 128, TileCols: 128}) })
}
