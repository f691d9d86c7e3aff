package safetensors

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMissingShardMessage: a shard the index names but that is not there is
// one message naming the index and the shard, once prefixed, of kind
// ErrMissingFile; errors.Is(err, fs.ErrNotExist) holds and the failing stat is an
// *fs.PathError.
func TestMissingShardMessage(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, IndexFileName)
	require.NoError(t, os.WriteFile(idx, []byte(`{"weight_map":{"a":"model-00003-of-00005.safetensors"}}`), 0o644))
	_, err := OpenIndex(idx)
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, filepath.Join(dir, "model-00003-of-00005.safetensors"), pe.Path)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	msg := err.Error()
	assert.Contains(t, msg, idx)
	assert.Contains(t, msg, `shard "model-00003-of-00005.safetensors" is missing`)
	assert.ErrorIs(t, err, ErrMissingFile, "tcast gives the next step: download every shard")
	assert.Equal(t, 1, strings.Count(" "+msg, " safetensors: "), msg)
}

// TestShardNameNUL: a shard name holding a NUL byte is refused as an
// invalid file name, quoted so the NUL shows.
func TestShardNameNUL(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, IndexFileName)
	require.NoError(t, os.WriteFile(idx, []byte(`{"weight_map":{"a":"x\u0000.safetensors"}}`), 0o644))
	_, err := OpenIndex(idx)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, err.Error(), `"x\x00.safetensors"`)
	assert.Contains(t, err.Error(), "invalid file name")
	assert.ErrorIs(t, err, ErrInvalid)
	assert.False(t, errors.Is(err, fs.ErrNotExist))
}
