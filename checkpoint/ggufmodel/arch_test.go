package ggufmodel

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// llamaConfig is a small Llama config.json with grouped-query attention.
const llamaConfig = `{
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 128, "intermediate_size": 320, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 300,
  "max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
  "tie_word_embeddings": false
}`

// withKeys returns config with keys set (a nil value deletes the key).
func withKeys(t *testing.T, config string, keys map[string]any) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(config), &m))
	for k, v := range keys {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

func TestDetectUnknownArchitectures(t *testing.T) {
	for _, c := range []string{``, `{}`, `{"model_type": "gpt2"}`, `{"model_type": "gemma2", "hidden_size": 1}`, `{"model_type": 7}`} {
		m, err := Detect([]byte(c))
		assert.NoError(t, err, c)
		assert.Nil(t, m, c)
	}
	_, err := Detect([]byte(`{"model_type": "llama",`))
	var ue *UnsupportedError
	assert.ErrorAs(t, err, &ue)
}

func TestDetectLlama(t *testing.T) {
	m, err := Detect([]byte(llamaConfig))
	require.NoError(t, err)
	require.NotNil(t, m)
	assert.Equal(t, Params{ModelType: "llama", Arch: "llama", Context: 2048, Hidden: 128, Layers: 2, FeedForward: 320,
		Heads: 4, KVHeads: 2, HeadDim: 32, Vocab: 300, RMSEps: 1e-5, RopeTheta: 500000}, m.Params)

	kv := map[string]gguf.Value{}
	var order []string
	for _, p := range m.KV(KVOptions{Name: "tiny", FileType: 7}) {
		kv[p.Key] = p.Value
		order = append(order, p.Key)
	}
	assert.Equal(t, []string{"general.architecture", "general.name", "general.alignment", "general.file_type"}, order[:4])
	// The value types are those llama.cpp reads the keys as.
	want := map[string]gguf.Value{
		"general.architecture":                   gguf.String("llama"),
		"general.name":                           gguf.String("tiny"),
		"general.alignment":                      gguf.Uint32(32),
		"general.file_type":                      gguf.Uint32(7),
		"llama.vocab_size":                       gguf.Uint32(300),
		"llama.context_length":                   gguf.Uint32(2048),
		"llama.embedding_length":                 gguf.Uint32(128),
		"llama.block_count":                      gguf.Uint32(2),
		"llama.feed_forward_length":              gguf.Uint32(320),
		"llama.attention.head_count":             gguf.Uint32(4),
		"llama.attention.head_count_kv":          gguf.Uint32(2),
		"llama.attention.layer_norm_rms_epsilon": gguf.Float32(1e-5),
		"llama.rope.freq_base":                   gguf.Float32(500000),
		"llama.rope.dimension_count":             gguf.Uint32(32),
	}
	assert.Equal(t, want, kv)
	assert.Nil(t, m.Extra())

	// Without a name or file type those keys are left out.
	for _, p := range m.KV(KVOptions{FileType: -1}) {
		assert.NotContains(t, []string{"general.name", "general.file_type"}, p.Key)
	}
}

func TestDetectDefaultsAndVariants(t *testing.T) {
	cases := []struct {
		name  string
		model string
		keys  map[string]any
		check func(t *testing.T, m *Model)
	}{
		{"no kv heads: as many as heads", "llama", map[string]any{"num_key_value_heads": nil}, func(t *testing.T, m *Model) {
			assert.Equal(t, 4, m.KVHeads)
		}},
		{"no rope_theta: 10000", "llama", map[string]any{"rope_theta": nil}, func(t *testing.T, m *Model) {
			assert.Equal(t, 10000.0, m.RopeTheta)
		}},
		{"head_dim given: key and value lengths", "llama", map[string]any{"head_dim": 64}, func(t *testing.T, m *Model) {
			kv := kvMap(m)
			assert.Equal(t, gguf.Uint32(64), kv["llama.attention.key_length"])
			assert.Equal(t, gguf.Uint32(64), kv["llama.attention.value_length"])
			assert.Equal(t, gguf.Uint32(64), kv["llama.rope.dimension_count"])
		}},
		{"mistral is llama", "mistral", nil, func(t *testing.T, m *Model) {
			assert.Equal(t, "llama", m.Arch)
			assert.Equal(t, "mistral", m.ModelType)
		}},
		{"tied", "qwen2", map[string]any{"tie_word_embeddings": true}, func(t *testing.T, m *Model) {
			assert.True(t, m.Tied)
			assert.Equal(t, gguf.String("qwen2"), kvMap(m)["general.architecture"])
		}},
		{"gemma is always tied", "gemma", map[string]any{"head_dim": 32}, func(t *testing.T, m *Model) {
			assert.True(t, m.Tied)
		}},
		{"linear rope scaling", "llama", map[string]any{"rope_scaling": map[string]any{"type": "linear", "factor": 4.0}}, func(t *testing.T, m *Model) {
			kv := kvMap(m)
			assert.Equal(t, gguf.String("linear"), kv["llama.rope.scaling.type"])
			assert.Equal(t, gguf.Float32(4), kv["llama.rope.scaling.factor"])
		}},
		{"yarn rope scaling", "qwen2", map[string]any{"rope_scaling": map[string]any{"rope_type": "yarn", "factor": 4.0,
			"original_max_position_embeddings": 32768, "beta_fast": 32.0}}, func(t *testing.T, m *Model) {
			kv := kvMap(m)
			assert.Equal(t, gguf.String("yarn"), kv["qwen2.rope.scaling.type"])
			assert.Equal(t, gguf.Float32(4), kv["qwen2.rope.scaling.factor"])
			assert.Equal(t, gguf.Uint32(32768), kv["qwen2.rope.scaling.original_context_length"])
			assert.Equal(t, gguf.Float32(32), kv["qwen2.rope.scaling.yarn_beta_fast"])
			assert.NotContains(t, kv, "qwen2.rope.scaling.yarn_beta_slow")
		}},
		{"rope_parameters holds theta", "llama", map[string]any{"rope_theta": nil, "rope_parameters": map[string]any{"rope_theta": 1e6, "rope_type": "default"}},
			func(t *testing.T, m *Model) {
				assert.Equal(t, 1e6, m.RopeTheta)
				assert.Empty(t, m.Rope.Type)
			}},
		{"default rope type", "llama", map[string]any{"rope_scaling": map[string]any{"rope_type": "default"}}, func(t *testing.T, m *Model) {
			assert.NotContains(t, kvMap(m), "llama.rope.scaling.type")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Detect(withKeys(t, llamaConfig, mergeKeys(map[string]any{"model_type": c.model}, c.keys)))
			require.NoError(t, err)
			require.NotNil(t, m)
			c.check(t, m)
		})
	}
}

func mergeKeys(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

func kvMap(m *Model) map[string]gguf.Value {
	kv := map[string]gguf.Value{}
	for _, p := range m.KV(KVOptions{FileType: -1}) {
		kv[p.Key] = p.Value
	}
	return kv
}

func TestDetectErrors(t *testing.T) {
	cases := []struct {
		name   string
		model  string
		keys   map[string]any
		key    string // of a *MissingKeyError
		field  string // of an *UnsupportedError
		fields []string
	}{
		{"no context length", "llama", map[string]any{"max_position_embeddings": nil}, "llama.context_length", "",
			[]string{"max_position_embeddings", "n_ctx", "n_positions"}},
		{"no hidden size", "qwen3", map[string]any{"hidden_size": nil}, "qwen3.embedding_length", "", nil},
		{"no layers", "llama", map[string]any{"num_hidden_layers": nil}, "llama.block_count", "", nil},
		{"no ffn", "llama", map[string]any{"intermediate_size": nil}, "llama.feed_forward_length", "", nil},
		{"no heads", "llama", map[string]any{"num_attention_heads": nil}, "llama.attention.head_count", "", nil},
		{"no eps", "qwen2", map[string]any{"rms_norm_eps": nil}, "qwen2.attention.layer_norm_rms_epsilon", "", nil},
		{"no vocab", "llama", map[string]any{"vocab_size": nil}, "llama.vocab_size", "", nil},
		{"gemma without head_dim", "gemma", nil, "gemma.attention.key_length", "", nil},
		{"yarn without original context", "llama", map[string]any{"rope_scaling": map[string]any{"type": "yarn", "factor": 2.0}},
			"llama.rope.scaling.original_context_length", "", nil},
		{"linear without factor", "llama", map[string]any{"rope_scaling": map[string]any{"type": "linear"}}, "llama.rope.scaling.factor", "", nil},
		{"negative layers", "llama", map[string]any{"num_hidden_layers": -2}, "", "num_hidden_layers", nil},
		{"too many layers", "llama", map[string]any{"num_hidden_layers": 2000000000}, "", "num_hidden_layers", nil},
		{"fractional heads", "llama", map[string]any{"num_attention_heads": 2.5}, "", "num_attention_heads", nil},
		{"string eps", "llama", map[string]any{"rms_norm_eps": "1e-5"}, "", "rms_norm_eps", nil},
		{"heads do not split hidden", "llama", map[string]any{"num_attention_heads": 3, "num_key_value_heads": 3}, "", "hidden_size", nil},
		{"kv heads do not divide heads", "llama", map[string]any{"num_key_value_heads": 3}, "", "num_key_value_heads", nil},
		{"odd head size", "llama", map[string]any{"head_dim": 33}, "", "head_dim", nil},
		{"qwen2 head size not hidden/heads", "qwen2", map[string]any{"head_dim": 64}, "", "head_dim", nil},
		{"partial rotary", "llama", map[string]any{"partial_rotary_factor": 0.5}, "", "partial_rotary_factor", nil},
		{"dynamic rope", "llama", map[string]any{"rope_scaling": map[string]any{"type": "dynamic", "factor": 2.0}}, "", "rope_scaling.rope_type", nil},
		{"longrope", "qwen2", map[string]any{"rope_scaling": map[string]any{"rope_type": "longrope"}}, "", "rope_scaling.rope_type", nil},
		{"llama3 rope outside llama", "qwen3", map[string]any{"rope_scaling": map[string]any{"rope_type": "llama3"}}, "", "rope_scaling.rope_type", nil},
		{"rope_scaling not an object", "llama", map[string]any{"rope_scaling": "linear"}, "", "rope_scaling", nil},
		{"tie not a bool", "llama", map[string]any{"tie_word_embeddings": "yes"}, "", "tie_word_embeddings", nil},
		{"zero eps", "llama", map[string]any{"rms_norm_eps": 0}, "", "rms_norm_eps", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Detect(withKeys(t, llamaConfig, mergeKeys(map[string]any{"model_type": c.model}, c.keys)))
			require.Error(t, err)
			if c.key != "" {
				var mk *MissingKeyError
				require.ErrorAs(t, err, &mk)
				assert.Equal(t, c.key, mk.Key)
				assert.Equal(t, "config.json", mk.File)
				if c.fields != nil {
					assert.Equal(t, c.fields, mk.Fields)
				}
				assert.Contains(t, err.Error(), c.key)
				return
			}
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, c.field, ue.Field)
			assert.Equal(t, "config.json", ue.File)
			assert.Contains(t, err.Error(), c.field)
		})
	}
}

