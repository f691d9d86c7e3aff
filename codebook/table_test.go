package codebook

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/dtype"
)

var negZero = float32(math.Copysign(0, -1))

func up(x float32) float32   { return math.Nextafter32(x, float32(math.Inf(1))) }
func down(x float32) float32 { return math.Nextafter32(x, float32(math.Inf(-1))) }

// TestNF4Table checks the NF4 entries against bitsandbytes' table as
// published (docs/CODEBOOK.md §2.1) and against a re-derivation from normal
// quantiles.
func TestNF4Table(t *testing.T) {
	want := []float32{
		-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
		-0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
		0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
		0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0,
	}
	tb := NF4()
	assert.Equal(t, want, tb.Values())
	assert.Equal(t, 4, tb.Bits())
	assert.False(t, tb.Signed())
	assert.Equal(t, uint8(7), tb.ZeroCode())
	// bitsandbytes' create_normal_map(offset=0.9677083, use_extra_value=True):
	// 8 positive quantiles of linspace(offset, 0.5, 9)[:-1], 7 negative of
	// linspace(offset, 0.5, 8)[:-1], and 0, divided by the largest.
	ppf := func(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
	const offset = 0.9677083
	var pos, neg []float64
	for i := range 8 {
		pos = append(pos, ppf(offset+(0.5-offset)*float64(i)/8))
	}
	for i := range 7 {
		neg = append(neg, -ppf(offset+(0.5-offset)*float64(i)/7))
	}
	top := pos[0]
	for i, v := range want {
		var d float64
		switch {
		case i < 7:
			d = neg[i] / top
		case i == 7:
			d = 0
		default:
			d = pos[15-i] / top
		}
		assert.InDelta(t, d, float64(v), 2e-7, "code %d", i)
	}
}

// TestNF4Thresholds checks that bitsandbytes' NF4 threshold constants lie
// within half a float32 step of the exact midpoints of neighbouring entries
// (they are the float32 values of decimal midpoints, so where the midpoint
// is exactly halfway between two float32 values they may take either), and
// encodes at and around each.
func TestNF4Thresholds(t *testing.T) {
	v := NF4().Values()
	th := []float32{
		-0.8480964004993439, -0.6106329262256622, -0.4599952697753906, -0.33967943489551544,
		-0.23460740596055984, -0.13791173323988914, -0.045525018125772476, 0.03979014977812767,
		0.1202552504837513, 0.2035212516784668, 0.2920137718319893, 0.3893125355243683,
		0.5016634166240692, 0.6427869200706482, 0.8614784181118011,
	}
	tb := NF4()
	for i, x := range th {
		mid := (float64(v[i]) + float64(v[i+1])) / 2 // exact in float64
		halfUlp := float64(up(x)-x) / 2
		assert.LessOrEqual(t, math.Abs(float64(x)-mid), halfUlp, "threshold %d", i)
		// bitsandbytes: x > threshold goes up, so the threshold itself stays.
		assert.Equal(t, uint8(i), tb.Encode(x), "at threshold %d", i)
		assert.Equal(t, uint8(i), tb.Encode(down(x)), "below threshold %d", i)
		assert.Equal(t, uint8(i+1), tb.Encode(up(x)), "above threshold %d", i)
	}
	for i, x := range v {
		assert.Equal(t, uint8(i), tb.Encode(x), "entry %d", i)
	}
	assert.Equal(t, uint8(0), tb.Encode(-5))
	assert.Equal(t, uint8(15), tb.Encode(5))
	assert.Equal(t, uint8(7), tb.Encode(negZero))
	assert.Equal(t, uint8(7), tb.Encode(float32(math.NaN())))
	assert.Equal(t, uint8(15), tb.Encode(float32(math.Inf(1))))
	assert.Equal(t, uint8(0), tb.Encode(float32(math.Inf(-1))))
}

// TestFP4Table checks bitsandbytes' FP4: magnitudes {0, 0.0625, 8, 12, 4, 6,
// 2, 3}/12 by code, negatives at codes 8–15, and encodes around each of its
// thresholds (7/24, 7/12 written 0.583333, 5/6, 5/12, 11/128, 5/24, 1/384).
func TestFP4Table(t *testing.T) {
	tb := FP4()
	third := float32(1.0 / 3)
	mags := []float32{0, float32(1.0 / 192), float32(2.0 / 3), 1, third, 0.5, float32(1.0 / 6), 0.25}
	want := append(append([]float32{}, mags...), negZero)
	for _, m := range mags[1:] {
		want = append(want, -m)
	}
	got := tb.Values()
	for i := range want {
		assert.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "code %d: %v vs %v", i, want[i], got[i])
	}
	assert.True(t, tb.Signed())
	// Ascending magnitudes with their codes, and the thresholds between them.
	ascCodes := []uint8{0, 1, 6, 7, 4, 5, 2, 3}
	th := []float32{0.00260417, 0.0859375, 0.20833333, 0.29166667, 0.4166667, 0.583333, 0.8333333}
	for i, x := range th {
		lo, hi := ascCodes[i], ascCodes[i+1]
		assert.Equal(t, lo, tb.Encode(x), "at threshold %v", x)
		assert.Equal(t, lo, tb.Encode(down(x)))
		assert.Equal(t, hi, tb.Encode(up(x)), "above threshold %v", x)
		assert.Equal(t, lo|8, tb.Encode(-x), "at threshold −%v", x)
		assert.Equal(t, hi|8, tb.Encode(-up(x)))
	}
	// 0.583333 is below 7/12: a value a little below 7/12 is nearer 1/2 but
	// bitsandbytes (and this table) sends it to 2/3.
	assert.Equal(t, uint8(2), tb.Encode(0.5833332))
	assert.Equal(t, uint8(0), tb.Encode(negZero), "−0 is not < 0")
	assert.Equal(t, uint8(8), tb.Encode(-1e-9), "a tiny negative keeps its sign")
	assert.Equal(t, uint8(0), tb.Encode(float32(math.NaN())))
	assert.Equal(t, uint8(3), tb.Encode(7))
	assert.Equal(t, uint8(11), tb.Encode(-7))
}

