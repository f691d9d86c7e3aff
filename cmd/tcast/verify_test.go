package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
)

// Finding 2 of issue 21: tcast verify CONVERTED ORIG (the arguments
// swapped) compares, every tensor "converted false", and warns that the
// two look swapped with the command to type; in the right order, no
// warning.
func TestVerifySwapped(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mxfp4")
	code, _, stderr := tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", out)
	require.Equal(t, 0, code, stderr)

	code, stdout, stderr := tcast("verify", out, irisFixture)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "189 tensors checked")
	assert.Contains(t, stderr, "tcast verify: warning: "+out+" holds quantized tensors and "+irisFixture+
		" none, so nothing was converted: did you swap them? The source comes first: tcast verify "+
		irisFixture+" "+out+"\n")

	code, js, stderr := tcast("verify", "-json", out, irisFixture)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "did you swap them?")
	var vr []verify.Result
	require.NoError(t, json.Unmarshal([]byte(js), &vr), "the warning is not in the JSON")
	assert.Len(t, vr, 189)

	code, _, stderr = tcast("verify", irisFixture, out)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
}

// The command gives verify's typed results its own words: the flag and
// what to do.
func TestVerifyMessages(t *testing.T) {
	dir := t.TempDir()
	src, _ := synthTo(t, dir, "-arch", "llama", "-layers", "2", "-hidden", "256", "-intermediate", "512",
		"-vocab", "512")
	q4 := filepath.Join(dir, "q4.gguf")
	code, _, stderr := tcast("convert", src, "-layout", "gguf", "-dtype", "q4_k_m", "-o", q4)
	require.Equal(t, 0, code, stderr)

	// A matrix of another model's names: a warning, no weighted SQNR.
	other := filepath.Join(dir, "other.dat")
	writeImatrixDat(t, other, map[string][]float32{"layers.0.attention.wq.weight": make([]float32, 256)})
	// 16 weights: 7 per layer, the embedding and the output head.
	warning := `warning: -imatrix other.dat has no entry for any of the 16 converted weights ` +
		`(its entries are named like "layers.0.attention.wq.weight"): no weighted SQNR; ` +
		"is it the matrix of another model?\n"
	code, _, stderr = tcast("verify", "-imatrix", other, src, q4)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "tcast verify: "+warning, stderr)
	code, _, stderr = tcast("verify", "-compare", "-imatrix", other, src, q4)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "tcast verify: "+warning, stderr)
	code, _, stderr = tcast("report", "-o", filepath.Join(dir, "r.html"), "-imatrix", other, src, q4)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "tcast report: "+warning, stderr)

	// An entry of the wrong size names the tensor and the flag.
	small := filepath.Join(dir, "small.dat")
	half := make([]float32, 128)
	for i := range half {
		half[i] = 1
	}
	writeImatrixDat(t, small, map[string][]float32{"blk.1.attn_q.weight": half})
	code, _, stderr = tcast("verify", "-imatrix", small, src, q4)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "tcast verify: tensor model.layers.1.self_attn.q_proj.weight: -imatrix small.dat: ")
	assert.Contains(t, stderr, `"blk.1.attn_q.weight" has 128 values`)
	assert.Contains(t, stderr, "(give the matrix computed for this model)\n")

	// A GGUF made from another GGUF records no Hugging Face names: verify
	// says why the names differ and what to verify instead.
	f16 := filepath.Join(dir, "f16.gguf")
	code, _, stderr = tcast("convert", src, "-layout", "gguf", "-dtype", "f16", "-o", f16)
	require.Equal(t, 0, code, stderr)
	again := filepath.Join(dir, "again.gguf")
	code, _, stderr = tcast("convert", f16, "-layout", "gguf", "-dtype", "q8_0", "-o", again)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = tcast("verify", src, again)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "; "+again+" has GGUF tensor names (blk.0.attn_q.weight, ...), "+src+
		" Hugging Face ones (model.layers.0.self_attn.q_proj.weight, ...): verify pairs them only when "+
		"tcast convert made the GGUF from that checkpoint (it records the names). Verify "+again+
		" against the checkpoint it was converted from, or convert "+src+" to GGUF and verify that file\n")
}

// verify F16.gguf Q4_K_M.gguf, both made by convert from the same Hugging
// Face model, pairs the permuted query and key weights as stored: their
// SQNR is the Q4_K_M file's against the model itself (once the converted
// file's recorded permutation was applied to the F16 file's values again,
// which hold it already, and gave -3 dB).
func TestVerifyTwoModelFiles(t *testing.T) {
	dir := t.TempDir()
	f16, q4 := filepath.Join(dir, "f16.gguf"), filepath.Join(dir, "q4.gguf")
	for _, c := range [][2]string{{"f16", f16}, {"Q4_K_M", q4}} {
		code, _, stderr := tcast("convert", trainedModel, "-layout", "gguf", "-dtype", c[0], "-o", c[1])
		require.Equal(t, 0, code, stderr)
	}
	sqnr := func(orig, name string) float64 {
		code, js, stderr := tcast("verify", "-json", orig, q4)
		require.Equal(t, 0, code, stderr)
		var vr []verify.Result
		require.NoError(t, json.Unmarshal([]byte(js), &vr))
		for _, r := range vr {
			if r.Name == name && r.SQNR != nil {
				return *r.SQNR
			}
		}
		t.Fatalf("%s: no tensor %s", orig, name)
		return 0
	}
	for _, n := range [][2]string{{"blk.0.attn_q.weight", "model.layers.0.self_attn.q_proj.weight"},
		{"blk.3.attn_k.weight", "model.layers.3.self_attn.k_proj.weight"}} {
		got, want := sqnr(f16, n[0]), sqnr(trainedModel, n[1])
		assert.Greater(t, got, 20.0, n[0])
		assert.InDelta(t, want, got, 0.05, n[0])
	}
}
