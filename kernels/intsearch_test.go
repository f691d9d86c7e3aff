package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSearchIntSymHand checks searchIntSym on groups worked by hand.
//
// int4, float32 scales, one group of 16: fifteen 1.5s and a 7. The rule's
// scale is 7/7 = 1: the 1.5s round to 2 (a tie, to even), error 15·0.25 =
// 3.75. The ratios give the scales 0.95, 0.9, 0.85, 0.8 (to float32); with
// them 1.5/s is 1.58, 1.67, 1.76, 1.88, all rounding to 2, and 7/s is above
// 7, clamped to 7, so the errors are 15·(1.5−2s)² + (7−7s)²: 2.52, 1.84,
// 1.7025, 2.11. The 0.85 candidate wins: codes 2 and 7, scale
// float32(7·0.85)/7.
func TestSearchIntSymHand(t *testing.T) {
	x := make([]float32, 16)
	for i := range x {
		x[i] = 1.5
	}
	x[5] = 7
	forEachTier(t, func(t *testing.T) {
		g := IntGroups{Bits: 4, Scale: ScaleFloat32}
		codes, scales := make([]byte, 8), make([]byte, 4)
		searchIntSym(codes, scales, x, g)
		want := float32(float32(7*float32(0.85)) / 7)
		assert.Equal(t, math.Float32bits(want), ScaleFloat32.get(scales, 0))
		assert.Equal(t, []byte{0x22, 0x22, 0x72, 0x22, 0x22, 0x22, 0x22, 0x22}, codes)

		// Negated, in int8 with float16 scales: the rule's scale 7/127
		// fits the 1.5s to 27.21 → 27 (error 15·(1.5 − 27·s)², s the
		// float16 scale 0.05511) and the 7 exactly; the clipped scales
		// lose more on the 7 than they gain (the errors are below
		// (s/2)² per element anyway), so the rule stays.
		for i := range x {
			x[i] = -x[i]
		}
		g = IntGroups{Bits: 8, Scale: ScaleFloat16}
		codes, scales = make([]byte, 16), make([]byte, 2)
		searchIntSym(codes, scales, x, g)
		wc, ws := make([]byte, 16), make([]byte, 2)
		quantizeIntSym(wc, ws, x, g)
		assert.Equal(t, ws, scales)
		assert.Equal(t, wc, codes)
		for i := range x {
			x[i] = -x[i]
		}
	})
}

// TestSearchIntSymEdges checks the groups that keep the rule's scale: a
// NaN or an infinity (the NaN scale, codes 0), all zeros (scale 1, codes 0),
// a group the rule fits exactly (error 0, which no candidate beats), and a
// scale that underflows (codes 0).
func TestSearchIntSymEdges(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	forEachTier(t, func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			x     []float32
			scale uint32
		}{
			{"nan", []float32{1, 2, nan, 3}, f16NaN},
			{"inf", []float32{1, -inf, 0, 3}, f16NaN},
			{"zeros", []float32{0, float32(math.Copysign(0, -1)), 0, 0}, f16One},
			{"exact", []float32{7, -7, 3, 0}, f16One},
			{"underflow", []float32{1e-9, -1e-9, 0, 0}, 0},
		} {
			x := make([]float32, 32)
			for i := range x {
				x[i] = tc.x[i%4]
			}
			g := IntGroups{Bits: 4, Scale: ScaleFloat16}
			codes, scales := make([]byte, 16), make([]byte, 2)
			searchIntSym(codes, scales, x, g)
			assert.Equal(t, tc.scale, ScaleFloat16.get(scales, 0), tc.name)
			if tc.name != "exact" {
				assert.Equal(t, make([]byte, 16), codes, tc.name)
			}
		}
	})
}

// intSearchInput returns n values for the search tests: groupInput's mix of
// edges and runs, with stretches of normal values (the groups the search
// changes) and of values near a scale format's ends.
func intSearchInput(r *rand.Rand, n int) []float32 {
	x := groupInput(r, n)
	for i := 0; i < n; {
		m := min(n-i, 1+r.IntN(300))
		mag := [...]float64{1, 1, 1, 1e-3, 1e-7, 1e-30, 1e4, 1e36}[r.IntN(8)]
		if r.IntN(3) != 0 {
			for j := range x[i : i+m] {
				x[i+j] = float32(r.NormFloat64() * mag)
			}
		}
		i += m
	}
	return x
}

