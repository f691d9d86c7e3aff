package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The differential tests of the MX byte kernels: every tier the machine has
// against the Go references, on random blocks with varied exponents and
// every edge, at lengths around the quantizers' groups of 8 and 16 blocks,
// on unaligned slices; the dequantizers and decoders on every code under
// every scale.

// mxQuantizer is a block quantizer and its Go reference.
type mxQuantizer struct {
	name     string
	per      int // code bytes per block
	run, ref func(codes []byte, scales []uint8, src []float32)
}

func mxQuantizers() []mxQuantizer {
	return []mxQuantizer{
		{"MXFP8", mxBlock, quantizeMXFP8, quantizeMXFP8Go},
		{"MXFP8E5M2", mxBlock, quantizeMXFP8E5M2, quantizeMXFP8E5M2Go},
		{"MXINT8", mxBlock, quantizeMXINT8, quantizeMXINT8Go},
		{"MXFP6E2M3", mxfp6Bytes, quantizeMXFP6E2M3, func(c []byte, s []uint8, x []float32) { quantMXFP6Go(c, s, x, mxE2M3) }},
		{"MXFP6E3M2", mxfp6Bytes, quantizeMXFP6E3M2, func(c []byte, s []uint8, x []float32) { quantMXFP6Go(c, s, x, mxE3M2) }},
	}
}

// mxDequantizer is a block dequantizer and its Go reference.
type mxDequantizer struct {
	name     string
	per      int
	run, ref func(dst []float32, codes []byte, scales []uint8)
}

func mxDequantizers() []mxDequantizer {
	return []mxDequantizer{
		{"MXFP8", mxBlock, dequantizeMXFP8, dequantizeMXFP8Go},
		{"MXFP8E5M2", mxBlock, dequantizeMXFP8E5M2, dequantizeMXFP8E5M2Go},
		{"MXINT8", mxBlock, dequantizeMXINT8, dequantizeMXINT8Go},
		{"MXFP6E2M3", mxfp6Bytes, dequantizeMXFP6E2M3, func(d []float32, c []byte, s []uint8) { dequantMXFP6Go(d, c, s, mxE2M3) }},
		{"MXFP6E3M2", mxfp6Bytes, dequantizeMXFP6E3M2, func(d []float32, c []byte, s []uint8) { dequantMXFP6Go(d, c, s, mxE3M2) }},
	}
}

// mxEdgeBlocks returns nb blocks of 32 with an exponent e of their own,
// drawn so that the scales run from below the float32 normals to the top
// binade: normally distributed values times 2^e, values spread over the
// binade of 2^e (so that the largest elements saturate), the ties of one
// element format at its scale for that binade (and the values either side
// of them), and the edges: NaN, ±Inf, ±0, all-zero blocks, subnormals, the
// largest floats.
func mxEdgeBlocks(r *rand.Rand, nb int) []float32 {
	x := make([]float32, nb*mxBlock)
	for b := range nb {
		v := x[b*mxBlock : (b+1)*mxBlock]
		e := r.IntN(282) - 152
		p := math.Ldexp(1, e)
		sign := func() float64 { return float64(1 - 2*r.IntN(2)) }
		switch r.IntN(8) {
		case 0: // all zero, or signed zeros
			for i := range v {
				if r.IntN(2) == 0 {
					v[i] = negZero()
				}
			}
		case 1: // any bits, edges included
			for i := range v {
				v[i] = math.Float32frombits(edgeBits(r))
			}
		case 2: // ties of an element format at the scale of the binade
			ties, emax := mxTies(r.IntN(5))
			q := math.Ldexp(1, e-emax)
			for i := range v {
				v[i] = float32(sign() * float64(ties[r.IntN(len(ties))]) * q)
			}
			v[r.IntN(mxBlock)] = float32(sign() * 1.5 * p) // the binade
		case 3: // spread over the binade
			for i := range v {
				v[i] = float32(sign() * (1 + r.Float64()) * p)
			}
		default:
			for i := range v {
				v[i] = float32(r.NormFloat64() * p)
			}
			if r.IntN(4) == 0 {
				v[r.IntN(mxBlock)] = math.Float32frombits(edgeBits(r))
			}
		}
	}
	return x
}

