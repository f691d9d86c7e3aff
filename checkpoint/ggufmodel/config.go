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
	steps := []func(config, *Params) error{readSizes, readHeads, readNorms, readRope, readTied}
	for _, read := range steps {
		if err := read(c, p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// readSizes reads the required sizes: context, hidden, layers (at most
// maxLayers), feed-forward, heads and vocabulary.
func readSizes(c config, p *Params) error {
	k := func(s string) string { return p.Arch + "." + s }
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
		var err error
		if *f.dst, _, err = c.intField(f.key, true, f.fields...); err != nil {
			return err
		}
	}
	if p.Layers > maxLayers {
		return &UnsupportedError{File: ConfigFile, Field: "num_hidden_layers", Value: strconv.Itoa(p.Layers),
			Reason: fmt.Sprintf("more than %d layers; check config.json", maxLayers)}
	}
	return nil
}

// readHeads reads the key/value heads (Heads when unset) and the head size
// (Hidden/Heads when unset; required for Gemma), and checks that they fit
// each other and the architecture.
func readHeads(c config, p *Params) error {
	arch := p.Arch
	var set bool
	var err error
	p.KVHeads, set, err = c.intField(arch+".attention.head_count_kv", false,
		"num_key_value_heads", "n_kv_heads")
	if err != nil {
		return err
	}
	if !set {
		p.KVHeads = p.Heads
	}
	p.HeadDim, p.HeadDimSet, err = c.intField(arch+".attention.key_length", arch == "gemma", "head_dim")
	if err != nil {
		return err
	}
	if !p.HeadDimSet {
		if p.Hidden%p.Heads != 0 {
			return &UnsupportedError{File: ConfigFile, Field: "hidden_size", Value: strconv.Itoa(p.Hidden),
				Reason: fmt.Sprintf("not a multiple of num_attention_heads %d, and no head_dim is given", p.Heads)}
		}
		p.HeadDim = p.Hidden / p.Heads
	}
	if p.Heads%p.KVHeads != 0 {
		return &UnsupportedError{File: ConfigFile, Field: "num_key_value_heads", Value: strconv.Itoa(p.KVHeads),
			Reason: fmt.Sprintf("does not divide num_attention_heads %d", p.Heads)}
	}
	if p.HeadDim%2 != 0 {
		return &UnsupportedError{File: ConfigFile, Field: "head_dim", Value: strconv.Itoa(p.HeadDim), Reason: "rotary embeddings need an even head size"}
	}
	if arch == "qwen2" && p.Heads*p.HeadDim != p.Hidden {
		return &UnsupportedError{File: ConfigFile, Field: "head_dim", Value: strconv.Itoa(p.HeadDim),
			Reason: fmt.Sprintf("llama.cpp's qwen2 needs num_attention_heads × head_dim = hidden_size, not %d × %d ≠ %d", p.Heads, p.HeadDim, p.Hidden)}
	}
	return nil
}

// readNorms reads the RMS norm epsilon, which must be positive, and checks
// that rotary embeddings rotate whole heads.
func readNorms(c config, p *Params) error {
	var err error
	p.RMSEps, _, err = c.floatField(ConfigFile, p.Arch+".attention.layer_norm_rms_epsilon", true,
		"rms_norm_eps", "norm_eps")
	if err != nil {
		return err
	}
	if p.RMSEps <= 0 {
		return &UnsupportedError{File: ConfigFile, Field: "rms_norm_eps", Value: strconv.FormatFloat(p.RMSEps, 'g', -1, 64), Reason: "want a positive epsilon"}
	}
	prf, ok, err := c.floatField(ConfigFile, p.Arch+".rope.dimension_count", false, "partial_rotary_factor")
	if err != nil {
		return err
	}
	if ok && prf != 1 {
		return &UnsupportedError{File: ConfigFile, Field: "partial_rotary_factor", Value: strconv.FormatFloat(prf, 'g', -1, 64),
			Reason: "llama.cpp's " + p.Arch + " rotates whole heads"}
	}
	return nil
}

// readTied reads tie_word_embeddings, always true for Gemma.
func readTied(c config, p *Params) error {
	switch v := c["tie_word_embeddings"].(type) {
	case bool:
		p.Tied = v
	case nil:
	default:
		return &UnsupportedError{File: ConfigFile, Field: "tie_word_embeddings", Value: fmt.Sprint(v), Reason: "want true or false"}
	}
	if p.Arch == "gemma" {
		p.Tied = true // Gemma's output head is always the token embedding
	}
	return nil
}

// readRope reads rope_theta and the RoPE scaling: rope_parameters (newer
// configs) or rope_scaling.
func readRope(c config, p *Params) error {
	field, rs, err := ropeObject(c)
	if err != nil {
		return err
	}
	if p.RopeTheta, err = ropeTheta(c, rs, p.Arch); err != nil {
		return err
	}
	_, tv, _ := rs.lookup("rope_type", "type")
	typ, isStr := tv.(string)
	if tv != nil && !isStr {
		return &UnsupportedError{File: ConfigFile, Field: field + ".rope_type", Value: fmt.Sprint(tv),
			Reason: "want a string"}
	}
	rr := &ropeReader{rs: rs, field: field, arch: p.Arch, r: &p.Rope}
	if typ == "" || typ == "default" {
		return nil
	}
	if read, ok := ropeScalings[typ]; ok {
		return read(rr)
	}
	supported := "linear, yarn"
	if p.Arch == "llama" {
		supported += ", llama3"
	}
	return &UnsupportedError{File: ConfigFile, Field: rr.f("rope_type"), Value: typ,
		Reason: "llama.cpp's " + p.Arch + " implements no such RoPE scaling (supported: " + supported + ")"}
}

// ropeObject returns the object of config.json holding the RoPE
// parameters and its field: rope_parameters or rope_scaling (empty when
// neither is given).
func ropeObject(c config) (string, config, error) {
	if v, ok := c["rope_parameters"].(map[string]any); ok {
		return "rope_parameters", v, nil
	}
	if v, ok := c["rope_scaling"].(map[string]any); ok {
		return "rope_scaling", v, nil
	}
	if v := c["rope_scaling"]; v != nil {
		return "", nil, &UnsupportedError{File: ConfigFile, Field: "rope_scaling", Value: fmt.Sprint(v),
			Reason: "want an object or null"}
	}
	return "rope_scaling", config{}, nil
}

// ropeTheta returns the base of the rotary frequencies: rs's rope_theta,
// else config.json's rope_theta or rotary_emb_base, else 10000.
func ropeTheta(c, rs config, arch string) (float64, error) {
	key := arch + ".rope.freq_base"
	theta, ok, err := rs.floatField(ConfigFile, key, false, "rope_theta")
	if err != nil {
		return 0, err
	}
	if !ok {
		theta, ok, err = c.floatField(ConfigFile, key, false, "rope_theta", "rotary_emb_base")
		if err != nil {
			return 0, err
		}
	}
	if !ok {
		theta = 10000 // the default of every supported architecture
	}
	if theta <= 0 {
		return 0, &UnsupportedError{File: ConfigFile, Field: "rope_theta",
			Value: strconv.FormatFloat(theta, 'g', -1, 64), Reason: "want a positive base"}
	}
	return theta, nil
}

// ropeReader reads one RoPE scaling into r from rs, the object at field
// of config.json, for architecture arch.
type ropeReader struct {
	rs    config
	field string
	arch  string
	r     *RopeScaling
}

// ropeScalings reads each RoPE scaling type llama.cpp implements.
var ropeScalings = map[string]func(*ropeReader) error{
	"linear": (*ropeReader).linear,
	"yarn":   (*ropeReader).yarn,
	"llama3": (*ropeReader).llama3,
}

// f is the name of field name of the RoPE object, for messages.
func (rr *ropeReader) f(name string) string { return rr.field + "." + name }

// key is the GGUF key of the architecture's RoPE parameter s.
func (rr *ropeReader) key(s string) string { return rr.arch + "." + s }

// positive checks that parameter name's value x is positive.
func (rr *ropeReader) positive(name string, x float64) error {
	if x <= 0 {
		return &UnsupportedError{File: ConfigFile, Field: rr.f(name),
			Value: strconv.FormatFloat(x, 'g', -1, 64), Reason: "want a positive number"}
	}
	return nil
}

// factor reads the required, positive scaling factor.
func (rr *ropeReader) factor() error {
	var err error
	rr.r.Factor, _, err = rr.rs.floatField(ConfigFile, rr.key("rope.scaling.factor"), true, "factor")
	if err != nil {
		return err
	}
	return rr.positive("factor", rr.r.Factor)
}

// linear reads linear scaling: a factor.
func (rr *ropeReader) linear() error {
	rr.r.Type = "linear"
	return rr.factor()
}

// yarn reads YaRN: a factor, the original context and YaRN's optional
// parameters.
func (rr *ropeReader) yarn() error {
	r := rr.r
	r.Type = "yarn"
	if err := rr.factor(); err != nil {
		return err
	}
	var err error
	r.OriginalContext, _, err = rr.rs.intField(rr.key("rope.scaling.original_context_length"), true,
		"original_max_position_embeddings")
	if err != nil {
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
		x, ok, err := rr.rs.floatField(ConfigFile, rr.key("rope.scaling."+y.key), false, y.fields...)
		if err != nil {
			return err
		}
		if ok {
			r.Yarn[y.key] = x
		}
	}
	return nil
}

// llama3 reads Llama 3's scaling (llama only, which has the rope_freqs
// tensor): factor, the band limits and the original context, each with
// its default.
func (rr *ropeReader) llama3() error {
	if rr.arch != "llama" {
		return &UnsupportedError{File: ConfigFile, Field: rr.f("rope_type"), Value: "llama3",
			Reason: "llama.cpp's " + rr.arch + " has no rope_freqs tensor for Llama 3's scaling"}
	}
	r := rr.r
	r.Type = "llama3"
	var orig float64
	for _, o := range []struct {
		dst  *float64
		name string
		def  float64
	}{
		{&r.Factor, "factor", 8},
		{&r.LowFreqFactor, "low_freq_factor", 1},
		{&r.HighFreqFactor, "high_freq_factor", 4},
		{&orig, "original_max_position_embeddings", 8192},
	} {
		x, ok, err := rr.rs.floatField(ConfigFile, "rope_freqs.weight", false, o.name)
		if err != nil {
			return err
		}
		if !ok {
			x = o.def
		}
		*o.dst = x
		if err := rr.positive(o.name, x); err != nil {
			return err
		}
	}
	r.OriginalContext = int(orig)
	if r.HighFreqFactor <= r.LowFreqFactor {
		return &UnsupportedError{File: ConfigFile, Field: rr.f("high_freq_factor"),
			Value:  strconv.FormatFloat(r.HighFreqFactor, 'g', -1, 64),
			Reason: "want more than low_freq_factor"}
	}
	return nil
}
