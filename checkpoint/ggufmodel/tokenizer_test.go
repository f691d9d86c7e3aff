package ggufmodel

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// The pre-tokenizer patterns as tokenizer.json files write them (JSON
// strings).
const (
	llama3Pattern = `"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"`
	qwen2Pattern  = `"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"`
)

// splitPre is a Llama 3 style pre-tokenizer on pattern.
func splitPre(pattern string) string {
	return `{"type": "Sequence", "pretokenizers": [
	  {"type": "Split", "pattern": {"Regex": ` + pattern + `}, "behavior": "Isolated", "invert": false},
	  {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]}`
}

// bpeTokenizer is a byte-level BPE tokenizer.json: 5 tokens, 2 merges (as
// strings), special begin and end tokens, a user-defined token and one that
// looks special, and a template that puts the begin token first.
func bpeTokenizer(pre string) string {
	return `{
  "version": "1.0",
  "added_tokens": [
    {"id": 6, "content": "<|begin|>", "special": true},
    {"id": 7, "content": "<|end|>", "special": true},
    {"id": 8, "content": "hello world", "special": false},
    {"id": 10, "content": "<|tool|>", "special": false}
  ],
  "normalizer": null,
  "pre_tokenizer": ` + pre + `,
  "post_processor": {"type": "Sequence", "processors": [
    {"type": "ByteLevel", "add_prefix_space": true},
    {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|begin|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]}]},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "byte_fallback": false, "ignore_merges": true,
    "vocab": {"a": 0, "b": 1, "Ġ": 2, "ab": 3, "Ġab": 4, "Ċ": 5},
    "merges": ["a b", "Ġ ab"]}
}`
}

func TestBPETokenizer(t *testing.T) {
	tok, err := ParseTokenizer([]byte(bpeTokenizer(splitPre(llama3Pattern))), []byte(`{"eos_token": "<|end|>", "chat_template": "{{ x }}"}`),
		TokenizerOptions{VocabSize: 12})
	require.NoError(t, err)
	assert.Equal(t, "gpt2", tok.Model)
	assert.Equal(t, "llama-bpe", tok.Pre)
	assert.Equal(t, []string{"a", "b", "Ġ", "ab", "Ġab", "Ċ", "<|begin|>", "<|end|>", "hello world", "[PAD9]", "<|tool|>", "[PAD11]"}, tok.Tokens)
	N, C, U, X := TokenNormal, TokenControl, TokenUserDefined, TokenUnused
	assert.Equal(t, []int32{N, N, N, N, N, N, C, C, U, X, C, X}, tok.Types)
	assert.Nil(t, tok.Scores)
	assert.Equal(t, []string{"a b", "Ġ ab"}, tok.Merges)
	assert.Equal(t, 6, tok.BOS, "from the template")
	assert.Equal(t, 7, tok.EOS)
	assert.Equal(t, -1, tok.UNK)
	assert.Equal(t, -1, tok.PAD)
	assert.True(t, tok.AddBOS, "the template puts <|begin|> first")
	assert.Nil(t, tok.AddEOS)
	assert.Nil(t, tok.AddSpacePrefix)
	assert.Equal(t, "{{ x }}", tok.ChatTemplate)

	kv := map[string]gguf.Value{}
	var keys []string
	for _, p := range tok.KV() {
		kv[p.Key] = p.Value
		keys = append(keys, p.Key)
	}
	assert.Equal(t, []string{"tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
		"tokenizer.ggml.merges", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.add_bos_token",
		"tokenizer.chat_template"}, keys)
	// The value types are those llama.cpp reads.
	assert.Equal(t, gguf.ValueString, kv["tokenizer.ggml.tokens"].Elem())
	assert.Equal(t, gguf.ValueInt32, kv["tokenizer.ggml.token_type"].Elem())
	assert.Equal(t, gguf.ValueString, kv["tokenizer.ggml.merges"].Elem())
	assert.Equal(t, gguf.Uint32(6), kv["tokenizer.ggml.bos_token_id"])
	assert.Equal(t, gguf.Bool(true), kv["tokenizer.ggml.add_bos_token"])

	// Without a size, the tokenizer's own count; tokenizer_config.json
	// overrides the template's add_bos.
	tok, err = ParseTokenizer([]byte(bpeTokenizer(splitPre(llama3Pattern))),
		[]byte(`{"bos_token": {"content": "<|end|>", "lstrip": false}, "eos_token": "<|end|>", "pad_token": "b", "add_bos_token": false, "add_eos_token": true}`),
		TokenizerOptions{})
	require.NoError(t, err)
	assert.Len(t, tok.Tokens, 11)
	assert.Equal(t, 7, tok.BOS)
	assert.Equal(t, 1, tok.PAD)
	assert.False(t, tok.AddBOS)
	require.NotNil(t, tok.AddEOS)
	assert.True(t, *tok.AddEOS)
}

