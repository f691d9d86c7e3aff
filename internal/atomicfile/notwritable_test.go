package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNotWritable: a denied permission or a read-only file system while
// Begin creates its files is a *NotWritableError naming the output and its
// directory with the next step; the failing operation's *fs.PathError stays
// reachable. Other errors pass through unchanged.
func TestNotWritable(t *testing.T) {
	lock := filepath.Join("ro", ".out.tcast-lock")
	for _, tc := range []struct {
		errno syscall.Errno
		text  string
	}{
		{syscall.EACCES, "permission denied"},
		{syscall.EPERM, "operation not permitted"},
		{syscall.EROFS, "read-only file system"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			pe := &fs.PathError{Op: "open", Path: lock, Err: tc.errno}
			err := notWritable(filepath.Join("ro", "out"), fmt.Errorf("output ro/out: creating the lock file: %w", pe))
			var nw *NotWritableError
			require.ErrorAs(t, err, &nw)
			want := "output " + filepath.Join("ro", "out") + ": cannot write in ro" + string(filepath.Separator) + ": " +
				tc.text + "; choose an output directory you can write to"
			assert.Equal(t, want, err.Error())
			var got *fs.PathError
			require.ErrorAs(t, err, &got)
			assert.Equal(t, lock, got.Path)
		})
	}
	other := errors.New("disk on fire")
	assert.Same(t, other, notWritable("out", other))
}
