package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// trainedF16 writes the trained model as an F16 llama.cpp model file.
func trainedF16(t *testing.T) string {
	t.Helper()
	f16 := filepath.Join(t.TempDir(), "f16.gguf")
	code, _, errs := tcast("convert", trainedModel, "-layout", "gguf", "-dtype", "F16", "-o", f16)
	require.Equal(t, 0, code, errs)
	return f16
}

func TestQuantizeFlags(t *testing.T) {
	f16 := trainedF16(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "types.txt")
	require.NoError(t, os.WriteFile(rules, []byte("attn_q=q8_0\n  ffn_up=Q5_K\tffn_down=q6_k\n"), 0o644))
	out := filepath.Join(dir, "q.gguf")
	code, _, errs := tcast("convert", f16, "-layout", "gguf", "-dtype", "Q4_K_M", "-o", out,
		"--tensor-type-file", rules, "--output-tensor-type", "q8_0", "--token-embedding-type", "q5_0",
		"--prune-layers", "4", "--override-kv", "general.name=str:pruned")
	require.Equal(t, 0, code, errs)
	f, err := gguf.Open(out)
	require.NoError(t, err)
	defer f.Close()
	types := map[string]gguf.Type{}
	for _, ti := range f.Tensors {
		types[ti.Name] = ti.Type
	}
	for name, want := range map[string]gguf.Type{"blk.0.attn_q.weight": gguf.TypeQ8_0,
		"blk.1.ffn_up.weight": gguf.TypeQ5_K, "blk.2.ffn_down.weight": gguf.TypeQ6_K,
		"output.weight": gguf.TypeQ8_0, "token_embd.weight": gguf.TypeQ5_0} {
		assert.Equal(t, want, types[name], name)
	}
	assert.NotContains(t, types, "blk.5.attn_q.weight", "6 blocks less one")
	v, _ := f.Get("general.name")
	assert.Equal(t, `string("pruned")`, v.String())

	// -dry-run needs no -o and writes nothing; -json says it is one.
	code, stdout, errs := tcast("convert", f16, "-layout", "gguf", "-dtype", "Q4_K_M", "-dry-run")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "bytes out")
	assert.Contains(t, stdout, "nothing was written")
	code, stdout, errs = tcast("convert", f16, "-layout", "gguf", "-dtype", "Q4_K_M", "-dry-run", "-json")
	require.Equal(t, 0, code, errs)
	var res struct {
		DryRun   bool  `json:"dry_run"`
		BytesOut int64 `json:"bytes_out"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	assert.True(t, res.DryRun)
	assert.Positive(t, res.BytesOut)
}

func TestQuantizeFlagErrors(t *testing.T) {
	f16 := trainedF16(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "q.gguf")
	badRules := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(badRules, []byte("attn_q=q8_0 ffn_up\n"), 0o644))
	base := []string{"convert", f16, "-layout", "gguf", "-o", out}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-dtype", "Q4_K_M", "-output-tensor-type", "q7_k"}, []string{"-output-tensor-type", `unknown type "q7_k"`}},
		{[]string{"-dtype", "Q4_K_M", "-prune-layers", "1,x"}, []string{"-prune-layers 1,x", "block numbers"}},
		{[]string{"-dtype", "Q4_K_M", "-prune-layers", "9"}, []string{"-prune-layers", "blocks are 0 to 5"}},
		{[]string{"-dtype", "Q4_K_M", "-override-kv", "general.name=name"}, []string{"-override-kv", "TYPE:VALUE"}},
		{[]string{"-dtype", "Q4_K_M", "-tensor-type-file", badRules}, []string{"rule 2", "ffn_up", "REGEXP=TYPE"}},
		{[]string{"-dtype", "Q4_K_M", "-tensor-type-file", filepath.Join(dir, "none.txt")}, []string{"-tensor-type-file", "no such file"}},
		{[]string{"-dtype", "Q4_K_M", "-include-weights", "attn"}, []string{"give -imatrix FILE too"}},
		{[]string{"-dtype", "Q2_K_S"}, []string{"-imatrix is needed", "Q2_K_S", "give -imatrix"}},
		{[]string{"-dtype", "mxfp4", "-leave-output-tensor"}, []string{"-leave-output-tensor applies to a GGUF mix", "drop -leave-output-tensor"}},
	} {
		code, _, stderr := tcast(append(base, tc.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		for _, w := range tc.want {
			assert.Contains(t, stderr, w, tc.args)
		}
		assert.Equal(t, 1, strings.Count(stderr, "tcast convert:"), "one prefix: %s", stderr)
		assert.NoFileExists(t, out)
	}
	// A quantized input: requantizing needs -allow-requantize.
	q4 := filepath.Join(dir, "q4.gguf")
	code, _, errs := tcast("convert", f16, "-layout", "gguf", "-dtype", "Q4_K_M", "-o", q4)
	require.Equal(t, 0, code, errs)
	code, _, stderr := tcast("convert", q4, "-layout", "gguf", "-dtype", "Q5_K_M", "-o", out)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "add -allow-requantize")
	code, _, errs = tcast("convert", q4, "-layout", "gguf", "-dtype", "Q5_K_M", "-o", out, "-allow-requantize")
	assert.Equal(t, 0, code, errs)
}
