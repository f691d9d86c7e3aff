package measure

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompareLost: values lost to NaN or Inf make the error not finite,
// never "exact" (review).
func TestCompareLost(t *testing.T) {
	e := Compare([]float32{1, 2, 3}, []float32{float32(math.NaN()), 2, float32(math.Inf(1))})
	assert.Equal(t, 2, e.Lost)
	require.NotNil(t, e.SQNR, "nil says exact")
	assert.True(t, math.IsInf(*e.SQNR, -1))
	assert.True(t, math.IsInf(e.MaxAbs, 1))
}

func TestMeanSQNR(t *testing.T) {
	db := func(v float64) *float64 { return &v }
	var m MeanSQNR
	assert.Nil(t, m.Mean())
	m.Add(nil, 5)
	assert.Nil(t, m.Mean(), "exact tensors are left out")
	m.Add(db(12.5), 10)
	m.Add(db(math.Inf(-1)), 1000)
	require.NotNil(t, m.Mean())
	assert.Equal(t, 12.5, *m.Mean(), "a weight that lost values is left out of the mean")
	m.Add(db(22.5), 30)
	assert.Equal(t, 20.0, *m.Mean(), "(10·12.5 + 30·22.5) / 40: by elements")
}

func TestStoredBits(t *testing.T) {
	for _, c := range []struct {
		bytes int64
		shape []int
		want  float64
	}{
		{64*32/2 + 64, []int{64, 32}, 4.25}, // MXFP4: 4-bit codes, one E8M0 scale per 32
		{100, nil, 800},                     // a scalar
		{10, []int{0, 4}, 0},
		{10, []int{-1, 4}, 0},
	} {
		assert.Equal(t, c.want, StoredBits(c.bytes, c.shape), "%d bytes %v", c.bytes, c.shape)
	}
	assert.Equal(t, int64(12), Elements([]int{3, 4}))
	assert.Equal(t, int64(0), Elements([]int{-3, 4}))
}