func TestPreTokenizers(t *testing.T) {
	cases := []struct {
		pre, want, override string
	}{
		{splitPre(llama3Pattern), "llama-bpe", ""},
		{splitPre(qwen2Pattern), "qwen2", ""},
		{`{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}`, "gpt-2", ""},
		{`{"type": "ByteLevel", "add_prefix_space": false}`, "gpt-2", ""},
		{splitPre(`"\\d+"`), "", ""},
		{splitPre(`"\\d+"`), "smollm", "smollm"},
		{`{"type": "ByteLevel", "use_regex": false}`, "", ""},
		{`{"type": "Whitespace"}`, "", ""},
		{`null`, "", ""},
	}
	for _, c := range cases {
		tok, err := ParseTokenizer([]byte(bpeTokenizer(c.pre)), []byte(`{"eos_token": "<|end|>"}`), TokenizerOptions{Pre: c.override})
		if c.want == "" {
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue, c.pre)
			assert.Equal(t, "pre_tokenizer", ue.Field)
			assert.Contains(t, err.Error(), "llama-bpe")
			continue
		}
		require.NoError(t, err, c.pre)
		assert.Equal(t, c.want, tok.Pre)
	}
}

// spmTokenizer is a BPE tokenizer.json with byte fallback (SentencePiece
// converted, as Llama 2's): merges as pairs.
const spmTokenizer = `{
  "added_tokens": [
    {"id": 0, "content": "<unk>", "special": true},
    {"id": 1, "content": "<s>", "special": true},
    {"id": 2, "content": "</s>", "special": true}
  ],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
  "pre_tokenizer": null,
  "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}]},
  "model": {"type": "BPE", "byte_fallback": true, "unk_token": "<unk>", "fuse_unk": true,
    "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, "▁": 4, "a": 5, "b": 6, "▁a": 7, "ab": 8, "▁ab": 9},
    "merges": [["▁", "a"], ["a", "b"], ["▁a", "b"]]}
}`

func TestSentencePieceFromBPE(t *testing.T) {
	tok, err := ParseTokenizer([]byte(spmTokenizer), []byte(`{"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}`), TokenizerOptions{VocabSize: 10})
	require.NoError(t, err)
	assert.Equal(t, "llama", tok.Model)
	assert.Empty(t, tok.Pre)
	assert.Nil(t, tok.Merges)
	assert.Equal(t, []string{"<unk>", "<s>", "</s>", "<0x0A>", "▁", "a", "b", "▁a", "ab", "▁ab"}, tok.Tokens)
	N, C, B, K := TokenNormal, TokenControl, TokenByte, TokenUnknown
	assert.Equal(t, []int32{K, C, C, B, N, N, N, N, N, N}, tok.Types)
	// By hand: merge ranks 0 (▁a), 1 (ab), 2 (▁ab) give scores 0, −1, −2;
	// every other token scores −(3 merges + id).
	assert.Equal(t, []float32{-3, -4, -5, -6, -7, -8, -9, 0, -1, -2}, tok.Scores)
	assert.Equal(t, 1, tok.BOS)
	assert.Equal(t, 2, tok.EOS)
	assert.Equal(t, 0, tok.UNK)
	assert.True(t, tok.AddBOS, "SentencePiece adds <s> by default")
	require.NotNil(t, tok.AddSpacePrefix)
	assert.True(t, *tok.AddSpacePrefix, "the Prepend normalizer")

	kv := map[string]gguf.Value{}
	for _, p := range tok.KV() {
		kv[p.Key] = p.Value
	}
	assert.Equal(t, gguf.String("llama"), kv["tokenizer.ggml.model"])
	assert.NotContains(t, kv, "tokenizer.ggml.pre")
	assert.NotContains(t, kv, "tokenizer.ggml.merges")
	assert.Equal(t, gguf.ValueFloat32, kv["tokenizer.ggml.scores"].Elem())
	assert.Equal(t, gguf.Uint32(0), kv["tokenizer.ggml.unknown_token_id"])
	assert.Equal(t, gguf.Bool(true), kv["tokenizer.ggml.add_space_prefix"])

	// Gemma-style: no Prepend, so no space prefix; tokenizer_config.json
	// may say otherwise.
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(spmTokenizer), &m))
	m["normalizer"] = map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"}
	noPrefix, err := json.Marshal(m)
	require.NoError(t, err)
	for _, c := range []struct {
		tj, cfg string
		want    bool
	}{
		{string(noPrefix), `{"eos_token": "</s>"}`, false},
		{string(noPrefix), `{"eos_token": "</s>", "add_prefix_space": true}`, true},
		{spmTokenizer, `{"eos_token": "</s>", "add_prefix_space": false}`, false},
	} {
		tok, err := ParseTokenizer([]byte(c.tj), []byte(c.cfg), TokenizerOptions{})
		require.NoError(t, err)
		assert.Equal(t, c.want, *tok.AddSpacePrefix, c.cfg)
	}
	// A Metaspace pre-tokenizer decides too.
	m["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}
	meta, err := json.Marshal(m)
	require.NoError(t, err)
	tok, err = ParseTokenizer(meta, []byte(`{"eos_token": "</s>"}`), TokenizerOptions{})
	require.NoError(t, err)
	assert.True(t, *tok.AddSpacePrefix)
}

