package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// tensorData returns the type and bytes of every tensor of a GGUF model,
// split or not.
func tensorData(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := gguf.OpenModel(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	for _, ti := range f.Tensors {
		b, err := f.TensorBytes(ti.Name)
		require.NoError(t, err)
		out[ti.Name] = ti.Type.String() + ":" + string(b)
	}
	return out
}

// TestSplitRoundTrip writes a model in splits (-shard-size into a
// directory), reads them back as one model everywhere, requantizes them
// in the same splits (-keep-split) and joins them (COPY to one file),
// with every tensor's type and bytes kept.
func TestSplitRoundTrip(t *testing.T) {
	f16 := trainedF16(t)
	dir := t.TempDir()
	one := filepath.Join(dir, "one.gguf")
	code, _, errs := tcast("convert", f16, "-layout", "gguf", "-dtype", "Q8_0", "-o", one)
	require.Equal(t, 0, code, errs)
	split := filepath.Join(dir, "split")
	code, _, errs = tcast("convert", f16, "-layout", "gguf", "-dtype", "Q8_0", "-shard-size", "1MB", "-o", split+"/")
	require.Equal(t, 0, code, errs)
	names, err := filepath.Glob(filepath.Join(split, "*"))
	require.NoError(t, err)
	require.Len(t, names, 7, "7 splits of at most 1 MB of tensor data")
	first := filepath.Join(split, "model-00001-of-00007.gguf")
	assert.Equal(t, first, names[0])
	want := tensorData(t, one)
	assert.Equal(t, want, tensorData(t, first))
	for i, n := range names {
		f, err := gguf.Open(n)
		require.NoError(t, err)
		no, _ := f.Get(gguf.KeySplitNo)
		count, _ := f.Get(gguf.KeySplitCount)
		total, _ := f.Get(gguf.KeySplitTensors)
		assert.Equal(t, []any{uint16(i), uint16(7), int32(len(want))}, []any{no.Any(), count.Any(), total.Any()}, n)
		_, hasArch := f.Get(gguf.KeyArchitecture)
		assert.Equal(t, i == 0, hasArch, "only the first split holds the model's keys: %s", n)
		f.Close()
	}

	// inspect and verify read the splits as one model, by the directory,
	// the first split or any other.
	for _, in := range []string{split, first, names[3]} {
		code, out, errs := tcast("inspect", in)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "blk.5.ffn_down.weight", in)
		code, _, errs = tcast("verify", f16, in)
		assert.Equal(t, 0, code, "%s: %s", in, errs)
	}

	// -keep-split keeps each tensor in its split; COPY joins them.
	kept := filepath.Join(dir, "kept")
	code, _, errs = tcast("convert", split, "-layout", "gguf", "-dtype", "Q8_0", "-keep-split", "-o", kept+"/")
	require.Equal(t, 0, code, errs)
	for i, n := range names {
		a, err := gguf.Open(n)
		require.NoError(t, err)
		b, err := gguf.Open(filepath.Join(kept, filepath.Base(n)))
		require.NoError(t, err, "split %d", i+1)
		assert.Equal(t, a.Tensors, b.Tensors, filepath.Base(n))
		a.Close()
		b.Close()
	}
	joined := filepath.Join(dir, "joined.gguf")
	code, _, errs = tcast("convert", first, "-layout", "gguf", "-dtype", "COPY", "-o", joined)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, want, tensorData(t, joined))

	// A missing split is an error naming it; -keep-split needs a directory.
	require.NoError(t, os.Remove(names[4]))
	code, _, errs = tcast("inspect", first)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "model-00005-of-00007.gguf")
	code, _, errs = tcast("convert", kept, "-layout", "gguf", "-dtype", "Q8_0", "-keep-split", "-o", filepath.Join(dir, "x.gguf"))
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "directory")
}

// TestLlamaCppLoadsSplits: llama.cpp (node-llama-cpp, given the first
// split) loads the splits tcast writes and computes the same logits as
// from the one file.
func TestLlamaCppLoadsSplits(t *testing.T) {
	node, mods := llamaRuntime(t)
	dir := t.TempDir()
	src, _ := synthTo(t, dir, llamaRefSynth...)
	one := filepath.Join(dir, "one.gguf")
	code, _, errs := tcast("convert", src, "-layout", "gguf", "-dtype", "Q4_K_M", "-o", one)
	require.Equal(t, 0, code, errs)
	split := filepath.Join(dir, "split")
	code, _, errs = tcast("convert", src, "-layout", "gguf", "-dtype", "Q4_K_M", "-shard-size", "300KB", "-o", split+"/")
	require.Equal(t, 0, code, errs)
	names, err := filepath.Glob(filepath.Join(split, "*.gguf"))
	require.NoError(t, err)
	require.Greater(t, len(names), 2)
	a := evalWithLlama(t, node, mods, one)
	b := evalWithLlama(t, node, mods, names[0])
	require.Empty(t, a.Error)
	require.Empty(t, b.Error, "%v", llamaWarnings(b))
	assert.Equal(t, a.Tokens, b.Tokens)
	assert.Equal(t, a.Logits, b.Logits, "the same weights in %d splits", len(names))
}