func TestTensorNames(t *testing.T) {
	m, err := Detect([]byte(llamaConfig))
	require.NoError(t, err)
	cases := []struct {
		hf, gguf string
		permute  int
		f32      bool
	}{
		{"model.embed_tokens.weight", "token_embd.weight", 0, false},
		{"model.norm.weight", "output_norm.weight", 0, true},
		{"lm_head.weight", "output.weight", 0, false},
		{"model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight", 0, true},
		{"model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight", 4, false},
		{"model.layers.1.self_attn.q_proj.bias", "blk.1.attn_q.bias", 4, true},
		{"model.layers.0.self_attn.k_proj.weight", "blk.0.attn_k.weight", 2, false},
		{"model.layers.0.self_attn.k_proj.bias", "blk.0.attn_k.bias", 2, true},
		{"model.layers.0.self_attn.v_proj.weight", "blk.0.attn_v.weight", 0, false},
		{"model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight", 0, false},
		{"model.layers.0.post_attention_layernorm.weight", "blk.0.ffn_norm.weight", 0, true},
		{"model.layers.0.mlp.gate_proj.weight", "blk.0.ffn_gate.weight", 0, false},
		{"model.layers.0.mlp.up_proj.weight", "blk.0.ffn_up.weight", 0, false},
		{"model.layers.1.mlp.down_proj.weight", "blk.1.ffn_down.weight", 0, false},
	}
	for _, c := range cases {
		mp, err := m.Tensor(c.hf)
		require.NoError(t, err, c.hf)
		assert.Equal(t, Mapping{Name: c.gguf, Transform: Transform{PermuteHeads: c.permute}, Float32: c.f32}, mp, c.hf)
	}
	mp, err := m.Tensor("model.layers.0.self_attn.rotary_emb.inv_freq")
	require.NoError(t, err)
	assert.Empty(t, mp.Name)
	assert.NotEmpty(t, mp.Dropped)

	for _, bad := range []string{
		"model.layers.2.mlp.up_proj.weight",      // beyond num_hidden_layers
		"model.layers.x.mlp.up_proj.weight",      // not a block number
		"model.layers.01.mlp.up_proj.weight",     // not canonical
		"model.layers.0.self_attn.q_norm.weight", // qwen3's, not llama's
		"model.layers.0.mlp.fc1.weight",
		"model.embed_tokens",
		"vision_tower.weight",
		"model.norm.bias",
	} {
		_, err := m.Tensor(bad)
		var te *TensorError
		require.ErrorAs(t, err, &te, bad)
		assert.Equal(t, bad, te.Tensor)
		assert.Equal(t, "llama", te.Arch)
	}
}

