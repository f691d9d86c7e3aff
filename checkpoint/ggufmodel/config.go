package ggufmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// ConfigFile is the name of the Hugging Face model configuration.
const ConfigFile = "config.json"

// archOf maps config.json's model_type to llama.cpp's architecture name.
var archOf = map[string]string{
	"llama":   "llama",
	"mistral": "llama",
	"qwen2":   "qwen2",
	"qwen3":   "qwen3",
	"gemma":   "gemma",
}

// Architectures returns the config.json model types Detect knows, each with
// the llama.cpp architecture it converts to.
func Architectures() map[string]string {
	out := make(map[string]string, len(archOf))
	for k, v := range archOf {
		out[k] = v
	}
	return out
}

// Params are the hyper-parameters of a model, read from config.json.
type Params struct {
	// ModelType is config.json's model_type, Arch the llama.cpp architecture.
	ModelType, Arch string
	// Context is the training context length (max_position_embeddings).
	Context int
	// Hidden is the embedding length, Layers the number of blocks,
	// FeedForward the MLP width.
	Hidden, Layers, FeedForward int
	// Heads and KVHeads count the query and the key/value heads, HeadDim is
	// the size of one head (head_dim, else Hidden/Heads); HeadDimSet reports
	// that config.json gives head_dim.
	Heads, KVHeads, HeadDim int
	HeadDimSet              bool
	// Vocab is the vocabulary size: the rows of the token embedding.
	Vocab int
	// RMSEps is the epsilon of the RMS norms.
	RMSEps float64
	// RopeTheta is the base of the rotary frequencies (10000 when unset).
	RopeTheta float64
	// Rope is the RoPE scaling, Type "" for none.
	Rope RopeScaling
	// Tied reports tie_word_embeddings (always true for Gemma): the output
	// head is the token embedding.
	Tied bool
}

// RopeScaling is a RoPE scaling of config.json's rope_scaling (or
// rope_parameters).
type RopeScaling struct {
	// Type is "linear", "yarn" or "llama3"; "" for none.
	Type string
	// Factor is the context extension factor.
	Factor float64
	// OriginalContext is the context length before scaling (yarn, llama3).
	OriginalContext int
	// LowFreqFactor and HighFreqFactor are Llama 3's band limits.
	LowFreqFactor, HighFreqFactor float64
	// Yarn holds YaRN's optional parameters by GGUF key suffix
	// (yarn_ext_factor, yarn_attn_factor, yarn_beta_fast, yarn_beta_slow).
	Yarn map[string]float64
}

// config is a parsed config.json.
type config map[string]any

// parseConfig parses config.json, keeping numbers exact.
func parseConfig(b []byte) (config, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var c config
	if err := dec.Decode(&c); err != nil {
		return nil, &UnsupportedError{File: ConfigFile, Reason: "not a JSON object: " + err.Error()}
	}
	return c, nil
}

// lookup returns the first of fields that c has (and is not null).
func (c config) lookup(fields ...string) (string, any, bool) {
	for _, f := range fields {
		if v, ok := c[f]; ok && v != nil {
			return f, v, true
		}
	}
	return "", nil, false
}

// intField reads a positive integer from the first of fields present. key is
// the GGUF key it becomes, for the error when none is present and required.
func (c config) intField(key string, required bool, fields ...string) (int, bool, error) {
	f, v, ok := c.lookup(fields...)
	if !ok {
		if required {
			return 0, false, &MissingKeyError{Key: key, File: ConfigFile, Fields: fields}
		}
		return 0, false, nil
	}
	n, isNum := v.(json.Number)
	i, err := strconv.ParseInt(string(n), 10, 64)
	if !isNum || err != nil || i <= 0 || i > math.MaxInt32 {
		return 0, false, &UnsupportedError{File: ConfigFile, Field: f, Value: fmt.Sprint(v), Reason: "want a positive integer (it becomes " + key + ")"}
	}
	return int(i), true, nil
}

// floatField reads a finite number from the first of fields present.
func (c config) floatField(file, key string, required bool, fields ...string) (float64, bool, error) {
	f, v, ok := c.lookup(fields...)
	if !ok {
		if required {
			return 0, false, &MissingKeyError{Key: key, File: file, Fields: fields}
		}
		return 0, false, nil
	}
	n, isNum := v.(json.Number)
	x, err := strconv.ParseFloat(string(n), 64)
	if !isNum || err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, false, &UnsupportedError{File: file, Field: f, Value: fmt.Sprint(v), Reason: "want a number (it becomes " + key + ")"}
	}
	return x, true, nil
}

// maxLayers bounds a model's layer count, far above any real model's, so
// that a wrong config.json is refused before a map of its tensors is built.
const maxLayers = 1 << 16

