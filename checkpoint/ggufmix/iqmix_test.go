package ggufmix

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// iqWant is an IQ mix's expected choice on the 32-layer llamaTensors: the
// type of each category, where a zero Type (F32) means the base; down4
// is ffn_down's in layers 0–3 (i < 32/8), down the others'; mid is
// ffn_gate's and ffn_up's in layers 4–27 (32/8 ≤ i < 7·32/8).
type iqWant struct {
	mix                Mix
	gqa, imatrix       bool
	base, embd, output gguf.Type
	v, q, k, o         gguf.Type
	down4, down, mid   gguf.Type
}

// iqWants are llama-quantize's decisions for the IQ mixes, read by hand
// from llama_tensor_get_type_impl of the pinned llama-quant.cpp:
//   - the output head gets Q5_K in IQ1_*, IQ2_* and IQ3_XXS, Q6_K in the
//     other IQ3 mixes; the token embedding Q2_K in IQ1_S, IQ1_M, IQ2_XXS
//     and IQ2_XS, IQ3_S in IQ2_S, IQ2_M and IQ3_XXS.
//   - IQ1 and IQ2: attn_v Q4_K with 4 heads per KV head, else Q2_K (IQ3_S
//     in IQ2_S and IQ2_M), which ffn_down gets in its first eighth too;
//     attn_output IQ2_XXS in IQ1_S and IQ1_M, IQ3_S in IQ2_S and IQ2_M.
//   - IQ3_XXS: attn_q and attn_k IQ2_S, attn_output IQ3_S; attn_v Q4_K
//     with 4 heads per KV head, else IQ3_S without an importance matrix;
//     ffn_down Q4_K in the first eighth and Q3_K elsewhere without one.
//   - IQ3_XS: attn_q and attn_k IQ3_XXS, ffn_gate and ffn_up IQ3_XXS
//     between the first and the last eighth; attn_v Q4_K with 4 heads per
//     KV head. IQ3_S: only that attn_v rule.
//   - IQ3_M: attn_v Q4_K, attn_output Q4_K, ffn_down Q4_K in the first
//     eighth.
var iqWants = []iqWant{
	{mix: MixIQ2_XXS, base: IQ2XXS, embd: Q2_K, output: Q5_K, v: Q2_K, down4: Q2_K},
	{mix: MixIQ2_XXS, gqa: true, base: IQ2XXS, embd: Q2_K, output: Q5_K, v: Q4_K, down4: Q2_K},
	{mix: MixIQ2_XS, base: IQ2XS, embd: Q2_K, output: Q5_K, v: Q2_K, down4: Q2_K},
	{mix: MixIQ2_S, base: IQ2XS, embd: IQ3S, output: Q5_K, v: IQ3S, o: IQ3S, down4: IQ3S},
	{mix: MixIQ2_S, gqa: true, base: IQ2XS, embd: IQ3S, output: Q5_K, v: Q4_K, o: IQ3S,
		down4: IQ3S},
	{mix: MixIQ2_M, base: IQ2S, embd: IQ3S, output: Q5_K, v: IQ3S, o: IQ3S, down4: IQ3S},
	{mix: MixIQ1_S, base: IQ1S, embd: Q2_K, output: Q5_K, v: Q2_K, o: IQ2XXS, down4: Q2_K},
	{mix: MixIQ1_M, gqa: true, base: IQ1M, embd: Q2_K, output: Q5_K, v: Q4_K, o: IQ2XXS,
		down4: Q2_K},
	{mix: MixIQ3_XXS, base: IQ3XXS, embd: IQ3S, output: Q5_K, v: IQ3S, q: IQ2S, k: IQ2S, o: IQ3S,
		down4: Q4_K, down: Q3_K},
	{mix: MixIQ3_XXS, imatrix: true, base: IQ3XXS, embd: IQ3S, output: Q5_K, q: IQ2S, k: IQ2S,
		o: IQ3S},
	{mix: MixIQ3_XXS, gqa: true, imatrix: true, base: IQ3XXS, embd: IQ3S, output: Q5_K, v: Q4_K,
		q: IQ2S, k: IQ2S, o: IQ3S},
	{mix: MixIQ3_XS, base: IQ3S, output: Q6_K, q: IQ3XXS, k: IQ3XXS, mid: IQ3XXS},
	{mix: MixIQ3_XS, gqa: true, imatrix: true, base: IQ3S, output: Q6_K, v: Q4_K, q: IQ3XXS,
		k: IQ3XXS, mid: IQ3XXS},
	{mix: MixIQ3_S, base: IQ3S, output: Q6_K},
	{mix: MixIQ3_S, gqa: true, base: IQ3S, output: Q6_K, v: Q4_K},
	{mix: MixIQ3_M, base: IQ3S, output: Q6_K, v: Q4_K, o: Q4_K, down4: Q4_K},
}

