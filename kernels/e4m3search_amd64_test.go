//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// e4m3Midpoints are the magnitudes halfway between consecutive E4M3
// magnitudes (0 and 2^−9 included), where the quotient and the product with
// the reciprocal may round apart.
func e4m3Midpoints() []float32 {
	var h []float32
	for c := 0; c < 0x7e; c++ {
		h = append(h, (mx.e4m3fn[c]+mx.e4m3fn[c+1])/2)
	}
	return h
}

// fastInput returns n values for the fast-pass tests: searchInput's values
// with every NaN and infinity replaced, and some values placed at, or a
// float32 step either side of, an E4M3 midpoint times d.
func fastInput(r *rand.Rand, n int, d float32) []float32 {
	x := searchInput(r, n)
	mid := e4m3Midpoints()
	for i, v := range x {
		if v != v || math.IsInf(float64(v), 0) {
			x[i] = float32(r.NormFloat64())
		}
		if r.IntN(4) == 0 {
			v := mid[r.IntN(len(mid))] * d
			for range r.IntN(3) {
				v = math.Nextafter32(v, float32(r.IntN(2)))
			}
			if r.IntN(2) == 0 {
				v = -v
			}
			x[i] = v
		}
	}
	return x
}

// TestSqErrE4M3RcpAVX512 compares the fast pass's assembly with its Go
// reference bit for bit, over runs shorter and longer than a flush, on
// lanes that already hold sums.
func TestSqErrE4M3RcpAVX512(t *testing.T) {
	if hwTier < tierAVX512 {
		t.Log("no AVX-512: the Go reference runs")
		return
	}
	r := rand.New(rand.NewPCG(14, 60))
	var steps [2]int // steps of 16 values without and with a magnitude above the clamp's bound
	for iter := range 300 {
		width := 16 * r.IntN(12)
		rows := r.IntN(20)
		stride := width + r.IntN(40)
		if r.IntN(4) == 0 {
			width, rows, stride = 16*(1+r.IntN(300)), 1+r.IntN(3), 16*300
		}
		var rcp, div [maxE4M3Cands]float32
		for c := range div {
			div[c] = float32(math.Ldexp(1+r.Float64(), r.IntN(200)-116))
			rcp[c] = 1 / div[c]
		}
		x := fastInput(r, max(0, (rows-1)*stride+width)+1, div[r.IntN(len(div))])[1:]
		if iter%2 == 0 {
			// A tile's candidates, most steps below the clamp's bound.
			d := div[0]
			for c, f := range []float32{1, 0.95, 0.9, 0.85, 0.8} {
				div[c] = d * f
				rcp[c] = 1 / div[c]
			}
			x = fastInput(r, len(x)+1, d)[1:]
			for i, v := range x {
				if math.Abs(float64(v)) > 448*float64(d) {
					x[i] = d * float32(r.NormFloat64()*120)
				}
			}
		}
		sat := e4m3SatBound(&div)
		for i := 0; i+16 <= len(x); i += 16 {
			above := false
			for _, v := range x[i : i+16] {
				above = above || float32(math.Abs(float64(v))) > sat
			}
			steps[b2i(above)]++
		}
		var want, got [maxE4M3Cands * sqErrLanes]float64
		for i := range want {
			want[i] = r.ExpFloat64()
			got[i] = want[i]
		}
		sqErrE4M3RcpGo(&want, x, &rcp, &div, width, rows, stride)
		sqErrE4M3RcpAVX512(&got, x, &rcp, &div, sat, width, rows, stride)
		for i := range want {
			require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "iter %d lane %d: %v, %v", iter, i, want[i], got[i])
		}
	}
	require.Positive(t, steps[0], "steps without the clamp")
	require.Positive(t, steps[1], "steps with the clamp")
	t.Logf("steps without the clamp %d, with it %d", steps[0], steps[1])
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestE4M3FastBound checks the bound searchE4M3Margin rests on: the fast
// pass's sum of a tile (its Go reference) lies within m/2 = ε of the
// codec's float64 sum, relative, each side being within ε of the exact
// sum; the tiles hold many values at E4M3 midpoints times the divisor.
func TestE4M3FastBound(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 61))
	worst, apart := 0.0, 0
	for iter := range 400 {
		n := 16 * (1 + r.IntN(64))
		if iter%50 == 0 {
			n = 128 * 128
		}
		d := float32(math.Ldexp(1+r.Float64(), r.IntN(100)-60))
		x := fastInput(r, n, d)
		for i, v := range x {
			if math.Abs(float64(v)) > 500*float64(d) {
				x[i] = d * float32(r.NormFloat64()*100)
			}
		}
		var rcp, div [maxE4M3Cands]float32
		for c := range div {
			div[c] = d * []float32{1, 0.95, 0.9, 0.85, 0.8}[c]
			rcp[c] = 1 / div[c]
			for _, v := range x {
				a := float32(math.Abs(float64(v)))
				if roundE4M3FN(a*rcp[c]) != roundE4M3FN(a/div[c]) {
					apart++
				}
			}
		}
		var acc [maxE4M3Cands * sqErrLanes]float64
		sqErrE4M3RcpGo(&acc, x, &rcp, &div, n, 1, 0)
		m := searchE4M3Margin(n)
		for c := range div {
			fast := float64(float32(sumLanes16((*[sqErrLanes]float64)(acc[c*sqErrLanes:]))))
			ref := sqErrRefLanes(&SqErrBlock{V: x, Div: div[c], DMul: div[c]}, e4m3Round, 16)
			if ref < 0x1p-100 || ref > 0x1p100 {
				continue
			}
			dev := math.Abs(fast-ref) / ref
			worst = max(worst, dev)
			require.LessOrEqual(t, dev, m/2, "iter %d candidate %d: fast %v, float64 %v", iter, c, fast, ref)
		}
	}
	require.Positive(t, apart, "values whose product with the reciprocal rounds otherwise than the quotient")
	t.Logf("largest relative distance %.3g, margin %.3g; %d values rounded apart", worst, searchE4M3Margin(128*128), apart)
}

