package ggufmodel

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// Model is a Hugging Face checkpoint of a known architecture, described as
// the llama.cpp model it converts to.
type Model struct {
	Params
	// Tokenizer is the converted tokenizer; Detect leaves it nil and
	// ReadTokenizer's result is put here by the caller.
	Tokenizer *Tokenizer
	// want lists every tensor llama.cpp loads for the architecture, by GGUF
	// name.
	want map[string]wantTensor
}

// wantTensor is a tensor llama.cpp loads: its row-major shape and whether
// it must be present.
type wantTensor struct {
	shape    []int
	required bool
}

// Detect reads config.json. It returns nil and no error when the model type
// is not a known architecture (or config.json has none), a *MissingKeyError
// or *UnsupportedError when a known architecture lacks a hyper-parameter
// llama.cpp needs or has one it cannot run.
func Detect(configJSON []byte) (*Model, error) {
	if len(configJSON) == 0 {
		return nil, nil
	}
	c, err := parseConfig(configJSON)
	if err != nil {
		return nil, err
	}
	mt, _ := c["model_type"].(string)
	arch, ok := archOf[mt]
	if !ok {
		return nil, nil
	}
	p, err := readParams(c, mt, arch)
	if err != nil {
		return nil, err
	}
	m := &Model{Params: *p}
	m.want = m.tensors()
	return m, nil
}

// tensors lists the tensors llama.cpp loads for the model.
func (m *Model) tensors() map[string]wantTensor {
	H, V, F, hd := m.Hidden, m.Vocab, m.FeedForward, m.HeadDim
	q, kv := m.Heads*hd, m.KVHeads*hd
	if m.Arch == "qwen2" {
		q = H // llama.cpp's qwen2 sizes the query and output projections by the embedding
	}
	w := map[string]wantTensor{}
	add := func(name string, required bool, shape ...int) { w[name] = wantTensor{shape: shape, required: required} }
	add("token_embd.weight", true, V, H)
	add("output_norm.weight", true, H)
	if m.Arch != "gemma" {
		add("output.weight", false, V, H)
	}
	if m.Arch == "qwen2" {
		add("output.bias", false, V)
	}
	if m.Rope.Type == "llama3" {
		add("rope_freqs.weight", true, hd/2)
	}
	for i := range m.Layers {
		b := "blk." + strconv.Itoa(i) + "."
		add(b+"attn_norm.weight", true, H)
		add(b+"attn_q.weight", true, q, H)
		add(b+"attn_k.weight", true, kv, H)
		add(b+"attn_v.weight", true, kv, H)
		add(b+"attn_output.weight", true, H, q)
		add(b+"ffn_norm.weight", true, H)
		add(b+"ffn_gate.weight", true, F, H)
		add(b+"ffn_up.weight", true, F, H)
		add(b+"ffn_down.weight", true, H, F)
		switch m.Arch {
		case "llama":
			add(b+"attn_q.bias", false, q)
			add(b+"attn_k.bias", false, kv)
			add(b+"attn_v.bias", false, kv)
			add(b+"attn_output.bias", false, H)
			add(b+"ffn_gate.bias", false, F)
			add(b+"ffn_up.bias", false, F)
			add(b+"ffn_down.bias", false, H)
		case "qwen2":
			add(b+"attn_q.bias", false, q)
			add(b+"attn_k.bias", false, kv)
			add(b+"attn_v.bias", false, kv)
		case "qwen3":
			add(b+"attn_q_norm.weight", true, hd)
			add(b+"attn_k_norm.weight", true, hd)
		}
	}
	return w
}

// Mapping is what becomes of one input tensor in the GGUF file.
type Mapping struct {
	// Name is the GGUF tensor name; "" when the tensor is dropped.
	Name string
	// Dropped says why the tensor is not written ("" when it is).
	Dropped string
	// Transform is the change of its values.
	Transform Transform
	// Float32 reports that llama.cpp wants the tensor as F32 when it is not
	// quantized (one-dimensional tensors and norms).
	Float32 bool
}

// layerNames maps the name of a block's tensor, after "model.layers.N." and
// without ".weight" or ".bias", to its GGUF name after "blk.N.".
var layerNames = map[string]string{
	"input_layernorm":          "attn_norm",
	"self_attn.q_proj":         "attn_q",
	"self_attn.k_proj":         "attn_k",
	"self_attn.v_proj":         "attn_v",
	"self_attn.o_proj":         "attn_output",
	"self_attn.q_norm":         "attn_q_norm",
	"self_attn.k_norm":         "attn_k_norm",
	"post_attention_layernorm": "ffn_norm",
	"mlp.gate_proj":            "ffn_gate",
	"mlp.up_proj":              "ffn_up",
	"mlp.down_proj":            "ffn_down",
}