// expected returns the type w expects for a tensor of llamaTensors.
func (w iqWant) expected(cat Category, layer int) gguf.Type {
	t := map[Category]gguf.Type{TokenEmbd: w.embd, Output: w.output, AttnV: w.v, AttnQ: w.q,
		AttnK: w.k, AttnOutput: w.o}[cat]
	switch {
	case cat == FFNDown && layer < 4:
		t = w.down4
	case cat == FFNDown:
		t = w.down
	case (cat == FFNGate || cat == FFNUp) && layer >= 4 && layer < 28:
		t = w.mid
	}
	if t == F32 {
		return w.base
	}
	return t
}

func TestIQMixesLlama32(t *testing.T) {
	for _, w := range iqWants {
		name := fmt.Sprintf("%v gqa=%v imatrix=%v", w.mix, w.gqa, w.imatrix)
		model, kv := Model{Arch: "llama", Layers: 32, Heads: 32, KVHeads: 32}, 4096
		if w.gqa {
			model.KVHeads, kv = 8, 1024
		}
		ds, err := Plan(w.mix, model, llamaTensors(32, kv, false), Options{Imatrix: w.imatrix})
		require.NoError(t, err, name)
		for _, d := range ds {
			if !d.Quantize {
				assert.Equal(t, F32, d.Type, "%s: %s", name, d.Name)
				continue
			}
			assert.Equal(t, w.expected(d.Category, d.Layer), d.Type, "%s: %s: %s",
				name, d.Name, d.Reason)
			assert.True(t, strings.HasPrefix(d.Reason, w.mix.String()+" ") ||
				strings.HasPrefix(d.Reason, w.mix.String()+":") || d.Category == Output,
				"%s: %s: %s", name, d.Name, d.Reason)
		}
	}
}

// TestIQNeedsImatrix: the IQ grid types but IQ3_S need an importance
// matrix, whatever the mix, but never in the token embedding or the head.
func TestIQNeedsImatrix(t *testing.T) {
	model := Model{Arch: "llama", Layers: 8, Heads: 32, KVHeads: 32}
	for _, tc := range []struct {
		mix   Mix
		name  string
		typ   gguf.Type
		needs bool
	}{
		{MixIQ2_S, "blk.5.attn_q.weight", IQ2XS, true},
		{MixIQ2_S, "blk.5.attn_output.weight", IQ3S, false},
		{MixIQ2_S, "token_embd.weight", IQ3S, false},
		{MixIQ2_XXS, "token_embd.weight", Q2_K, false},
		{MixIQ2_XXS, "blk.0.ffn_down.weight", Q2_K, false},
		{MixIQ2_XXS, "blk.1.ffn_down.weight", IQ2XXS, true},
		{MixIQ1_M, "blk.5.attn_output.weight", IQ2XXS, true},
		{MixIQ1_M, "blk.5.ffn_up.weight", IQ1M, true},
		{MixIQ3_XS, "blk.5.attn_k.weight", IQ3XXS, true},
		{MixIQ3_XS, "blk.0.ffn_up.weight", IQ3S, false},
		{MixIQ3_M, "blk.5.ffn_up.weight", IQ3S, false},
		{MixIQ3_XXS, "blk.5.attn_q.weight", IQ2S, true},
		{MixIQ3_XXS, "output.weight", Q5_K, false},
	} {
		d := byName(t, tc.mix, model, llamaTensors(8, 4096, false), Options{})[tc.name]
		assert.Equal(t, tc.typ, d.Type, "%v %s: %s", tc.mix, tc.name, d.Reason)
		assert.Equal(t, tc.needs, d.NeedsImatrix, "%v %s", tc.mix, tc.name)
	}
}