func TestUnigramTokenizer(t *testing.T) {
	tj := `{"added_tokens": [{"id": 1, "content": "</s>", "special": true}],
	  "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"},
	  "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": true,
	    "vocab": [["<unk>", 0.0], ["</s>", 0.0], ["<0xFF>", 0.0], ["▁the", -2.5], ["s", -4.25]]}}`
	tok, err := ParseTokenizer([]byte(tj), []byte(`{"eos_token": "</s>"}`), TokenizerOptions{VocabSize: 6})
	require.NoError(t, err)
	assert.Equal(t, "llama", tok.Model)
	assert.Equal(t, []string{"<unk>", "</s>", "<0xFF>", "▁the", "s", "[PAD5]"}, tok.Tokens)
	assert.Equal(t, []int32{TokenUnknown, TokenControl, TokenByte, TokenNormal, TokenNormal, TokenUnused}, tok.Types)
	assert.Equal(t, []float32{0, 0, 0, -2.5, -4.25, 0}, tok.Scores)
	assert.Equal(t, 0, tok.UNK)
	assert.True(t, *tok.AddSpacePrefix)
	assert.False(t, tok.AddBOS, "no BOS token to add")
	assert.Equal(t, -1, tok.BOS)
}

func TestTokenizerErrors(t *testing.T) {
	bpe := bpeTokenizer(`{"type": "ByteLevel"}`)
	eos := `{"eos_token": "<|end|>"}`
	withModel := func(model string) string {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(bpe), &m))
		var mm map[string]any
		require.NoError(t, json.Unmarshal([]byte(model), &mm))
		m["model"] = mm
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return string(b)
	}
	cases := []struct {
		name, tj, cfg string
		size          int
		file, field   string // of an *UnsupportedError
		key           string // of a *MissingKeyError
	}{
		{"not JSON", `{`, eos, 0, tokenizerFile, "", ""},
		{"config not JSON", bpe, `[`, 0, tokenizerConfigFile, "", ""},
		{"WordPiece", withModel(`{"type": "WordPiece", "vocab": {"a": 0}}`), eos, 0, tokenizerFile, "model.type", ""},
		{"BPE without byte level", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`, `{"eos_token": "a"}`, 0, tokenizerFile, "model.type", ""},
		{"subword prefix", withModel(`{"type": "BPE", "vocab": {"a": 0}, "merges": [], "continuing_subword_prefix": "##"}`), eos, 0, tokenizerFile, "model.continuing_subword_prefix", ""},
		{"vocabulary beyond the embedding", bpe, eos, 10, tokenizerFile, "model.vocab", ""},
		{"duplicate text", withModel(`{"type": "BPE", "vocab": {"a": 0, "<|end|>": 1}, "merges": []}`), eos, 0, tokenizerFile, "added_tokens[1]", ""},
		{"id taken", withModel(`{"type": "BPE", "vocab": {"a": 0, "b": 6}, "merges": []}`), eos, 0, tokenizerFile, "added_tokens[0]", ""},
		{"empty token", withModel(`{"type": "BPE", "vocab": {"": 0}, "merges": []}`), eos, 0, tokenizerFile, "model.vocab", ""},
		{"negative id", withModel(`{"type": "BPE", "vocab": {"a": -1}, "merges": []}`), eos, 0, tokenizerFile, "model.vocab", ""},
		{"huge id", withModel(`{"type": "BPE", "vocab": {"a": 0, "z": 1099511627776}, "merges": []}`), eos, 0, tokenizerFile, "model.vocab", ""},
		{"padding text taken", withModel(`{"type": "BPE", "vocab": {"[PAD0]": 1}, "merges": []}`), eos, 0, tokenizerFile, "model.vocab", ""},
		{"merge without space", withModel(`{"type": "BPE", "vocab": {"a": 0}, "merges": ["ab"]}`), eos, 0, tokenizerFile, "model.merges[0]", ""},
		{"merge with a space", withModel(`{"type": "BPE", "vocab": {"a": 0}, "merges": [["a b", "c"]]}`), eos, 0, tokenizerFile, "model.merges[0]", ""},
		{"merge not a pair", withModel(`{"type": "BPE", "vocab": {"a": 0}, "merges": [["a"]]}`), eos, 0, tokenizerFile, "model.merges[0]", ""},
		{"unigram entry", withModel(`{"type": "Unigram", "vocab": [["a", "x"]]}`), eos, 0, tokenizerFile, "model.vocab", ""},
		{"unigram unk", withModel(`{"type": "Unigram", "unk_id": 9, "vocab": [["a", 0]]}`), eos, 0, tokenizerFile, "model.unk_id", ""},
		{"eos not a token", bpe, `{"eos_token": "</s>"}`, 0, tokenizerConfigFile, "eos_token", ""},
		{"eos of a bad type", bpe, `{"eos_token": 7}`, 0, tokenizerConfigFile, "eos_token", ""},
		{"bad chat template", bpe, `{"eos_token": "<|end|>", "chat_template": 3}`, 0, tokenizerConfigFile, "chat_template", ""},
		{"no eos", bpe, `{}`, 0, "", "", "tokenizer.ggml.eos_token_id"},
		{"no tokenizer_config.json", bpe, "", 0, "", "", "tokenizer.ggml.eos_token_id"},
		{"add_bos without bos", `{"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`,
			`{"eos_token": "a", "add_bos_token": true}`, 0, "", "", "tokenizer.ggml.bos_token_id"},
		{"SentencePiece without unk", spmTokenizer, `{"eos_token": "</s>", "bos_token": "<s>"}`, 0, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var cfg []byte
			if c.cfg != "" {
				cfg = []byte(c.cfg)
			}
			tj := c.tj
			if c.name == "SentencePiece without unk" {
				var m map[string]any
				require.NoError(t, json.Unmarshal([]byte(tj), &m))
				mm := m["model"].(map[string]any)
				delete(mm, "unk_token")
				m["added_tokens"] = m["added_tokens"].([]any)[1:]
				b, err := json.Marshal(m)
				require.NoError(t, err)
				tj = string(b)
				c.key = "tokenizer.ggml.unknown_token_id"
			}
			_, err := ParseTokenizer([]byte(tj), cfg, TokenizerOptions{VocabSize: c.size})
			require.Error(t, err)
			if c.key != "" {
				var mk *MissingKeyError
				require.ErrorAs(t, err, &mk)
				assert.Equal(t, c.key, mk.Key)
				return
			}
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, c.file, ue.File)
			assert.Equal(t, c.field, ue.Field)
		})
	}
}

