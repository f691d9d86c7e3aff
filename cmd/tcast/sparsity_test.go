package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
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
	// A bad pattern says what -sparsity takes.
	code, _, stderr = tcast("cast", w, "-dtype", "mxfp4", "-sparsity", "2:3", "-o", filepath.Join(dir, "bad"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "such as 2:4")
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
	assert.Contains(t, stdout, "mxfp4 with 2:4 sparsity")
	code, stdout, stderr = tcast("verify", irisFixture, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "189 tensors checked")
	plain := filepath.Join(t.TempDir(), "plain.safetensors")
	code, _, stderr = tcast("decompress", "-o", plain, out)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr = tcast("inspect", "-mask", "conv2d/Conv2D_weights", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "conv2d/Conv2D_weights: mask [3 3 3 64]: 864 of 1728 kept")
	code, _, stderr = tcast("inspect", "-mask", "no/such/weight", out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "lists its weights")
	code, _, stderr = tcast("inspect", "-mask", "conv2d/Conv2D_bn_offset", out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "no mask")
	assert.Contains(t, stderr, "-mask draws the keep mask of an N:M sparse or masked weight", "the error says what -mask takes")

	// One 4×8 weight, norms 10, 1, 1, 0.1 repeated: every group of four
	// keeps its first and third element whatever their magnitude.
	dir := t.TempDir()
	src, npz := wandaFixture(t, dir)
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
		Header: ournpy.Header{DType: ournpy.Float32, Shape: []int{8}}, Data: make([]byte, 4*8)}}}))
	code, _, stderr = tcast("convert", src, "-dtype", "float32_e8m0_t4", "-include", "m.weight", "-sparsity", "2:4",
		"-sparsity-criterion", "wanda", "-act-norms", npz, "-o", filepath.Join(dir, "conv2"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "m.weight")
	// Norms of the wrong length name the file, the weight and the length wanted.
	require.NoError(t, ournpy.WriteNPZ(npz, []ournpy.Named{{Name: "m.weight", Array: &ournpy.Array{
		Header: ournpy.Header{DType: ournpy.Float32, Shape: []int{4}}, Data: make([]byte, 4*4)}}}))
	code, _, stderr = tcast("convert", src, "-dtype", "float32_e8m0_t4", "-include", "m.weight", "-sparsity", "2:4",
		"-sparsity-criterion", "wanda", "-act-norms", npz, "-o", filepath.Join(dir, "conv2"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "norms.npz: m.weight: 4 activation norms for a weight of shape [4 8], want 8")
	code, _, _ = tcast("convert", src, "-dtype", "bfloat16", "-sparsity", "2:4", "-o", filepath.Join(dir, "conv3"))
	assert.Equal(t, 2, code)
}

// TestConvertCompressedTensorsSparsity writes compressed-tensors' sparse
// formats through the command line: prune-only (no -dtype), with int8 and
// fp8, dense, and Wanda's ranking; and refuses each wrong combination with a
// message that says what to do.
func TestConvertCompressedTensorsSparsity(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src", "model.safetensors")
	code, _, stderr := tcast("synth", "-o", src, "-layers", "1", "-hidden", "64")
	require.Equal(t, 0, code, stderr)
	qc := func(out string) map[string]any {
		b, err := os.ReadFile(filepath.Join(out, "config.json"))
		require.NoError(t, err)
		var cfg map[string]any
		require.NoError(t, json.Unmarshal(b, &cfg))
		q, _ := cfg["quantization_config"].(map[string]any)
		return q
	}
	for _, tc := range []struct {
		args            []string
		format, qformat string
	}{
		{[]string{"-sparsity", "2:4"}, "sparse-24-bitmask", ""},
		{[]string{"-sparsity", "n2m4", "-dtype", "float16"}, "sparse-24-bitmask", ""},
		{[]string{"-sparsity", "4:8"}, "sparse-bitmask", ""},
		{[]string{"-sparsity", "2:4", "-sparsity-format", "sparse-bitmask", "-dtype", "int8_channel"}, "sparse-bitmask", "int-quantized"},
		{[]string{"-sparsity", "2:4", "-dtype", "fp8e4_tensor"}, "sparse-24-bitmask", "float-quantized"},
		{[]string{"-sparsity", "2:4", "-sparsity-format", "dense", "-dtype", "nvfp4"}, "", "nvfp4-pack-quantized"},
	} {
		out := filepath.Join(dir, strings.Join(tc.args, ""))
		code, stdout, stderr := tcast(append(append([]string{"convert", src, "-layout", "compressed-tensors", "-o", out}, tc.args...), "-json")...)
		require.Equal(t, 0, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stdout, `"note": "pruned`)
		q := qc(out)
		if tc.format == "" {
			assert.NotContains(t, q, "sparsity_config", "%v", tc.args)
		} else {
			assert.Equal(t, tc.format, q["sparsity_config"].(map[string]any)["format"], "%v", tc.args)
		}
		if tc.qformat != "" {
			assert.Equal(t, tc.qformat, q["format"], "%v", tc.args)
		}
		code, stdout, stderr = tcast("inspect", "-stats=false", out)
		require.Equal(t, 0, code, stderr)
		if tc.format != "" {
			want := "mask density 0.5000"
			assert.Contains(t, stdout, want, "%v", tc.args)
			code, stdout, stderr = tcast("inspect", "-mask", "model.layers.0.mlp.up_proj.weight", out)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "(density 0.5000)")
		}
		code, _, stderr = tcast("verify", src, out)
		require.Equal(t, 0, code, stderr)
	}

	// Wanda: norms 10, 1, 1, 0.1 keep the first and third of every four.
	wdir := t.TempDir()
	wsrc, npz := wandaFixture(t, wdir)
	wout := filepath.Join(wdir, "out")
	code, _, stderr = tcast("convert", wsrc, "-layout", "compressed-tensors", "-sparsity", "2:4", "-sparsity-criterion", "wanda", "-act-norms", npz, "-o", wout)
	require.Equal(t, 0, code, stderr)
	f, err := safetensors.Open(filepath.Join(wout, "model.safetensors"))
	require.NoError(t, err)
	defer f.Close()
	b, err := f.Bytes("m.bitmask")
	require.NoError(t, err)
	assert.Equal(t, []byte{0x55, 0x55, 0x55, 0x55}, b, "columns 0, 2, 4, 6 of each row")
	vals, err := f.Float32s("m.compressed")
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 3, 1, 3}, vals[:4])

	for _, tc := range []struct {
		args []string
		want []string // in the message: what is wrong, and what to do
	}{
		{[]string{"-layout", "compressed-tensors", "-sparsity", "2:4", "-dtype", "mxfp4"},
			[]string{"-sparsity-format sparse-24-bitmask (the default for 2:4)", "weight_packed", "-sparsity-format dense"}},
		{[]string{"-layout", "compressed-tensors", "-sparsity", "2:4", "-dtype", "int4_g128", "-sparsity-format", "sparse-bitmask"},
			[]string{"-sparsity-format sparse-bitmask", "-sparsity-format dense", "int8"}},
		{[]string{"-layout", "compressed-tensors", "-sparsity", "2:4", "-dtype", "mxfp8e4"}, []string{"mxfp8", "-sparsity-format dense"}},
		{[]string{"-layout", "compressed-tensors", "-sparsity", "2:4", "-dtype", "uint8_g32"}, []string{"zero point", "-sparsity-format dense"}},
		{[]string{"-layout", "compressed-tensors", "-sparsity", "4:8", "-sparsity-format", "sparse-24-bitmask"},
			[]string{"holds 2:4 sparsity, not 4:8", "-sparsity-format sparse-bitmask"}},
		{[]string{"-layout", "compressed-tensors", "-sparsity", "2:4", "-sparsity-format", "bitmask"},
			[]string{"unknown sparse format", "give dense, sparse-bitmask or sparse-24-bitmask"}},
		{[]string{"-layout", "compressed-tensors", "-sparsity", "2:5"}, []string{"M=5", "such as 2:4"}},
		{[]string{"-layout", "compressed-tensors", "-sparsity-format", "dense", "-dtype", "mxfp4"}, []string{"give -sparsity N:M too"}},
		{[]string{"-layout", "compressed-tensors"}, []string{"-dtype is required", "-sparsity N:M to prune without quantizing"}},
		{[]string{"-sparsity", "2:4"}, []string{"-sparsity without -dtype", "-layout compressed-tensors"}},
		{[]string{"-layout", "modelopt", "-dtype", "nvfp4", "-sparsity", "2:4", "-sparsity-format", "dense"},
			[]string{"-sparsity-format applies to -layout compressed-tensors", "drop -sparsity-format"}},
		{[]string{"-layout", "compressed-tensors", "-sparsity", "2:4", "-dtype", "fp8e4_channel", "-sparsity-criterion", "wanda"},
			[]string{"-act-norms"}},
	} {
		code, _, stderr := tcast(append([]string{"convert", src, "-o", filepath.Join(dir, "bad")}, tc.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		for _, w := range tc.want {
			assert.Contains(t, stderr, w, "%v", tc.args)
		}
		assert.NoDirExists(t, filepath.Join(dir, "bad"))
	}
}

// wandaFixture writes to dir w.safetensors, one 4×8 F32 weight m.weight whose
// rows repeat 1, 2, 3, 4, and norms.npz, its activation norms 10, 1, 1, 0.1
// repeated, by which every group of four keeps its first and third element
// whatever their magnitude; it returns their paths.
func wandaFixture(t *testing.T, dir string) (src, npz string) {
	t.Helper()
	src = filepath.Join(dir, "w.safetensors")
	data := make([]byte, 4*32)
	for i := range 32 {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i%4+1)))
	}
	require.NoError(t, safetensors.WriteFile(src, []safetensors.Tensor{{Name: "m.weight", DType: safetensors.F32, Shape: []int{4, 8}, Data: data}}, nil))
	norms := make([]byte, 4*8)
	for i, v := range []float32{10, 1, 1, 0.1, 10, 1, 1, 0.1} {
		binary.LittleEndian.PutUint32(norms[4*i:], math.Float32bits(v))
	}
	npz = filepath.Join(dir, "norms.npz")
	require.NoError(t, ournpy.WriteNPZ(npz, []ournpy.Named{{Name: "m.weight", Array: &ournpy.Array{
		Header: ournpy.Header{DType: ournpy.Float32, Shape: []int{8}}, Data: norms}}}))
	return src, npz
}

