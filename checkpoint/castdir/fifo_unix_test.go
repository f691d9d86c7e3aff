//go:build unix

package castdir

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/internal/inputfile/inputfiletest"
)

// A named pipe in place of info.json is refused instead of blocking.
func TestOpenFIFO(t *testing.T) {
	dir := t.TempDir()
	err := inputfiletest.OpenFIFO(t, dir, InfoFile, func(string) error { _, err := Open(dir); return err })
	require.ErrorIs(t, err, inputfile.ErrNotRegular)
	require.ErrorContains(t, err, InfoFile)
}