func TestReadTokenizer(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadTokenizer(dir, TokenizerOptions{})
	var mk *MissingKeyError
	require.ErrorAs(t, err, &mk)
	assert.Equal(t, filepath.Join(dir, tokenizerFile), mk.File)
	assert.Equal(t, "tokenizer.ggml.model", mk.Key)

	require.NoError(t, os.WriteFile(filepath.Join(dir, tokenizerFile), []byte(bpeTokenizer(splitPre(qwen2Pattern))), 0o644))
	_, err = ReadTokenizer(dir, TokenizerOptions{})
	require.ErrorAs(t, err, &mk, "no tokenizer_config.json: no eos token")
	assert.Equal(t, filepath.Join(dir, tokenizerConfigFile), mk.File)

	require.NoError(t, os.WriteFile(filepath.Join(dir, tokenizerConfigFile), []byte(`{"eos_token": "<|nope|>"}`), 0o644))
	_, err = ReadTokenizer(dir, TokenizerOptions{})
	var ue *UnsupportedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, filepath.Join(dir, tokenizerConfigFile), ue.File)

	require.NoError(t, os.WriteFile(filepath.Join(dir, tokenizerConfigFile), []byte(`{"eos_token": "<|end|>"}`), 0o644))
	tok, err := ReadTokenizer(dir, TokenizerOptions{VocabSize: 16})
	require.NoError(t, err)
	assert.Equal(t, "qwen2", tok.Pre)
	assert.Len(t, tok.Tokens, 16)
}

