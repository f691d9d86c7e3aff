package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The findings of a new user's trial of convert -layout gguf, as the CLI
// shows them.

// setModelType rewrites config.json's model_type in dir.
func setModelType(t *testing.T, dir, modelType string) {
	t.Helper()
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(b, &cfg))
	cfg["model_type"] = modelType
	b, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// An unknown model_type writes generic GGUF and says so: on stderr, in the
// last line, in -json.
func TestTrialGenericGGUFIsReported(t *testing.T) {
	dir, model := synthDir(t)
	setModelType(t, dir, "llamma")
	code, stdout, stderr := tcast("convert", model, "-layout", "gguf", "-dtype", "q8_0", "-o", filepath.Join(t.TempDir(), "m.gguf"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, `warning: the output is generic GGUF (general.architecture "tcast"`)
	assert.Contains(t, stderr, `model_type "llamma" is not one of gemma, llama, mistral, qwen2, qwen3 (did you mean "llama"?)`)
	assert.Contains(t, stdout, "(gguf layout, generic GGUF, q8_0)")
	code, stdout, stderr = tcast("convert", model, "-layout", "gguf", "-dtype", "q8_0", "-json", "-o", filepath.Join(t.TempDir(), "m.gguf"))
	require.Equal(t, 0, code, stderr)
	var res struct {
		Generic  string   `json:"gguf_generic"`
		Warnings []string `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	assert.Contains(t, res.Generic, `"llamma"`)
	assert.Len(t, res.Warnings, 1)
}

// The trial's matrix (testdata/llama_imatrix.npz, computed for the synth
// Llama of imatrixSynth) against a synth Llama of other widths: convert
// refuses its sizes, verify now too, and -gguf-generic output of the right
// model finds its entries by GGUF name.
func TestTrialImatrixSizes(t *testing.T) {
	other, _ := synthTo(t, t.TempDir(), "-arch", "llama", "-layers", "2", "-hidden", "256", "-intermediate", "512", "-vocab", "512")
	out := filepath.Join(t.TempDir(), "m.gguf")
	code, _, stderr := tcast("convert", other, "-layout", "gguf", "-dtype", "q8_0", "-o", out)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = tcast("verify", "-imatrix", "testdata/llama_imatrix.npz", other, out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "tensor model.layers.0.mlp.down_proj.weight: -imatrix llama_imatrix.npz:")
	assert.Contains(t, stderr, `entry "blk.0.ffn_down.weight" has`)

	src, _ := synthTo(t, t.TempDir(), imatrixSynth...)
	code, stdout, stderr := tcast("convert", src, "-layout", "gguf", "-dtype", "q4_k", "-gguf-generic", "-imatrix", "testdata/llama_imatrix.npz", "-o", filepath.Join(t.TempDir(), "g.gguf"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "llama_imatrix.npz: 14 weights used it")
}
