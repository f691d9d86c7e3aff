package codebook

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// abCodebook is the codebook of TestSelectCriterion: tables A = {0, 1.2} and
// B = {0.3, 1.7}.
func abCodebook(t *testing.T) *Codebook {
	t.Helper()
	a, err := NewTable("A", []float32{0, 1.2}, nil)
	require.NoError(t, err)
	b, err := NewTable("B", []float32{0.3, 1.7}, nil)
	require.NoError(t, err)
	cb, err := New("ab", 1, []*Table{a, b}, nil)
	require.NoError(t, err)
	return cb
}

// TestSelectWeighted: x = nine zeros and a 2 in one group of 10. A gives
// errors 0 (the zeros) and 0.8² = 0.64 (2 → 1.2), B 0.3² = 0.09 on each zero
// and 0.3² = 0.09 (2 → 1.7). Plain: A 0.64 < B 0.9, so A. With the 2
// weighted 2 and the zeros 1: A 2·0.64 = 1.28 > B 0.81 + 2·0.09 = 0.99, so
// B. With the zeros weighted 0.1: A 0.64 > B 0.081 + 0.09 = 0.171, so B.
// With the 2 weighted 0: A 0 < B 0.81, so A.
func TestSelectWeighted(t *testing.T) {
	cb := abCodebook(t)
	x := []float32{0, 0, 0, 0, 0, 0, 0, 0, 0, 2}
	ones := func(last, rest float32) []float32 {
		w := make([]float32, 10)
		for i := range w {
			w[i] = rest
		}
		w[9] = last
		return w
	}
	for _, tc := range []struct {
		name  string
		w     []float32
		meta  uint8
		codes []uint8
	}{
		{"unweighted", nil, 0, []uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"the 2 weighs 2", ones(2, 1), 1, []uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"the zeros weigh 0.1", ones(1, 0.1), 1, []uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"the 2 weighs 0", ones(0, 1), 0, []uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			codes, meta := make([]uint8, 10), make([]uint8, 1)
			require.NoError(t, cb.Select(codes, meta, x, 10, &SelectOptions{Weights: tc.w}))
			assert.Equal(t, tc.meta, meta[0])
			assert.Equal(t, tc.codes, codes)
			// The same through SelectBlocksWeighted, with a second block
			// of the values doubled, multiplier ½ and scale 2: every
			// error ×4, the same choice.
			x2 := append(append([]float32{}, x...), make([]float32, 10)...)
			for i, v := range x {
				x2[10+i] = 2 * v
			}
			var w2 []float32
			if tc.w != nil {
				w2 = append(append([]float32{}, tc.w...), tc.w...)
			}
			codes, meta = make([]uint8, 20), make([]uint8, 2)
			require.NoError(t, cb.NewSelector().SelectBlocksWeighted(codes, meta, x2, w2, 10, 10, []float32{1, 0.5}, []float32{1, 2}))
			assert.Equal(t, []uint8{tc.meta, tc.meta}, meta)
			assert.Equal(t, append(append([]uint8{}, tc.codes...), tc.codes...), codes)
		})
	}
}

// TestSelectWeightedFlat: x = ten values 1.7, which B holds exactly (plain
// error A 10·0.5² = 2.5, B 0: B). Weights that are all equal, zero
// included, give the plain choice: with all weights 0 every table's
// weighted error is 0, and the group keeps B rather than the first table.
func TestSelectWeightedFlat(t *testing.T) {
	cb := abCodebook(t)
	x := make([]float32, 10)
	for i := range x {
		x[i] = 1.7
	}
	for _, c := range []float32{0, 1, 3} {
		w := make([]float32, 10)
		for i := range w {
			w[i] = c
		}
		codes, meta := make([]uint8, 10), make([]uint8, 1)
		require.NoError(t, cb.Select(codes, meta, x, 10, &SelectOptions{Weights: w}))
		assert.Equal(t, uint8(1), meta[0], "weight %v", c)
	}
}

// TestSelectWeightedErrors: bad weights and weights with a criterion are
// ErrArg.
func TestSelectWeightedErrors(t *testing.T) {
	cb := abCodebook(t)
	x := []float32{1, 2, 3}
	codes, meta := make([]uint8, 3), make([]uint8, 3)
	for _, w := range [][]float32{
		{1, 1},
		{1, -1, 1},
		{1, float32(math.NaN()), 1},
		{1, float32(math.Inf(1)), 1},
	} {
		assert.ErrorIs(t, cb.Select(codes, meta, x, 1, &SelectOptions{Weights: w}), ErrArg, "%v", w)
		assert.ErrorIs(t, cb.NewSelector().SelectBlocksWeighted(codes, meta, x, w, 1, 1, []float32{1, 1, 1}, []float32{1, 1, 1}), ErrArg, "%v", w)
	}
	err := cb.Select(codes, meta, x, 1, &SelectOptions{Weights: []float32{1, 1, 1}, Criterion: SquaredError})
	assert.ErrorIs(t, err, ErrArg)
}

// weightedError is Σ w·(q − x)² of x against table t's decoded values, in
// float64, written apart from the selector.
func weightedError(t *Table, x, w []float32, mul, scale float32) float64 {
	var e float64
	for i, v := range x {
		q := float64(t.Value(t.Encode(v*mul)) * scale)
		d := q - float64(v)
		e += float64(w[i]) * d * d
	}
	return e
}