// readParams reads the hyper-parameters of architecture arch.
func readParams(c config, modelType, arch string) (*Params, error) {
	p := &Params{ModelType: modelType, Arch: arch}
	k := func(s string) string { return arch + "." + s }
	var err error
	ints := []struct {
		dst    *int
		key    string
		fields []string
	}{
		{&p.Context, k("context_length"), []string{"max_position_embeddings", "n_ctx", "n_positions"}},
		{&p.Hidden, k("embedding_length"), []string{"hidden_size", "n_embd", "dim"}},
		{&p.Layers, k("block_count"), []string{"num_hidden_layers", "n_layer", "n_layers", "num_layers"}},
		{&p.FeedForward, k("feed_forward_length"), []string{"intermediate_size", "n_inner", "hidden_dim"}},
		{&p.Heads, k("attention.head_count"), []string{"num_attention_heads", "n_head", "n_heads"}},
		{&p.Vocab, k("vocab_size"), []string{"vocab_size", "n_vocab"}},
	}
	for _, f := range ints {
		if *f.dst, _, err = c.intField(f.key, true, f.fields...); err != nil {
			return nil, err
		}
	}
	if p.Layers > maxLayers {
		return nil, &UnsupportedError{File: ConfigFile, Field: "num_hidden_layers", Value: strconv.Itoa(p.Layers),
			Reason: fmt.Sprintf("more than %d layers; check config.json", maxLayers)}
	}
	var set bool
	if p.KVHeads, set, err = c.intField(k("attention.head_count_kv"), false, "num_key_value_heads", "n_kv_heads"); err != nil {
		return nil, err
	} else if !set {
		p.KVHeads = p.Heads
	}
	if p.HeadDim, p.HeadDimSet, err = c.intField(k("attention.key_length"), arch == "gemma", "head_dim"); err != nil {
		return nil, err
	}
	if !p.HeadDimSet {
		if p.Hidden%p.Heads != 0 {
			return nil, &UnsupportedError{File: ConfigFile, Field: "hidden_size", Value: strconv.Itoa(p.Hidden),
				Reason: fmt.Sprintf("not a multiple of num_attention_heads %d, and no head_dim is given", p.Heads)}
		}
		p.HeadDim = p.Hidden / p.Heads
	}
	if p.Heads%p.KVHeads != 0 {
		return nil, &UnsupportedError{File: ConfigFile, Field: "num_key_value_heads", Value: strconv.Itoa(p.KVHeads),
			Reason: fmt.Sprintf("does not divide num_attention_heads %d", p.Heads)}
	}
	if p.HeadDim%2 != 0 {
		return nil, &UnsupportedError{File: ConfigFile, Field: "head_dim", Value: strconv.Itoa(p.HeadDim), Reason: "rotary embeddings need an even head size"}
	}
	if arch == "qwen2" && p.Heads*p.HeadDim != p.Hidden {
		return nil, &UnsupportedError{File: ConfigFile, Field: "head_dim", Value: strconv.Itoa(p.HeadDim),
			Reason: fmt.Sprintf("llama.cpp's qwen2 needs num_attention_heads × head_dim = hidden_size, not %d × %d ≠ %d", p.Heads, p.HeadDim, p.Hidden)}
	}
	if p.RMSEps, _, err = c.floatField(ConfigFile, k("attention.layer_norm_rms_epsilon"), true, "rms_norm_eps", "norm_eps"); err != nil {
		return nil, err
	}
	if p.RMSEps <= 0 {
		return nil, &UnsupportedError{File: ConfigFile, Field: "rms_norm_eps", Value: strconv.FormatFloat(p.RMSEps, 'g', -1, 64), Reason: "want a positive epsilon"}
	}
	if prf, ok, err := c.floatField(ConfigFile, k("rope.dimension_count"), false, "partial_rotary_factor"); err != nil {
		return nil, err
	} else if ok && prf != 1 {
		return nil, &UnsupportedError{File: ConfigFile, Field: "partial_rotary_factor", Value: strconv.FormatFloat(prf, 'g', -1, 64),
			Reason: "llama.cpp's " + arch + " rotates whole heads"}
	}
	if err := readRope(c, p); err != nil {
		return nil, err
	}
	switch v := c["tie_word_embeddings"].(type) {
	case bool:
		p.Tied = v
	case nil:
	default:
		return nil, &UnsupportedError{File: ConfigFile, Field: "tie_word_embeddings", Value: fmt.Sprint(v), Reason: "want true or false"}
	}
	if arch == "gemma" {
		p.Tied = true // Gemma's output head is always the token embedding
	}
	return p, nil
}

