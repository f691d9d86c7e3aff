package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ournpy "github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
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
	// The mask as text: G11 keeps columns 1,2 and 4,5.
	code, stdout, stderr = tcast("inspect", "-mask", "x", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "4 of 8 kept")
	assert.Contains(t, stdout, "\n.##.##..\n")
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

// TestConvertSparsity converts the iris fixture to MXFP4 with 2:4 sparsity
// in the tcast layout, verifies and decompresses it, and ranks one weight by
// Wanda's norms from an .npz.
func TestConvertSparsity(t *testing.T) {
	out := filepath.Join(t.TempDir(), "conv")
	code, stdout, stderr := tcast("convert", irisFixture, "-dtype", "mxfp4", "-sparsity", "2:4", "-o", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "t32n2m4")
	code, stdout, stderr = tcast("verify", irisFixture, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "189 tensors checked")
	plain := filepath.Join(t.TempDir(), "plain.safetensors")
	code, _, stderr = tcast("decompress", "-o", plain, out)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr = tcast("inspect", "-mask", "conv2d/Conv2D_weights", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "conv2d/Conv2D_weights: mask [3 3 3 64]: 864 of 1728 kept")
	code, _, stderr = tcast("inspect", "-mask", "conv2d/Conv2D_bn_offset", out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "no mask")

	// One 4×8 weight, norms 10, 1, 1, 0.1 repeated: every group of four
	// keeps its first and third element whatever their magnitude.
	dir := t.TempDir()
	src := filepath.Join(dir, "w.safetensors")
	data := make([]byte, 4*32)
	for i := range 32 {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i%4+1)))
	}
	require.NoError(t, safetensors.WriteFile(src, []safetensors.Tensor{{Name: "m.weight", DType: safetensors.F32, Shape: []int{4, 8}, Data: data}}, nil))
	norms := make([]byte, 4*8)
	for i, v := range []float32{10, 1, 1, 0.1, 10, 1, 1, 0.1} {
		binary.LittleEndian.PutUint32(norms[4*i:], math.Float32bits(v))
	}
	npz := filepath.Join(dir, "norms.npz")
	require.NoError(t, ournpy.WriteNPZ(npz, []ournpy.Named{{Name: "m.weight", Array: &ournpy.Array{
		Header: ournpy.Header{DType: ournpy.Float32, Shape: []int{8}}, Data: norms}}}))
	conv := filepath.Join(dir, "conv")
	code, _, stderr = tcast("convert", src, "-dtype", "float32_e8m0_t4", "-include", "m.weight", "-sparsity", "2:4",
		"-sparsity-criterion", "wanda", "-act-norms", npz, "-o", conv)
	require.Equal(t, 0, code, stderr)
	back := filepath.Join(dir, "back.safetensors")
	code, _, stderr = tcast("decompress", "-o", back, "-to", "f32", conv)
	require.Equal(t, 0, code, stderr)
	f, err := safetensors.Open(back)
	require.NoError(t, err)
	defer f.Close()
	b, err := f.Bytes("m.weight")
	require.NoError(t, err)
	for i := range 32 {
		want := float32(0)
		if i%2 == 0 {
			want = float32(i%4 + 1) // 1 and 3 kept
		}
		assert.Equal(t, want, math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])), "element %d", i)
	}

	// A weight without norms is an error naming it.
	require.NoError(t, ournpy.WriteNPZ(npz, []ournpy.Named{{Name: "other", Array: &ournpy.Array{
		Header: ournpy.Header{DType: ournpy.Float32, Shape: []int{8}}, Data: norms}}}))
	code, _, stderr = tcast("convert", src, "-dtype", "float32_e8m0_t4", "-include", "m.weight", "-sparsity", "2:4",
		"-sparsity-criterion", "wanda", "-act-norms", npz, "-o", filepath.Join(dir, "conv2"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "m.weight")
	code, _, _ = tcast("convert", src, "-dtype", "bfloat16", "-sparsity", "2:4", "-o", filepath.Join(dir, "conv3"))
	assert.Equal(t, 2, code)
}
