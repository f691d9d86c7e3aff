//go:build unix

package inputfiletest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// OpenFIFO makes a named pipe called name in dir and runs open on it,
// returning open's error; it fails the test if open blocks (no process ever
// writes to the pipe) for 5 seconds.
func OpenFIFO(t testing.TB, dir, name string, open func(string) error) error {
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
