package ggufmix

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// planTypes plans tensors and returns each one's type by name.
func planTypes(t *testing.T, mix Mix, m Model, ts []Tensor) map[string]gguf.Type {
	t.Helper()
	ds, err := Plan(mix, m, ts, Options{})
	require.NoError(t, err, mix.String())
	out := map[string]gguf.Type{}
	for _, d := range ds {
		out[d.Name] = d.Type
	}
	return out
}

// TestLowBitMixes checks the TQ1_0, TQ2_0, Q1_0 and Q2_0 mixes against
// llama-quant.cpp's rules read from the pinned source: the token
// embedding gets Q4_K in TQ1_0, TQ2_0 and Q2_0 (not Q1_0), the output
// head Q6_K, everything else the base type but for the 8-expert bumps of
// attn_k and attn_v to Q8_0, which apply to every mix.
func TestLowBitMixes(t *testing.T) {
	for _, tc := range []struct {
		mix   Mix
		embd  gguf.Type
		base  gguf.Type
		ffn96 gguf.Type // a row of 96: the fallback
	}{
		{MixTQ1_0, Q4_K, gguf.TypeTQ1_0, Q4_0},
		{MixTQ2_0, Q4_K, gguf.TypeTQ2_0, Q4_0},
		{MixQ2_0, Q4_K, gguf.TypeQ2_0, Q4_0},
		{MixQ1_0, gguf.TypeQ1_0, gguf.TypeQ1_0, 0},
	} {
		got := planTypes(t, tc.mix, Model{Arch: "llama", Heads: 32, KVHeads: 8}, llamaTensors(4, 1024, false))
		assert.Equal(t, tc.embd, got["token_embd.weight"], tc.mix.String())
		assert.Equal(t, Q6_K, got["output.weight"], tc.mix.String())
		for _, n := range []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"} {
			assert.Equal(t, tc.base, got["blk.2."+n+".weight"], "%v %s", tc.mix, n)
		}
		tied := planTypes(t, tc.mix, Model{Arch: "llama"}, llamaTensors(2, 4096, true))
		assert.Equal(t, Q6_K, tied["token_embd.weight"], "%v: tied embedding", tc.mix)
		moe := planTypes(t, tc.mix, Model{Arch: "llama", Experts: 8}, llamaTensors(2, 1024, false))
		assert.Equal(t, Q8_0, moe["blk.1.attn_v.weight"], tc.mix.String())
		assert.Equal(t, Q8_0, moe["blk.1.attn_k.weight"], tc.mix.String())
		assert.Equal(t, tc.base, moe["blk.1.attn_output.weight"], tc.mix.String())

		odd := Tensor{Name: "blk.0.ffn_down.weight", Shape: []int{64, 96}}
		d, err := choose(tc.mix, Model{Layers: 1}, odd, Options{})
		if tc.ffn96 == 0 {
			var te *TensorError
			require.ErrorAs(t, err, &te, tc.mix.String())
			assert.Contains(t, err.Error(), "row length 96 is not a multiple of Q1_0's block of 128, "+
				"and Q1_0 has no fallback type")
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.ffn96, d.Type, tc.mix.String())
		assert.True(t, d.Fallback)
	}
}

// TestMXFP4MoE checks MXFP4_MOE: tensors stacking more than one expert
// (ggml's ne[2] > 1) get MXFP4, every other quantized tensor Q8_0, the
// output head and the token embedding too; no 8-expert or layer rule
// applies. For bailingmoe3 only the FFN's 3-D tensors are experts.
func TestMXFP4MoE(t *testing.T) {
	ts := []Tensor{
		{Name: "token_embd.weight", Shape: []int{1000, 256}},
		{Name: "output.weight", Shape: []int{1000, 256}},
		{Name: "blk.0.attn_q.weight", Shape: []int{256, 256}},
		{Name: "blk.0.attn_k.weight", Shape: []int{64, 256}},
		{Name: "blk.0.attn_v.weight", Shape: []int{64, 256}},
		{Name: "blk.0.attn_output.weight", Shape: []int{256, 256}},
		{Name: "blk.0.ffn_gate_inp.weight", Shape: []int{8, 256}},
		{Name: "blk.0.ffn_gate_exps.weight", Shape: []int{8, 512, 256}},
		{Name: "blk.0.ffn_up_exps.weight", Shape: []int{8, 512, 256}},
		{Name: "blk.0.ffn_down_exps.weight", Shape: []int{8, 256, 512}},
		{Name: "blk.0.ffn_down_shexp.weight", Shape: []int{256, 512}},
		{Name: "blk.0.attn_one.weight", Shape: []int{1, 256, 256}}, // one "expert": not stacked
	}
	got := planTypes(t, MixMXFP4_MOE, Model{Arch: "qwen3moe", Experts: 8, Heads: 4, KVHeads: 1}, ts)
	want := map[string]gguf.Type{
		"token_embd.weight": Q8_0, "output.weight": Q8_0,
		"blk.0.attn_q.weight": Q8_0, "blk.0.attn_k.weight": Q8_0, "blk.0.attn_v.weight": Q8_0,
		"blk.0.attn_output.weight": Q8_0, "blk.0.ffn_gate_inp.weight": F32,
		"blk.0.ffn_gate_exps.weight": gguf.TypeMXFP4, "blk.0.ffn_up_exps.weight": gguf.TypeMXFP4,
		"blk.0.ffn_down_exps.weight": gguf.TypeMXFP4, "blk.0.ffn_down_shexp.weight": Q8_0,
		"blk.0.attn_one.weight": Q8_0,
	}
	assert.Equal(t, want, got)

	tied := planTypes(t, MixMXFP4_MOE, Model{}, ts[:1])
	assert.Equal(t, Q8_0, tied["token_embd.weight"])

	bailing := []Tensor{
		{Name: "output.weight", Shape: []int{1000, 256}},
		{Name: "blk.0.attn_q_b.weight", Shape: []int{4, 64, 256}},
		{Name: "blk.0.ffn_up_exps.weight", Shape: []int{8, 512, 256}},
	}
	got = planTypes(t, MixMXFP4_MOE, Model{Arch: "bailingmoe3"}, bailing)
	assert.Equal(t, Q8_0, got["blk.0.attn_q_b.weight"])
	assert.Equal(t, gguf.TypeMXFP4, got["blk.0.ffn_up_exps.weight"])
	got = planTypes(t, MixMXFP4_MOE, Model{Arch: "deepseek2"}, bailing)
	assert.Equal(t, gguf.TypeMXFP4, got["blk.0.attn_q_b.weight"], "3-D elsewhere: MXFP4")
}
