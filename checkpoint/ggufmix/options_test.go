package ggufmix

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// byName plans ts and returns the decisions by tensor name.
func byName(t *testing.T, mix Mix, model Model, ts []Tensor, opt Options) map[string]Decision {
	t.Helper()
	ds, err := Plan(mix, model, ts, opt)
	require.NoError(t, err)
	out := map[string]Decision{}
	for _, d := range ds {
		out[d.Name] = d
	}
	return out
}

// TestTypeOptions checks OutputType, TokenEmbeddingType and KeepOutput
// against llama-quantize's llama_tensor_get_type, read by hand: the
// embedding's and the head's types come first (before --tensor-type), a
// tied embedding takes the output type through the mix's rules only (not
// with --pure, nor in a float mix), and --leave-output-tensor keeps
// output.weight.
func TestTypeOptions(t *testing.T) {
	model := Model{Arch: "llama", Layers: 4, Heads: 32, KVHeads: 8}
	q8, q5 := gguf.TypeQ8_0, gguf.TypeQ5_0
	embd := []Override{{Value: "token_embd=q4_0", Pattern: regexp.MustCompile("token_embd"), Type: Q4_0},
		{Value: "output=q4_1", Pattern: regexp.MustCompile(`^output\.`), Type: Q4_1}}
	for _, tc := range []struct {
		name         string
		mix          Mix
		tied         bool
		opt          Options
		embd, output gguf.Type
	}{
		{"output type", MixQ4_K_M, false, Options{OutputType: &q8}, Q4_K, Q8_0},
		{"output type over an override", MixQ4_K_M, false, Options{OutputType: &q8, Overrides: embd}, Q4_0, Q8_0},
		{"embedding type over an override", MixQ4_K_M, false, Options{TokenEmbeddingType: &q5, Overrides: embd}, Q5_0, Q4_1},
		{"output type of a tied embedding", MixQ4_K_M, true, Options{OutputType: &q8}, Q8_0, 0},
		{"tied, override first", MixQ4_K_M, true, Options{OutputType: &q8, Overrides: embd}, Q4_0, 0},
		{"tied, pure", MixQ4_K_M, true, Options{OutputType: &q8, Pure: true}, Q4_K, 0},
		{"tied, float mix", MixF16, true, Options{OutputType: &q8}, F16, 0},
		{"float mix", MixF16, false, Options{OutputType: &q8, TokenEmbeddingType: &q5}, Q5_0, Q8_0},
		{"pure", MixQ4_K_M, false, Options{OutputType: &q8, TokenEmbeddingType: &q5, Pure: true}, Q5_0, Q8_0},
		{"both for the tied embedding", MixQ4_K_M, true, Options{OutputType: &q8, TokenEmbeddingType: &q5}, Q5_0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := byName(t, tc.mix, model, llamaTensors(4, 1024, tc.tied), tc.opt)
			assert.Equal(t, tc.embd, ds["token_embd.weight"].Type, ds["token_embd.weight"].Reason)
			if !tc.tied {
				assert.Equal(t, tc.output, ds["output.weight"].Type, ds["output.weight"].Reason)
			}
		})
	}

	ts := llamaTensors(4, 1024, false)
	ts[2].Keep = F16
	ds := byName(t, MixQ4_K_M, model, ts, Options{KeepOutput: true})
	out := ds["output.weight"]
	assert.False(t, out.Quantize)
	assert.Equal(t, F16, out.Type)
	assert.Contains(t, out.Reason, "left as it is")
	assert.Equal(t, Q4_K, ds["token_embd.weight"].Type, "the embedding is quantized")
}

// TestPerLayerEmbedding: an override naming Gemma 3n's per-layer token
// embedding wins over TokenEmbeddingType, which still sets it otherwise.
func TestPerLayerEmbedding(t *testing.T) {
	q8 := gguf.TypeQ8_0
	ts := append(llamaTensors(2, 1024, false), Tensor{Name: "per_layer_token_embd.weight", Shape: []int{32000, 4096}})
	model := Model{Arch: "gemma3n", Layers: 2, Heads: 32, KVHeads: 8}
	ds := byName(t, MixQ4_K_M, model, ts, Options{TokenEmbeddingType: &q8})
	assert.Equal(t, Q8_0, ds["per_layer_token_embd.weight"].Type)
	o, err := ParseOverride("per_layer=q4_0")
	require.NoError(t, err)
	ds = byName(t, MixQ4_K_M, model, ts, Options{TokenEmbeddingType: &q8, Overrides: []Override{o}})
	assert.Equal(t, Q4_0, ds["per_layer_token_embd.weight"].Type)
	assert.Equal(t, Q8_0, ds["token_embd.weight"].Type)
}