// readRope reads rope_theta and the RoPE scaling: rope_parameters (newer
// configs) or rope_scaling.
func readRope(c config, p *Params) error {
	k := func(s string) string { return p.Arch + "." + s }
	field := "rope_scaling"
	rs := config{}
	if v, ok := c["rope_parameters"].(map[string]any); ok {
		field, rs = "rope_parameters", v
	} else if v, ok := c["rope_scaling"].(map[string]any); ok {
		rs = v
	} else if v := c["rope_scaling"]; v != nil {
		return &UnsupportedError{File: ConfigFile, Field: "rope_scaling", Value: fmt.Sprint(v), Reason: "want an object or null"}
	}
	theta, ok, err := rs.floatField(ConfigFile, k("rope.freq_base"), false, "rope_theta")
	if err != nil {
		return err
	}
	if !ok {
		if theta, ok, err = c.floatField(ConfigFile, k("rope.freq_base"), false, "rope_theta", "rotary_emb_base"); err != nil {
			return err
		}
	}
	if !ok {
		theta = 10000 // the default of every supported architecture
	}
	if theta <= 0 {
		return &UnsupportedError{File: ConfigFile, Field: "rope_theta", Value: strconv.FormatFloat(theta, 'g', -1, 64), Reason: "want a positive base"}
	}
	p.RopeTheta = theta
	_, tv, _ := rs.lookup("rope_type", "type")
	typ, isStr := tv.(string)
	if tv != nil && !isStr {
		return &UnsupportedError{File: ConfigFile, Field: field + ".rope_type", Value: fmt.Sprint(tv), Reason: "want a string"}
	}
	f := func(name string) string { return field + "." + name }
	positive := func(name string, x float64) error {
		if x <= 0 {
			return &UnsupportedError{File: ConfigFile, Field: f(name), Value: strconv.FormatFloat(x, 'g', -1, 64), Reason: "want a positive number"}
		}
		return nil
	}
	r := &p.Rope
	switch typ {
	case "", "default":
		return nil
	case "linear":
		r.Type = "linear"
		if r.Factor, _, err = rs.floatField(ConfigFile, k("rope.scaling.factor"), true, "factor"); err != nil {
			return err
		}
		return positive("factor", r.Factor)
	case "yarn":
		r.Type = "yarn"
		if r.Factor, _, err = rs.floatField(ConfigFile, k("rope.scaling.factor"), true, "factor"); err != nil {
			return err
		}
		if err := positive("factor", r.Factor); err != nil {
			return err
		}
		if r.OriginalContext, _, err = rs.intField(k("rope.scaling.original_context_length"), true, "original_max_position_embeddings"); err != nil {
			return err
		}
		r.Yarn = map[string]float64{}
		for _, y := range []struct {
			key    string
			fields []string
		}{
			{"yarn_ext_factor", []string{"extrapolation_factor"}},
			{"yarn_attn_factor", []string{"attention_factor", "attn_factor"}},
			{"yarn_beta_fast", []string{"beta_fast"}},
			{"yarn_beta_slow", []string{"beta_slow"}},
		} {
			x, ok, err := rs.floatField(ConfigFile, k("rope.scaling."+y.key), false, y.fields...)
			if err != nil {
				return err
			}
			if ok {
				r.Yarn[y.key] = x
			}
		}
		return nil
	case "llama3":
		if p.Arch != "llama" {
			return &UnsupportedError{File: ConfigFile, Field: f("rope_type"), Value: typ, Reason: "llama.cpp's " + p.Arch + " has no rope_freqs tensor for Llama 3's scaling"}
		}
		r.Type = "llama3"
		opt := func(dst *float64, name string, def float64) error {
			x, ok, err := rs.floatField(ConfigFile, "rope_freqs.weight", false, name)
			if err != nil {
				return err
			}
			if !ok {
				x = def
			}
			*dst = x
			return positive(name, x)
		}
		if err := opt(&r.Factor, "factor", 8); err != nil {
			return err
		}
		if err := opt(&r.LowFreqFactor, "low_freq_factor", 1); err != nil {
			return err
		}
		if err := opt(&r.HighFreqFactor, "high_freq_factor", 4); err != nil {
			return err
		}
		var orig float64
		if err := opt(&orig, "original_max_position_embeddings", 8192); err != nil {
			return err
		}
		r.OriginalContext = int(orig)
		if r.HighFreqFactor <= r.LowFreqFactor {
			return &UnsupportedError{File: ConfigFile, Field: f("high_freq_factor"), Value: strconv.FormatFloat(r.HighFreqFactor, 'g', -1, 64),
				Reason: "want more than low_freq_factor"}
		}
		return nil
	}
	return &UnsupportedError{File: ConfigFile, Field: f("rope_type"), Value: typ,
		Reason: "llama.cpp's " + p.Arch + " implements no such RoPE scaling (supported: linear, yarn" + map[bool]string{true: ", llama3", false: ""}[p.Arch == "llama"] + ")"}
}