func TestTensorPerArchitecture(t *testing.T) {
	qwen3, err := Detect(withKeys(t, llamaConfig, map[string]any{"model_type": "qwen3", "tie_word_embeddings": true}))
	require.NoError(t, err)
	mp, err := qwen3.Tensor("model.layers.0.self_attn.k_norm.weight")
	require.NoError(t, err)
	assert.Equal(t, Mapping{Name: "blk.0.attn_k_norm.weight", Float32: true}, mp)
	mp, err = qwen3.Tensor("model.layers.0.self_attn.q_proj.weight")
	require.NoError(t, err)
	assert.Zero(t, mp.Transform, "only llama permutes")
	mp, err = qwen3.Tensor("lm_head.weight")
	require.NoError(t, err)
	assert.Empty(t, mp.Name, "tied")
	assert.Contains(t, mp.Dropped, "tie_word_embeddings")
	_, err = qwen3.Tensor("model.layers.0.self_attn.q_proj.bias")
	assert.Error(t, err, "qwen3 has no biases")

	qwen2, err := Detect(withKeys(t, llamaConfig, map[string]any{"model_type": "qwen2"}))
	require.NoError(t, err)
	mp, err = qwen2.Tensor("model.layers.1.self_attn.v_proj.bias")
	require.NoError(t, err)
	assert.Equal(t, Mapping{Name: "blk.1.attn_v.bias", Float32: true}, mp)
	_, err = qwen2.Tensor("model.layers.1.self_attn.o_proj.bias")
	assert.Error(t, err, "llama.cpp's qwen2 has no output bias")

	gemma, err := Detect(withKeys(t, llamaConfig, map[string]any{"model_type": "gemma", "head_dim": 32}))
	require.NoError(t, err)
	for hf, g := range map[string]string{
		"model.norm.weight":                              "output_norm.weight",
		"model.layers.0.input_layernorm.weight":          "blk.0.attn_norm.weight",
		"model.layers.0.post_attention_layernorm.weight": "blk.0.ffn_norm.weight",
	} {
		mp, err := gemma.Tensor(hf)
		require.NoError(t, err)
		assert.Equal(t, Mapping{Name: g, Transform: Transform{AddOne: true}, Float32: true}, mp, hf)
	}
	mp, err = gemma.Tensor("lm_head.weight")
	require.NoError(t, err)
	assert.Empty(t, mp.Name)
	assert.Contains(t, mp.Dropped, "Gemma")
}

