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

// TestIntGroupsHandDerived checks the integer-group quantizers on groups
// whose scales are exact, so that the codes follow by hand.
func TestIntGroupsHandDerived(t *testing.T) {
	nan := float32(math.NaN())
	// int8, float16 scales, groups of 4: amax 127 gives s = 1 (0x3c00), so
	// the codes are the elements rounded to nearest even; amax 254 gives
	// s = 2 (0x4000); a NaN group gets the float16 NaN 0x7e00 and codes 0;
	// an all-zero group gets 1.0 and codes 0.
	x := []float32{127, 63.5, -0.5, 2.5, 3, 5, -7, -254, 1, nan, 2, 3, 0, negZero(), 0, 0}
	g := IntGroups{Bits: 8, Group: 4, Scale: ScaleFloat16}
	forEachTier(t, func(t *testing.T) {
		codes, scales := make([]byte, 16), make([]byte, 8)
		quantizeIntSym(codes, scales, x, g)
		assert.Equal(t, []int8{127, 64, 0, 2, 2, 2, -4, -127, 0, 0, 0, 0, 0, 0, 0, 0}, bytesToInt8(codes))
		assert.Equal(t, []uint16{0x3c00, 0x4000, 0x7e00, 0x3c00}, halves(scales))
		back := make([]float32, 16)
		dequantizeIntSym(back, codes, scales, g)
		assert.Equal(t, []float32{127, 64, 0, 2, 4, 4, -8, -254}, back[:8])
		assert.True(t, math.IsNaN(float64(back[8])))
	})
	// int4, float32 scale per row of 6: amax 14 gives s = 2: 13 → 6.5 → 6,
	// 5 → 2.5 → 2, −3 → −1.5 → −2; codes packed low nibble first.
	x4 := []float32{14, 13, 5, -3, -14, 0.5}
	g4 := IntGroups{Bits: 4, Cols: 6, Scale: ScaleFloat32}
	forEachTier(t, func(t *testing.T) {
		codes, scales := make([]byte, 3), make([]byte, 4)
		quantizeIntSym(codes, scales, x4, g4)
		// 7, 6 | 2, −2 (0xe) | −7 (0x9), 0
		assert.Equal(t, []byte{0x67, 0xe2, 0x09}, codes)
		assert.Equal(t, uint32(0x40000000), binary.LittleEndian.Uint32(scales))
	})
	// uint4, float16 scale, groups of 4: lo −3, hi 12 gives s = 15/15 = 1
	// and zp = 3: 2.5 → 2 + 3 = 5, −3 → 0, 12 → 15. A NaN group: the NaN
	// scale, zero point 0, codes 0.
	xa := []float32{2.5, -3, 12, 3.5, nan, 1, 2, 3}
	ga := IntGroups{Bits: 4, Group: 4, Scale: ScaleFloat16, SignedZero: true}
	forEachTier(t, func(t *testing.T) {
		codes, scales, zeros := make([]byte, 4), make([]byte, 4), make([]byte, 2)
		quantizeIntAsym(codes, scales, zeros, xa, ga)
		assert.Equal(t, []byte{0x05, 0x7f, 0, 0}, codes) // 5, 0 | 15, 7
		assert.Equal(t, []uint16{0x3c00, 0x7e00}, halves(scales))
		assert.Equal(t, []byte{3, 0}, zeros)
		back := make([]float32, 8)
		dequantizeIntAsym(back, codes, scales, zeros, ga)
		assert.Equal(t, []float32{2, -3, 12, 4}, back[:4])
	})
	// uint8 with an int8 zero point: lo −200, hi 55 gives s = 1 and a zero
	// point of 200 saturated to 127, so −200 clamps to code 0 and 55 is 182;
	// with a uint8 zero point it is 200 and 255.
	xz := []float32{-200, 55, 0, 1.5}
	forEachTier(t, func(t *testing.T) {
		for _, signed := range []bool{true, false} {
			gz := IntGroups{Bits: 8, Scale: ScaleFloat32, SignedZero: signed}
			codes, scales, zeros := make([]byte, 4), make([]byte, 4), make([]byte, 1)
			quantizeIntAsym(codes, scales, zeros, xz, gz)
			if signed {
				assert.Equal(t, []byte{0, 182, 127, 129}, codes)
				assert.Equal(t, []byte{127}, zeros)
			} else {
				assert.Equal(t, []byte{0, 255, 200, 202}, codes)
				assert.Equal(t, []byte{200}, zeros)
			}
		}
	})
}

