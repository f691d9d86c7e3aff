package ggufmix

import (
	"strconv"
	"strings"
)

// Category is the role of a tensor that the mix rules look at, as
// llama-quantize groups tensors.
type Category int

// The categories. Names are GGUF's; Hugging Face names map to them (see
// CategoryOf).
const (
	Other      Category = iota // anything else (norms, biases, routers, ...)
	TokenEmbd                  // token_embd.weight (embed_tokens)
	Output                     // output.weight, the output head (lm_head)
	AttnQ                      // attn_q (q_proj)
	AttnK                      // attn_k (k_proj)
	AttnV                      // attn_v (v_proj)
	AttnQKV                    // attn_qkv, a fused q/k/v projection (qkv_proj, query_key_value)
	AttnKVB                    // attn_kv_b, MLA's k/v up-projection (kv_b_proj)
	AttnOutput                 // attn_output (o_proj)
	FFNUp                      // ffn_up, ffn_up_exps, ffn_up_shexp (up_proj, experts' w3)
	FFNGate                    // ffn_gate, ffn_gate_exps, ... (gate_proj, experts' w1)
	FFNDown                    // ffn_down, ffn_down_exps, ... (down_proj, experts' w2)
)

var categoryNames = [...]string{"other", "token_embd", "output", "attn_q", "attn_k", "attn_v", "attn_qkv",
	"attn_kv_b", "attn_output", "ffn_up", "ffn_gate", "ffn_down"}

// String returns the GGUF short name of the category ("attn_v").
func (c Category) String() string {
	if c >= 0 && int(c) < len(categoryNames) {
		return categoryNames[c]
	}
	return "Category(" + strconv.Itoa(int(c)) + ")"
}

// attnVLike reports whether the attention-V rules apply: V itself and the
// fused projections that contain it (llama.cpp groups them so).
func (c Category) attnVLike() bool { return c == AttnV || c == AttnQKV || c == AttnKVB }

// hfCategory maps a Hugging Face path component to a category.
var hfCategory = map[string]Category{
	"embed_tokens": TokenEmbd, "wte": TokenEmbd, "word_embeddings": TokenEmbd,
	"lm_head": Output,
	"q_proj":  AttnQ, "k_proj": AttnK, "v_proj": AttnV, "o_proj": AttnOutput,
	"qkv_proj": AttnQKV, "query_key_value": AttnQKV, "Wqkv": AttnQKV, "c_attn": AttnQKV,
	"kv_b_proj": AttnKVB,
	"up_proj":   FFNUp, "gate_proj": FFNGate, "down_proj": FFNDown,
}

// expertCategory maps the Mixtral-style expert matrices (experts.N.w1 ...).
var expertCategory = map[string]Category{"w1": FFNGate, "w2": FFNDown, "w3": FFNUp}

// CategoryOf returns the category of a tensor name, which may be a GGUF
// name ("blk.3.attn_v.weight") or a Hugging Face one
// ("model.layers.3.self_attn.v_proj.weight"). GGUF names are matched by
// substring exactly as llama-quantize matches them; Hugging Face names by
// path component.
func CategoryOf(name string) Category {
	switch name {
	case "output.weight":
		return Output
	case "token_embd.weight", "per_layer_token_embd.weight":
		return TokenEmbd
	}
	for _, g := range []struct {
		sub string
		cat Category
	}{
		{"attn_qkv.weight", AttnQKV}, {"attn_kv_b.weight", AttnKVB}, {"attn_v.weight", AttnV},
		{"attn_k.weight", AttnK}, {"attn_q.weight", AttnQ}, {"attn_output.weight", AttnOutput},
		{"ffn_up", FFNUp}, {"ffn_gate", FFNGate}, {"ffn_down", FFNDown},
	} {
		if strings.Contains(name, g.sub) {
			return g.cat
		}
	}
	parts := strings.Split(name, ".")
	for i, p := range parts {
		if c, ok := hfCategory[p]; ok {
			return c
		}
		if c, ok := expertCategory[p]; ok && i >= 2 && parts[i-2] == "experts" {
			return c
		}
	}
	return Other
}

// layerWords are the path components that precede a layer index: GGUF's
// "blk" and the Hugging Face spellings.
var layerWords = map[string]bool{"blk": true, "layers": true, "h": true, "blocks": true, "block": true, "layer": true}

// LayerOf returns the block (layer) index in a tensor name: N in
// "blk.N." (GGUF) or in "layers.N.", "h.N.", "blocks.N." (Hugging Face),
// and −1 when the name has none.
func LayerOf(name string) int {
	parts := strings.Split(name, ".")
	for i := 1; i < len(parts)-1; i++ {
		if !layerWords[parts[i-1]] {
			continue
		}
		if n, err := strconv.Atoi(parts[i]); err == nil && n >= 0 && parts[i] == strconv.Itoa(n) {
			return n
		}
	}
	return -1
}

// keepReason reports why a tensor of the given row-major shape is never
// quantized, or "" when it may be: tensors of fewer than 2 dimensions as
// ggml counts them (outer dimensions of 1 do not count: [1 256] is 1-D),
// names not ending in "weight", norms, expert routers, and the small or
// positional tensors llama-quantize leaves alone.
func keepReason(name string, shape []int) string {
	if ggmlDims(shape) < 2 {
		return "1-D tensor"
	}
	if !strings.HasSuffix(name, "weight") {
		return "not a weight"
	}
	if strings.Contains(name, "_norm.weight") || hasNormComponent(name) {
		return "norm"
	}
	if strings.Contains(name, "ffn_gate_inp.weight") || strings.HasSuffix(name, ".gate.weight") {
		return "expert router"
	}
	for _, s := range []string{
		"ffn_gate_tid2eid.weight", "altup", "laurel", "per_layer_model_proj", "ssm_conv1d",
		"shortconv.conv.weight", "indexer.k_proj.weight", "indexer.q_proj.weight", "time_mix_first.weight",
		"time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_v0.weight",
		"time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight", "time_mix_a1.weight",
		"time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight", "time_mix_decay_w1.weight",
		"time_mix_decay_w2.weight", "time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd",
		"sam.pos_embd", "sam.neck.", "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger",
		"a.rvq.codebook", "mm.a.code_embd",
	} {
		if strings.Contains(name, s) {
			return "small or positional tensor (" + strings.Trim(s, ".") + ")"
		}
	}
	switch name {
	case "position_embd.weight", "token_types.weight", "model.embed_positions.weight":
		return "positional embedding"
	}
	return ""
}

// hasNormComponent reports whether a Hugging Face name has a path
// component naming a norm ("input_layernorm", "norm", "q_norm", ...).
func hasNormComponent(name string) bool {
	parts := strings.Split(name, ".")
	for _, p := range parts[:len(parts)-1] {
		if strings.Contains(p, "norm") {
			return true
		}
	}
	return false
}

// ggmlDims is ggml_n_dims of a row-major shape: the dimensions up to the
// outermost one above 1, at least 1.
func ggmlDims(shape []int) int {
	for i, d := range shape {
		if d != 1 {
			return max(1, len(shape)-i)
		}
	}
	return 1
}
