//go:build unix

package gguf

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/internal/inputfile/inputfiletest"
)

// A named pipe is refused at once.
func TestOpenFIFO(t *testing.T) {
	err := inputfiletest.OpenFIFO(t, t.TempDir(), "in.gguf", func(p string) error { _, err := Open(p); return err })
	require.ErrorIs(t, err, inputfile.ErrNotRegular)
	require.ErrorContains(t, err, "in.gguf")
}

// A device is refused as what it is, not reported as a truncated file.
func TestOpenDevice(t *testing.T) {
	_, err := Open("/dev/urandom")
	require.ErrorIs(t, err, ErrNotRegular)
	require.ErrorContains(t, err, "/dev/urandom is a character device, not a regular file")
	require.NotContains(t, err.Error(), "left in the file")
	require.NotContains(t, err.Error(), "too short")
}
