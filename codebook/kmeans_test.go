package codebook

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Three tight clusters: k = 3 finds their means, 2, 11 and 21, from either
// initialization; the squared error is 3·2 = 6.
func TestKMeansClusters(t *testing.T) {
	x := []float32{21, 1, 10, 2, 22, 3, 11, 12, 20}
	for _, init := range []Init{InitKMeansPP, InitQuantile} {
		for seed := range uint64(5) {
			r, err := KMeans("c", x, 3, &KMeansOptions{Init: init, Seed: seed})
			require.NoError(t, err)
			assert.Equal(t, []float32{2, 11, 21}, r.Table.Values(), "init %d seed %d", init, seed)
			assert.Equal(t, 6.0, r.SSE)
			assert.Equal(t, "c", r.Table.Name())
		}
	}
	// k = 1 is the mean; weights pull it: 0 (weight 3) and 4 (weight 1).
	r, err := KMeans("m", x, 1, nil)
	require.NoError(t, err)
	assert.Equal(t, []float32{34.0 / 3}, r.Table.Values())
	r, err = KMeans("w", []float32{0, 4}, 1, &KMeansOptions{Weights: []float32{3, 1}})
	require.NoError(t, err)
	assert.Equal(t, []float32{1}, r.Table.Values())
	assert.Equal(t, 3.0*1+1*9, r.SSE)
	// As many centroids as distinct values (−0 and 0 are one): the values.
	r, err = KMeans("d", []float32{1, 0, negZero, 1, 5}, 16, nil)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 1, 5}, r.Table.Values())
	assert.Equal(t, 0.0, r.SSE)
	assert.Equal(t, 2, r.Table.Bits())
	// A zero weight does not pull.
	r, err = KMeans("z", []float32{0, 100, 2}, 1, &KMeansOptions{Weights: []float32{1, 0, 1}})
	require.NoError(t, err)
	assert.Equal(t, []float32{1}, r.Table.Values())
}

// Two clusters and a quantile start: data 0, 0, 0, 1 and 9, 10, 10, 11
// (quantiles 1/4 and 3/4 start at 0 and 10) converge to 0.25 and 10 in one
// iteration, error 3·0.0625 + 0.5625 + 2 = 2.75.
func TestKMeansQuantileHand(t *testing.T) {
	x := []float32{0, 0, 0, 1, 9, 10, 10, 11}
	r, err := KMeans("q", x, 2, &KMeansOptions{Init: InitQuantile})
	require.NoError(t, err)
	assert.Equal(t, []float32{0.25, 10}, r.Table.Values())
	assert.Equal(t, 2.75, r.SSE)
	assert.Equal(t, []float64{3, 2.75}, r.History, "start at 0 and 10: 1 + (1+0+0+1)")
	assert.Equal(t, 1, r.Iterations)
}

// Properties on random data: the error never increases, the reported SSE is
// the table's error on the data, every centroid is the float32 mean of the
// values it encodes (or its cluster is empty), the same seed gives the same
// table.
func TestKMeansProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 40 {
		n := 10 + rng.IntN(500)
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
			if trial%3 == 0 {
				x[i] = float32(math.Round(float64(x[i]) * 4)) // many repeats
			}
		}
		k := 1 + rng.IntN(20)
		opts := &KMeansOptions{Seed: uint64(trial), Init: Init(trial % 2)}
		r, err := KMeans("p", x, k, opts)
		require.NoError(t, err)
		for i := 1; i < len(r.History); i++ {
			assert.LessOrEqual(t, r.History[i], r.History[i-1], "trial %d iteration %d", trial, i)
		}
		assert.Len(t, r.History, r.Iterations+1)
		assert.LessOrEqual(t, r.Table.Len(), k)
		var sse float64
		sums := map[float32][2]float64{}
		for _, v := range x {
			q := r.Table.Quantize(v)
			d := float64(v) - float64(q)
			sse += d * d
			s := sums[q]
			sums[q] = [2]float64{s[0] + 1, s[1] + float64(v)}
		}
		assert.InDelta(t, sse, r.SSE, 1e-9*max(1, sse), "trial %d", trial)
		if r.Iterations < defaultMaxIter {
			for q, s := range sums {
				// Converged: each centroid is its values' mean, or the mean
				// moved it by nothing the SSE could see.
				assert.InDelta(t, float64(q), s[1]/s[0], 1e-6, "trial %d centroid %v", trial, q)
			}
		}
		again, err := KMeans("p", x, k, opts)
		require.NoError(t, err)
		assert.Equal(t, r.Table.Values(), again.Table.Values())
	}
}