// mxTies returns, for element format k (E4M3, E5M2, E2M3, E3M2, q1.6),
// the values at which rounding ties relative to a scale of 1, the values
// either side of them, and values at and past the largest magnitude, with
// the format's largest normal exponent.
func mxTies(k int) ([]float32, int) {
	if k == 4 {
		var t []float32
		for q := range 128 {
			m := (float32(q) + 0.5) / 64
			t = append(t, m, math.Nextafter32(m, 0), math.Nextafter32(m, 2))
		}
		return append(t, 1.99, math.Nextafter32(2, 0)), 0
	}
	f := []*FloatCodec{&e4m3fnCodec, &e5m2Codec, &e2m3Codec, &e3m2Codec}[k]
	var t []float32
	for c := uint32(0); c < f.MaxMag; c++ {
		a, b := f.Decode(c), f.Decode(c+1)
		m := (a + b) / 2
		t = append(t, a, m, math.Nextafter32(m, 0), math.Nextafter32(m, 2*b))
	}
	m := f.Decode(f.MaxMag)
	_, _, lg := splitFloat32(math.Float32bits(m))
	return append(t, m, m*1.03, m*1.06, math.Nextafter32(2*m, 0)), lg
}

// mxTieValues returns the ties of every element format (see mxTies).
func mxTieValues() []float32 {
	var t []float32
	for k := range 5 {
		v, _ := mxTies(k)
		t = append(t, v...)
	}
	return t
}

// blockCounts are the block counts of the quantizer tests: every count up
// to three groups of 16 and a bit, and a few larger ones.
func blockCounts() []int {
	var ns []int
	for n := 0; n <= 52; n++ {
		ns = append(ns, n)
	}
	return append(ns, 127, 128, 129, 16*9+7)
}

func requireBytes(t *testing.T, want, got []byte, format string, args ...any) {
	t.Helper()
	w, g := make([]uint32, len(want)), make([]uint32, len(got))
	for i := range want {
		w[i] = uint32(want[i])
	}
	for i := range got {
		g[i] = uint32(got[i])
	}
	requireSame(t, w, g, format, args...)
}

func TestMXQuantizersMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	x := mxEdgeBlocks(r, 16*9+8)
	forEachTier(t, func(t *testing.T) {
		for _, q := range mxQuantizers() {
			for _, nb := range blockCounts() {
				for _, off := range []int{0, 1, 3} {
					src := x[off : off+nb*mxBlock]
					wantC, wantS := make([]byte, nb*q.per), make([]byte, nb)
					q.ref(wantC, wantS, src)
					// Outputs at odd offsets, with a sentinel after them.
					c, s := make([]byte, nb*q.per+off+1), make([]byte, nb+off+1)
					c[len(c)-1], s[len(s)-1] = 0xA5, 0x5A
					q.run(c[off:off+nb*q.per], s[off:off+nb], src)
					requireBytes(t, wantC, c[off:off+nb*q.per], "%s codes, %d blocks, offset %d", q.name, nb, off)
					requireBytes(t, wantS, s[off:off+nb], "%s scales, %d blocks, offset %d", q.name, nb, off)
					require.Equal(t, byte(0xA5), c[len(c)-1], "%s wrote past its codes", q.name)
					require.Equal(t, byte(0x5A), s[len(s)-1], "%s wrote past its scales", q.name)
				}
			}
		}
	})
}

// TestMXQuantizersRandomExponents runs larger random inputs, one exponent
// per block, through every tier.
func TestMXQuantizersRandomExponents(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for round := range 8 {
		x := mxEdgeBlocks(r, 16*13+5)
		forEachTier(t, func(t *testing.T) {
			for _, q := range mxQuantizers() {
				nb := len(x) / mxBlock
				wantC, wantS := make([]byte, nb*q.per), make([]byte, nb)
				q.ref(wantC, wantS, x)
				c, s := make([]byte, nb*q.per), make([]byte, nb)
				q.run(c, s, x)
				requireBytes(t, wantC, c, "%s codes, round %d", q.name, round)
				requireBytes(t, wantS, s, "%s scales, round %d", q.name, round)
			}
		})
	}
}