// TestSearchIntSymTiers compares every tier's searchIntSym with the Go
// reference over random inputs and geometries: both code widths and scale
// formats, groups of 16 to 256, channels, odd row lengths, unaligned slices.
func TestSearchIntSymTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	for iter := range 120 {
		g := IntGroups{Bits: []int{4, 8}[iter%2], Scale: ScaleFormat(iter / 2 % 2)}
		g.Group = []int{16, 32, 128, 0, 48, 256, 17}[r.IntN(7)]
		rows := 1 + r.IntN(5)
		cols := []int{128, 256, 4096, 130, 33, 1000, 2048 + 16}[r.IntN(7)]
		if r.IntN(3) == 0 {
			g.Cols = cols
		} else {
			rows = 1
		}
		n := rows * cols
		off := r.IntN(4)
		requireSearchIntSymTiers(t, intSearchInput(r, n+off)[off:], g)
	}
}

// requireSearchIntSymTiers requires every tier's searchIntSym to give the
// scales and codes of the Go reference for src and g.
func requireSearchIntSymTiers(t *testing.T, src []float32, g IntGroups) {
	t.Helper()
	n := len(src)
	_, _, groups := g.geometry("test", n)
	wc, ws := make([]byte, g.codeBytes(n)), make([]byte, groups*g.Scale.Bytes())
	searchIntSymGo(wc, ws, src, g)
	clearLastNibble(wc, n, g.Bits)
	for _, tr := range tiers() {
		restore := useTier(tr)
		c, s := make([]byte, len(wc)), make([]byte, len(ws))
		searchIntSym(c, s, src, g)
		restore()
		require.Equal(t, ws, s, "%v %+v n %d: scales", tr, g, n)
		require.Equal(t, wc, c, "%v %+v n %d: codes", tr, g, n)
	}
}

// TestSearchIntSymChanges checks that the search is not a no-op on normal
// data (most groups of 128 normal values take a clipped scale) and never
// raises a group's error above the rule's, measured here in float64.
func TestSearchIntSymChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(93, 94))
	const n, group = 128 * 64, 128
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	forEachTier(t, func(t *testing.T) {
		for _, bits := range []int{4, 8} {
			g := IntGroups{Bits: bits, Group: group, Scale: ScaleFloat16}
			rc, rs := make([]byte, g.codeBytes(n)), make([]byte, 2*n/group)
			sc, ss := make([]byte, len(rc)), make([]byte, len(rs))
			quantizeIntSym(rc, rs, x, g)
			searchIntSym(sc, ss, x, g)
			rv, sv := make([]float32, n), make([]float32, n)
			dequantizeIntSym(rv, rc, rs, g)
			dequantizeIntSym(sv, sc, ss, g)
			changed := 0
			for k := range n / group {
				var re, se float64
				for i := k * group; i < (k+1)*group; i++ {
					re += (float64(x[i]) - float64(rv[i])) * (float64(x[i]) - float64(rv[i]))
					se += (float64(x[i]) - float64(sv[i])) * (float64(x[i]) - float64(sv[i]))
				}
				assert.LessOrEqual(t, se, re, "bits %d group %d", bits, k)
				if ScaleFloat16.get(ss, k) != ScaleFloat16.get(rs, k) {
					changed++
				}
			}
			if bits == 4 {
				assert.Greater(t, changed, n/group/2, "groups whose scale the search changed")
			}
		}
	})
}

