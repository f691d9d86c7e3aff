package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCastSparsity prunes TensorCast's G11 row to 2:4 through the command
// line, with a datatype whose cast is exact (float32 elements under a
// power-of-two scale), and ranks by Wanda's |w|·norm.
func TestCastSparsity(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.npy")
	writeNpy(t, in, []int{1, 8}, []float32{0.1, -0.9, 0.5, 0.2, 3, -4, 0, 1})
	out := filepath.Join(dir, "out")
	code, stdout, stderr := tcast("cast", in, "-dtype", "float32_e8m0_t4", "-sparsity", "2:4", "-o", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "t4n2m4")
	deq, _ := readWithNpyio[float32](t, filepath.Join(out, "dequant.npy"))
	assert.Equal(t, []float32{0, -0.9, 0.5, 0, 3, -4, 0, 0}, deq)
	_, err := os.Stat(filepath.Join(out, "mask.npy"))
	require.NoError(t, err)
	back := filepath.Join(dir, "back.npy")
	code, _, stderr = tcast("decompress", "-o", back, out)
	require.Equal(t, 0, code, stderr)
	got, _ := readWithNpyio[float32](t, back)
	assert.Equal(t, deq, got)

	// Wanda: norms 10, 1, 1, 0.1 make the scores of 1, −2, 3, 4 be 10, 2,
	// 3, 0.4, so 1 and 3 are kept where magnitude keeps 3 and 4.
	w := filepath.Join(dir, "w.npy")
	writeNpy(t, w, []int{1, 4}, []float32{1, -2, 3, 4})
	norms := filepath.Join(dir, "norms.npy")
	writeNpy(t, norms, []int{4}, []float32{10, 1, 1, 0.1})
	out2 := filepath.Join(dir, "out2")
	code, _, stderr = tcast("cast", w, "-dtype", "float32_e8m0_t4", "-sparsity", "2:4", "-sparsity-criterion", "wanda", "-act-norms", norms, "-o", out2)
	require.Equal(t, 0, code, stderr)
	deq, _ = readWithNpyio[float32](t, filepath.Join(out2, "dequant.npy"))
	assert.Equal(t, []float32{1, 0, 3, 0}, deq)

	for _, args := range [][]string{
		{"-dtype", "bfloat16", "-sparsity", "2:4"},                              // unscaled
		{"-dtype", "mxfp4", "-sparsity", "3:4"},                                 // 3 does not divide 32
		{"-dtype", "mxfp4", "-sparsity", "2:3"},                                 // no pattern
		{"-dtype", "mxfp4", "-sparsity-criterion", "wanda"},                     // no sparsity
		{"-dtype", "mxfp4", "-sparsity", "2:4", "-sparsity-criterion", "wanda"}, // no norms
		{"-dtype", "mxfp4", "-act-norms", norms},                                // norms without wanda
		{"-dtype", "mxfp4", "-sparsity", "2:4", "-sparsity-criterion", "taylor"},
	} {
		code, _, stderr := tcast(append(append([]string{"cast", w}, args...), "-o", filepath.Join(dir, "bad"))...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
	}
	// Norms of the wrong length name the file.
	code, _, stderr = tcast("cast", in, "-dtype", "float32_e8m0_t4", "-sparsity", "2:4", "-sparsity-criterion", "wanda", "-act-norms", norms, "-o", filepath.Join(dir, "bad"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "norms.npy")
}
