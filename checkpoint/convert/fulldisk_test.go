//go:build linux

package convert

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConvertFullDisk converts onto a 256 KiB tmpfs, too small for the output:
// the error must name the output file and nothing may be left behind. It needs
// root to mount the tmpfs and is skipped otherwise.
func TestConvertFullDisk(t *testing.T) {
	needFixture(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	// The output directory is built beside its destination, so the
	// destination goes inside the tmpfs.
	_, err := Convert(iris, filepath.Join(dir, "out"), opts(t, "mxfp4", "tcast"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model.safetensors")
	t.Log(err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no output and no temporary file")
}
