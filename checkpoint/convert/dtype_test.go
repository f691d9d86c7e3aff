package convert

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
)

// TestDataTypeOrMix checks how -dtype values resolve for GGUF output, and
// that a misspelled mix suggests the mix.
func TestDataTypeOrMix(t *testing.T) {
	gg, err := layout.Get("gguf")
	require.NoError(t, err)
	for _, c := range []struct {
		name, dt, mix string
	}{
		{"q4_k_m", "", "Q4_K_M"},
		{"Q4_K_M", "", "Q4_K_M"},
		{"q4_k", "q4_k", "Q4_K_M"}, // llama-quantize's alias Q4_K
		{"q8_0", "q8_0", "Q8_0"},
		{"mxfp4", "mxfp4e2", ""},
		{"iq4_xs", "iq4_xs", "IQ4_XS"},
	} {
		dt, mix, err := DataTypeOrMix(gg, c.name)
		require.NoError(t, err, c.name)
		if c.dt == "" {
			assert.Nil(t, dt, c.name)
		} else {
			require.NotNil(t, dt, c.name)
			assert.Equal(t, c.dt, dt.Name(), c.name)
		}
		assert.Equal(t, c.mix, mix.String(), c.name)
	}

	for _, c := range []struct {
		name    string
		closest []string
	}{
		{"q4km", []string{"Q4_K_M", "q4_k"}}, // then Q3_K_M, first of the mixes 1 edit away
		{"Q4_K_X", []string{"Q4_K_S", "Q4_K_M", "q4_k"}},
		{"q4_k_mm", []string{"Q4_K_M"}},
	} {
		_, _, err := DataTypeOrMix(gg, c.name)
		var ue *UnknownDataTypeError
		require.ErrorAs(t, err, &ue, c.name)
		assert.Equal(t, c.closest, ue.Closest[:len(c.closest)], c.name)
		assert.Contains(t, err.Error(), `unknown datatype or GGUF mix "`+c.name+`"`)
		var de *layout.DataTypeError
		assert.True(t, errors.As(err, &de), "the layout's error underneath")
	}

	_, _, err = DataTypeOrMix(gg, "nvfp4")
	var ue *UnknownDataTypeError
	require.ErrorAs(t, err, &ue)
	assert.True(t, ue.Known)
	assert.Contains(t, err.Error(), "cannot hold datatype nvfp4")
	assert.Contains(t, err.Error(), "or a GGUF mix: ")

	// Other layouts take no mixes and give their own error.
	tl, err := layout.Get("tcast")
	require.NoError(t, err)
	_, mix, err := DataTypeOrMix(tl, "q4_k_m")
	require.Error(t, err)
	assert.True(t, mix.IsZero())
	assert.False(t, errors.As(err, &ue))
}
