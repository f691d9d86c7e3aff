package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fwhtBlocks are the block sizes FWHTRows is tested with: every power of
// two from 2 to 65536 (rotate's largest block).
func fwhtBlocks() []int {
	var bs []int
	for b := 2; b <= 1<<16; b *= 2 {
		bs = append(bs, b)
	}
	return bs
}

// fwhtDefinition is the transform as its definition runs it, written
// independently of the kernels: log₂ n stages h = 1, 2, 4, ..., each
// replacing every pair (x[j], x[j+h]) by its sum and difference in float64,
// then each value times 1/√n (a power of two for even log₂ n, else that
// times the float64 nearest √2/2), rounded to float32.
func fwhtDefinition(x []float32) []float32 {
	n := len(x)
	y := make([]float64, n)
	for i, v := range x {
		y[i] = float64(v)
	}
	for h := 1; h < n; h *= 2 {
		for i := 0; i < n; i += 2 * h {
			for j := i; j < i+h; j++ {
				y[j], y[j+h] = y[j]+y[j+h], y[j]-y[j+h]
			}
		}
	}
	k := 0
	for 1<<k < n {
		k++
	}
	s := math.Ldexp(1, -k/2)
	if k%2 == 1 {
		s *= 0.70710678118654752440 // √2/2
	}
	out := make([]float32, n)
	for i, v := range y {
		out[i] = float32(v * s)
	}
	return out
}

// requireSameFloats fails unless want and got hold the same bits, a NaN
// matching any NaN (FWHTRows leaves a NaN's sign and payload unspecified).
func requireSameFloats(t *testing.T, want, got []float32, format string, args ...any) {
	t.Helper()
	require.Equal(t, len(want), len(got), append([]any{format}, args...)...)
	for i := range want {
		w, g := want[i], got[i]
		if w != w && g != g {
			continue
		}
		if math.Float32bits(w) != math.Float32bits(g) {
			t.Fatalf("element %d: want %v (%#08x), got %v (%#08x): %s", i, w, math.Float32bits(w), g, math.Float32bits(g), fmt.Sprintf(format, args...))
		}
	}
}

// TestFWHTByHand checks FWHTRows on values worked out by hand.
func TestFWHTByHand(t *testing.T) {
	sc2 := math.Sqrt2 / 2
	sc2 = float64(sc2) // a float64 variable: products with it round as float64
	r2 := float32(sc2)
	tests := []struct {
		name  string
		block int
		src   []float32
		want  []float32
	}{
		// H₂/√2 · (1, 2) = (3, −1)/√2; 3·(√2/2) rounds to float64 first.
		{"2", 2, []float32{1, 2, 4, 4}, []float32{float32(3 * sc2), -r2, float32(8 * sc2), 0}},
		// H₄/2 · (1, 2, 3, 4) = (10, −2, −4, 0)/2; a unit vector gives a row of ½.
		{"4", 4, []float32{1, 2, 3, 4, 0, 0, 1, 0}, []float32{5, -1, -2, 0, 0.5, 0.5, -0.5, -0.5}},
		// H₁₆/4 · e₀ = ¼ everywhere; the all-ones vector gives 4·e₀.
		{"16", 16, append(append([]float32{1}, make([]float32, 15)...), ones(16)...),
			append(fill(16, 0.25), append([]float32{4}, make([]float32, 15)...)...)},
		// 256 ones: 256/16 = 16 at 0.
		{"256", 256, ones(256), append([]float32{16}, make([]float32, 255)...)},
		// (max, max, max, −max): sums of 2·max overflow float32 but not float64,
		// and ½·(2·max) = max.
		{"4 huge", 4, []float32{math.MaxFloat32, math.MaxFloat32, math.MaxFloat32, -math.MaxFloat32},
			[]float32{math.MaxFloat32, math.MaxFloat32, math.MaxFloat32, -math.MaxFloat32}},
		// Σ of 8 maxima is 8·max; 8·max/√8 = √8·max overflows float32: +Inf.
		{"8 huge", 8, fill(8, math.MaxFloat32), append([]float32{float32(math.Inf(1))}, make([]float32, 7)...)},
		// −0 + −0 = −0 and −0 − −0 = +0: the first result keeps the sign.
		{"-0", 2, []float32{negZero(), negZero()}, []float32{negZero(), 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireSameFloats(t, tt.want, fwhtDefinitionRows(tt.src, tt.block), "definition")
			forEachTier(t, func(t *testing.T) {
				dst := make([]float32, len(tt.src))
				FWHTRows(dst, tt.src, tt.block, make([]float64, tt.block))
				requireSameFloats(t, tt.want, dst, "FWHTRows")
			})
		})
	}
}

func ones(n int) []float32 { return fill(n, 1) }

func fill(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// fwhtDefinitionRows applies fwhtDefinition to every block of src.
func fwhtDefinitionRows(src []float32, block int) []float32 {
	var out []float32
	for b := 0; b < len(src); b += block {
		out = append(out, fwhtDefinition(src[b:b+block])...)
	}
	return out
}

// fwhtInputs returns n values for the differential tests: normal values over
// a wide range of exponents, with −0, subnormals and values near float32's
// largest (whose sums overflow float32 but not float64) and, when specials
// is set, NaNs and infinities.
func fwhtInputs(r *rand.Rand, n int, specials bool) []float32 {
	s := make([]float32, n)
	for i := range s {
		switch k := r.IntN(40); {
		case specials && k == 0:
			s[i] = float32(math.NaN())
		case specials && k == 1:
			s[i] = float32(math.Inf(1 - 2*r.IntN(2)))
		case k == 2:
			s[i] = negZero()
		case k == 3:
			s[i] = math.Float32frombits(r.Uint32()&0x80000000 | r.Uint32N(0x800000)) // subnormal
		case k < 6:
			s[i] = math.Float32frombits(r.Uint32()&0x80000000 | (0x7f7fffff - r.Uint32N(0x20000)))
		default:
			s[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(60)-30))
		}
	}
	return s
}

