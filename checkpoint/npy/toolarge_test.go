package npy

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadClaimsMoreThanFile: a .npy header declaring a [2^20, 2^20]
// float32 array (4 TiB) over a kilobyte of payload is refused with a
// *FormatError, through ReadFile (size known: refused before reading) and
// Read (size unknown: the buffer grows with what arrives), having
// allocated far less than the claim.
func TestReadClaimsMoreThanFile(t *testing.T) {
	b := rawFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }\n", make([]byte, 1024))
	p := filepath.Join(t.TempDir(), "huge.npy")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"ReadFile", func() error { _, err := ReadFile(p); return err }},
		{"Read", func() error { _, err := Read(bytes.NewReader(b)); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			err := c.read()
			runtime.ReadMemStats(&after)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20))
		})
	}
}
