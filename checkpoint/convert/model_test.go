package convert

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmodel"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// tinyLlama sizes: hidden 64, 2 query heads and 1 key/value head of 32, MLP
// 96, 2 layers, 40 tokens.
const (
	tlHidden, tlHeads, tlKV, tlHead, tlFF, tlLayers, tlVocab = 64, 2, 1, 32, 96, 2, 40
)

// tinyLlamaTokenizer is a byte-level BPE tokenizer of three tokens and a
// merge, with two special tokens.
const tinyLlamaTokenizer = `{
  "version": "1.0",
  "added_tokens": [
    {"id": 3, "content": "<s>", "special": true},
    {"id": 4, "content": "</s>", "special": true}
  ],
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}
}`

// tinyLlama writes a Llama checkpoint in HF layout (BF16 weights, a query
// bias, a tied output head stored anyway, a rotary buffer) with config.json,
// tokenizer.json and tokenizer_config.json into dir, and returns the
// weights' path. change edits the tensors and config before they are
// written.
func tinyLlama(t *testing.T, dir string, change func(ts map[string][]int, cfg map[string]any)) string {
	t.Helper()
	shapes := map[string][]int{
		"model.embed_tokens.weight": {tlVocab, tlHidden},
		"model.norm.weight":         {tlHidden},
		"lm_head.weight":            {tlVocab, tlHidden},
	}
	for l := range tlLayers {
		p := "model.layers." + strconv.Itoa(l) + "."
		shapes[p+"input_layernorm.weight"] = []int{tlHidden}
		shapes[p+"post_attention_layernorm.weight"] = []int{tlHidden}
		shapes[p+"self_attn.q_proj.weight"] = []int{tlHeads * tlHead, tlHidden}
		shapes[p+"self_attn.q_proj.bias"] = []int{tlHeads * tlHead}
		shapes[p+"self_attn.k_proj.weight"] = []int{tlKV * tlHead, tlHidden}
		shapes[p+"self_attn.v_proj.weight"] = []int{tlKV * tlHead, tlHidden}
		shapes[p+"self_attn.o_proj.weight"] = []int{tlHidden, tlHeads * tlHead}
		shapes[p+"self_attn.rotary_emb.inv_freq"] = []int{tlHead / 2}
		shapes[p+"mlp.gate_proj.weight"] = []int{tlFF, tlHidden}
		shapes[p+"mlp.up_proj.weight"] = []int{tlFF, tlHidden}
		shapes[p+"mlp.down_proj.weight"] = []int{tlHidden, tlFF}
	}
	cfg := map[string]any{
		"model_type": "llama", "hidden_size": tlHidden, "intermediate_size": tlFF, "num_hidden_layers": tlLayers,
		"num_attention_heads": tlHeads, "num_key_value_heads": tlKV, "vocab_size": tlVocab,
		"max_position_embeddings": 512, "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "tie_word_embeddings": true,
		"attention_bias": true,
	}
	if change != nil {
		change(shapes, cfg)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var ts []safetensors.Tensor
	for _, name := range slices.Sorted(maps.Keys(shapes)) {
		n := 1
		for _, d := range shapes[name] {
			n *= d
		}
		b := make([]byte, 2*n)
		for i := range n {
			v := float32(r.NormFloat64() * 0.05)
			if len(shapes[name]) == 1 {
				v += 1
			}
			u := math.Float32bits(v)
			binary.LittleEndian.PutUint16(b[2*i:], uint16((u+0x7fff+(u>>16&1))>>16))
		}
		ts = append(ts, safetensors.Tensor{Name: name, DType: safetensors.BF16, Shape: shapes[name], Data: b})
	}
	path := filepath.Join(dir, "model.safetensors")
	require.NoError(t, safetensors.WriteFile(path, ts, map[string]string{"format": "pt"}))
	js, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), js, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(tinyLlamaTokenizer), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"bos_token": "<s>", "eos_token": {"content": "</s>"}, "add_bos_token": true}`), 0o644))
	return path
}

// convertGGUF converts src to a GGUF file of datatype typ.
func convertGGUF(t *testing.T, src, typ string, o Options) (string, *Result, error) {
	t.Helper()
	l, err := layout.Get("gguf")
	require.NoError(t, err)
	o.Layout = l
	o.DataType, err = layout.DataType(l, typ)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "m.gguf")
	res, err := Convert(src, out, o)
	return out, res, err
}

// torchPermute is llama.cpp's converter's
// w.reshape(heads, 2, rows/heads/2, cols).swapaxes(1, 2).reshape(rows, cols),
// written out with indices: output [h, j, k] is input [h, k, j].
func torchPermute(x []float32, rows, cols, heads int) []float32 {
	half := rows / heads / 2
	out := make([]float32, len(x))
	for h := range heads {
		for j := range half {
			for k := range 2 {
				dst := (h*half*2 + j*2 + k) * cols
				src := (h*2*half + k*half + j) * cols
				copy(out[dst:dst+cols], x[src:src+cols])
			}
		}
	}
	return out
}

func TestModelGGUF(t *testing.T) {
	src := tinyLlama(t, t.TempDir(), nil)
	in, err := load.Open(src)
	require.NoError(t, err)
	defer in.Close()
	read := func(name string) []float32 {
		x, _, err := in.Float32(name)
		require.NoError(t, err)
		return x
	}

	for _, whole := range []bool{false, true} {
		forceWhole = whole
		out, res, err := convertGGUF(t, src, "q8_0", Options{Workers: 2})
		forceWhole = false
		require.NoError(t, err)
		f, err := gguf.Open(out)
		require.NoError(t, err)
		defer f.Close()

		assert.Equal(t, "llama", f.Architecture())
		kv := func(k string) any {
			v, ok := f.Get(k)
			require.True(t, ok, k)
			return v.Any()
		}
		assert.Equal(t, uint32(tlLayers), kv("llama.block_count"))
		assert.Equal(t, uint32(tlHidden), kv("llama.embedding_length"))
		assert.Equal(t, uint32(tlFF), kv("llama.feed_forward_length"))
		assert.Equal(t, uint32(tlHeads), kv("llama.attention.head_count"))
		assert.Equal(t, uint32(tlKV), kv("llama.attention.head_count_kv"))
		assert.Equal(t, uint32(512), kv("llama.context_length"))
		assert.Equal(t, float32(1e-6), kv("llama.attention.layer_norm_rms_epsilon"))
		assert.Equal(t, uint32(7), kv("general.file_type"), "LLAMA_FTYPE_MOSTLY_Q8_0")
		assert.Equal(t, uint32(2), kv("general.quantization_version"))
		assert.Equal(t, filepath.Base(filepath.Dir(src)), kv("general.name"))
		assert.Equal(t, "gpt2", kv("tokenizer.ggml.model"))
		assert.Equal(t, "gpt-2", kv("tokenizer.ggml.pre"))
		assert.Len(t, kv("tokenizer.ggml.tokens"), tlVocab)
		assert.Equal(t, uint32(3), kv("tokenizer.ggml.bos_token_id"))
		assert.Equal(t, uint32(4), kv("tokenizer.ggml.eos_token_id"))

		names := map[string]gguf.Type{}
		for _, ti := range f.Tensors {
			names[ti.Name] = ti.Type
		}
		assert.NotContains(t, names, "output.weight", "tied: llama.cpp reuses token_embd")
		assert.Len(t, names, 2+tlLayers*10)
		assert.Equal(t, gguf.TypeQ8_0, names["token_embd.weight"])
		assert.Equal(t, gguf.TypeF32, names["output_norm.weight"])
		assert.Equal(t, gguf.TypeF32, names["blk.1.attn_norm.weight"])
		assert.Equal(t, gguf.TypeF32, names["blk.1.attn_q.bias"])

		// Norms are the source's values, widened to F32.
		got, err := f.Float32s("blk.0.ffn_norm.weight")
		require.NoError(t, err)
		sameBits(t, read("model.layers.0.post_attention_layernorm.weight"), got, "ffn_norm")

		// Query and key rows are permuted as llama.cpp's converter does, then
		// quantized row by row (Q8_0 blocks lie along rows).
		for _, c := range []struct {
			hf, g       string
			rows, heads int
		}{
			{"model.layers.1.self_attn.q_proj.weight", "blk.1.attn_q.weight", tlHeads * tlHead, tlHeads},
			{"model.layers.0.self_attn.k_proj.weight", "blk.0.attn_k.weight", tlKV * tlHead, tlKV},
			{"model.layers.0.self_attn.v_proj.weight", "blk.0.attn_v.weight", tlKV * tlHead, 0},
		} {
			x := read(c.hf)
			if c.heads > 0 {
				x = torchPermute(x, c.rows, tlHidden, c.heads)
			}
			blocks := make([]byte, len(x)/32*34)
			require.NoError(t, gguf.Quantize(gguf.TypeQ8_0, blocks, x, nil))
			raw, err := f.TensorBytes(c.g)
			require.NoError(t, err)
			assert.Equal(t, blocks, raw, "%s (whole %v)", c.g, whole)
		}
		got, err = f.Float32s("blk.0.attn_q.bias")
		require.NoError(t, err)
		sameBits(t, torchPermute(read("model.layers.0.self_attn.q_proj.bias"), tlHeads*tlHead, 1, tlHeads), got, "q bias")

		// The report lists the dropped tensors; verify pairs the rest.
		notes := map[string]string{}
		var dropped []string
		for _, r := range res.Tensors {
			notes[r.Name] = r.Note
			if r.Dropped {
				dropped = append(dropped, r.Name)
			}
		}
		assert.Contains(t, notes["lm_head.weight"], "dropped: ")
		assert.Contains(t, notes["model.layers.0.self_attn.rotary_emb.inv_freq"], "dropped: ")
		assert.ElementsMatch(t, []string{"lm_head.weight", "model.layers.0.self_attn.rotary_emb.inv_freq",
			"model.layers.1.self_attn.rotary_emb.inv_freq"}, dropped)
		vr, err := verifyTensors(src, out)
		require.NoError(t, err)
		assert.Len(t, vr, 2+tlLayers*10)
		for _, r := range vr {
			if r.Converted {
				require.NotNil(t, r.SQNR, r.Name)
				assert.Greater(t, *r.SQNR, 30.0, r.Name)
			} else {
				assert.Nil(t, r.SQNR, "%s is kept exactly", r.Name)
			}
		}
	}
}

func TestModelGGUFGeneric(t *testing.T) {
	src := tinyLlama(t, t.TempDir(), nil)
	out, _, err := convertGGUF(t, src, "q8_0", Options{GGUF: GGUFOptions{Generic: true}})
	require.NoError(t, err)
	f, err := gguf.Open(out)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, "tcast", f.Architecture(), "a generic file never claims llama.cpp's llama")
	_, ok := f.Tensor("model.layers.0.self_attn.q_proj.weight")
	assert.True(t, ok)
	_, ok = f.Get("llama.block_count")
	assert.False(t, ok)
}

func TestModelGGUFErrors(t *testing.T) {
	cases := []struct {
		name   string
		change func(ts map[string][]int, cfg map[string]any)
		files  func(dir string)
		check  func(t *testing.T, err error)
	}{
		{"no tokenizer.json", nil, func(dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "tokenizer.json"))) },
			func(t *testing.T, err error) {
				var mk *ggufmodel.MissingKeyError
				require.ErrorAs(t, err, &mk)
				assert.Equal(t, "tokenizer.ggml.model", mk.Key)
				assert.ErrorIs(t, err, ErrNoModelFile)
			}},
		{"no eos token", nil, func(dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"bos_token": "<s>"}`), 0o644))
		}, func(t *testing.T, err error) {
			var mk *ggufmodel.MissingKeyError
			require.ErrorAs(t, err, &mk)
			assert.Equal(t, "tokenizer.ggml.eos_token_id", mk.Key)
		}},
		{"no context length", func(_ map[string][]int, cfg map[string]any) { delete(cfg, "max_position_embeddings") }, nil,
			func(t *testing.T, err error) {
				var mk *ggufmodel.MissingKeyError
				require.ErrorAs(t, err, &mk)
				assert.Equal(t, "llama.context_length", mk.Key)
				assert.Contains(t, err.Error(), "config.json")
			}},
		{"missing tensor", func(ts map[string][]int, _ map[string]any) { delete(ts, "model.layers.1.mlp.up_proj.weight") }, nil,
			func(t *testing.T, err error) {
				var te *ggufmodel.TensorError
				require.ErrorAs(t, err, &te)
				assert.Equal(t, "blk.1.ffn_up.weight", te.Tensor)
			}},
		{"foreign tensor", func(ts map[string][]int, _ map[string]any) {
			ts["model.layers.0.self_attn.q_norm.weight"] = []int{tlHead}
		}, nil,
			func(t *testing.T, err error) {
				var te *ggufmodel.TensorError
				require.ErrorAs(t, err, &te)
				assert.Equal(t, "model.layers.0.self_attn.q_norm.weight", te.Tensor)
			}},
		{"wrong shape", func(ts map[string][]int, _ map[string]any) {
			ts["model.layers.0.mlp.down_proj.weight"] = []int{tlHidden, 2 * tlFF}
		}, nil,
			func(t *testing.T, err error) {
				var te *ggufmodel.TensorError
				require.ErrorAs(t, err, &te)
				assert.Equal(t, "blk.0.ffn_down.weight", te.Tensor)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := tinyLlama(t, dir, c.change)
			if c.files != nil {
				c.files(dir)
			}
			out, _, err := convertGGUF(t, src, "q8_0", Options{})
			require.Error(t, err)
			c.check(t, err)
			_, statErr := os.Stat(out)
			assert.True(t, errors.Is(statErr, os.ErrNotExist), "nothing is written")
		})
	}
}