// TestSparsityMessage: a layout's refusal of a pruning setting is told in
// terms of the flag that set it, with what to do instead.
func TestSparsityMessage(t *testing.T) {
	for _, tc := range []struct {
		err  layout.SparsityError
		want string
	}{
		{layout.SparsityError{Layout: "compressed-tensors", Option: "Pruning.Format", Value: "bitmask",
			Reason: "unknown sparse format"},
			"layout compressed-tensors: -sparsity-format bitmask: unknown sparse format; " +
				"give dense, sparse-bitmask or sparse-24-bitmask"},
		{layout.SparsityError{Layout: "compressed-tensors", Option: "Pruning.Format", Value: "sparse-24-bitmask",
			Reason: "the format holds 2:4 sparsity, not 4:8", Conflict: "Pruning.Pattern"},
			"layout compressed-tensors: -sparsity-format sparse-24-bitmask: the format holds 2:4 sparsity, " +
				"not 4:8; use -sparsity-format sparse-bitmask (or dense) for other N:M patterns, or -sparsity 2:4"},
		{layout.SparsityError{Layout: "compressed-tensors", Option: "Pruning.Format", Value: "sparse-bitmask",
			Reason: "datatype int4_g128 is stored packed", Conflict: "DataType"},
			"layout compressed-tensors: -sparsity-format sparse-bitmask: datatype int4_g128 is stored packed; " +
				"write the pruned weights dense with -sparsity-format dense, or choose a datatype stored whole: " +
				"fp8e4 with a tensor, channel or 2-D block scale (float-quantized) or int8 with a tensor, " +
				"channel or group scale (int-quantized), or no quantization (-dtype bfloat16, float16 or " +
				"float32, or no -dtype)"},
		{layout.SparsityError{Layout: "compressed-tensors", Option: "Pruning.Pattern", Value: "3:6",
			Reason: "M=6 is not 2, 4, 8 or 16"},
			"layout compressed-tensors: -sparsity 3:6: M=6 is not 2, 4, 8 or 16; " +
				"give N:M with 1 ≤ N < M ≤ 16, M a power of two, such as 2:4"},
		{layout.SparsityError{Layout: "compressed-tensors", Option: "DataType", Value: "fp8e4_channel_n2m4",
			Reason: "an n<N>m<M> datatype has no compressed-tensors form"},
			"layout compressed-tensors: -dtype fp8e4_channel_n2m4: an n<N>m<M> datatype has no " +
				"compressed-tensors form; give the dense datatype with -sparsity N:M"},
		{layout.SparsityError{Layout: "x", Option: "Other", Value: "v", Reason: "r"},
			"layout x: Other v: r"},
	} {
		assert.Equal(t, tc.want, layoutSparsityMessage(&tc.err))
	}
}
