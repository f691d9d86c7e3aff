//go:build unix

package inputfile

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A named pipe with no writer is refused at once instead of blocking.
func TestOpenFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe.safetensors")
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	_, _, err := Open(p)
	require.ErrorIs(t, err, ErrNotRegular)
	assert.Contains(t, err.Error(), "a named pipe")
	assert.Contains(t, err.Error(), p)
}

func TestOpenDevice(t *testing.T) {
	_, _, err := Open("/dev/null")
	require.ErrorIs(t, err, ErrNotRegular)
	assert.Contains(t, err.Error(), "a character device")
}

func TestReadFileFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	_, err := ReadFile(p)
	require.ErrorIs(t, err, ErrNotRegular)
}