// moeTensors is a mixture of experts of the given layers with stacked
// experts and, when shared, a shared expert per layer (as qwen2moe).
func moeTensors(layers, experts int, shared bool) []Tensor {
	ts := []Tensor{{Name: "token_embd.weight", Shape: []int{512, 256}},
		{Name: "output.weight", Shape: []int{512, 256}}}
	for i := range layers {
		p := fmt.Sprintf("blk.%d.", i)
		ts = append(ts, Tensor{Name: p + "attn_q.weight", Shape: []int{256, 256}},
			Tensor{Name: p + "attn_k.weight", Shape: []int{64, 256}},
			Tensor{Name: p + "attn_v.weight", Shape: []int{64, 256}},
			Tensor{Name: p + "attn_output.weight", Shape: []int{256, 256}},
			Tensor{Name: p + "ffn_gate_inp.weight", Shape: []int{experts, 256}},
			Tensor{Name: p + "ffn_gate_exps.weight", Shape: []int{experts, 256, 256}},
			Tensor{Name: p + "ffn_up_exps.weight", Shape: []int{experts, 256, 256}},
			Tensor{Name: p + "ffn_down_exps.weight", Shape: []int{experts, 256, 256}})
		if shared {
			ts = append(ts, Tensor{Name: p + "ffn_gate_shexp.weight", Shape: []int{256, 256}},
				Tensor{Name: p + "ffn_up_shexp.weight", Shape: []int{256, 256}},
				Tensor{Name: p + "ffn_down_shexp.weight", Shape: []int{256, 256}})
		}
	}
	return ts
}

// TestIQMixesMoE checks the experts' rules: the IQ1 and IQ2 mixes give
// attn_v Q4_K with 4 or more experts (no 8-expert Q8_0), attn_k Q4_K and
// attn_output Q5_K with 8, and place ffn_down by its rank among the
// ffn_down tensors even in a mixture of experts (llama-quantize's counter),
// so that of 8 layers only the first tensor, blk.0.ffn_down_exps, is in
// the first eighth; the IQ3 mixes place it by layer, and give attn_v and
// attn_k Q8_0 and attn_output Q5_K with 8 experts; IQ3_M gives ffn_down
// Q4_K in the use_more_bits layers then (0, 3, 6 and 7 of 8).
func TestIQMixesMoE(t *testing.T) {
	qwen := Model{Arch: "qwen2moe", Layers: 8, Heads: 4, KVHeads: 4, Experts: 4}
	got := planTypes(t, MixIQ2_XXS, qwen, moeTensors(8, 4, true))
	assert.Equal(t, Q2_K, got["blk.0.ffn_down_exps.weight"])
	assert.Equal(t, IQ2XXS, got["blk.0.ffn_down_shexp.weight"],
		"rank 1 of 8: not in the first eighth")
	assert.Equal(t, IQ2XXS, got["blk.1.ffn_down_exps.weight"])
	assert.Equal(t, Q4_K, got["blk.3.attn_v.weight"], "4 experts")
	assert.Equal(t, IQ2XXS, got["blk.3.attn_k.weight"])
	assert.Equal(t, IQ2XXS, got["blk.3.attn_output.weight"])
	got = planTypes(t, MixIQ3_M, qwen, moeTensors(8, 4, true))
	assert.Equal(t, Q4_K, got["blk.0.ffn_down_exps.weight"])
	assert.Equal(t, Q4_K, got["blk.0.ffn_down_shexp.weight"], "layer 0 of 8: in the first eighth")
	assert.Equal(t, IQ3S, got["blk.3.ffn_down_exps.weight"], "4 experts: no use_more_bits")
	got = planTypes(t, MixIQ3_XS, qwen, moeTensors(8, 4, true))
	assert.Equal(t, IQ3S, got["blk.0.ffn_up_shexp.weight"])
	assert.Equal(t, IQ3XXS, got["blk.1.ffn_up_exps.weight"], "layer 1 of 8: between the eighths")
	assert.Equal(t, IQ3XXS, got["blk.6.ffn_gate_shexp.weight"])
	assert.Equal(t, IQ3S, got["blk.7.ffn_gate_exps.weight"], "layer 7 of 8: in the last eighth")

	mixtral := Model{Arch: "llama", Layers: 8, Heads: 32, KVHeads: 8, Experts: 8}
	for _, m := range []Mix{MixIQ1_S, MixIQ2_S} {
		got = planTypes(t, m, mixtral, moeTensors(8, 8, false))
		assert.Equal(t, Q4_K, got["blk.2.attn_v.weight"], m.String())
		assert.Equal(t, Q4_K, got["blk.2.attn_k.weight"], m.String())
		assert.Equal(t, Q5_K, got["blk.2.attn_output.weight"], m.String())
	}
	for _, m := range []Mix{MixIQ3_XXS, MixIQ3_XS, MixIQ3_S, MixIQ3_M} {
		got = planTypes(t, m, mixtral, moeTensors(8, 8, false))
		assert.Equal(t, Q8_0, got["blk.2.attn_v.weight"], m.String())
		assert.Equal(t, Q8_0, got["blk.2.attn_k.weight"], m.String())
		assert.Equal(t, Q5_K, got["blk.2.attn_output.weight"], m.String())
	}
	got = planTypes(t, MixIQ3_M, mixtral, moeTensors(8, 8, false))
	for l, want := range []gguf.Type{Q4_K, IQ3S, IQ3S, Q4_K, IQ3S, IQ3S, Q4_K, Q4_K} {
		assert.Equal(t, want, got[fmt.Sprintf("blk.%d.ffn_down_exps.weight", l)], "layer %d", l)
	}

	// The IQ1 and IQ2 mixes' rank needs no layer in a name; the IQ3 mixes'
	// layer rules do in a mixture of experts, as llama-quantize's do.
	odd := append(moeTensors(1, 4, false),
		Tensor{Name: "mtp.ffn_down_exps.weight", Shape: []int{4, 256, 256}})
	_, err := Plan(MixIQ2_M, Model{Layers: 1, Experts: 4}, odd, Options{})
	assert.NoError(t, err)
	_, err = Plan(MixIQ3_M, Model{Layers: 1, Experts: 4}, odd, Options{})
	var te *TensorError
	assert.ErrorAs(t, err, &te)
}

