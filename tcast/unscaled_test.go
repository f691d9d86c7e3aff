package tcast

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/sparsity"
)

// CastFormat stores one code per element, little-endian, as the format
// tables give them.
func TestCastFormat(t *testing.T) {
	for _, c := range []struct {
		format string
		shape  []int
		x      []float32
		want   []byte
		o      dtype.Options
	}{
		// OCP E4M3: 3.3 → 0x45 (3.25), -448 → 0xfe, 500 saturates to 448 (0x7e).
		{"e4m3fn", []int{3}, []float32{3.3, -448, 500}, []byte{0x45, 0xfe, 0x7e}, dtype.Options{}},
		// With IEEE overflow E4M3 has no Inf: 500 is NaN (0x7f).
		{"e4m3fn", []int{1}, []float32{500}, []byte{0x7f}, dtype.Options{Overflow: dtype.OverflowIEEE}},
		// Symmetric int8: -3.6 → -4 (0xfc); a 0-d tensor is one element.
		{"int8", []int{}, []float32{-3.6}, []byte{0xfc}, dtype.Options{}},
		// float16: 1 → 0x3c00, -2 → 0xc000, little-endian.
		{"float16", []int{2, 1}, []float32{1, -2}, []byte{0x00, 0x3c, 0x00, 0xc0}, dtype.Options{}},
	} {
		f := dtype.MustParse(c.format)
		act, err := CastFormat(c.x, c.shape, f, c.o)
		require.NoError(t, err, c.format)
		assert.Equal(t, c.want, act.Data.Bytes, c.format)
		assert.Nil(t, act.DataType)
		assert.Equal(t, Actual, act.Form)
		assert.Equal(t, max(len(c.shape)-1, 0), act.Axis)
		assert.Same(t, f, act.Data.Format)
	}
	_, err := CastFormat([]float32{1}, []int{2}, dtype.MustParse("e4m3fn"), dtype.Options{})
	assert.ErrorContains(t, err, "1 values for shape [2]")
	_, err = CastFormat(nil, []int{-1}, dtype.MustParse("e4m3fn"), dtype.Options{})
	assert.ErrorContains(t, err, "negative dimension")
	_, err = CastFormat(nil, nil, nil, dtype.Options{})
	assert.Error(t, err)
}

// WithSparsity's datatype knows the one it was made of.
func TestDense(t *testing.T) {
	mx := MustLookup("mxfp4")
	sp, err := WithSparsity(mx, sparsity.Pattern{N: 2, M: 4})
	require.NoError(t, err)
	assert.Same(t, mx, sp.Dense())
	assert.Equal(t, "mxfp4 with 2:4 sparsity", sp.String())
	assert.Equal(t, "float4_e2m1fn_float8_e8m0fnu_t32n2m4", sp.Name())
	assert.Nil(t, mx.Dense())
}
