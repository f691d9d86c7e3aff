//go:build unix

package ggufmodel

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

// A named pipe in place of tokenizer.json or tokenizer_config.json is
// refused instead of blocking.
func TestReadTokenizerFIFO(t *testing.T) {
	for _, name := range []string{TokenizerFile, TokenizerConfigFile} {
		dir := t.TempDir()
		if name == TokenizerConfigFile {
			require.NoError(t, os.WriteFile(filepath.Join(dir, TokenizerFile), []byte(`{}`), 0o644))
		}
		err := openFIFO(t, dir, name, func(string) error { _, err := ReadTokenizer(dir, TokenizerOptions{}); return err })
		require.ErrorIs(t, err, inputfile.ErrNotRegular, name)
		require.ErrorContains(t, err, name)
	}
}