// topNames maps the tensors outside the blocks.
var topNames = map[string]string{
	"model.embed_tokens": "token_embd",
	"model.norm":         "output_norm",
	"lm_head":            "output",
}

// Tensor maps the input tensor name (Hugging Face's) to the GGUF file. A
// name the architecture does not use is a *TensorError.
func (m *Model) Tensor(name string) (Mapping, error) {
	if strings.HasSuffix(name, ".rotary_emb.inv_freq") {
		return Mapping{Dropped: "rotary inverse frequencies, which llama.cpp computes"}, nil
	}
	bad := func(why string) (Mapping, error) {
		return Mapping{}, &TensorError{Arch: m.Arch, Tensor: name, Reason: why}
	}
	base, suffix, ok := cutSuffix(name)
	if !ok {
		return bad("not a tensor of the architecture (no .weight or .bias suffix)")
	}
	var g string
	if rest, found := strings.CutPrefix(base, "model.layers."); found {
		n, part, _ := strings.Cut(rest, ".")
		i, err := strconv.Atoi(n)
		gl, known := layerNames[part]
		switch {
		case err != nil || i < 0 || strconv.Itoa(i) != n:
			return bad("not a tensor of the architecture")
		case i >= m.Layers:
			return bad(fmt.Sprintf("block %d, but config.json has num_hidden_layers %d", i, m.Layers))
		case !known:
			return bad("not a tensor of llama.cpp's " + m.Arch + " architecture")
		}
		g = "blk." + n + "." + gl + suffix
	} else if gt, known := topNames[base]; known {
		g = gt + suffix
	} else {
		return bad("not a tensor of llama.cpp's " + m.Arch + " architecture")
	}
	if g == "output.weight" && m.Tied {
		why := "the output head is tied to the token embedding (tie_word_embeddings), which llama.cpp reuses"
		if m.Arch == "gemma" {
			why = "Gemma's output head is the token embedding, which llama.cpp reuses"
		}
		return Mapping{Dropped: why}, nil
	}
	w, known := m.want[g]
	if !known || g == "rope_freqs.weight" {
		return bad("becomes " + g + ", which llama.cpp's " + m.Arch + " architecture does not load")
	}
	mp := Mapping{Name: g, Float32: len(w.shape) <= 1 || strings.HasSuffix(g, "_norm.weight")}
	if m.Arch == "llama" {
		switch {
		case strings.HasPrefix(g, "blk.") && strings.Contains(g, ".attn_q."):
			mp.Transform.PermuteHeads = m.Heads
		case strings.HasPrefix(g, "blk.") && strings.Contains(g, ".attn_k."):
			mp.Transform.PermuteHeads = m.KVHeads
		}
	}
	if m.Arch == "gemma" && strings.HasSuffix(name, "norm.weight") {
		mp.Transform.AddOne = true
	}
	return mp, nil
}

// cutSuffix splits ".weight" or ".bias" off a tensor name.
func cutSuffix(name string) (base, suffix string, ok bool) {
	for _, s := range []string{".weight", ".bias"} {
		if b, found := strings.CutSuffix(name, s); found && b != "" {
			return b, s, true
		}
	}
	return "", "", false
}

// Check checks the tensors a GGUF file will hold, by GGUF name with their
// row-major shapes: every tensor llama.cpp requires for the architecture is
// there, and every one has the shape it loads. The first problem is a
// *TensorError.
func (m *Model) Check(tensors map[string][]int) error {
	names := make([]string, 0, len(m.want))
	for n := range m.want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w := m.want[n]
		shape, ok := tensors[n]
		switch {
		case !ok && w.required:
			return &TensorError{Arch: m.Arch, Tensor: n, Reason: "missing: llama.cpp's " + m.Arch + " architecture loads it"}
		case ok && !slices.Equal(shape, w.shape):
			return &TensorError{Arch: m.Arch, Tensor: n, Reason: fmt.Sprintf("shape %v, but config.json makes llama.cpp load %v", shape, w.shape)}
		}
	}
	for n := range tensors {
		if _, ok := m.want[n]; !ok {
			return &TensorError{Arch: m.Arch, Tensor: n, Reason: "llama.cpp's " + m.Arch + " architecture does not load it"}
		}
	}
	return nil
}