// TestIQ4NLTable checks ggml's kvalues_iq4nl and its tie rule: a value
// exactly halfway takes the upper entry.
func TestIQ4NLTable(t *testing.T) {
	want := []float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	tb := IQ4NL()
	assert.Equal(t, want, tb.Values())
	assert.Equal(t, uint8(8), tb.ZeroCode(), "no zero entry: 0 goes to +1")
	// Hand midpoints, all exact in float32.
	mids := []float32{-115.5, -93.5, -74, -57, -42, -28.5, -16, -4.5, 7, 19, 31.5, 45.5, 61, 79, 101}
	for i, m := range mids {
		assert.Equal(t, uint8(i+1), tb.Encode(m), "at midpoint %v", m)
		assert.Equal(t, uint8(i), tb.Encode(down(m)), "below midpoint %v", m)
		assert.Equal(t, uint8(i+1), tb.Encode(up(m)))
	}
	assert.Equal(t, uint8(0), tb.Encode(-1000))
	assert.Equal(t, uint8(15), tb.Encode(1000))
}

// TestE2M1Table checks OCP E2M1 as a table against the e2m1 format of dtype
// (round to nearest even, saturating) on hand ties and a sweep of values.
func TestE2M1Table(t *testing.T) {
	tb := E2M1()
	assert.Equal(t, []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6, negZero, -0.5, -1, -1.5, -2, -3, -4, -6}, tb.Values())
	// Ties to even (golden G4 of docs/TENSORCAST.md): 0.25→0, 0.75→1,
	// 1.25→1, 1.75→2, 2.5→2, 3.5→4, 5→4, and their negatives.
	ties := map[float32]float32{0.25: 0, 0.75: 1, 1.25: 1, 1.75: 2, 2.5: 2, 3.5: 4, 5: 4}
	for x, q := range ties {
		assert.Equal(t, q, tb.Quantize(x), "x=%v", x)
		assert.Equal(t, -q, tb.Quantize(-x), "x=%v", -x)
	}
	f := dtype.MustParse("e2m1")
	r := rand.New(rand.NewPCG(3, 4))
	xs := []float32{0, negZero, 1e-30, -1e-30, 100, -100, float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, b := range tb.Bounds() {
		xs = append(xs, b, down(b), up(b), -b, -down(b))
	}
	for range 5000 {
		xs = append(xs, float32(r.NormFloat64()*3))
	}
	for _, x := range xs {
		require.Equal(t, f.Encode(x), uint32(tb.Encode(x)), "x=%v", x)
	}
}

func TestBuiltin(t *testing.T) {
	for _, n := range []string{"nf4", "bnb_fp4", "iq4_nl", "e2m1"} {
		tb := Builtin(n)
		require.NotNil(t, tb, n)
		assert.Equal(t, n, tb.Name())
		assert.Same(t, tb, Builtin(n))
	}
	assert.Nil(t, Builtin("nf3"))
}

