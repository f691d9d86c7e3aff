package ggufmodel

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDetect: Detect never panics on any config.json, and a model it
// detects maps its tensor names, checks shapes and lists its GGUF metadata
// without panicking either. Seeds: the configs under the repository's
// testdata and small edits of them.
func FuzzDetect(f *testing.F) {
	paths, _ := filepath.Glob("../load/testdata/*/config.json")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{`{}`, `{"model_type":"llama"}`, `{"model_type":"llama","hidden_size":-1,"num_attention_heads":0}`,
		`{"model_type":"qwen3","hidden_size":1e308,"num_hidden_layers":9223372036854775807}`, `{"architectures":["MistralForCausalLM"]}`,
		`[]`, `null`, `{"model_type":"gemma","head_dim":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, cfg []byte) {
		m, err := Detect(cfg)
		if err != nil || m == nil { // nil, nil: not a known architecture
			return
		}
		for _, name := range []string{"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight", "lm_head.weight", "x"} {
			_, _ = m.Tensor(name)
		}
		_ = m.Check(map[string][]int{"model.embed_tokens.weight": {4, 8}})
		_ = m.Extra()
		_ = m.KV(KVOptions{})
	})
}
