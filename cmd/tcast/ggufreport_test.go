package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
