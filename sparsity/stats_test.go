package sparsity

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/mask"
)

func TestMeasureG11(t *testing.T) {
	x := []float32{0.1, -0.9, 0.5, 0.2, 3, -4, 0, 1}
	m, err := Magnitude(x, []int{2, 4}, -1, P24)
	require.NoError(t, err)
	s, err := Measure(x, m)
	require.NoError(t, err)
	assert.Equal(t, 8, s.Elements)
	assert.Equal(t, 4, s.Kept)
	assert.Equal(t, 0.5, s.Density)
	assert.Equal(t, 0.5, s.MinRowDensity)
	assert.Equal(t, 0.5, s.MaxRowDensity)
	// Kept |x|: 0.9 + 0.5 + 3 + 4 = 8.4 of 9.7; kept x²: 26.06 of 27.11;
	// pruned x²: 0.01 + 0.04 + 0 + 1 = 1.05.
	assert.InDelta(t, 8.4/9.7, s.MagnitudeKept, 1e-7)
	assert.InDelta(t, 26.06/27.11, s.EnergyKept, 1e-7)
	assert.InDelta(t, 1.0, s.MaxDropped, 0)
	require.NotNil(t, s.SQNR)
	assert.InDelta(t, 10*math.Log10(27.11/1.05), *s.SQNR, 1e-5)
}

func TestMeasureEdges(t *testing.T) {
	x := []float32{1, 2, 3, 4, 0, 0, 0, 5}
	m, err := Threshold(x, []int{2, 4}, 0)
	require.NoError(t, err)
	s, err := Measure(x, m)
	require.NoError(t, err)
	assert.Equal(t, 5.0/8, s.Density)
	assert.Equal(t, 0.25, s.MinRowDensity)
	assert.Equal(t, 1.0, s.MaxRowDensity)
	assert.Equal(t, []float64{1, 0.25}, RowDensity(m))
	assert.Equal(t, 1.0, s.MagnitudeKept)
	assert.Nil(t, s.SQNR, "nothing non-zero pruned")

	// All zero: nothing to lose.
	z := make([]float32, 8)
	m, err = Magnitude(z, []int{8}, 0, P24)
	require.NoError(t, err)
	s, err = Measure(z, m)
	require.NoError(t, err)
	assert.Equal(t, 1.0, s.MagnitudeKept)
	assert.Nil(t, s.SQNR)

	// Non-finite values count as elements only.
	nan := []float32{float32(math.NaN()), 1, 2, float32(math.Inf(1))}
	m, err = Magnitude(nan, []int{4}, 0, P24)
	require.NoError(t, err)
	s, err = Measure(nan, m)
	require.NoError(t, err)
	assert.Equal(t, 2, s.Kept) // NaN and Inf
	assert.Equal(t, 0.0, s.MagnitudeKept)
	require.NotNil(t, s.SQNR)
	assert.InDelta(t, 0, *s.SQNR, 1e-12) // everything finite was pruned

	empty, err := mask.New([]int{0, 4})
	require.NoError(t, err)
	s, err = Measure(nil, empty)
	require.NoError(t, err)
	assert.Equal(t, 0.0, s.Density)
	assert.Equal(t, 0.0, MaskDensity(empty))

	_, err = Measure(x[:3], m)
	require.ErrorIs(t, err, ErrShape)
	assert.Equal(t, 0.5, MaskDensity(m))
}
