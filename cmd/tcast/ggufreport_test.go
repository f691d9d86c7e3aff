package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
)

// TestInspectGGUFLlama inspects a Q4_K_M file of a synth Llama: every
// metadata key one a line with its type, and the K-quants' bits per value
// of their blocks (Q4_K 144 bytes per 256 values = 4.5, Q6_K 210 per 256 =
// 6.5625).
func TestInspectGGUFLlama(t *testing.T) {
	dir := t.TempDir()
	src, _ := synthTo(t, dir, "-arch", "llama", "-layers", "1", "-hidden", "256", "-intermediate", "512", "-vocab", "512")
	out := filepath.Join(t.TempDir(), "m.gguf")
	code, _, stderr := tcast("convert", filepath.Dir(src), "-layout", "gguf", "-dtype", "q4_k_m", "-o", out)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr := tcast("inspect", out)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^metadata:$`, stdout)
	assert.Regexp(t, `(?m)^  llama\.block_count \(uint32\) +1$`, stdout)
	assert.Regexp(t, `(?m)^  general\.file_type \(uint32\) +15$`, stdout)
	assert.Regexp(t, `(?m)^  general\.architecture \(string\) +"llama"$`, stdout)
	assert.Regexp(t, `(?m)^  tokenizer\.ggml\.tokens +\[\d+\]string\{`, stdout)
	assert.Regexp(t, `(?m)^blk\.0\.attn_q\.weight +q4_k +\[256 256\] +4\.5 `, stdout)
	assert.Regexp(t, `(?m)^output\.weight +q6_k +\[512 256\] +6\.562 `, stdout)
}

// TestConvertReportKeptStored checks that convert's table names what the
// GGUF file stores for a kept BF16 norm (F32), not the source's dtype alone.
func TestConvertReportKeptStored(t *testing.T) {
	dir := t.TempDir()
	src, _ := synthTo(t, dir, "-arch", "llama", "-layers", "1", "-hidden", "256", "-intermediate", "512", "-vocab", "512")
	code, stdout, stderr := tcast("convert", filepath.Dir(src), "-layout", "gguf", "-dtype", "q4_k_m", "-o", filepath.Join(t.TempDir(), "m.gguf"))
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^blk\.0\.attn_norm\.weight +\[256\] +BF16→F32 +32\.000 `, stdout)
	assert.NotContains(t, stdout, "kept BF16")
}

// TestConvertMisspelledMix checks that a misspelled mix suggests the mix.
func TestConvertMisspelledMix(t *testing.T) {
	dir := t.TempDir()
	src, _ := synthTo(t, dir, "-arch", "llama", "-layers", "1", "-hidden", "256", "-vocab", "512")
	for name, want := range map[string]string{"q4km": "(closest: Q4_K_M, q4_k", "Q4_K_X": "(closest: Q4_K_S, Q4_K_M, q4_k)"} {
		code, _, stderr := tcast("convert", src, "-layout", "gguf", "-dtype", name, "-o", filepath.Join(t.TempDir(), "o.gguf"))
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, `-dtype: layout gguf: unknown datatype or GGUF mix "`+name+`" `+want, name)
	}
}

// TestConvertNotImatrix checks that -imatrix of a text file or of a model
// says that it is no importance matrix.
func TestConvertNotImatrix(t *testing.T) {
	dir := t.TempDir()
	src, _ := synthTo(t, dir, "-arch", "llama", "-layers", "1", "-hidden", "256", "-vocab", "512")
	other := t.TempDir()
	txt := filepath.Join(other, "bad.txt")
	require.NoError(t, os.WriteFile(txt, []byte("hello world, this is text\n"), 0o644))
	model := filepath.Join(other, "model-f16.gguf")
	code, _, stderr := tcast("convert", filepath.Dir(src), "-layout", "gguf", "-dtype", "f16", "-o", model)
	require.Equal(t, 0, code, stderr)
	for in, want := range map[string]string{
		txt:   "-imatrix: " + txt + " is not an importance matrix (llama-imatrix's GGUF or .dat, or the .npz of docs/GGUF.md §2.6)",
		model: "-imatrix: " + model + " is a model file (general.architecture llama), not an importance matrix; compute one",
	} {
		code, _, stderr := tcast("convert", src, "-layout", "gguf", "-dtype", "q4_k_m", "-imatrix", in, "-o", filepath.Join(other, "o.gguf"))
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, want)
	}
}