// TestMXDequantizersEveryCode decodes every code byte under every scale
// code, through every tier, with ordinary and non-temporal stores.
func TestMXDequantizersEveryCode(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		forEachStore(t, func(t *testing.T) {
			for _, d := range mxDequantizers() {
				// Blocks of every code: 8 blocks of 32 byte codes, or 2
				// of 32 six-bit codes; each group under every scale.
				ncodes, bits := 256, uint(8)
				if d.per == mxfp6Bytes {
					ncodes, bits = 64, 6
				}
				perGroup := ncodes / mxBlock
				nb := 256 * perGroup
				raw := make([]byte, nb*mxBlock)
				for i := range raw {
					raw[i] = byte(i % ncodes)
				}
				codes := make([]byte, PackedLen(len(raw), bits))
				PackBits(codes, raw, bits)
				scales := make([]byte, nb)
				for b := range scales {
					scales[b] = byte(b / perGroup)
				}
				for _, off := range []int{0, 1} {
					dst := make([]float32, nb*mxBlock+off)[off:]
					want := make([]float32, nb*mxBlock)
					d.ref(want, codes, scales)
					d.run(dst, codes, scales)
					requireSame(t, floatBits(want), floatBits(dst), "%s, dst offset %d", d.name, off)
					// Lengths that are not whole groups of anything.
					for _, n := range []int{1, 3, 17} {
						got := make([]float32, n*mxBlock)
						d.ref(want[:n*mxBlock], codes[n*d.per:], scales[n:])
						d.run(got, codes[n*d.per:], scales[n:])
						requireSame(t, floatBits(want[:n*mxBlock]), floatBits(got), "%s, %d blocks", d.name, n)
					}
				}
			}
		})
	})
}

// TestMXRoundTripTiers dequantizes what every tier's quantizer wrote, as a
// sanity check of the pairs, against the references.
func TestMXRoundTripTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	x := mxEdgeBlocks(r, 64)
	qs, ds := mxQuantizers(), mxDequantizers()
	forEachTier(t, func(t *testing.T) {
		for i, q := range qs {
			nb := len(x) / mxBlock
			c, s := make([]byte, nb*q.per), make([]byte, nb)
			q.run(c, s, x)
			want, got := make([]float32, len(x)), make([]float32, len(x))
			ds[i].ref(want, c, s)
			ds[i].run(got, c, s)
			requireSame(t, floatBits(want), floatBits(got), "%s", q.name)
		}
	})
}

// TestFloat8SliceCodecs compares EncodeFloat and DecodeFloat8 for e4m3fn,
// e5m2, e2m3 and e3m2 (one code per byte) on every tier with the scalar
// codec, saturating and not, on edge values at every length up to a few
// vectors and unaligned slices.
func TestFloat8SliceCodecs(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	src := edgeFloats(r, 4099)
	// Values around the formats' ranges, which random bits rarely hit.
	for i := 0; i < len(src); i += 3 {
		src[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(50)-25))
	}
	for i := 1; i < len(src); i += 7 {
		tv := mxTieValues()
		src[i] = tv[r.IntN(len(tv))] * float32(math.Ldexp(1, r.IntN(30)-20))
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, f := range []*FloatCodec{&e4m3fnCodec, &e5m2Codec, &e2m3Codec, &e3m2Codec} {
		lut := new([256]float32)
		for c := range lut {
			lut[c] = f.Decode(uint32(c))
		}
		forEachTier(t, func(t *testing.T) {
			forEachStore(t, func(t *testing.T) {
				for _, sat := range []bool{true, false} {
					for _, n := range testLengths() {
						for _, off := range []int{0, 1} {
							if off+n > len(src) {
								continue
							}
							s := src[off : off+n]
							want := make([]byte, n)
							for i, x := range s {
								want[i] = byte(f.Encode(x, RoundEven, sat, 0))
							}
							got := make([]byte, n+off)[off:]
							EncodeFloat(f, got, s, RoundEven, sat, 0)
							requireBytes(t, want, got, "encode %d, offset %d, saturate %v", n, off, sat)
						}
					}
				}
				codes := append(append([]byte{}, all...), all...)
				for i := range 1000 {
					codes = append(codes, byte(r.Uint32()+uint32(i)))
				}
				for _, n := range testLengths() {
					for _, off := range []int{0, 1, 5} {
						if off+n > len(codes) {
							continue
						}
						c := codes[off : off+n]
						want := make([]float32, n)
						DecodeLUT8(want, c, lut)
						got := make([]float32, n+off)[off:]
						DecodeFloat8(f, got, c, lut)
						requireSame(t, floatBits(want), floatBits(got), "decode %d, offset %d", n, off)
					}
				}
			})
		})
	}
}