// TestSelectWeightedProperty: on random data, weights and scales, the table
// chosen for every group has a weighted error no larger than any other
// table's, and the codes are that table's; weights all equal to 1 give
// exactly the unweighted bytes (the signed plan's for the implicit
// codebooks).
func TestSelectWeightedProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	a, _ := NewTable("a", []float32{-1, 0, 0.5, 2}, nil)
	b, _ := NewTable("b", []float32{-2, -0.25, 0, 1}, nil)
	plain, err := New("plain", 2, []*Table{a, b}, nil)
	require.NoError(t, err)
	cbs := []*Codebook{plain}
	for _, name := range []string{"icb44fi_e2m3fnuz", "cb42fe0123_e3m2fnuz", "cb41fi_e2m2fnuz"} {
		cb, err := Parse(name)
		require.NoError(t, err)
		cbs = append(cbs, cb)
	}
	for _, cb := range cbs {
		for trial := range 30 {
			n := 1 + r.IntN(200)
			x, w, ones := make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 2)
				w[i] = float32(r.ExpFloat64())
				if r.IntN(10) == 0 {
					w[i] = 0
				}
				ones[i] = 1
			}
			group := []int{2, 4, 8, 16, 32, 5}[trial%6]
			block := group * (1 + r.IntN(3))
			nb := (n + block - 1) / block
			muls, scales := make([]float32, nb), make([]float32, nb)
			for j := range muls {
				scales[j] = float32(math.Ldexp(1, r.IntN(5)-2))
				muls[j] = 1 / scales[j]
			}
			ng := (n + group - 1) / group
			codes, meta := make([]uint8, n), make([]uint8, ng)
			sel := cb.NewSelector()
			require.NoError(t, sel.SelectBlocksWeighted(codes, meta, x, w, group, block, muls, scales))
			for g := range ng {
				lo, hi := g*group, min((g+1)*group, n)
				bi := lo / block
				chosen := cb.Table(int(meta[g]))
				ec := weightedError(chosen, x[lo:hi], w[lo:hi], muls[bi], scales[bi])
				for k := range cb.Len() {
					ek := weightedError(cb.Table(k), x[lo:hi], w[lo:hi], muls[bi], scales[bi])
					require.LessOrEqual(t, ec, ek*(1+1e-12), "%s trial %d group %d: table %d beats the chosen %d", cb.Name(), trial, g, k, meta[g])
				}
				for i := lo; i < hi; i++ {
					require.Equal(t, chosen.Encode(x[i]*muls[bi]), codes[i])
				}
			}
			c1, m1 := make([]uint8, n), make([]uint8, ng)
			c2, m2 := make([]uint8, n), make([]uint8, ng)
			require.NoError(t, sel.SelectBlocks(c1, m1, x, group, block, muls, scales))
			require.NoError(t, sel.SelectBlocksWeighted(c2, m2, x, ones, group, block, muls, scales))
			require.Equal(t, m1, m2, "%s trial %d: unit weights", cb.Name(), trial)
			require.Equal(t, c1, c2, "%s trial %d: unit weights", cb.Name(), trial)
		}
	}
}

// TestSelectWeightedPlan: for codebooks with a signed plan, the weighted
// selection through kernels.LUTSelector.SelectWeighted gives the bytes of
// the general path (every table encodes), block by block, with edge values
// (NaN, ±Inf, ±0), zero weights, groups of equal weights, and power-of-two
// and other scales.
func TestSelectWeightedPlan(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, name := range []string{"icb44fi_e2m3fnuz", "icb42fi_e4m3fn", "cb41fi_e2m2fnuz", "cb42fe0123_e3m2fnuz", "cb81ie_int9"} {
		cb, err := Parse(name)
		require.NoError(t, err)
		require.NotNil(t, cb.plan(), name)
		for trial := range 24 {
			n := 1 + r.IntN(300)
			x, w := make([]float32, n), make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(6)-2))
				switch r.IntN(40) {
				case 0:
					x[i] = float32(math.NaN())
				case 1:
					x[i] = float32(math.Inf(1 - 2*r.IntN(2)))
				case 2:
					x[i] = negZero
				case 3:
					x[i] = 0
				}
				w[i] = float32(r.ExpFloat64())
				if r.IntN(6) == 0 {
					w[i] = 0
				}
			}
			group := []int{1, 2, 4, 8, 16, 32, 5}[trial%7]
			if n > 2*group {
				g := r.IntN(n/group - 1)
				for i := range w[g*group : (g+1)*group] {
					w[g*group+i] = 3 // equal weights
				}
			}
			block := group * (1 + r.IntN(4))
			nb := (n + block - 1) / block
			muls, scales := make([]float32, nb), make([]float32, nb)
			for j := range muls {
				if r.IntN(2) == 0 {
					scales[j] = float32(math.Ldexp(1, r.IntN(9)-4))
				} else {
					scales[j] = float32(0.1 + r.Float64()*3)
				}
				muls[j] = 1 / scales[j]
			}
			ng := (n + group - 1) / group
			c1, m1 := make([]uint8, n), make([]uint8, ng)
			sel := cb.NewSelector()
			require.NoError(t, sel.SelectBlocksWeighted(c1, m1, x, w, group, block, muls, scales))
			c2, m2 := make([]uint8, n), make([]uint8, ng)
			for b := range nb {
				lo, hi := b*block, min((b+1)*block, n)
				sel.selectWSSEGo(c2[lo:hi], m2[lo/group:], x[lo:hi], w[lo:hi], group, muls[b], scales[b])
			}
			require.Equal(t, m2, m1, "%s trial %d", name, trial)
			require.Equal(t, c2, c1, "%s trial %d", name, trial)
			// Select with Weights goes the same way.
			if nb == 1 {
				c3, m3 := make([]uint8, n), make([]uint8, ng)
				require.NoError(t, cb.Select(c3, m3, x, group, &SelectOptions{Weights: w, Mul: muls[0], Scale: scales[0]}))
				require.Equal(t, m2, m3, "%s trial %d", name, trial)
				require.Equal(t, c2, c3, "%s trial %d", name, trial)
			}
		}
	}
}