// llamaTensors is the full tensor set of llamaConfig in GGUF names.
func llamaTensors() map[string][]int {
	ts := map[string][]int{"token_embd.weight": {300, 128}, "output_norm.weight": {128}, "output.weight": {300, 128}}
	for _, b := range []string{"blk.0.", "blk.1."} {
		ts[b+"attn_norm.weight"] = []int{128}
		ts[b+"attn_q.weight"] = []int{128, 128}
		ts[b+"attn_k.weight"] = []int{64, 128}
		ts[b+"attn_v.weight"] = []int{64, 128}
		ts[b+"attn_output.weight"] = []int{128, 128}
		ts[b+"ffn_norm.weight"] = []int{128}
		ts[b+"ffn_gate.weight"] = []int{320, 128}
		ts[b+"ffn_up.weight"] = []int{320, 128}
		ts[b+"ffn_down.weight"] = []int{128, 320}
	}
	return ts
}

func TestCheck(t *testing.T) {
	m, err := Detect([]byte(llamaConfig))
	require.NoError(t, err)
	require.NoError(t, m.Check(llamaTensors()))

	tied := llamaTensors()
	delete(tied, "output.weight")
	assert.NoError(t, m.Check(tied), "no output head: llama.cpp uses the token embedding")

	cases := []struct {
		name   string
		change func(ts map[string][]int)
		tensor string
	}{
		{"missing", func(ts map[string][]int) { delete(ts, "blk.1.ffn_down.weight") }, "blk.1.ffn_down.weight"},
		{"missing embedding", func(ts map[string][]int) { delete(ts, "token_embd.weight") }, "token_embd.weight"},
		{"wrong shape", func(ts map[string][]int) { ts["blk.0.attn_k.weight"] = []int{128, 128} }, "blk.0.attn_k.weight"},
		{"vocab mismatch", func(ts map[string][]int) { ts["token_embd.weight"] = []int{320, 128} }, "token_embd.weight"},
		{"unknown", func(ts map[string][]int) { ts["blk.0.attn_q_norm.weight"] = []int{32} }, "blk.0.attn_q_norm.weight"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := llamaTensors()
			c.change(ts)
			err := m.Check(ts)
			var te *TensorError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, c.tensor, te.Tensor)
		})
	}
}