func bytesToInt8(b []byte) []int8 {
	out := make([]int8, len(b))
	for i, c := range b {
		out[i] = int8(c)
	}
	return out
}

func halves(b []byte) []uint16 {
	out := make([]uint16, len(b)/2)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return out
}

// intGroupCases are the geometries the differential tests run: groups of
// 16, 32, 64, 128 and of lengths that are not a multiple of 16, rows that
// are not a whole number of groups, per-channel scales (Group 0) on short
// and long rows, and one scale for everything.
var intGroupCases = []struct{ rows, cols, group int }{
	{8, 256, 32}, {4, 256, 64}, {3, 512, 128}, {5, 96, 16}, {3, 100, 32}, {2, 200, 128},
	{3, 4100, 0}, {4, 30, 0}, {7, 64, 0}, {1, 1000, 0}, {6, 20, 20}, {2, 66, 33}, {5, 33, 0}, {3, 130, 64},
}

// groupInput returns n floats on the edges of the integer-group rules: NaN
// and ±Inf elements, all-zero and one-sided groups, ties of x/d, values
// across the float32 range (saturating float16 scales, underflowing ones).
func groupInput(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := 0; i < n; {
		m := min(n-i, 1+r.IntN(80))
		v := x[i : i+m]
		switch r.IntN(8) {
		case 0:
			for j := range v {
				v[j] = math.Float32frombits(edgeBits(r))
			}
		case 1: // zeros, with now and then a NaN or −0
			for j := range v {
				switch r.IntN(20) {
				case 0:
					v[j] = float32(math.NaN())
				case 1:
					v[j] = negZero()
				}
			}
		case 2: // halves of small integers times a power of two: ties
			p := float32(math.Ldexp(1, r.IntN(20)-10))
			for j := range v {
				v[j] = (float32(r.IntN(513)-256) / 2) * p
			}
		case 3: // one-sided
			s := float32(1 - 2*r.IntN(2))
			e := r.IntN(60) - 30
			for j := range v {
				v[j] = s * float32(math.Ldexp(r.Float64(), e))
			}
		default:
			e := r.IntN(280) - 145
			for j := range v {
				v[j] = float32(math.Ldexp(r.NormFloat64(), e))
			}
		}
		i += m
	}
	return x
}

// TestIntGroupsTiers compares every tier's integer-group kernels with the Go
// references, for every geometry, width, scale format and zero-point format,
// with src one float off its allocation's alignment.
func TestIntGroupsTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, tc := range intGroupCases {
		n := tc.rows * tc.cols
		buf := groupInput(r, n+1)
		src := buf[1:]
		for _, bits := range []int{8, 4} {
			for _, sf := range []ScaleFormat{ScaleFloat16, ScaleFloat32} {
				for _, sz := range []bool{false, true} {
					g := IntGroups{Bits: bits, Cols: tc.cols, Group: tc.group, Scale: sf, SignedZero: sz}
					if tc.rows == 1 && r.IntN(2) == 0 {
						g.Cols = 0
					}
					msg := fmt.Sprintf("%+v rows %d", g, tc.rows)
					_, _, groups := g.geometry("test", n)
					nc := g.codeBytes(n)
					wc, ws, wz := make([]byte, nc), make([]byte, groups*sf.Bytes()), make([]byte, groups)
					quantIntSymGo(wc, ws, src, g)
					clearLastNibble(wc, n, bits)
					wantSym := make([]float32, n)
					dequantIntSymGo(wantSym, wc, ws, g)
					ac, as := make([]byte, nc), make([]byte, groups*sf.Bytes())
					quantIntAsymGo(ac, as, wz, src, g)
					clearLastNibble(ac, n, bits)
					wantAsym := make([]float32, n)
					dequantIntAsymGo(wantAsym, ac, as, wz, g)
					forEachTier(t, func(t *testing.T) {
						c, s := make([]byte, nc), make([]byte, len(ws))
						for i := range c {
							c[i] = 0xa5 // junk the kernels must overwrite
						}
						quantizeIntSym(c, s, src, g)
						require.Equal(t, wc, c, "%s sym codes", msg)
						require.Equal(t, ws, s, "%s sym scales", msg)
						back := make([]float32, n)
						dequantizeIntSym(back, wc, ws, g)
						requireSame(t, floatBits(wantSym), floatBits(back), "%s sym values", msg)
						z := make([]byte, groups)
						quantizeIntAsym(c, s, z, src, g)
						require.Equal(t, ac, c, "%s asym codes", msg)
						require.Equal(t, as, s, "%s asym scales", msg)
						require.Equal(t, wz, z, "%s asym zeros", msg)
						dequantizeIntAsym(back, ac, as, wz, g)
						requireSame(t, floatBits(wantAsym), floatBits(back), "%s asym values", msg)
					})
				}
			}
		}
	}
}