// TestFWHTDefinition checks the Go reference against the definition bit for
// bit for every block size.
func TestFWHTDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, block := range fwhtBlocks() {
		src := fwhtInputs(r, 2*block, false)
		dst := make([]float32, len(src))
		fwhtRowsGo(dst, src, block, make([]float64, block))
		requireSameFloats(t, fwhtDefinitionRows(src, block), dst, "block %d", block)
	}
}

// TestFWHTTiers checks every tier against the Go reference bit for bit: every
// block size, several counts of blocks, unaligned slices, with and without
// NaNs and infinities, into another slice and in place.
func TestFWHTTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	forEachTier(t, func(t *testing.T) {
		for _, block := range fwhtBlocks() {
			counts := []int{1, 2, 3}
			if block <= 128 {
				counts = append(counts, 128/block, 128/block+1, 3*128/block+5, 1+8/block)
			}
			for _, nb := range counts {
				for _, specials := range []bool{false, true} {
					off := r.IntN(16)
					n := nb * block
					src := fwhtInputs(r, n+off, specials)[off:]
					want := make([]float32, n)
					fwhtRowsGo(want, src, block, make([]float64, block))
					dst := make([]float32, n+7)[off%8:][:n]
					FWHTRows(dst, src, block, make([]float64, block+off))
					requireSameFloats(t, want, dst, "block %d, %d blocks, specials %v", block, nb, specials)
					FWHTRows(src, src, block, make([]float64, block))
					requireSameFloats(t, want, src, "in place: block %d, %d blocks, specials %v", block, nb, specials)
				}
			}
		}
	})
}

// TestFWHTSpecials puts one NaN or infinity at each position of a block:
// every tier gives the same results (a NaN wherever the reference has one).
func TestFWHTSpecials(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	forEachTier(t, func(t *testing.T) {
		for _, block := range []int{2, 4, 8, 16, 32, 128, 512} {
			for pos := range block {
				for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
					src := fwhtInputs(r, block, false)
					src[pos] = bad
					want := make([]float32, block)
					fwhtRowsGo(want, src, block, make([]float64, block))
					got := make([]float32, block)
					FWHTRows(got, src, block, make([]float64, block))
					requireSameFloats(t, want, got, "block %d, %v at %d", block, bad, pos)
				}
			}
		}
	})
}

// TestFWHTRowsPanics: FWHTRows refuses what its contract excludes.
func TestFWHTRowsPanics(t *testing.T) {
	buf := make([]float64, 64)
	for _, tt := range []struct {
		name     string
		dst, src int
		block    int
	}{
		{"block 0", 8, 8, 0},
		{"block 1", 8, 8, 1},
		{"block 12", 24, 24, 12},
		{"lengths differ", 16, 8, 8},
		{"not whole blocks", 12, 12, 8},
		{"buf too short", 128, 128, 128},
	} {
		assert.Panics(t, func() {
			FWHTRows(make([]float32, tt.dst), make([]float32, tt.src), tt.block, buf)
		}, tt.name)
	}
	assert.NotPanics(t, func() { FWHTRows(nil, nil, 8, buf) })
}

// FuzzFWHT compares every tier with the Go reference on arbitrary float
// bits: the first byte picks the block (2 to 2048), the rest are the values,
// cut to whole blocks.
func FuzzFWHT(f *testing.F) {
	f.Add(append([]byte{3}, bytesOf(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)...))
	f.Add(append([]byte{0}, bytesOf(float32(math.NaN()), 1, float32(math.Inf(1)), float32(math.Inf(-1)))...))
	f.Add(append([]byte{6}, make([]byte, 4*128*3)...))
	f.Add(append([]byte{7}, bytesOf(fill(256, math.MaxFloat32)...)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		block := 2 << (data[0] % 11)
		src := floatsOf(data[1:])
		src = src[:len(src)/block*block]
		want := make([]float32, len(src))
		buf := make([]float64, block)
		fwhtRowsGo(want, src, block, buf)
		for _, tr := range tiers() {
			restore := useTier(tr)
			got := make([]float32, len(src))
			FWHTRows(got, src, block, buf)
			requireSameFloats(t, want, got, "tier %v block %d", tr, block)
			in := append([]float32(nil), src...)
			FWHTRows(in, in, block, buf)
			requireSameFloats(t, want, in, "in place: tier %v block %d", tr, block)
			restore()
		}
	})
}

// BenchmarkFWHTRows measures FWHTRows on 64 Ki values (an L2-sized chunk of
// a conversion) for blocks of 16, 32, 128 and 1024, on every tier.
func BenchmarkFWHTRows(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	src := fwhtInputs(r, 64<<10, false)
	dst := make([]float32, len(src))
	for _, block := range []int{16, 32, 128, 1024} {
		buf := make([]float64, block)
		for _, tr := range tiers() {
			b.Run(fmt.Sprintf("%d/%v", block, tr), func(b *testing.B) {
				defer useTier(tr)()
				b.SetBytes(int64(4 * len(src)))
				for b.Loop() {
					FWHTRows(dst, src, block, buf)
				}
			})
		}
	}
}