// TestSearchE4M3Margin: the margin of 128 × 128 tiles by hand,
// 2·(2^−15 + 64·2^−24·(1 + 2^−10) + 2^−21 + 16384·2^−50 + 16448·2^−52).
func TestSearchE4M3Margin(t *testing.T) {
	want := 2 * (3.0517578125e-05 + 3.814697265625e-06*(1+1.0/1024) + 4.76837158203125e-07 +
		16384*8.881784197001252e-16 + 16448*2.220446049250313e-16)
	require.InDelta(t, want, searchE4M3Margin(128*128), 1e-15)
	require.InDelta(t, 6.97e-5, searchE4M3Margin(128*128), 0.01e-5)
}

// nearTieTile returns a tile of n values whose two best candidates' codec
// errors lie within a relative 10^−7 of each other, or nil: one element
// moved by bisection until the errors of the candidates a and b cross,
// every other candidate's error larger.
func nearTieTile(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	x[0] = 4
	k := 1 + r.IntN(n-1)
	cands, _ := refTileErrs(x, 4)
	a, b := r.IntN(len(cands)), r.IntN(len(cands))
	if a == b {
		return nil
	}
	// The bisection follows the tile's errors without element k plus its
	// terms; the tile found is checked with the whole sums.
	x[k] = 0
	_, base := refTileErrs(x, 4)
	term := func(v, d float32) float64 {
		e := float64(v - float32(e4m3Round(v/d)*d))
		return e * e
	}
	diff := func(v float32) float64 {
		return base[a] + term(v, cands[a]) - base[b] - term(v, cands[b])
	}
	lo, hi := float32(0), float32(0)
	prev, pd := float32(0), diff(0)
	for i := 1; i <= 1000; i++ {
		v := float32(i) / 250
		if dv := diff(v); (dv < 0) != (pd < 0) {
			lo, hi = prev, v
			break
		}
		prev, pd = v, diff(v)
	}
	if hi == 0 {
		return nil
	}
	dlo := diff(lo)
	for math.Nextafter32(lo, hi) != hi {
		mid := float32((float64(lo) + float64(hi)) / 2)
		if dm := diff(mid); (dm < 0) == (dlo < 0) {
			lo = mid
		} else {
			hi = mid
		}
	}
	x[k] = lo
	if math.Abs(diff(hi)) < math.Abs(diff(lo)) {
		x[k] = hi
	}
	_, errs := refTileErrs(x, 4)
	for c, e := range errs {
		if c != a && c != b && e <= max(errs[a], errs[b]) {
			return nil
		}
	}
	if math.Abs(errs[a]-errs[b]) > 1e-7*errs[a] {
		return nil
	}
	return x
}