// TestTieRules encodes the midpoints of the table −3, −1, 0, 2 (−2, −0.5, 1)
// under every rule.
func TestTieRules(t *testing.T) {
	vals := []float32{-3, -1, 0, 2}
	for _, c := range []struct {
		tie  Tie
		want [3]float32
	}{
		{TieLower, [3]float32{-3, -1, 0}},
		{TieUpper, [3]float32{-1, 0, 2}},
		{TieToZero, [3]float32{-1, 0, 0}},
		{TieAway, [3]float32{-3, -1, 2}},
		{TieEven, [3]float32{-3, 0, 0}}, // codes 0|1 → 0, 1|2 → 2, 2|3 → 2
	} {
		tb, err := NewTable("t", vals, &TableOptions{Tie: c.tie})
		require.NoError(t, err)
		for i, m := range []float32{-2, -0.5, 1} {
			assert.Equal(t, c.want[i], tb.Quantize(m), "%v at %v", c.tie, m)
			assert.Equal(t, vals[i], tb.Quantize(down(m)))
			assert.Equal(t, vals[i+1], tb.Quantize(up(m)))
		}
	}
	// Both neighbours equally far from zero: −1 and 1 around 0.
	for _, tie := range []Tie{TieToZero, TieAway} {
		tb, err := NewTable("s", []float32{-1, 1}, &TableOptions{Tie: tie})
		require.NoError(t, err)
		assert.Equal(t, float32(-1), tb.Quantize(0), "%v", tie)
	}
	// Signed tables decide on magnitudes.
	for _, c := range []struct {
		tie  Tie
		want float32
	}{{TieLower, 1}, {TieUpper, 2}, {TieToZero, 1}, {TieAway, 2}, {TieEven, 2}} {
		tb, err := NewSignedTable("m", []float32{0, 1, 2, 4}, &TableOptions{Tie: c.tie})
		require.NoError(t, err)
		assert.Equal(t, c.want, tb.Quantize(1.5), "%v", c.tie)
		assert.Equal(t, -c.want, tb.Quantize(-1.5), "%v", c.tie)
	}
	assert.Equal(t, "away", TieAway.String())
	assert.Equal(t, "Tie(9)", Tie(9).String())
}

// TestInexactMidpoint: when the midpoint is not a float32, its float32
// neighbours go to the entry they are nearer to, whatever the tie rule.
func TestInexactMidpoint(t *testing.T) {
	ulp := float32(math.Ldexp(1, -23))
	for _, tie := range []Tie{TieLower, TieUpper} {
		tb, err := NewTable("t", []float32{1, 1 + 3*ulp}, &TableOptions{Tie: tie})
		require.NoError(t, err)
		assert.Equal(t, uint8(0), tb.Encode(1+ulp))
		assert.Equal(t, uint8(1), tb.Encode(1+2*ulp))
		// Adjacent floats: nothing lies between.
		tb, err = NewTable("t", []float32{1, 1 + ulp}, &TableOptions{Tie: tie})
		require.NoError(t, err)
		assert.Equal(t, uint8(0), tb.Encode(1))
		assert.Equal(t, uint8(1), tb.Encode(1+ulp))
	}
	// The smallest subnormal and zero, and entries far apart in exponent.
	tb, err := NewTable("t", []float32{0, math.SmallestNonzeroFloat32, 1e30}, nil)
	require.NoError(t, err)
	assert.Equal(t, uint8(0), tb.Encode(0))
	assert.Equal(t, uint8(1), tb.Encode(math.SmallestNonzeroFloat32))
	assert.Equal(t, uint8(1), tb.Encode(4.9e29))
	assert.Equal(t, uint8(2), tb.Encode(5.1e29))
}

func TestTableErrors(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		name   string
		vals   []float32
		signed bool
		opts   *TableOptions
		err    error
		index  int
	}{
		{"empty", nil, false, nil, ErrSize, -1},
		{"too many", make([]float32, 257), false, &TableOptions{AllowDuplicates: true}, ErrSize, -1},
		{"nan", []float32{0, nan}, false, nil, ErrNaN, 1},
		{"inf", []float32{0, float32(math.Inf(1))}, false, nil, ErrInf, 1},
		{"unsorted", []float32{0, 2, 1}, false, nil, ErrUnsorted, 2},
		{"duplicate", []float32{0, 1, 1}, false, nil, ErrDuplicate, 2},
		{"signed zeros", []float32{negZero, 0}, false, nil, ErrDuplicate, 1},
		{"unsorted duplicate", []float32{1, 0, 1}, false, &TableOptions{AnyOrder: true}, ErrDuplicate, 2},
		{"three magnitudes", []float32{0, 1, 2}, true, nil, ErrSize, -1},
		{"negative magnitude", []float32{0, -1}, true, nil, ErrNegative, 1},
		{"thresholds count", []float32{0, 1, 2}, false, &TableOptions{Thresholds: []float32{0.5}}, ErrThreshold, -1},
		{"threshold above", []float32{0, 1, 2}, false, &TableOptions{Thresholds: []float32{0.5, 2}}, ErrThreshold, 1},
		{"threshold below", []float32{0, 1, 2}, false, &TableOptions{Thresholds: []float32{-0.5, 1.5}}, ErrThreshold, 0},
		{"threshold nan", []float32{0, 1}, false, &TableOptions{Thresholds: []float32{nan}}, ErrThreshold, 0},
	} {
		var err error
		if c.signed {
			_, err = NewSignedTable(c.name, c.vals, c.opts)
		} else {
			_, err = NewTable(c.name, c.vals, c.opts)
		}
		require.Error(t, err, c.name)
		assert.ErrorIs(t, err, c.err, c.name)
		var te *TableError
		require.ErrorAs(t, err, &te, c.name)
		assert.Equal(t, c.name, te.Table)
		assert.Equal(t, c.index, te.Index, c.name)
		assert.Contains(t, err.Error(), c.name)
	}
	// What the options allow.
	tb, err := NewTable("dup", []float32{0, 1, 1, 2}, &TableOptions{AllowDuplicates: true})
	require.NoError(t, err)
	assert.Equal(t, uint8(1), tb.Encode(1), "the lowest code of equal entries")
	assert.Equal(t, 2, tb.Bits())
	tb, err = NewTable("any", []float32{2, 0, 1}, &TableOptions{AnyOrder: true})
	require.NoError(t, err)
	assert.Equal(t, []uint8{1, 2, 0}, encodeAll(tb, 0, 1, 2))
	_, err = NewSignedTable("negzero mag", []float32{negZero, 1}, nil)
	require.NoError(t, err)
}