func TestTransformPermutation(t *testing.T) {
	// By hand: one head of 4 rows is [r0 r1 | r2 r3] in Hugging Face's
	// layout (pairs (r0,r2), (r1,r3)); llama.cpp wants the pairs adjacent:
	// r0 r2 r1 r3. Two heads of 4 rows each do that within each head.
	perm, err := Transform{PermuteHeads: 2}.RowPermutation(8)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 1, 3, 4, 6, 5, 7}, perm)
	perm, err = Transform{PermuteHeads: 1}.RowPermutation(8)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 4, 1, 5, 2, 6, 3, 7}, perm)
	perm, err = Transform{}.RowPermutation(8)
	require.NoError(t, err)
	assert.Nil(t, perm)
	_, err = Transform{PermuteHeads: 3}.RowPermutation(8)
	assert.Error(t, err)

	// Rows of 2 values move whole.
	// Apply never changes its input.
	x := []float32{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5}
	orig := slices.Clone(x)
	for _, c := range []struct {
		t    Transform
		want []float32
	}{
		{Transform{PermuteHeads: 1}, []float32{0, 0.5, 2, 2.5, 1, 1.5, 3, 3.5}},
		{Transform{PermuteHeads: 1, AddOne: true}, []float32{1, 1.5, 3, 3.5, 2, 2.5, 4, 4.5}},
		{Transform{AddOne: true}, []float32{1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5}},
		{Transform{}, x},
	} {
		y, err := c.t.Apply(x, []int{4, 2})
		require.NoError(t, err)
		assert.Equal(t, c.want, y, "%+v", c.t)
		assert.Equal(t, orig, x, "%+v changed its input", c.t)
	}

	_, err = Transform{PermuteHeads: 1}.Apply([]float32{1}, nil)
	assert.Error(t, err)
	_, err = Transform{PermuteHeads: 1}.Apply([]float32{1, 2, 3}, []int{2})
	assert.Error(t, err)
}