// TestGGUFMessages checks the wording of messages the GGUF trial met: each
// thing said once, no package names, what to do next.
func TestGGUFMessages(t *testing.T) {
	dir := t.TempDir()
	src, _ := synthTo(t, dir, "-arch", "llama", "-layers", "1", "-hidden", "256", "-vocab", "512")
	other := t.TempDir()
	out := filepath.Join(other, "o.gguf")

	// An importance matrix with a NaN sum of squares.
	nan := filepath.Join(other, "nan.npz")
	f32 := func(vs ...float32) *npy.Array {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return &npy.Array{Header: npy.Header{DType: npy.Float32, Shape: []int{len(vs)}}, Data: b}
	}
	require.NoError(t, npy.WriteNPZ(nan, []npy.Named{
		{Name: "imatrix.datasets", Array: &npy.Array{Header: npy.Header{DType: npy.Uint8, Shape: []int{2}}, Data: []byte("a\n")}},
		{Name: "imatrix.chunk_count", Array: f32(1)},
		{Name: "imatrix.chunk_size", Array: f32(1)},
		{Name: "blk.0.attn_q.weight.in_sum2", Array: f32(float32(math.NaN()), 1)},
		{Name: "blk.0.attn_q.weight.counts", Array: f32(1)},
	}))

	cfg := filepath.Join(filepath.Dir(src), "config.json")
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	var c map[string]any
	require.NoError(t, json.Unmarshal(b, &c))
	delete(c, "max_position_embeddings")
	noCtx := t.TempDir()
	for _, f := range []string{"model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(src), f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(noCtx, f), b, 0o644))
	}
	b, err = json.Marshal(c)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(noCtx, "config.json"), b, 0o644))

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"convert", src, "-layout", "gguf", "-dtype", "q4_k_m", "-type-for", "ffn_down=q7_k", "-o", out}, 2,
			`tcast convert: invalid value "ffn_down=q7_k" for flag -type-for: unknown type "q7_k" (closest: "q2_k", "q3_k", "q4_k")`},
		{[]string{"convert", src, "-layout", "gguf", "-dtype", "q4_k_m", "-imatrix", nan, "-o", out}, 2,
			`tcast convert: -imatrix: ` + nan + `: entry "blk.0.attn_q.weight": column 0's sum of squares is NaN (want finite and ≥ 0)`},
		{[]string{"convert", noCtx, "-layout", "gguf", "-dtype", "q8_0", "-o", out}, 1,
			filepath.Join(noCtx, "config.json") + " has none of max_position_embeddings, "},
		{[]string{"convert", src, "-dtype", "mxfp4", "-imatrix", nan, "-o", filepath.Join(other, "mx")}, 2,
			"; mxfp4 takes its scales by rule"},
		{[]string{"convert", src, src, "-o", out}, 2, "want one input checkpoint, got 2 arguments (see"},
		{[]string{"verify", src}, 2, "want ORIG and CONVERTED, got 1 argument (see"},
		{[]string{"inspect", src, src}, 2, "got 2 arguments (see"},
	} {
		code, _, stderr := tcast(c.args...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		for _, pkg := range []string{"ggufmix:", "ggufmodel:", "imatrix:"} {
			assert.NotContains(t, stderr, ": "+pkg, "%v", c.args)
		}
	}

	code, stdout, _ := tcast("inspect", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "usage: tcast inspect [-json] [-stats=false] CHECKPOINT|CASTDIR")
	assert.Contains(t, stdout, "showing the fraction kept.\n")
	assert.Contains(t, stdout, "(default true)")
}
