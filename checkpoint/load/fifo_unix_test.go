//go:build unix

package load

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/internal/inputfile/inputfiletest"
)

// A named pipe is refused at once, whatever its name says it is.
func TestOpenFIFO(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"in.safetensors", "in.gguf", "in.npy", "in.bin"} {
		err := inputfiletest.OpenFIFO(t, dir, name, func(p string) error { _, err := Open(p); return err })
		require.ErrorIs(t, err, inputfile.ErrNotRegular, name)
		require.ErrorContains(t, err, name)
	}
}

// A named pipe in place of config.json beside the checkpoint is refused
// instead of blocking.
func TestOpenFIFOConfig(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/tcast/model.safetensors")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), b, 0o644))
	err = inputfiletest.OpenFIFO(t, dir, "config.json", func(string) error {
		c, err := Open(filepath.Join(dir, "model.safetensors"))
		if err == nil {
			c.Close()
		}
		return err
	})
	require.ErrorIs(t, err, inputfile.ErrNotRegular)
	require.ErrorContains(t, err, "config.json")
}
