//go:build unix

package imatrix

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/internal/inputfile/inputfiletest"
)

// A named pipe is refused at once.
func TestReadFIFO(t *testing.T) {
	err := inputfiletest.OpenFIFO(t, t.TempDir(), "imatrix.dat", func(p string) error { _, err := Read(p); return err })
	require.ErrorIs(t, err, inputfile.ErrNotRegular)
	require.ErrorContains(t, err, "imatrix.dat")
}
