//go:build unix

package ggufmodel

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/internal/inputfile/inputfiletest"
)

// A named pipe in place of tokenizer.json or tokenizer_config.json is
// refused instead of blocking.
func TestReadTokenizerFIFO(t *testing.T) {
	for _, name := range []string{tokenizerFile, tokenizerConfigFile} {
		dir := t.TempDir()
		if name == tokenizerConfigFile {
			require.NoError(t, os.WriteFile(filepath.Join(dir, tokenizerFile), []byte(`{}`), 0o644))
		}
		err := inputfiletest.OpenFIFO(t, dir, name, func(string) error { _, err := ReadTokenizer(dir, TokenizerOptions{}); return err })
		require.ErrorIs(t, err, inputfile.ErrNotRegular, name)
		require.ErrorContains(t, err, name)
	}
}
