package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/load"
)

// TestConvertRotate runs convert -rotate, verify and decompress on the
// bundled fixture: the report notes each rotation with the SQNR without it,
// and decompress gives the weights in their own orientation.
func TestConvertRotate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "conv")
	code, stdout, stderr := tcast("convert", irisFixture, "-dtype", "int4_g128", "-rotate", "hadamard", "-exclude", "^unknown_344$", "-o", out, "-workers", "2")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "rotated hadamard:128 (")
	assert.Contains(t, stdout, "dB without)")
	assert.Regexp(t, `rotation: SQNR [0-9.]+ dB with it, [0-9.]+ dB without`, stdout)

	code, stdout, stderr = tcast("verify", "-min-sqnr", "10", irisFixture, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "189 tensors checked, 0 below -min-sqnr 10.00 dB")

	// inspect says which weights were rotated, and that a plain cast's
	// scales came by rule (no scale search line).
	code, stdout, stderr = tcast("inspect", "-stats=false", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "; rotated hadamard:128 (undone when read)")
	assert.NotContains(t, stdout, "scale search:")
	searched := filepath.Join(t.TempDir(), "searched")
	code, _, stderr = tcast("convert", irisFixture, "-dtype", "mxfp4", "-scale-search", "-o", searched)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr = tcast("inspect", "-stats=false", "-json", searched)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"scale_search": true`)
	assert.NotContains(t, stdout, `"rotation"`)
	code, stdout, stderr = tcast("inspect", "-stats=false", searched)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "\nscale search: each block's scale was chosen among candidates")

	plain := filepath.Join(t.TempDir(), "plain.safetensors")
	code, _, stderr = tcast("decompress", "-o", plain, out)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr = tcast("verify", "-min-sqnr", "10", irisFixture, plain)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "0 below -min-sqnr 10.00 dB")
	c, err := load.Open(plain)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, load.Plain, c.Layout())
}

// TestConvertRotateRefused: a bad -rotate, a layout that cannot record it and
// a weight no block divides are usage errors that say what to do.
func TestConvertRotateRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-rotate", "hadamard:48"}, 2, "-rotate: invalid rotation \"hadamard:48\": BLOCK must be a power of two"},
		{[]string{"-rotate", "givens"}, 2, "want hadamard or hadamard:BLOCK"},
		{[]string{"-rotate", "hadamard", "-layout", "gguf"}, 2, "-rotate rotates the weights before the cast, which only the tcast layout records"},
		{[]string{"-rotate", "hadamard", "-layout", "compressed-tensors", "-dtype", "nvfp4"}, 2, "drop -rotate, or use -layout tcast"},
		{[]string{"-rotate", "hadamard"}, 2, "-rotate: hadamard:32 cannot rotate tensor unknown_344 [2 2 128 213]: axis 3 holds 213 values, not a multiple of the block of 32; use -exclude '^unknown_344$'"},
	} {
		args := append([]string{"convert", irisFixture, "-dtype", "mxfp4", "-o", filepath.Join(dir, "out")}, tc.args...)
		code, _, stderr := tcast(args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, tc.args)
	}
}