// TestIntGroupsDecodersExhaustive decodes every code byte under every
// float16 scale (a code byte meets every eighth scale, and every code byte
// meets the special scales: zeros, subnormals, infinities, NaNs), and every
// zero-point byte, under every tier.
func TestIntGroupsDecodersExhaustive(t *testing.T) {
	const group = 32
	var codes, scales, zeros []byte
	add := func(s uint16, first byte) {
		for j := range group {
			codes = append(codes, first+byte(j))
		}
		scales = binary.LittleEndian.AppendUint16(scales, s)
		zeros = append(zeros, first^byte(s))
	}
	for s := range 1 << 16 {
		add(uint16(s), byte(s*group))
	}
	for _, s := range []uint16{0, 0x8000, 1, 0x83ff, 0x3c00, 0x7bff, 0x7c00, 0xfc00, 0x7c01, 0xfe00, 0x7fff} {
		for first := 0; first < 256; first += group {
			add(s, byte(first))
		}
	}
	n := len(codes)
	for _, bits := range []int{8, 4} {
		for _, sz := range []bool{false, true} {
			g := IntGroups{Bits: bits, Group: group, Scale: ScaleFloat16, SignedZero: sz}
			if bits == 4 {
				g.Group = 2 * group // each byte holds two codes
			}
			m := n * 8 / bits
			wantS, wantA := make([]float32, m), make([]float32, m)
			dequantIntSymGo(wantS, codes, scales, g)
			dequantIntAsymGo(wantA, codes, scales, zeros, g)
			forEachTier(t, func(t *testing.T) {
				gotS, gotA := make([]float32, m), make([]float32, m)
				dequantizeIntSym(gotS, codes, scales, g)
				dequantizeIntAsym(gotA, codes, scales, zeros, g)
				requireSame(t, floatBits(wantS), floatBits(gotS), "%d-bit sym", bits)
				requireSame(t, floatBits(wantA), floatBits(gotA), "%d-bit asym", bits)
			})
		}
	}
	// float32 scales: random bit patterns, NaNs with payloads included.
	r := rand.New(rand.NewPCG(43, 44))
	s32 := make([]byte, 4*(n/group))
	for i := range n / group {
		binary.LittleEndian.PutUint32(s32[4*i:], edgeBits(r))
	}
	g := IntGroups{Bits: 8, Group: group, Scale: ScaleFloat32}
	want := make([]float32, n)
	dequantIntSymGo(want, codes, s32, g)
	forEachTier(t, func(t *testing.T) {
		got := make([]float32, n)
		dequantizeIntSym(got, codes, s32, g)
		requireSame(t, floatBits(want), floatBits(got), "float32 scales")
	})
}

func TestIntGroupsPanics(t *testing.T) {
	g := IntGroups{Bits: 8, Group: 32}
	assert.Panics(t, func() { quantizeIntSym(make([]byte, 32), make([]byte, 1), make([]float32, 32), g) })
	assert.Panics(t, func() { quantizeIntSym(make([]byte, 31), make([]byte, 2), make([]float32, 32), g) })
	assert.Panics(t, func() { quantizeIntSym(make([]byte, 32), make([]byte, 2), make([]float32, 32), IntGroups{Bits: 6}) })
	assert.Panics(t, func() {
		quantizeIntSym(make([]byte, 30), make([]byte, 8), make([]float32, 30), IntGroups{Bits: 8, Cols: 7})
	})
	assert.Panics(t, func() {
		quantizeIntAsym(make([]byte, 32), make([]byte, 2), nil, make([]float32, 32), g)
	})
	assert.NotPanics(t, func() { quantizeIntSym(nil, nil, nil, g) })
	assert.NotPanics(t, func() { dequantizeIntAsym(nil, nil, nil, nil, IntGroups{Bits: 4}) })
}