// Extra is a tensor the GGUF file holds that the checkpoint does not: its
// values are computed from config.json.
type Extra struct {
	Name  string
	Shape []int
	Data  []float32
}

// Extra lists the tensors to add: rope_freqs.weight for Llama 3's RoPE
// scaling, none otherwise.
func (m *Model) Extra() []Extra {
	if m.Rope.Type != "llama3" {
		return nil
	}
	return []Extra{{Name: "rope_freqs.weight", Shape: []int{m.HeadDim / 2}, Data: llama3Factors(&m.Params)}}
}

// llama3Factors returns Llama 3's per-frequency RoPE scaling: the rotary
// frequency θ_i = base^(−2i/d) has wavelength λ_i = 2π/θ_i; frequencies
// whose wavelength is shorter than the original context over
// high_freq_factor keep their speed (factor 1), those longer than the
// original context over low_freq_factor are slowed by factor, and those
// between are interpolated smoothly in 1/λ.
func llama3Factors(p *Params) []float32 {
	r := p.Rope
	d := p.HeadDim
	orig := float64(r.OriginalContext)
	lowWave, highWave := orig/r.LowFreqFactor, orig/r.HighFreqFactor
	out := make([]float32, d/2)
	for i := range out {
		freq := 1 / math.Pow(p.RopeTheta, float64(2*i)/float64(d))
		wave := 2 * math.Pi / freq
		switch {
		case wave < highWave:
			out[i] = 1
		case wave > lowWave:
			out[i] = float32(r.Factor)
		default:
			smooth := (orig/wave - r.LowFreqFactor) / (r.HighFreqFactor - r.LowFreqFactor)
			out[i] = float32(1 / ((1-smooth)/r.Factor + smooth))
		}
	}
	return out
}

// KVOptions are the values of the general.* keys that come from the
// conversion rather than the checkpoint.
type KVOptions struct {
	// Name is general.name; "" leaves it out.
	Name string
	// FileType is general.file_type (llama.h's enum llama_ftype, see
	// ggufmix.Mix.FileType); a negative value leaves it out.
	FileType int
}

// KV returns the metadata of the GGUF file in the order llama.cpp's
// converter writes it: general.*, the architecture's hyper-parameters, and
// the tokenizer's keys when m.Tokenizer is set.
func (m *Model) KV(o KVOptions) []gguf.KV {
	var kv []gguf.KV
	add := func(k string, v gguf.Value) { kv = append(kv, gguf.KV{Key: k, Value: v}) }
	u32 := func(k string, n int) { add(m.Arch+"."+k, gguf.Uint32(uint32(n))) }
	f32 := func(k string, x float64) { add(m.Arch+"."+k, gguf.Float32(float32(x))) }
	add(gguf.KeyArchitecture, gguf.String(m.Arch))
	if o.Name != "" {
		add(gguf.KeyName, gguf.String(o.Name))
	}
	add(gguf.KeyAlignment, gguf.Uint32(gguf.DefaultAlignment))
	if o.FileType >= 0 {
		add(gguf.KeyFileType, gguf.Uint32(uint32(o.FileType)))
	}
	u32("vocab_size", m.Vocab)
	u32("context_length", m.Context)
	u32("embedding_length", m.Hidden)
	u32("block_count", m.Layers)
	u32("feed_forward_length", m.FeedForward)
	u32("attention.head_count", m.Heads)
	u32("attention.head_count_kv", m.KVHeads)
	f32("attention.layer_norm_rms_epsilon", m.RMSEps)
	if m.HeadDimSet {
		u32("attention.key_length", m.HeadDim)
		u32("attention.value_length", m.HeadDim)
	}
	f32("rope.freq_base", m.RopeTheta)
	u32("rope.dimension_count", m.HeadDim)
	switch r := m.Rope; r.Type {
	case "linear":
		add(m.Arch+".rope.scaling.type", gguf.String("linear"))
		f32("rope.scaling.factor", r.Factor)
	case "yarn":
		add(m.Arch+".rope.scaling.type", gguf.String("yarn"))
		f32("rope.scaling.factor", r.Factor)
		u32("rope.scaling.original_context_length", r.OriginalContext)
		for _, k := range []string{"yarn_ext_factor", "yarn_attn_factor", "yarn_beta_fast", "yarn_beta_slow"} {
			if x, ok := r.Yarn[k]; ok {
				f32("rope.scaling."+k, x)
			}
		}
	}
	if m.Tokenizer != nil {
		kv = append(kv, m.Tokenizer.KV()...)
	}
	return kv
}
