package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "a.bin")
	require.NoError(t, os.WriteFile(reg, []byte("abc"), 0o644))
	link := filepath.Join(dir, "link.bin")
	require.NoError(t, os.Symlink(reg, link))

	for _, p := range []string{reg, link} {
		f, fi, err := Open(p)
		require.NoError(t, err, p)
		assert.Equal(t, int64(3), fi.Size())
		f.Close()
	}

	_, _, err := Open(dir)
	var nre *NotRegularError
	require.ErrorAs(t, err, &nre)
	assert.True(t, errors.Is(err, ErrNotRegular))
	assert.Equal(t, dir, nre.Path)
	assert.Contains(t, err.Error(), "a directory")

	_, _, err = Open(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.False(t, errors.Is(err, ErrNotRegular))
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 4096, 100000} {
		p := filepath.Join(dir, "f")
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i * 7)
		}
		require.NoError(t, os.WriteFile(p, want, 0o644))
		got, err := ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := ReadFile(dir)
	assert.ErrorIs(t, err, ErrNotRegular)
}

// A file past MaxReadFile (here a sparse one: a hostile checkpoint can ship
// one that claims a terabyte on a few disk blocks) is refused by its size,
// before ReadFile allocates or reads anything.
func TestReadFileTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	require.NoError(t, os.Truncate(p, MaxReadFile+1))
	_, err := ReadFile(p)
	require.ErrorIs(t, err, ErrTooLarge)
	var tle *TooLargeError
	require.ErrorAs(t, err, &tle)
	assert.Equal(t, TooLargeError{Path: p, Size: MaxReadFile + 1}, *tle)
	assert.Contains(t, err.Error(), p)
	assert.False(t, errors.Is(err, ErrNotRegular))
}