// TestIQSpecialModels: falcon's head is Q8_0, its attn_output keeps the
// IQ3 mixes' base but takes the IQ1 and IQ2 mixes' rule (which has no
// falcon exception); a 70B model's attn_v gets Q5_K in the IQ3 mixes
// (from Q4_K) but keeps Q4_K in the IQ1 and IQ2 ones; a tied embedding
// is the head (Q5_K, not Q2_K); rows of 704 fall back.
func TestIQSpecialModels(t *testing.T) {
	falcon := Model{Arch: "falcon", Layers: 4, Heads: 32, KVHeads: 32}
	got := planTypes(t, MixIQ2_S, falcon, llamaTensors(4, 4096, false))
	assert.Equal(t, Q8_0, got["output.weight"])
	assert.Equal(t, IQ3S, got["blk.1.attn_output.weight"])
	got = planTypes(t, MixIQ3_XXS, falcon, llamaTensors(4, 4096, false))
	assert.Equal(t, IQ3XXS, got["blk.1.attn_output.weight"])
	got = planTypes(t, MixIQ3_M, falcon, llamaTensors(4, 4096, false))
	assert.Equal(t, IQ3S, got["blk.1.attn_output.weight"])

	llama70 := Model{Arch: "llama", Layers: 80, Heads: 64, KVHeads: 8}
	for m, want := range map[Mix]gguf.Type{MixIQ3_XXS: Q5_K, MixIQ3_XS: Q5_K, MixIQ3_S: Q5_K,
		MixIQ3_M: Q5_K, MixIQ2_XXS: Q4_K, MixIQ1_M: Q4_K, MixIQ2_M: Q4_K} {
		got = planTypes(t, m, llama70, llamaTensors(80, 1024, false))
		assert.Equal(t, want, got["blk.40.attn_v.weight"], m.String())
	}
	got = planTypes(t, MixIQ2_XXS, llama70, llamaTensors(80, 1024, false))
	assert.Equal(t, Q2_K, got["blk.9.ffn_down.weight"], "9 < 80/8")
	assert.Equal(t, IQ2XXS, got["blk.10.ffn_down.weight"])

	got = planTypes(t, MixIQ2_XXS, Model{Arch: "gemma", Layers: 2}, llamaTensors(2, 4096, true))
	assert.Equal(t, Q5_K, got["token_embd.weight"], "tied: the head's type")
	got = planTypes(t, MixIQ3_S, Model{Arch: "gemma", Layers: 2}, llamaTensors(2, 4096, true))
	assert.Equal(t, Q6_K, got["token_embd.weight"])

	ts := []Tensor{{Name: "output.weight", Shape: []int{512, 704}}}
	for i := range 8 {
		n := fmt.Sprintf("blk.%d.ffn_down.weight", i)
		ts = append(ts, Tensor{Name: n, Shape: []int{256, 704}})
	}
	model := Model{Arch: "llama", Layers: 8}
	for _, tc := range []struct {
		mix                 Mix
		imatrix             bool
		output, down0, down gguf.Type
	}{
		{MixIQ2_XXS, false, Q8_0, Q4_0, IQ4NL}, // Q2_K → Q4_0
		{MixIQ2_S, false, Q8_0, IQ4NL, IQ4NL},  // IQ3_S and IQ2_XS → IQ4_NL
		{MixIQ3_XXS, false, Q8_0, Q5_0, Q4_0},  // Q4_K → Q5_0, Q3_K → Q4_0
		{MixIQ3_XXS, true, Q8_0, IQ4NL, IQ4NL},
		{MixIQ3_M, false, Q8_0, Q5_0, IQ4NL},
	} {
		ds := byName(t, tc.mix, model, ts, Options{Imatrix: tc.imatrix})
		assert.Equal(t, tc.output, ds["output.weight"].Type, tc.mix.String())
		d0, d5 := ds["blk.0.ffn_down.weight"], ds["blk.5.ffn_down.weight"]
		assert.Equal(t, tc.down0, d0.Type, "%v: %s", tc.mix, d0.Reason)
		assert.Equal(t, tc.down, d5.Type, "%v: %s", tc.mix, d5.Reason)
		assert.True(t, d5.Fallback)
	}
}