// TestPickSym checks pickSymGo's decisions: a clear winner stands, a near
// tie and errors outside the trusted range are left to the float64 sums,
// candidates left out never win, a group not searched is marked so, and
// only a choice that stands stores its scale code and divisor.
func TestPickSym(t *testing.T) {
	m := searchIntMargin(128, 7)
	assert.Less(t, m, 1e-4)
	lo, hi := marginFactors(m)
	assert.Less(t, float64(lo), 1-m)
	assert.Greater(t, float64(hi), 1+m)
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		errs [searchIntCands]float32
		out  [searchIntCands]bool // candidates left out
		want uint32
	}{
		{[5]float32{2, 1, 3, 4, 5}, [5]bool{}, 1},
		{[5]float32{1, 1, 3, 4, 5}, [5]bool{}, noPick},
		{[5]float32{1, 1 + 1e-6, 3, 4, 5}, [5]bool{}, noPick},
		{[5]float32{1, 1.01, 3, 4, 5}, [5]bool{}, 0},
		{[5]float32{0, 1, 3, 4, 5}, [5]bool{}, noPick},
		{[5]float32{1e-35, 1, 3, 4, 5}, [5]bool{}, noPick},
		{[5]float32{1e35, 2e35, 3e35, 4e35, 5e35}, [5]bool{}, noPick},
		{[5]float32{3, 2, inf, 4, 5}, [5]bool{}, 1},
		{[5]float32{3, 2, 1, 4, 5}, [5]bool{2: true, 3: true, 4: true}, 1},
		{[5]float32{3, 2, 2, 4, 5}, [5]bool{1: true}, 2},
		{[5]float32{float32(math.NaN()), 2, 3, 4, 5}, [5]bool{}, noPick},
		{[5]float32{1, 2, 3, 4, 5}, [5]bool{0: true, 1: true, 2: true, 3: true, 4: true}, noSearch},
	} {
		errs, rdiv := make([]float32, 5), make([]float32, 5)
		for c := range 5 {
			errs[c], rdiv[c] = tc.errs[c], 1
			if tc.out[c] {
				rdiv[c] = 0
			}
		}
		pick, scales, div := make([]uint32, 1), make([]byte, 2), make([]float32, 1)
		codes, cand := []uint32{10, 11, 12, 13, 14}, []float32{1, 2, 3, 4, 5}
		pickSymGo(pick, scales, div, errs, rdiv, cand, codes, 1, lo, hi, ScaleFloat16)
		assert.Equal(t, tc.want, pick[0], "%v left out %v", tc.errs, tc.out)
		if tc.want < 5 {
			assert.Equal(t, []byte{byte(10 + tc.want), 0}, scales)
			assert.Equal(t, float32(1+tc.want), div[0])
		} else {
			assert.Equal(t, []byte{0, 0}, scales)
			assert.Equal(t, float32(0), div[0])
		}
	}
}

// BenchmarkSearchIntSym compares searchIntSym with quantizeIntSym on 1 Mi
// normal values in int4 and int8 groups of 128 and 32 (float16 scales).
func BenchmarkSearchIntSym(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 1<<20)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, g := range []IntGroups{{Bits: 4, Group: 128}, {Bits: 4, Group: 32}, {Bits: 8, Group: 32}} {
		codes, scales := make([]byte, g.codeBytes(len(x))), make([]byte, 2*len(x)/g.Group)
		name := fmt.Sprintf("int%d_g%d", g.Bits, g.Group)
		b.Run(name+"/quantize", func(b *testing.B) {
			b.SetBytes(4 << 20)
			for b.Loop() {
				quantizeIntSym(codes, scales, x, g)
			}
		})
		b.Run(name+"/search", func(b *testing.B) {
			b.SetBytes(4 << 20)
			for b.Loop() {
				searchIntSym(codes, scales, x, g)
			}
		})
	}
}

// TestSearchIntSymTiny compares every tier with the Go reference on groups
// of subnormal and near-subnormal values with float32 scales, whose
// divisors fall below float32's normal range (the assembly then takes the
// float64 sums), and with float16 scales, whose divisors are subnormal or
// underflow.
func TestSearchIntSymTiny(t *testing.T) {
	r := rand.New(rand.NewPCG(101, 102))
	const n = 128 * 40
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Ldexp(1, -150+(i/128)*3))
	}
	for _, f := range []ScaleFormat{ScaleFloat32, ScaleFloat16} {
		for _, bits := range []int{4, 8} {
			g := IntGroups{Bits: bits, Group: 128, Scale: f}
			wc, ws := make([]byte, g.codeBytes(n)), make([]byte, n/128*f.Bytes())
			searchIntSymGo(wc, ws, x, g)
			for _, tr := range tiers() {
				restore := useTier(tr)
				c, s := make([]byte, len(wc)), make([]byte, len(ws))
				searchIntSym(c, s, x, g)
				restore()
				require.Equal(t, ws, s, "%v %+v scales", tr, g)
				require.Equal(t, wc, c, "%v %+v codes", tr, g)
			}
		}
	}
}
