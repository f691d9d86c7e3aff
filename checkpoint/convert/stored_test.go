package convert

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeptStored checks that a kept tensor's result names what the file
// stores: a GGUF mix keeps the BF16 norms of the mix test model as F32
// (llama-quantize keeps 1-D tensors F32), while tcast's own layout copies
// them as they are.
func TestKeptStored(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	_, res, err := convertMix(t, src, "q4_k_m", Options{})
	require.NoError(t, err)
	norms := 0
	for _, r := range res.Tensors {
		switch {
		case r.DataType != "":
			assert.Empty(t, r.Stored, "%s is cast", r.Name)
		case r.Dropped:
		default:
			norms++
			assert.Equal(t, "BF16", r.Source, r.Name)
			assert.Equal(t, "F32", r.Stored, r.Name)
			assert.Equal(t, 32.0, r.Bits, r.Name)
		}
	}
	assert.Equal(t, 2*mixLayers+1, norms)

	res, err = Convert(src, filepath.Join(t.TempDir(), "out"), opts(t, "mxfp4", "tcast"))
	require.NoError(t, err)
	for _, r := range res.Tensors {
		if r.DataType == "" {
			assert.Equal(t, "BF16", r.Stored, r.Name)
			assert.Equal(t, 16.0, r.Bits, r.Name)
		}
	}
}
