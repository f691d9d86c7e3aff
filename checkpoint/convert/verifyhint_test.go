package convert

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
)

// TestVerifyNamesHint checks that verifying a Hugging Face checkpoint
// against a GGUF made from another GGUF (which records no Hugging Face
// names) says why the names differ (tcast verify adds what to verify
// instead), while the GGUF converted from the checkpoint itself verifies.
func TestVerifyNamesHint(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	f16, _, err := convertGGUF(t, src, "f16", Options{})
	require.NoError(t, err)
	direct, _, err := convertMix(t, src, "q8_0", Options{})
	require.NoError(t, err)
	_, err = verifyTensors(src, direct)
	require.NoError(t, err, "paired by the names the conversion records")

	l, err := layout.Get("gguf")
	require.NoError(t, err)
	again := filepath.Join(t.TempDir(), "rq.gguf")
	_, err = Convert(f16, again, Options{Layout: l, DataType: mustDataType(t, l, "q8_0")})
	require.NoError(t, err)
	_, err = verifyTensors(src, again)
	require.Error(t, err)
	assert.True(t, errors.Is(err, verify.ErrMismatch))
	assert.Contains(t, err.Error(), "; "+again+" has GGUF tensor names (blk.0.attn_q.weight, ...), "+src+" Hugging Face ones")
	var me *verify.MissingError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, again, me.GGUF)
	assert.Equal(t, src, me.Other())
	_, err = verifyTensors(f16, again)
	require.NoError(t, err)
}