func TestLlama3RopeFactors(t *testing.T) {
	// head_dim 4, base 10000: frequencies 1 and 10000^(−1/2) = 0.01, with
	// wavelengths 2π ≈ 6.28 and 200π ≈ 628.3.
	cfg := func(orig int) []byte {
		return withKeys(t, llamaConfig, map[string]any{"head_dim": 4, "rope_theta": 10000.0, "rope_scaling": map[string]any{
			"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": orig}})
	}
	cases := []struct {
		orig int
		want []float32
	}{
		// Original context 8192: both wavelengths are below 8192/4 = 2048,
		// so neither frequency is scaled.
		{8192, []float32{1, 1}},
		// 100: 628.3 is above 100/1, so the slow frequency is divided by 8.
		{100, []float32{1, 8}},
		// 1000: 628.3 lies between 1000/4 and 1000/1: smooth =
		// (1000/628.3 − 1)/(4 − 1) = 0.19718, factor 1/((1 − 0.19718)/8 +
		// 0.19718) = 3.36095.
		{1000, []float32{1, 3.3609463}},
	}
	for _, c := range cases {
		m, err := Detect(cfg(c.orig))
		require.NoError(t, err)
		ex := m.Extra()
		require.Len(t, ex, 1)
		assert.Equal(t, "rope_freqs.weight", ex[0].Name)
		assert.Equal(t, []int{2}, ex[0].Shape)
		assert.InDeltaSlice(t, c.want, ex[0].Data, 1e-5, "orig %d", c.orig)
		assert.NotContains(t, kvMap(m), "llama.rope.scaling.type", "llama.cpp takes Llama 3's scaling from rope_freqs")
	}
	_, err := Detect(withKeys(t, llamaConfig, map[string]any{"rope_scaling": map[string]any{"rope_type": "llama3", "low_freq_factor": 4.0, "high_freq_factor": 1.0}}))
	var ue *UnsupportedError
	assert.ErrorAs(t, err, &ue)

	// The file must hold rope_freqs.weight, of head_dim/2 values.
	m, err := Detect(withKeys(t, llamaConfig, map[string]any{"rope_scaling": map[string]any{"rope_type": "llama3"}}))
	require.NoError(t, err)
	ts := llamaTensors()
	var te *TensorError
	require.ErrorAs(t, m.Check(ts), &te)
	assert.Equal(t, "rope_freqs.weight", te.Tensor)
	ts["rope_freqs.weight"] = []int{16}
	assert.NoError(t, m.Check(ts))
	_, err = m.Tensor("rope_freqs.weight")
	assert.Error(t, err, "the checkpoint cannot hold it: it is computed")
}

func TestErrorMessages(t *testing.T) {
	assert.Equal(t, "config.json has none of a, b: llama.cpp requires k",
		(&MissingKeyError{Key: "k", File: "config.json", Fields: []string{"a", "b"}}).Error())
	assert.Equal(t, "config.json has no a: llama.cpp requires k",
		(&MissingKeyError{Key: "k", File: "config.json", Fields: []string{"a"}}).Error())
	assert.Equal(t, "d/tokenizer.json is missing: llama.cpp requires tokenizer.ggml.model",
		(&MissingKeyError{Key: "tokenizer.ggml.model", File: "d/tokenizer.json"}).Error())
	assert.Equal(t, `tokenizer.json: model.type "WordPiece": no`,
		(&UnsupportedError{File: "tokenizer.json", Field: "model.type", Value: "WordPiece", Reason: "no"}).Error())
	assert.Equal(t, `llama: tensor "x": y`, (&TensorError{Arch: "llama", Tensor: "x", Reason: "y"}).Error())
}

// TestRopeObject: rope_parameters (newer configs) before rope_scaling; a
// rope_scaling that is no object is refused.
func TestRopeObject(t *testing.T) {
	params, scaling := map[string]any{"rope_type": "yarn"}, map[string]any{"type": "linear"}
	for _, c := range []struct {
		cfg       config
		field     string
		obj       config
		wantError bool
	}{
		{config{"rope_parameters": params, "rope_scaling": scaling}, "rope_parameters", params, false},
		{config{"rope_parameters": 3, "rope_scaling": scaling}, "rope_scaling", scaling, false},
		{config{}, "rope_scaling", config{}, false},
		{config{"rope_scaling": nil}, "rope_scaling", config{}, false},
		{config{"rope_scaling": "linear"}, "", nil, true},
	} {
		field, obj, err := ropeObject(c.cfg)
		if c.wantError {
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, "rope_scaling", ue.Field)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.field, field)
		assert.Equal(t, c.obj, obj)
	}
}

// TestRopeTheta: the RoPE object's rope_theta, else config.json's
// rope_theta or rotary_emb_base, else 10000; a base must be positive.
func TestRopeTheta(t *testing.T) {
	num := func(s string) json.Number { return json.Number(s) }
	for _, c := range []struct {
		cfg, rs config
		want    float64
		field   string // of the error, "" for none
	}{
		{config{"rope_theta": num("500000")}, config{"rope_theta": num("1e6")}, 1e6, ""},
		{config{"rope_theta": num("500000")}, config{}, 500000, ""},
		{config{"rotary_emb_base": num("20000")}, config{}, 20000, ""},
		{config{}, config{}, 10000, ""},
		{config{"rope_theta": num("0")}, config{}, 0, "rope_theta"},
		{config{"rope_theta": "x"}, config{}, 0, "rope_theta"},
	} {
		got, err := ropeTheta(c.cfg, c.rs, "llama")
		if c.field != "" {
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, c.field, ue.Field)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.want, got)
	}
}