// TestMergeScores: the token of the merge of rank r scores −r (its first
// merge when several make it), any other token −(merges + id); by hand.
func TestMergeScores(t *testing.T) {
	byID := map[int]string{0: "a", 1: "b", 2: "ab", 3: "abb", 4: "c"}
	ids := map[string]int{"a": 0, "b": 1, "ab": 2, "abb": 3, "c": 4}
	merges := [][2]string{{"a", "b"}, {"ab", "b"}, {"a", "bb"}, {"x", "y"}}
	got := mergeScores(merges, byID, ids)
	assert.Equal(t, map[int]float32{0: -4, 1: -5, 2: 0, 3: -1, 4: -8}, got)
	assert.Equal(t, map[int]float32{0: 0, 1: -1},
		mergeScores(nil, map[int]string{0: "a", 1: "b"}, nil), "no merges: −id")
}

// TestTokenizerBuilderPut: an id holds one text and a text one id; ids are
// not negative and texts not empty.
func TestTokenizerBuilderPut(t *testing.T) {
	b, err := newTokenizerBuilder([]byte(`{}`), nil, TokenizerOptions{})
	require.NoError(t, err)
	require.NoError(t, b.put("model.vocab", "a", 0))
	require.NoError(t, b.put("added_tokens[0]", "a", 0), "the same token again")
	for _, c := range []struct {
		tok    string
		id     int
		value  string
		reason string
	}{
		{"b", 0, "b", `token id 0 is also "a"`},
		{"a", 1, "a", "the token has ids 0 and 1; llama.cpp needs one id per token text"},
		{"c", -1, "-1", "a negative token id"},
		{"", 2, "", "token 2 is empty"},
	} {
		err := b.put("model.vocab", c.tok, c.id)
		var ue *UnsupportedError
		require.ErrorAs(t, err, &ue, c.reason)
		assert.Equal(t, UnsupportedError{File: tokenizerFile, Field: "model.vocab", Value: c.value,
			Reason: c.reason}, *ue)
	}
	assert.Equal(t, map[int]string{0: "a"}, b.byID)
	assert.Equal(t, map[string]int{"a": 0}, b.ids)
}

// TestTokenizerVocabSize: one past the highest id, or the option's size,
// which the ids must fit.
func TestTokenizerVocabSize(t *testing.T) {
	for _, c := range []struct {
		ids       []int
		size      int
		want      int
		wantField string
	}{
		{[]int{0, 4, 2}, 0, 5, ""},
		{[]int{0, 4, 2}, 5, 5, ""},
		{[]int{0, 4, 2}, 9, 9, ""},
		{[]int{0, 4, 2}, 4, 0, "model.vocab"},
		{[]int{maxVocab}, 0, 0, "model.vocab"},
		{nil, 0, 0, ""},
	} {
		b := &tokenizerBuilder{o: TokenizerOptions{VocabSize: c.size}, byID: map[int]string{}}
		for _, id := range c.ids {
			b.byID[id] = "t" + strconv.Itoa(id)
		}
		n, err := b.vocabSize()
		if c.wantField != "" {
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue, "%v %d", c.ids, c.size)
			assert.Equal(t, c.wantField, ue.Field)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.want, n, "%v %d", c.ids, c.size)
	}
}

// TestTokenizerCheckSpecial: llama.cpp needs an EOS id, a BOS id when BOS
// is added, and an UNK id for a llama (SentencePiece) model.
func TestTokenizerCheckSpecial(t *testing.T) {
	for _, c := range []struct {
		tok  Tokenizer
		want string // the missing key, "" for none
	}{
		{Tokenizer{Model: "gpt2", BOS: -1, EOS: 1, UNK: -1}, ""},
		{Tokenizer{Model: "gpt2", BOS: -1, EOS: 1, UNK: -1, AddBOS: true}, "tokenizer.ggml.bos_token_id"},
		{Tokenizer{Model: "gpt2", BOS: 0, EOS: -1, UNK: -1, AddBOS: true}, "tokenizer.ggml.eos_token_id"},
		{Tokenizer{Model: "llama", BOS: 0, EOS: 1, UNK: -1}, "tokenizer.ggml.unknown_token_id"},
		{Tokenizer{Model: "llama", BOS: -1, EOS: 1, UNK: 0}, ""},
	} {
		err := c.tok.checkSpecial()
		if c.want == "" {
			assert.NoError(t, err)
			continue
		}
		var mk *MissingKeyError
		require.ErrorAs(t, err, &mk)
		assert.Equal(t, c.want, mk.Key)
		assert.Equal(t, tokenizerConfigFile, mk.File)
	}
}
