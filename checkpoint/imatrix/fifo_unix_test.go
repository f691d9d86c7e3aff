//go:build unix

package imatrix

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// openFIFO makes a named pipe called name in dir and runs open on it,
// failing the test if open blocks (no process ever writes to the pipe).
func openFIFO(t *testing.T, dir, name string, open func(string) error) error {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	done := make(chan error, 1)
	go func() { done <- open(p) }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		// Release the blocked open: a writer that closes at once.
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatalf("opening the named pipe %s blocked", name)
		return nil
	}
}

// A named pipe is refused at once.
func TestReadFIFO(t *testing.T) {
	err := openFIFO(t, t.TempDir(), "imatrix.dat", func(p string) error { _, err := Read(p); return err })
	require.ErrorIs(t, err, inputfile.ErrNotRegular)
	require.ErrorContains(t, err, "imatrix.dat")
}