func TestModelGGUFUntiedAndLlama3(t *testing.T) {
	src := tinyLlama(t, t.TempDir(), func(_ map[string][]int, cfg map[string]any) {
		cfg["tie_word_embeddings"] = false
		cfg["rope_scaling"] = map[string]any{"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 256}
	})
	out, res, err := convertGGUF(t, src, "q8_0", Options{})
	require.NoError(t, err)
	f, err := gguf.Open(out)
	require.NoError(t, err)
	defer f.Close()
	ti, ok := f.Tensor("output.weight")
	require.True(t, ok, "not tied: the output head is written")
	assert.Equal(t, gguf.TypeQ8_0, ti.Type)
	rf, ok := f.Tensor("rope_freqs.weight")
	require.True(t, ok)
	assert.Equal(t, gguf.TypeF32, rf.Type)
	assert.Equal(t, []int{tlHead / 2}, rf.Shape())
	x, err := f.Float32s("rope_freqs.weight")
	require.NoError(t, err)
	assert.Equal(t, float32(1), x[0], "the fastest frequency keeps its speed")
	assert.Equal(t, float32(8), x[len(x)-1], "the slowest is slowed by the factor")
	found := false
	for _, r := range res.Tensors {
		if r.Name == "rope_freqs.weight" {
			found = true
			assert.Contains(t, r.Note, "config.json")
		}
	}
	assert.True(t, found)
	_, err = verifyTensors(src, out)
	require.NoError(t, err)
}

func TestModelGGUFPlainTypes(t *testing.T) {
	src := tinyLlama(t, t.TempDir(), nil)
	in, err := load.Open(src)
	require.NoError(t, err)
	defer in.Close()
	// llama.h's file types: ALL_F32 0, MOSTLY_F16 1, MOSTLY_BF16 32.
	for _, c := range []struct {
		dtype string
		typ   gguf.Type
		ftype uint32
		exact bool // the BF16 source fits
	}{{"f32", gguf.TypeF32, 0, true}, {"f16", gguf.TypeF16, 1, false}, {"bf16", gguf.TypeBF16, 32, true}} {
		var files [2][]byte
		for i, whole := range []bool{false, true} {
			forceWhole = whole
			out, _, err := convertGGUF(t, src, c.dtype, Options{Workers: 2})
			forceWhole = false
			require.NoError(t, err, c.dtype)
			files[i], err = os.ReadFile(out)
			require.NoError(t, err)
			f, err := gguf.Open(out)
			require.NoError(t, err)
			v, _ := f.Get("general.file_type")
			assert.Equal(t, c.ftype, v.Any(), c.dtype)
			for _, ti := range f.Tensors {
				if len(ti.Dims) == 1 {
					assert.Equal(t, gguf.TypeF32, ti.Type, ti.Name)
				} else {
					assert.Equal(t, c.typ, ti.Type, "%s %s: every weight, the embedding too", c.dtype, ti.Name)
				}
			}
			got, err := f.Float32s("blk.1.attn_k.weight")
			require.NoError(t, err)
			x, _, err := in.Float32("model.layers.1.self_attn.k_proj.weight")
			require.NoError(t, err)
			if c.exact {
				sameBits(t, torchPermute(x, tlKV*tlHead, tlHidden, tlKV), got, c.dtype+" attn_k")
			}
			f.Close()
			vr, err := verifyTensors(src, out)
			require.NoError(t, err)
			for _, r := range vr {
				if c.exact {
					assert.Nil(t, r.SQNR, "%s %s", c.dtype, r.Name)
				} else if r.SQNR != nil {
					assert.Greater(t, *r.SQNR, 60.0, "%s %s", c.dtype, r.Name)
				}
			}
		}
		assert.Equal(t, files[0], files[1], "%s: streamed and whole casts write the same file", c.dtype)
	}
}

func TestModelGGUFFileTypeOfDataType(t *testing.T) {
	// general.file_type is the -dtype's (llama.h: MOSTLY_MXFP4_MOE 38),
	// whatever -type-for gives the first weights (here Q8_0, which is 7).
	src := tinyLlama(t, t.TempDir(), nil)
	ovs, err := ggufmix.ParseOverrides([]string{`token_embd|output|blk\.0\.=q8_0`})
	require.NoError(t, err)
	out, _, err := convertGGUF(t, src, "mxfp4", Options{GGUF: GGUFOptions{TypeFor: ovs}})
	require.NoError(t, err)
	types := ggufTypes(t, out)
	assert.Equal(t, gguf.TypeQ8_0, types["token_embd.weight"])
	assert.Equal(t, gguf.TypeMXFP4, types["blk.1.ffn_up.weight"])
	ft, ok := ggufKV(t, out, "general.file_type")
	require.True(t, ok)
	assert.Equal(t, uint32(38), ft)
}

// TestModelGGUFGenericWhy: GGUF output of a checkpoint llama.cpp's
// architectures do not cover is generic, says general.architecture
// "tcast" whatever config.json's model_type, and the result says why.
func TestModelGGUFGenericWhy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     func(cfg map[string]any)
		noCfg   bool
		generic bool
		why     []string // in Result.Generic
		warn    bool
	}{
		{name: "phi3", cfg: func(c map[string]any) { c["model_type"] = "phi3" }, warn: true,
			why: []string{`model_type "phi3" is not one of gemma, llama, mistral, qwen2, qwen3`, "config.json"}},
		{name: "typo", cfg: func(c map[string]any) { c["model_type"] = "llamma" }, warn: true,
			why: []string{`model_type "llamma" is not one of`, `did you mean "llama"?`}},
		{name: "no model_type", cfg: func(c map[string]any) { delete(c, "model_type") }, warn: true,
			why: []string{"config.json has no model_type"}},
		{name: "no config.json", noCfg: true, warn: true, why: []string{"there is no config.json beside the input"}},
		{name: "asked", generic: true, why: []string{"Options.GGUF.Generic asks for it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := tinyLlama(t, dir, func(_ map[string][]int, cfg map[string]any) {
				if tc.cfg != nil {
					tc.cfg(cfg)
				}
			})
			if tc.noCfg {
				require.NoError(t, os.Remove(filepath.Join(dir, "config.json")))
			}
			out, res, err := convertGGUF(t, src, "q8_0", Options{GGUF: GGUFOptions{Generic: tc.generic}})
			require.NoError(t, err)
			f, err := gguf.Open(out)
			require.NoError(t, err)
			defer f.Close()
			assert.Equal(t, "tcast", f.Architecture(), "a generic file never claims a llama.cpp architecture")
			for _, w := range tc.why {
				assert.Contains(t, res.Generic, w)
			}
			if tc.warn {
				require.Len(t, res.Warnings, 1)
				assert.Contains(t, res.Warnings[0].String(), "generic GGUF")
				assert.Contains(t, res.Warnings[0].String(), res.Generic)
			} else {
				assert.Empty(t, res.Warnings)
			}
			js, err := json.Marshal(res)
			require.NoError(t, err)
			assert.Contains(t, string(js), `"gguf_generic":`)
		})
	}
}
