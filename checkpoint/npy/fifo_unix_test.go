//go:build unix

package npy

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/internal/inputfile/inputfiletest"
)

// A named pipe is refused at once by ReadFile and ReadNPZ.
func TestReadFIFO(t *testing.T) {
	dir := t.TempDir()
	err := inputfiletest.OpenFIFO(t, dir, "in.npy", func(p string) error { _, err := ReadFile(p); return err })
	require.ErrorIs(t, err, inputfile.ErrNotRegular)
	require.ErrorContains(t, err, "in.npy")
	err = inputfiletest.OpenFIFO(t, dir, "in.npz", func(p string) error { _, err := ReadNPZ(p); return err })
	require.ErrorIs(t, err, inputfile.ErrNotRegular)
	require.ErrorContains(t, err, "in.npz")
}