func TestKMeansPerChannel(t *testing.T) {
	// Shape [2, 3, 2], channels along axis 1: channel c holds x[i][c][j].
	x := []float32{
		0, 1, 10, 11, 100, 101,
		2, 3, 12, 13, 102, 103,
	}
	rs, err := KMeansPerChannel("w", x, []int{2, 3, 2}, 1, 1, nil)
	require.NoError(t, err)
	require.Len(t, rs, 3)
	for c, want := range []float32{1.5, 11.5, 101.5} {
		assert.Equal(t, []float32{want}, rs[c].Table.Values())
	}
	assert.Equal(t, "w[2]", rs[2].Table.Name())
	// Rows of a matrix (axis 0), two entries each.
	rs, err = KMeansPerChannel("r", []float32{0, 0, 4, 4, 1, 1, 9, 9}, []int{2, 4}, 0, 2, &KMeansOptions{Init: InitQuantile})
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 4}, rs[0].Table.Values())
	assert.Equal(t, []float32{1, 9}, rs[1].Table.Values())
}

func TestKMeansErrors(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		name string
		x    []float32
		k    int
		opts *KMeansOptions
		err  error
	}{
		{"empty", nil, 2, nil, ErrArg},
		{"k0", []float32{1}, 0, nil, ErrArg},
		{"k257", []float32{1}, 257, nil, ErrArg},
		{"nan", []float32{1, nan}, 2, nil, ErrNaN},
		{"inf", []float32{float32(math.Inf(-1))}, 2, nil, ErrInf},
		{"weights", []float32{1, 2}, 2, &KMeansOptions{Weights: []float32{1}}, ErrArg},
		{"negative weight", []float32{1, 2}, 2, &KMeansOptions{Weights: []float32{1, -1}}, ErrArg},
		{"zero weights", []float32{1, 2}, 2, &KMeansOptions{Weights: []float32{0, 0}}, ErrArg},
	} {
		_, err := KMeans(c.name, c.x, c.k, c.opts)
		assert.ErrorIs(t, err, c.err, c.name)
		assert.Contains(t, err.Error(), c.name)
	}
	var te *TableError
	_, err := KMeans("n", []float32{1, nan}, 2, nil)
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 1, te.Index)
	_, err = KMeansPerChannel("s", []float32{1, 2}, []int{3}, 0, 1, nil)
	assert.ErrorIs(t, err, ErrArg)
	_, err = KMeansPerChannel("a", []float32{1, 2}, []int{2}, 1, 1, nil)
	assert.ErrorIs(t, err, ErrArg)
}

// Importance per column weighs the centroids: x = 1, 3 / 5, 9 in rows of
// two columns of importance 3 and 1. One table: the weighted mean
// (3·1 + 3 + 3·5 + 9)/8 = 3.75, SSE 3·2.75² + 0.75² + 3·1.25² + 5.25² =
// 55.5. One table per row: (3·1 + 3)/4 = 1.5 and (3·5 + 9)/4 = 6.
func TestKMeansImportance(t *testing.T) {
	x := []float32{1, 3, 5, 9}
	imp := []float32{3, 1}
	r, err := KMeans("i", x, 1, &KMeansOptions{Importance: imp})
	require.NoError(t, err)
	assert.Equal(t, []float32{3.75}, r.Table.Values())
	assert.Equal(t, 55.5, r.SSE)
	rs, err := KMeansPerChannel("p", x, []int{2, 2}, 0, 1, &KMeansOptions{Importance: imp})
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Equal(t, []float32{1.5}, rs[0].Table.Values())
	assert.Equal(t, []float32{6}, rs[1].Table.Values())
	for _, o := range []KMeansOptions{
		{Importance: []float32{1, 1, 1}},                  // not a whole number of rows
		{Importance: []float32{1, -1}},                    // negative
		{Importance: []float32{0, 0}},                     // every weight zero
		{Importance: imp, Weights: []float32{1, 1, 1, 1}}, // both
		{Importance: []float32{1, float32(math.Inf(1))}},  // infinite
	} {
		_, err := KMeans("e", x, 1, &o)
		assert.ErrorIs(t, err, ErrArg, "%v", o.Importance)
	}
	_, err = KMeansPerChannel("e", x, []int{2, 2}, 0, 1, &KMeansOptions{Importance: []float32{1}})
	assert.ErrorIs(t, err, ErrArg)
}