// TestMXByteHandDerived checks the new kernels on blocks whose codes come
// from the format tables: E5M2 1.0 is 0x3C, its largest value 57344 0x7B,
// its smallest subnormal 2^−16 0x01; E2M3 1.0 is 0x08, 7.5 0x1F, 0.125
// 0x01; E3M2 1.0 is 0x0C, 28 0x1F, 0.0625 0x01 (the sign is bit 7, or bit 5
// for six bits).
func TestMXByteHandDerived(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		// amax 1: E5M2's scale is 2^(0−15) (code 112); 1 → 2^15 (0x78), −0.5
		// → 0xF4, 2^−30 → 2^−15 (0x02), 3·2^−32 → 0.75·2^−16·… a tie
		// between 0 and 2^−16? 3·2^−32·2^15 = 1.5·2^−16 → rounds to 2·2^−16
		// (0x02, ties to even).
		x := block(32, 1, -0.5, 0x1p-30, 3*0x1p-32, negZero())
		codes, scales := make([]byte, 32), make([]byte, 1)
		quantizeMXFP8E5M2(codes, scales, x)
		require.Equal(t, []byte{112}, scales)
		require.Equal(t, []byte{0x78, 0xF4, 0x02, 0x02, 0x80, 0}, codes[:6])
		// amax 60000 with scale 2^0: 60000 rounds to 57344 (between 57344
		// and 61440); 61440, the tie with 65536, saturates.
		quantizeMXFP8E5M2(codes, scales, block(32, 60000, 61440, -1))
		require.Equal(t, []byte{127}, scales)
		require.Equal(t, []byte{0x7B, 0x7B, 0xBC}, codes[:3])
		quantizeMXFP8E5M2(codes, scales, block(32, 1, float32(math.Inf(1))))
		require.Equal(t, []byte{0xFF}, scales)
		for _, c := range codes {
			require.Equal(t, byte(0x7E), c)
		}
		got := make([]float32, 32)
		codes[0], codes[1], codes[2], codes[3] = 0x3C, 0x7C, 0xFC, 0x01
		dequantizeMXFP8E5M2(got, codes, []byte{130})
		require.Equal(t, float32(8), got[0])
		require.True(t, math.IsInf(float64(got[1]), 1))
		require.True(t, math.IsInf(float64(got[2]), -1))
		require.Equal(t, float32(0x1p-13), got[3])
		require.True(t, got[4] != got[4], "0x7E is NaN")

		// E2M3, amax 7.5: scale 2^0 (code 127). 7.5 → 0x1F, −1 → 0x28, 0.1875
		// (between 0.125 and 0.25, a tie) → 0.25 (0x02), 7.9 saturates.
		// E3M2, amax 28: floor(log2 28) = 4 = emax, scale 2^0: 28 → 0x1F,
		// 1 → 0x0C, 0.09375 (tie of 0.0625 and 0.125) → 0.125 (0x02).
		for _, tc := range []struct {
			q     func([]byte, []uint8, []float32)
			d     func([]float32, []byte, []uint8)
			x     []float32
			codes []byte // the six-bit codes
		}{
			{quantizeMXFP6E2M3, dequantizeMXFP6E2M3, block(32, 7.5, -1, 0.1875, 7.9), []byte{0x1F, 0x28, 0x02, 0x1F}},
			{quantizeMXFP6E3M2, dequantizeMXFP6E3M2, block(32, 28, 1, 0.09375, -29), []byte{0x1F, 0x0C, 0x02, 0x3F}},
		} {
			packed, scales := make([]byte, mxfp6Bytes), make([]byte, 1)
			tc.q(packed, scales, tc.x)
			require.Equal(t, []byte{127}, scales)
			c := tc.codes
			w := uint32(c[0]) | uint32(c[1])<<6 | uint32(c[2])<<12 | uint32(c[3])<<18
			want := make([]byte, mxfp6Bytes)
			want[0], want[1], want[2] = byte(w), byte(w>>8), byte(w>>16)
			require.Equal(t, want, packed)
			got := make([]float32, 32)
			tc.d(got, packed, []byte{128})
			require.Equal(t, 2*tc.x[0], got[0])
			require.Equal(t, 2*tc.x[1], got[1])
		}
	})
	// docs/NUMERICS.md §10: E2M3 (+7.5, −7.5) packs to DF 0F, as does E3M2
	// (+28, −28).
	for _, tc := range []struct {
		q func([]byte, []uint8, []float32)
		m float32
	}{{quantizeMXFP6E2M3, 7.5}, {quantizeMXFP6E3M2, 28}} {
		packed, scales := make([]byte, mxfp6Bytes), make([]byte, 1)
		tc.q(packed, scales, block(32, tc.m, -tc.m))
		require.Equal(t, []byte{0xDF, 0x0F, 0}, packed[:3])
	}
}
