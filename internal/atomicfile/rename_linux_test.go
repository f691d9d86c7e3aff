package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExchange checks that the one-rename directory swap Commit uses on
// Linux works on the file system of the test directory (ext4, xfs, btrfs,
// tmpfs and overlayfs all support RENAME_EXCHANGE), so that TestCommit's
// "force replaces a dir" takes that path.
func TestExchange(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.Mkdir(a, 0o777))
	require.NoError(t, os.Mkdir(b, 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(a, "in-a"), nil, 0o666))
	require.NoError(t, os.WriteFile(filepath.Join(b, "in-b"), nil, 0o666))
	require.NoError(t, exchange(a, b))
	assert.FileExists(t, filepath.Join(a, "in-b"))
	assert.FileExists(t, filepath.Join(b, "in-a"))

	err := renameNoReplace(a, b)
	assert.ErrorIs(t, err, os.ErrExist)
	require.NoError(t, renameNoReplace(a, filepath.Join(dir, "c")))
	assert.FileExists(t, filepath.Join(dir, "c", "in-b"))
}
