package convert

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
)

// TestVerifyNamesHint checks that verifying a Hugging Face checkpoint
// against a GGUF made from another GGUF (which records no Hugging Face
// names) says why the names differ and what to verify instead, while the
// GGUF converted from the checkpoint itself verifies.
func TestVerifyNamesHint(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	f16, _, err := convertGGUF(t, src, "f16", Options{})
	require.NoError(t, err)
	direct, _, err := convertMix(t, src, "q8_0", Options{})
	require.NoError(t, err)
	_, err = Verify(src, direct)
	require.NoError(t, err, "paired by the names the conversion records")

	l, err := layout.Get("gguf")
	require.NoError(t, err)
	again := filepath.Join(t.TempDir(), "rq.gguf")
	_, err = Convert(f16, again, Options{Layout: l, DataType: mustDataType(t, l, "q8_0")})
	require.NoError(t, err)
	_, err = Verify(src, again)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrMismatch))
	assert.Contains(t, err.Error(), "; "+again+" has GGUF tensor names (blk.0.attn_q.weight, ...), "+src+" Hugging Face ones")
	assert.Contains(t, err.Error(), "Verify "+again+" against the checkpoint it was converted from, or convert "+src+" to GGUF")
	_, err = Verify(f16, again)
	require.NoError(t, err)
}