// TestQ2KS checks Q2_K_S against llama-quantize's rules, read by hand:
// Q2_K but attn_v with 4 or more heads per KV head (Q4_K) and ffn_down in
// the first eighth of the layers (Q4_K), the head Q6_K; every Q2_K tensor
// needs an importance matrix, the embedding and the head never.
func TestQ2KS(t *testing.T) {
	model := Model{Arch: "llama", Layers: 16, Heads: 32, KVHeads: 8}
	ds := byName(t, MixQ2_K_S, model, llamaTensors(16, 1024, false), Options{})
	for name, want := range map[string]struct {
		typ   gguf.Type
		needs bool
	}{
		"token_embd.weight": {Q2_K, false}, "output.weight": {Q6_K, false},
		"blk.0.attn_v.weight": {Q4_K, false}, "blk.9.attn_v.weight": {Q4_K, false},
		"blk.0.ffn_down.weight": {Q4_K, false}, "blk.1.ffn_down.weight": {Q4_K, false},
		"blk.2.ffn_down.weight": {Q2_K, true}, "blk.5.attn_q.weight": {Q2_K, true},
		"blk.5.attn_output.weight": {Q2_K, true},
	} {
		assert.Equal(t, want.typ, ds[name].Type, "%s: %s", name, ds[name].Reason)
		assert.Equal(t, want.needs, ds[name].NeedsImatrix, name)
	}
	// Without grouped-query attention attn_v stays Q2_K.
	ds = byName(t, MixQ2_K_S, Model{Arch: "llama", Layers: 16, Heads: 32, KVHeads: 32},
		llamaTensors(16, 4096, false), Options{})
	assert.Equal(t, Q2_K, ds["blk.0.attn_v.weight"].Type)
	assert.False(t, byName(t, MixQ2_K, model, llamaTensors(16, 1024, false), Options{})["blk.5.attn_q.weight"].NeedsImatrix,
		"Q2_K of the Q2_K mix needs none")
}

// TestCopy: COPY keeps every tensor's type.
func TestCopy(t *testing.T) {
	ts := llamaTensors(2, 1024, false)
	for i := range ts {
		ts[i].Keep = Q6_K
	}
	for _, d := range byName(t, MixCOPY, Model{Arch: "llama"}, ts, Options{}) {
		assert.False(t, d.Quantize, d.Name)
		assert.Equal(t, Q6_K, d.Type, d.Name)
	}
	assert.True(t, MixCOPY.Copies())
	assert.False(t, MixQ8_0.Copies())
	m, err := Lookup("copy")
	require.NoError(t, err)
	assert.Equal(t, MixCOPY, m)
}

func TestParseType(t *testing.T) {
	typ, err := ParseType(" Q6_K ")
	require.NoError(t, err)
	assert.Equal(t, Q6_K, typ)
	_, err = ParseType("q7_k")
	var oe *OverrideError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "q7_k", oe.Value)
	assert.NotEmpty(t, oe.Closest)
}

func TestNoFallback(t *testing.T) {
	_, err := Plan(MixQ1_0, Model{Arch: "llama", Layers: 1}, []Tensor{{Name: "blk.0.ffn_down.weight", Shape: []int{256, 704}}}, Options{})
	var te *TensorError
	require.ErrorAs(t, err, &te)
	assert.ErrorIs(t, err, ErrNoFallback)
	assert.Equal(t, "blk.0.ffn_down.weight", te.Name)
	o, err := ParseOverride("ffn_down=q4_0")
	require.NoError(t, err)
	ds, err := Plan(MixQ1_0, Model{Arch: "llama", Layers: 1}, []Tensor{{Name: "blk.0.ffn_down.weight", Shape: []int{256, 704}}},
		Options{Overrides: []Override{o}})
	require.NoError(t, err, "an override resolves it")
	assert.Equal(t, Q4_0, ds[0].Type)
}