// TestPositionsSkipBiases: llama-quantize's FFN and attention-V counters
// advance only for the tensors its rules see, so a bias (never quantized)
// takes no rank: with ffn_down.bias in every layer the Q4_K_M ffn_down of
// 8 layers still gets Q6_K in use_more_bits(i, 8) = 0, 3, 6 and 7.
func TestPositionsSkipBiases(t *testing.T) {
	var ts []Tensor
	for i := range 8 {
		p := fmt.Sprintf("blk.%d.", i)
		ts = append(ts, Tensor{Name: p + "ffn_down.bias", Shape: []int{256}},
			Tensor{Name: p + "ffn_down.weight", Shape: []int{256, 256}},
			Tensor{Name: p + "ffn_up.bias", Shape: []int{256}},
			Tensor{Name: p + "ffn_up.weight", Shape: []int{256, 256}})
	}
	got := planTypes(t, MixQ4_K_M, Model{Arch: "llama", Layers: 8}, ts)
	for l, want := range []gguf.Type{Q6_K, Q4_K, Q4_K, Q6_K, Q4_K, Q4_K, Q6_K, Q6_K} {
		assert.Equal(t, want, got[fmt.Sprintf("blk.%d.ffn_down.weight", l)], "layer %d", l)
	}
	got = planTypes(t, MixIQ3_XS, Model{Arch: "llama", Layers: 8}, ts)
	assert.Equal(t, IQ3S, got["blk.0.ffn_up.weight"])
	assert.Equal(t, IQ3XXS, got["blk.1.ffn_up.weight"])
	assert.Equal(t, IQ3XXS, got["blk.6.ffn_up.weight"])
	assert.Equal(t, IQ3S, got["blk.7.ffn_up.weight"])
}

// TestIQLookup: every IQ mix name resolves, case-insensitively.
func TestIQLookup(t *testing.T) {
	for _, name := range []string{"IQ1_S", "iq1_m", "IQ2_XXS", "IQ2_XS", "iq2_s", "IQ2_M",
		"IQ3_XXS", "IQ3_XS", "IQ3_S", "iq3_m"} {
		m, err := Lookup(name)
		require.NoError(t, err, name)
		assert.Equal(t, strings.ToUpper(name), m.String())
	}
}
