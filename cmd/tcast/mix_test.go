package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
)

// writeImatrixDat writes a legacy .dat importance matrix: int32 entry
// count; per entry int32 name length, name, int32 ncall, int32 value count
// and the float32 values; no trailer.
func writeImatrixDat(t *testing.T, path string, entries map[string][]float32) {
	t.Helper()
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(len(entries)))
	for name, vals := range entries {
		b = le.AppendUint32(b, uint32(len(name)))
		b = append(b, name...)
		b = le.AppendUint32(b, 1)
		b = le.AppendUint32(b, uint32(len(vals)))
		for _, v := range vals {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func TestConvertMix(t *testing.T) {
	dir := t.TempDir()
	src, _ := synthTo(t, dir, "-arch", "llama", "-layers", "2", "-hidden", "256", "-intermediate", "512", "-vocab", "512")
	im := filepath.Join(dir, "imatrix.dat")
	ones := make([]float32, 256)
	for i := range ones {
		ones[i] = float32(1 + i%5)
	}
	writeImatrixDat(t, im, map[string][]float32{"blk.0.attn_q.weight": ones, "blk.1.ffn_gate.weight": ones})

	out := filepath.Join(dir, "m.gguf")
	code, stdout, stderr := tcast("convert", src, "-layout", "gguf", "-dtype", "Q4_K_M", "-type-for", "ffn_up=q8_0",
		"-type-for", `blk\.1\.attn_q=q5_k`, "-imatrix", im, "-json", "-o", out)
	require.Equal(t, 0, code, stderr)
	var res convert.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	assert.Equal(t, "Q4_K_M", res.Mix)
	assert.Equal(t, im, res.Imatrix)
	got := map[string]convert.TensorResult{}
	for _, r := range res.Tensors {
		got[r.Name] = r
	}
	// Two layers: use_more_bits picks layer 1 only (i < n/8 = 0 picks
	// none, i ≥ 7n/8 = 1 picks layer 1, (i − n/8) mod 3 = 2 none), so
	// attn_v and ffn_down get Q6_K there; the output head Q6_K (a synth
	// -arch llama has lm_head of its own).
	for name, want := range map[string]string{
		"blk.0.attn_q.weight": "q4_k", "blk.1.attn_q.weight": "q5_k", "blk.0.ffn_up.weight": "q8_0",
		"blk.1.attn_v.weight": "q6_k", "blk.0.attn_v.weight": "q4_k", "blk.1.ffn_down.weight": "q6_k",
		"blk.0.ffn_down.weight": "q4_k", "output.weight": "q6_k",
		"token_embd.weight": "q4_k", "blk.0.attn_norm.weight": "",
	} {
		assert.Equal(t, want, got[name].DataType, name)
	}
	assert.Contains(t, got["blk.0.ffn_up.weight"].Reason, "override ffn_up=q8_0")
	assert.Contains(t, got["output.weight"].Reason, "Q6_K")
	assert.Equal(t, convert.ImportanceUsed, got["blk.0.attn_q.weight"].Importance)
	assert.Equal(t, convert.ImportanceUsed, got["blk.1.ffn_gate.weight"].Importance)
	assert.Equal(t, convert.ImportanceMissing, got["blk.1.attn_k.weight"].Importance)
	assert.Equal(t, convert.ImportanceUnused, got["blk.0.ffn_up.weight"].Importance, "Q8_0 does not search")

	f, err := gguf.Open(out)
	require.NoError(t, err)
	v, ok := f.Get("general.file_type")
	require.True(t, ok)
	assert.Equal(t, uint32(15), v.Any())
	v, ok = f.Get("quantize.imatrix.entries_count")
	require.True(t, ok)
	assert.Equal(t, uint32(2), v.Any())
	ti, ok := f.Tensor("blk.1.ffn_down.weight")
	require.True(t, ok)
	assert.Equal(t, gguf.TypeQ6_K, ti.Type)
	f.Close()

	// The text report gives each tensor's reason and the mix's counts.
	code, stdout, stderr = tcast("convert", src, "-layout", "gguf", "-dtype", "q4_k_m", "-imatrix", im, "-force", "-o", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "mix Q4_K_M: ")
	assert.Contains(t, stdout, "Q4_K_M: attn_v")
	assert.Contains(t, stdout, "importance used")
	assert.Contains(t, stdout, "importance missing: quantized without")
	assert.Contains(t, stdout, "importance matrix "+im+": 2 weights used it")

	code, stdout, stderr = tcast("verify", "-imatrix", im, src, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "weighted SQNR dB")
	assert.Contains(t, stdout, "2 tensors weighted by "+im)

	// The mean is by elements, as convert's summary: Σ wsqnr·n / Σ n over
	// the tensors with a weighted SQNR (here of different sizes).
	code, js, stderr := tcast("verify", "-json", "-imatrix", im, src, out)
	require.Equal(t, 0, code, stderr)
	var vr []verify.Result
	require.NoError(t, json.Unmarshal([]byte(js), &vr))
	var sum, elems float64
	sizes := map[int]bool{}
	for _, r := range vr {
		if r.WeightedSQNR != nil {
			n := 1
			for _, d := range r.Shape {
				n *= d
			}
			sum += *r.WeightedSQNR * float64(n)
			elems += float64(n)
			sizes[n] = true
		}
	}
	require.Len(t, sizes, 2, "two tensors of different sizes")
	assert.Contains(t, stdout, fmt.Sprintf("weighted SQNR %.2f dB (mean by elements)", sum/elems))
}

func TestConvertMixMessages(t *testing.T) {
	dir := t.TempDir()
	src, _ := synthTo(t, dir, "-arch", "llama", "-layers", "1", "-hidden", "256", "-vocab", "512")
	out := filepath.Join(dir, "o.gguf")
	bad := filepath.Join(dir, "bad.dat")
	require.NoError(t, os.WriteFile(bad, []byte{1, 2}, 0o644))
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"-layout", "gguf", "-dtype", "q4_k_m", "-type-for", "ffn_down=q7_k"}, 2, []string{`invalid value "ffn_down=q7_k" for flag -type-for: unknown type "q7_k"`, "q4_k"}},
		{[]string{"-layout", "gguf", "-dtype", "q4_k_m", "-type-for", "ffn_down"}, 2, []string{"REGEXP=TYPE"}},
		{[]string{"-layout", "gguf", "-dtype", "q4_k_mm"}, 2, []string{`unknown datatype or GGUF mix "q4_k_mm" (closest: Q4_K_M`, "the mixes F32, "}},
		{[]string{"-dtype", "q4_k_m"}, 2, []string{"GGUF mix", "-layout gguf"}},
		{[]string{"-dtype", "mxfp4", "-type-for", "ffn_down=q6_k"}, 2, []string{"-type-for applies to GGUF output"}},
		{[]string{"-dtype", "mxfp4", "-imatrix", bad}, 2, []string{"-imatrix weights the error of quantizers that search", "mxfp4 takes its scales by rule", "drop -imatrix", "add -scale-search"}},
		{[]string{"-dtype", "nf4", "-imatrix", bad}, 2, []string{"-imatrix weights", "nf4 does not search"}},
		{[]string{"-dtype", "mxfi4", "-imatrix", bad}, 2, []string{"-imatrix", "bad.dat"}},
		{[]string{"-layout", "gguf", "-dtype", "q4_k_m", "-imatrix", bad}, 2, []string{"-imatrix", "bad.dat"}},
		{[]string{"-layout", "gguf", "-dtype", "q4_k_m", "-imatrix", filepath.Join(dir, "none.dat")}, 2, []string{"none.dat"}},
		{[]string{"-layout", "gguf", "-dtype", "q4_k_m", "-include", "norm"}, 2, []string{"-include does not go with -dtype", "-type-for"}},
		{[]string{"-layout", "gguf", "-gguf-generic", "-dtype", "q4_k", "-gguf-pure"}, 2, []string{"-gguf-pure applies to a GGUF mix"}},
		{[]string{"-dtype", "mxfp4", "-gguf-pure"}, 2, []string{"-gguf-pure applies to GGUF output; use -layout gguf"}},
	} {
		args := append([]string{"convert", src, "-o", out}, c.args...)
		code, _, stderr := tcast(args...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, stderr)
		for _, w := range c.want {
			assert.Contains(t, stderr, w, "%v", c.args)
		}
	}
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "nothing written")
}

// TestTypeForFlagMessages: a refused -type-for value is told without the
// value (the flag package gives it), and a type only generic GGUF output
// takes says which -dtype asks for it.
func TestTypeForFlagMessages(t *testing.T) {
	var ovs ggufmix.Overrides
	f := typeForFlag{&ovs}
	for _, c := range []struct{ value, want string }{
		{"ffn_down=q7_k", `unknown type "q7_k" (closest: "q2_k", "q3_k", "q4_k")`},
		{"ffn_down=q8_k", "Q8_K is ggml's intermediate for dot products, not a weight type llama.cpp " +
			"computes with: use q8_0 (8.5 bits per value), or -dtype q8_k for generic GGUF output"},
		{"ffn_down", "want REGEXP=TYPE"},
	} {
		assert.EqualError(t, f.Set(c.value), c.want, c.value)
	}
	require.NoError(t, f.Set("ffn_down=q6_k"))
	assert.Len(t, ovs, 1)
}