// TestSearchE4M3NearTies: on tiles whose two best candidates' errors lie
// within 10^−7 of each other, the tile search leaves the choice to the
// float64 sums and picks the codec's candidate, and searchE4M3 gives the
// codec reference's bytes on every tier; on Gaussian tiles of 128 × 128 the
// fast sums decide.
func TestSearchE4M3NearTies(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 62))
	const n = 64
	var rows []float32
	for len(rows) < 30*n {
		if x := nearTieTile(r, n); x != nil {
			rows = append(rows, x...)
		}
	}
	if hwTier >= tierAVX512 {
		restore := useTier(tierAVX512)
		var s e4m3TileSearch
		s.lo, s.hi = marginFactors(searchE4M3Margin(n))
		for i := 0; i < len(rows); i += n {
			v := rows[i : i+n]
			cands, errs := refTileErrs(v, 4)
			best := 0
			for c, e := range errs {
				if e < errs[best] {
					best = c
				}
			}
			d, exact := s.choose(v, n, 0, 1, 0, n, 4)
			require.True(t, exact, "tile %d: a near tie is left to the float64 sums", i/n)
			require.Equal(t, cands[best], d, "tile %d", i/n)
		}
		g := benchE4M3Input()[:128*128]
		s.lo, s.hi = marginFactors(searchE4M3Margin(len(g)))
		amax := math.Float32frombits(absMaxBitsGo(g))
		_, exact := s.choose(g, 128, 0, 128, 0, 128, amax)
		require.False(t, exact, "a Gaussian tile is decided by the fast sums")
		restore()
	}
	tl := FP8Tiles{Cols: n, TileRows: 1, TileCols: n}
	wc, ws := make([]byte, len(rows)), make([]byte, 4*len(rows)/n)
	searchE4M3Ref(wc, ws, rows, tl)
	forEachTier(t, func(t *testing.T) {
		c, s := make([]byte, len(rows)), make([]byte, 4*len(rows)/n)
		searchE4M3(c, s, rows, tl)
		requireBytes(t, ws, s, "scales")
		requireBytes(t, wc, c, "codes")
	})
}

// TestSearchE4M3ForceExact runs the tile search with every tile left to the
// float64 sums against the codec reference, on the geometries of
// TestSearchE4M3.
func TestSearchE4M3ForceExact(t *testing.T) {
	e4m3ForceExact = true
	defer func() { e4m3ForceExact = false }()
	r := rand.New(rand.NewPCG(14, 63))
	cases := append(fp8Cases, struct{ rows, cols, tr, tc int }{64, 256, 1, 128}, struct{ rows, cols, tr, tc int }{3, 32, 3, 32})
	forEachTier(t, func(t *testing.T) {
		for _, tc := range cases {
			n := tc.rows * tc.cols
			src := searchInput(r, n+1)[1:]
			tl := FP8Tiles{Cols: tc.cols, TileRows: tc.tr, TileCols: tc.tc}
			_, _, _, _, _, tiles := tl.geometry("test", n)
			msg := fmt.Sprintf("%+v rows %d", tl, tc.rows)
			wc, ws := make([]byte, n), make([]byte, 4*tiles)
			searchE4M3Ref(wc, ws, src, tl)
			c, s := make([]byte, n), make([]byte, 4*tiles)
			searchE4M3(c, s, src, tl)
			requireBytes(t, ws, s, "%s scales", msg)
			requireBytes(t, wc, c, "%s codes", msg)
		}
	})
}

// TestE4M3SatBound: no magnitude up to e4m3SatBound's times any candidate's
// reciprocal exceeds 464, where E4M3 rounding without the clamp would leave
// 448; the bound is 0 where 464·min(div) overflows.
func TestE4M3SatBound(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 64))
	for range 100000 {
		var div [maxE4M3Cands]float32
		d := float32(math.Ldexp(1+r.Float64(), r.IntN(250)-126))
		for c, f := range []float32{1, 0.95, 0.9, 0.85, 0.8} {
			div[c] = d * f
		}
		sat := e4m3SatBound(&div)
		for _, v := range div {
			q := float32(sat * (1 / v))
			require.LessOrEqual(t, q, float32(464), "d %v", v)
		}
	}
	require.Zero(t, e4m3SatBound(&[maxE4M3Cands]float32{math.MaxFloat32, math.MaxFloat32, math.MaxFloat32, math.MaxFloat32, math.MaxFloat32}))
}
