package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireProfile checks that path holds a pprof profile: a gzip stream (the
// format runtime/pprof writes) with something in it.
func requireProfile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err, "profile %s", path)
	zr, err := gzip.NewReader(bytes.NewReader(b))
	require.NoError(t, err, "profile %s is not gzip", path)
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.NotEmpty(t, raw, "profile %s is empty", path)
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

// dirNames lists dir, temporaries included (a profile left half-written
// would show).
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestProfileFlags(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	out := filepath.Join(dir, "conv")

	t.Run("convert writes both", func(t *testing.T) {
		code, _, stderr := tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", out, "-json",
			"-cpuprofile", cpu, "-memprofile", mem)
		require.Equal(t, 0, code, stderr)
		requireProfile(t, cpu)
		requireProfile(t, mem)
	})
	t.Run("an existing profile needs -force", func(t *testing.T) {
		before := fileHash(t, cpu)
		code, _, stderr := tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", filepath.Join(dir, "conv2"), "-json",
			"-cpuprofile", cpu)
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, "-cpuprofile")
		assert.Contains(t, stderr, "-force")
		assert.Equal(t, before, fileHash(t, cpu))
		assert.NoDirExists(t, filepath.Join(dir, "conv2"), "nothing is converted when a profile is refused")

		code, _, stderr = tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", out, "-json", "-force",
			"-cpuprofile", cpu)
		require.Equal(t, 0, code, stderr)
		requireProfile(t, cpu)
	})
	t.Run("never over an input", func(t *testing.T) {
		in := filepath.Join(t.TempDir(), "in.safetensors")
		b, err := os.ReadFile(irisFixture)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(in, b, 0o644))
		want := fileHash(t, in)
		for _, flag := range []string{"-cpuprofile", "-memprofile"} {
			code, _, stderr := tcast("convert", in, "-dtype", "mxfp4", "-o", filepath.Join(dir, "conv3"), "-force", flag, in)
			assert.Equal(t, 1, code, flag)
			assert.Contains(t, stderr, "overwrite the input", flag)
			assert.Contains(t, stderr, flag)
			assert.Equal(t, want, fileHash(t, in), "%s wrote over the input", flag)
		}
		code, _, stderr := tcast("decompress", "-o", filepath.Join(dir, "plain.safetensors"), "-cpuprofile", in, in)
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, "overwrite the input")
		assert.Equal(t, want, fileHash(t, in))
	})
	t.Run("never over or inside the output", func(t *testing.T) {
		for _, p := range []string{out, filepath.Join(out, "cpu.prof")} {
			code, _, stderr := tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", out, "-force", "-cpuprofile", p)
			assert.Equal(t, 2, code, p)
			assert.Contains(t, stderr, "inside the output", p)
		}
		code, _, stderr := tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", out, "-force", "-cpuprofile", mem, "-memprofile", mem)
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, "same file")
	})
	t.Run("a failed command leaves no profile", func(t *testing.T) {
		d := t.TempDir()
		code, _, _ := tcast("convert", filepath.Join(d, "missing.safetensors"), "-dtype", "mxfp4", "-o", filepath.Join(d, "o"),
			"-cpuprofile", filepath.Join(d, "cpu.prof"), "-memprofile", filepath.Join(d, "mem.prof"))
		assert.Equal(t, 1, code)
		assert.Empty(t, dirNames(t, d))
	})
	t.Run("cast and decompress", func(t *testing.T) {
		d := t.TempDir()
		in := filepath.Join(d, "x.npy")
		x := make([]float32, 4*64)
		for i := range x {
			x[i] = float32(i%17) - 8
		}
		writeNpy(t, in, []int{4, 64}, x)
		code, _, stderr := tcast("cast", "-dtype", "mxfp4", "-o", filepath.Join(d, "cast"), "-cpuprofile", filepath.Join(d, "c.prof"), in)
		require.Equal(t, 0, code, stderr)
		requireProfile(t, filepath.Join(d, "c.prof"))
		code, _, stderr = tcast("cast", "-dtype", "mxfp4", "-o", filepath.Join(d, "cast2"), "-memprofile", in, in)
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, "overwrite the input")
		code, _, stderr = tcast("decompress", "-o", filepath.Join(d, "y.npy"), "-memprofile", filepath.Join(d, "m.prof"), filepath.Join(d, "cast"))
		require.Equal(t, 0, code, stderr)
		requireProfile(t, filepath.Join(d, "m.prof"))
		assert.ElementsMatch(t, []string{"x.npy", "cast", "c.prof", "y.npy", "m.prof"}, dirNames(t, d))
	})
	t.Run("documented in -h", func(t *testing.T) {
		for _, cmd := range []string{"convert", "cast", "decompress"} {
			code, stdout, _ := tcast(cmd, "-h")
			assert.Equal(t, 0, code)
			assert.Contains(t, stdout, "-cpuprofile FILE", cmd)
			assert.Contains(t, stdout, "-memprofile FILE", cmd)
		}
	})
}