func encodeAll(tb *Table, xs ...float32) []uint8 {
	out := make([]uint8, len(xs))
	tb.EncodeSlice(out, xs)
	return out
}

func TestDecode(t *testing.T) {
	tb, err := NewTable("five", []float32{-2, -1, 0, 1, 2}, nil)
	require.NoError(t, err)
	assert.Equal(t, 3, tb.Bits())
	assert.Equal(t, 5, tb.Len())
	out := make([]float32, 3)
	require.NoError(t, tb.DecodeSlice(out, []uint8{0, 4, 2}))
	assert.Equal(t, []float32{-2, 2, 0}, out)
	require.NoError(t, tb.DecodeScaled(out, []uint8{0, 4, 3}, 0.5))
	assert.Equal(t, []float32{-1, 1, 0.5}, out)
	err = tb.DecodeSlice(out, []uint8{0, 5, 1})
	assert.ErrorIs(t, err, ErrCode)
	assert.Contains(t, err.Error(), "offset 1")
	assert.True(t, math.IsNaN(float64(tb.Value(5))))
	assert.Equal(t, float32(2), tb.MaxAbs())
}

// nearestRef is the definition of encoding: the entry nearest x (distances
// in float64, exact for these inputs), ties by the rule; for a signed table
// on |x| with the sign attached.
func nearestRef(vals []float32, tie Tie, x float32) float32 {
	best := 0
	for i, v := range vals {
		db := math.Abs(float64(x) - float64(vals[best]))
		d := math.Abs(float64(x) - float64(v))
		if d < db {
			best = i
			continue
		}
		if d == db && v != vals[best] {
			lo, hi := min(v, vals[best]), max(v, vals[best])
			pick := lo
			switch tie {
			case TieUpper:
				pick = hi
			case TieToZero:
				if math.Abs(float64(hi)) < math.Abs(float64(lo)) {
					pick = hi
				}
			case TieAway:
				if math.Abs(float64(hi)) > math.Abs(float64(lo)) {
					pick = hi
				}
			}
			if pick == v {
				best = i
			}
		}
	}
	return vals[best]
}

func TestEncodeNearestRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := 1 + r.IntN(40)
		vals := make([]float32, 0, n)
		seen := map[float32]bool{}
		for len(vals) < n {
			// Quarter steps, so that many midpoints are exact and get hit.
			v := float32(r.IntN(200)-100) / 4
			if !seen[v] {
				seen[v] = true
				vals = append(vals, v)
			}
		}
		tie := []Tie{TieLower, TieUpper, TieToZero, TieAway}[trial%4]
		tb, err := NewTable("r", vals, &TableOptions{Tie: tie, AnyOrder: true})
		require.NoError(t, err)
		for range 300 {
			x := float32(r.IntN(1000)-500) / 8
			if r.IntN(2) == 0 {
				x = float32(r.NormFloat64() * 20)
			}
			require.Equal(t, nearestRef(vals, tie, x), tb.Quantize(x), "table %v tie %v x=%v", vals, tie, x)
		}
	}
}

func TestErrorTypes(t *testing.T) {
	err := error(&TableError{Table: "x", Index: -1, Err: ErrSize})
	assert.True(t, errors.Is(err, ErrSize))
	assert.Equal(t, `codebook: table "x": table size out of range`, err.Error())
}
