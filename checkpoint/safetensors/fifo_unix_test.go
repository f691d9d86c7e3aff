//go:build unix

package safetensors

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/internal/inputfile/inputfiletest"
)

// A named pipe given as a file or as a shard of an index is refused at once.
func TestOpenFIFO(t *testing.T) {
	dir := t.TempDir()
	err := inputfiletest.OpenFIFO(t, dir, "in.safetensors", func(p string) error { _, err := Open(p); return err })
	require.ErrorIs(t, err, inputfile.ErrNotRegular)
	require.ErrorContains(t, err, "in.safetensors")

	idx := filepath.Join(dir, IndexFileName)
	require.NoError(t, os.WriteFile(idx, []byte(`{"weight_map":{"w":"shard.safetensors"}}`), 0o644))
	err = inputfiletest.OpenFIFO(t, dir, "shard.safetensors", func(string) error { _, err := OpenIndex(idx); return err })
	require.ErrorIs(t, err, inputfile.ErrNotRegular)
	require.ErrorContains(t, err, "shard.safetensors")

	err = inputfiletest.OpenFIFO(t, dir, "x.index.json", func(p string) error { _, err := OpenIndex(p); return err })
	require.ErrorIs(t, err, inputfile.ErrNotRegular)
}

// A device is refused as what it is, not reported as a truncated file.
func TestOpenDevice(t *testing.T) {
	_, err := Open("/dev/urandom")
	require.ErrorIs(t, err, ErrNotRegular)
	require.ErrorContains(t, err, "/dev/urandom is a character device, not a regular file")
	require.NotContains(t, err.Error(), "left in the file")
	require.NotContains(t, err.Error(), "too short")
}
