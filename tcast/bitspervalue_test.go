package tcast_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// TestWithBitsPerValue checks that a datatype given the bits per value of
// the packed form it views reports them, and that the original keeps its
// own: uint4 with a float32 scale and min per 32 costs 4 + 64/32 = 6 bits,
// and ggml's Q4_K block holding the same values costs 144·8/256 = 4.5.
func TestWithBitsPerValue(t *testing.T) {
	d, err := tcast.New(dtype.MustParse("uint4"), scale.MustParse("float32_float32_t32"), "q4_k")
	require.NoError(t, err)
	k := d.WithBitsPerValue(4.5)
	assert.Equal(t, 6.0, d.BitsPerValue())
	assert.Equal(t, 4.5, k.BitsPerValue())
	assert.Equal(t, 4.5, k.TensorCastBitsPerValue())
	assert.Equal(t, d.Name(), k.Name())
	assert.Equal(t, d.Code(), k.Code())
	assert.Panics(t, func() { d.WithBitsPerValue(0) })
}
