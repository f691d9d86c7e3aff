package ggufmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// The tokenizer files beside a Hugging Face checkpoint.
const (
	tokenizerFile       = "tokenizer.json"
	tokenizerConfigFile = "tokenizer_config.json"
)

// Token types of tokenizer.ggml.token_type (llama.cpp's llama_token_type).
const (
	TokenNormal      int32 = 1
	TokenUnknown     int32 = 2
	TokenControl     int32 = 3
	TokenUserDefined int32 = 4
	TokenUnused      int32 = 5
	TokenByte        int32 = 6
)

// Tokenizer is a tokenizer as llama.cpp's tokenizer.ggml.* keys hold it.
type Tokenizer struct {
	// Model is tokenizer.ggml.model: "gpt2" (byte-level BPE) or "llama"
	// (SentencePiece).
	Model string
	// Pre is tokenizer.ggml.pre, the pre-tokenizer of a gpt2 model.
	Pre string
	// Tokens, Types and (for llama) Scores are indexed by token id; there
	// are as many as the token embedding has rows, ids the tokenizer does
	// not use being "[PADn]" of type TokenUnused. A Unigram model's scores
	// are its own; those of a BPE model with byte fallback rank its merges,
	// as SentencePiece's do: the token the merge of rank r makes scores −r,
	// any other token −(merges + id), below every merge.
	Tokens []string
	Types  []int32
	Scores []float32
	// Merges are a gpt2 model's merges, "left right", in priority order.
	Merges []string
	// BOS, EOS, UNK and PAD are the special token ids, −1 when unset.
	BOS, EOS, UNK, PAD int
	// AddBOS is tokenizer.ggml.add_bos_token; AddEOS, when set,
	// tokenizer.ggml.add_eos_token.
	AddBOS bool
	AddEOS *bool
	// AddSpacePrefix, when set, is tokenizer.ggml.add_space_prefix (llama
	// models: whether a "▁" is put before the text).
	AddSpacePrefix *bool
	// ChatTemplate is tokenizer.chat_template, "" for none.
	ChatTemplate string
}

// KV returns the tokenizer's metadata keys.
func (t *Tokenizer) KV() []gguf.KV {
	var kv []gguf.KV
	add := func(k string, v gguf.Value) { kv = append(kv, gguf.KV{Key: k, Value: v}) }
	add("tokenizer.ggml.model", gguf.String(t.Model))
	if t.Model == "gpt2" {
		add("tokenizer.ggml.pre", gguf.String(t.Pre))
	}
	add("tokenizer.ggml.tokens", gguf.Array(t.Tokens))
	if t.Scores != nil {
		add("tokenizer.ggml.scores", gguf.Array(t.Scores))
	}
	add("tokenizer.ggml.token_type", gguf.Array(t.Types))
	if t.Model == "gpt2" {
		add("tokenizer.ggml.merges", gguf.Array(t.Merges))
	}
	for _, s := range []struct {
		key string
		id  int
	}{
		{"tokenizer.ggml.bos_token_id", t.BOS}, {"tokenizer.ggml.eos_token_id", t.EOS},
		{"tokenizer.ggml.unknown_token_id", t.UNK}, {"tokenizer.ggml.padding_token_id", t.PAD},
	} {
		if s.id >= 0 {
			add(s.key, gguf.Uint32(uint32(s.id)))
		}
	}
	add("tokenizer.ggml.add_bos_token", gguf.Bool(t.AddBOS))
	if t.AddEOS != nil {
		add("tokenizer.ggml.add_eos_token", gguf.Bool(*t.AddEOS))
	}
	if t.AddSpacePrefix != nil {
		add("tokenizer.ggml.add_space_prefix", gguf.Bool(*t.AddSpacePrefix))
	}
	if t.ChatTemplate != "" {
		add("tokenizer.chat_template", gguf.String(t.ChatTemplate))
	}
	return kv
}

// TokenizerOptions control ReadTokenizer.
type TokenizerOptions struct {
	// VocabSize is the number of tokens the file must list: the rows of the
	// token embedding. 0 takes the tokenizer's own count.
	VocabSize int
	// Pre overrides the pre-tokenizer name of a gpt2 model (one llama.cpp
	// knows, such as "llama-bpe", "qwen2", "gpt-2"), which is otherwise
	// recognised from tokenizer.json's pre_tokenizer.
	Pre string
}

// ReadTokenizer reads tokenizer.json and, when present,
// tokenizer_config.json from dir and converts them. A missing
// tokenizer.json is a *MissingKeyError for tokenizer.ggml.model.
func ReadTokenizer(dir string, o TokenizerOptions) (*Tokenizer, error) {
	tj, err := inputfile.ReadFile(filepath.Join(dir, tokenizerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &MissingKeyError{Key: "tokenizer.ggml.model", File: filepath.Join(dir, tokenizerFile)}
	}
	if err != nil {
		return nil, err
	}
	cj, err := inputfile.ReadFile(filepath.Join(dir, tokenizerConfigFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	t, err := ParseTokenizer(tj, cj, o)
	// Errors name the files with their directory.
	var ue *UnsupportedError
	var mk *MissingKeyError
	switch {
	case errors.As(err, &ue):
		ue.File = filepath.Join(dir, ue.File)
	case errors.As(err, &mk):
		mk.File = filepath.Join(dir, mk.File)
	}
	return t, err
}

// hfTokenizer is the part of tokenizer.json the conversion reads.
type hfTokenizer struct {
	AddedTokens []struct {
		ID      *int   `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         struct {
		Type         string          `json:"type"`
		Vocab        json.RawMessage `json:"vocab"`
		Merges       json.RawMessage `json:"merges"`
		ByteFallback bool            `json:"byte_fallback"`
		UnkID        *int            `json:"unk_id"`
		UnkToken     *string         `json:"unk_token"`
		Prefix       *string         `json:"continuing_subword_prefix"`
		Suffix       *string         `json:"end_of_word_suffix"`
	} `json:"model"`
}

// hfTokenizerConfig is the part of tokenizer_config.json the conversion
// reads.
type hfTokenizerConfig struct {
	BOS            json.RawMessage `json:"bos_token"`
	EOS            json.RawMessage `json:"eos_token"`
	UNK            json.RawMessage `json:"unk_token"`
	PAD            json.RawMessage `json:"pad_token"`
	AddBOS         *bool           `json:"add_bos_token"`
	AddEOS         *bool           `json:"add_eos_token"`
	AddPrefixSpace *bool           `json:"add_prefix_space"`
	ChatTemplate   json.RawMessage `json:"chat_template"`
}

// Pre-tokenizer splitting patterns of tokenizer.json, by the name llama.cpp
// gives the pre-tokenizer that splits text the same way.
var prePatterns = map[string]string{
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`: "llama-bpe",
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`:      "qwen2",
	`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`:                                          "gpt-2",
}

// byteToken matches SentencePiece's byte-fallback pieces.
var byteToken = regexp.MustCompile(`^<0x[0-9A-Fa-f]{2}>$`)

// maxVocab bounds the token ids a tokenizer may use (far above any real
// vocabulary), so that a stray id cannot make the token arrays huge.
const maxVocab = 1 << 24

// ParseTokenizer converts the contents of tokenizer.json and
// tokenizer_config.json (nil when there is none).
func ParseTokenizer(tokenizerJSON, configJSON []byte, o TokenizerOptions) (*Tokenizer, error) {
	b, err := newTokenizerBuilder(tokenizerJSON, configJSON, o)
	if err != nil {
		return nil, err
	}
	for _, step := range []func() error{
		b.model, b.vocabulary, b.addedTokens, b.arrays, b.preTokenizer, b.specialTokens, b.chatTemplate,
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return b.t, nil
}

// tokenizerBuilder converts a tokenizer.json and tokenizer_config.json into
// t, a step at a time (ParseTokenizer calls them in order).
type tokenizerBuilder struct {
	hf  hfTokenizer
	cfg hfTokenizerConfig
	o   TokenizerOptions
	t   *Tokenizer
	// The tokens so far: text by id, id by text, type by id, and the
	// scores by id of a llama model (nil for gpt2).
	byID   map[int]string
	ids    map[string]int
	types  map[int]int32
	scores map[int]float32
}

// newTokenizerBuilder parses the two files.
func newTokenizerBuilder(tokenizerJSON, configJSON []byte, o TokenizerOptions) (
	*tokenizerBuilder, error) {
	b := &tokenizerBuilder{o: o, t: &Tokenizer{BOS: -1, EOS: -1, UNK: -1, PAD: -1},
		byID: map[int]string{}, ids: map[string]int{}, types: map[int]int32{}}
	if err := json.Unmarshal(tokenizerJSON, &b.hf); err != nil {
		return nil, unsupported(tokenizerFile, "", "", "not a tokenizer: "+err.Error())
	}
	if configJSON != nil {
		if err := json.Unmarshal(configJSON, &b.cfg); err != nil {
			return nil, unsupported(tokenizerConfigFile, "", "", "not a tokenizer configuration: "+err.Error())
		}
	}
	return b, nil
}

// unsupported is the *UnsupportedError of field (value) of file.
func unsupported(file, field, value, reason string) error {
	return &UnsupportedError{File: file, Field: field, Value: value, Reason: reason}
}

// put adds token tok with id, read from field of tokenizer.json: an id
// holds one text and a text one id.
func (b *tokenizerBuilder) put(field, tok string, id int) error {
	if id < 0 {
		return unsupported(tokenizerFile, field, strconv.Itoa(id), "a negative token id")
	}
	if old, ok := b.byID[id]; ok && old != tok {
		return unsupported(tokenizerFile, field, tok, fmt.Sprintf("token id %d is also %q", id, old))
	}
	if other, ok := b.ids[tok]; ok && other != id {
		return unsupported(tokenizerFile, field, tok,
			fmt.Sprintf("the token has ids %d and %d; llama.cpp needs one id per token text", other, id))
	}
	if tok == "" {
		return unsupported(tokenizerFile, field, "", fmt.Sprintf("token %d is empty", id))
	}
	b.byID[id], b.ids[tok] = tok, id
	return nil
}

// model sets the llama.cpp model of the tokenizer's model type: gpt2 for
// byte-level BPE, llama for SentencePiece-like BPE (byte fallback) and
// Unigram.
func (b *tokenizerBuilder) model() error {
	m := b.hf.Model
	switch {
	case m.Type == "BPE" && m.ByteFallback:
		b.t.Model = "llama"
	case m.Type == "BPE":
		if !strings.Contains(string(b.hf.PreTokenizer), `"ByteLevel"`) &&
			!strings.Contains(string(b.hf.Decoder), `"ByteLevel"`) {
			return unsupported(tokenizerFile, "model.type", "BPE", "a BPE model that is neither byte-level "+
				"(no ByteLevel pre-tokenizer or decoder) nor SentencePiece-like (byte_fallback)")
		}
		if m.Prefix != nil && *m.Prefix != "" || m.Suffix != nil && *m.Suffix != "" {
			return unsupported(tokenizerFile, "model.continuing_subword_prefix", "",
				"subword prefixes and suffixes are not byte-level BPE")
		}
		b.t.Model = "gpt2"
	case m.Type == "Unigram":
		b.t.Model = "llama"
	default:
		return unsupported(tokenizerFile, "model.type", m.Type,
			"supported: BPE (byte-level, or with byte_fallback) and Unigram")
	}
	return nil
}

// vocabulary reads the model's vocabulary (and a BPE model's merges) and
// types its tokens: byte tokens of a llama model, the unknown token, and
// normal ones.
func (b *tokenizerBuilder) vocabulary() error {
	var err error
	if b.hf.Model.Type == "Unigram" {
		err = b.unigramVocab()
	} else {
		err = b.bpeVocab()
	}
	if err != nil {
		return err
	}
	for id, tok := range b.byID {
		switch {
		case b.t.Model == "llama" && byteToken.MatchString(tok):
			b.types[id] = TokenByte
		case id == b.t.UNK:
			b.types[id] = TokenUnknown
		default:
			b.types[id] = TokenNormal
		}
	}
	return nil
}

// unigramVocab reads a Unigram vocabulary, [piece, score] pairs, and its
// unknown token id.
func (b *tokenizerBuilder) unigramVocab() error {
	m := b.hf.Model
	var unigram [][2]json.RawMessage
	if err := json.Unmarshal(m.Vocab, &unigram); err != nil {
		return unsupported(tokenizerFile, "model.vocab", "",
			"a Unigram vocabulary is a list of [piece, score] pairs: "+err.Error())
	}
	b.scores = map[int]float32{}
	for id, p := range unigram {
		var tok string
		var score float64
		if json.Unmarshal(p[0], &tok) != nil || json.Unmarshal(p[1], &score) != nil {
			return unsupported(tokenizerFile, "model.vocab", strconv.Itoa(id),
				"entry is not a [piece, score] pair")
		}
		if err := b.put("model.vocab", tok, id); err != nil {
			return err
		}
		b.scores[id] = float32(score)
	}
	if m.UnkID != nil {
		if _, ok := b.byID[*m.UnkID]; !ok {
			return unsupported(tokenizerFile, "model.unk_id", strconv.Itoa(*m.UnkID), "not a token id")
		}
		b.t.UNK = *m.UnkID
	}
	return nil
}

// bpeVocab reads a BPE vocabulary (token → id), its merges, and its
// unknown token.
func (b *tokenizerBuilder) bpeVocab() error {
	m := b.hf.Model
	var vocab map[string]int
	if err := json.Unmarshal(m.Vocab, &vocab); err != nil {
		return unsupported(tokenizerFile, "model.vocab", "",
			"a BPE vocabulary is an object of token ids: "+err.Error())
	}
	for tok, id := range vocab {
		if err := b.put("model.vocab", tok, id); err != nil {
			return err
		}
	}
	merges, err := readMerges(m.Merges)
	if err != nil {
		return err
	}
	if b.t.Model == "gpt2" {
		b.t.Merges = make([]string, len(merges))
		for i, mg := range merges {
			b.t.Merges[i] = mg[0] + " " + mg[1]
		}
	} else {
		b.scores = mergeScores(merges, b.byID, b.ids)
	}
	if m.UnkToken != nil {
		if id, ok := b.ids[*m.UnkToken]; ok {
			b.t.UNK = id
		}
	}
	return nil
}

// mergeScores returns the SentencePiece scores of a BPE vocabulary
// (byID, ids) with byte fallback, which order its merges: a token made by
// an earlier merge scores higher, the token of the merge of rank r −r, any
// other token −(len(merges) + id).
func mergeScores(merges [][2]string, byID map[int]string, ids map[string]int) map[int]float32 {
	scores := map[int]float32{}
	for rank, mg := range merges {
		if id, ok := ids[mg[0]+mg[1]]; ok {
			if _, seen := scores[id]; !seen {
				scores[id] = float32(-rank)
			}
		}
	}
	for id := range byID {
		if _, ok := scores[id]; !ok {
			scores[id] = float32(-(len(merges) + id))
		}
	}
	return scores
}

// addedTokens adds tokenizer.json's added tokens: special ones (and ones
// that look special) are control tokens, the others user-defined.
func (b *tokenizerBuilder) addedTokens() error {
	for i, a := range b.hf.AddedTokens {
		field := fmt.Sprintf("added_tokens[%d]", i)
		if a.ID == nil {
			return unsupported(tokenizerFile, field, a.Content, "has no id")
		}
		if err := b.put(field, a.Content, *a.ID); err != nil {
			return err
		}
		switch {
		case *a.ID == b.t.UNK:
			b.types[*a.ID] = TokenUnknown
		case a.Special || looksSpecial(a.Content):
			b.types[*a.ID] = TokenControl
		default:
			b.types[*a.ID] = TokenUserDefined
		}
	}
	return nil
}

// vocabSize returns the number of token ids: one past the highest id used,
// or VocabSize when set (which the ids must fit).
func (b *tokenizerBuilder) vocabSize() (int, error) {
	n := 0
	for id := range b.byID {
		n = max(n, id+1)
	}
	if n > maxVocab {
		return 0, unsupported(tokenizerFile, "model.vocab", strconv.Itoa(n-1),
			fmt.Sprintf("token ids reach %d, beyond %d; check tokenizer.json", n-1, maxVocab-1))
	}
	if b.o.VocabSize > 0 {
		if n > b.o.VocabSize {
			return 0, unsupported(tokenizerFile, "model.vocab", strconv.Itoa(n),
				fmt.Sprintf("token ids reach %d, beyond the %d rows of the token embedding "+
					"(config.json vocab_size)", n-1, b.o.VocabSize))
		}
		n = b.o.VocabSize
	}
	return n, nil
}

// arrays fills the tokenizer's Tokens, Types and Scores, indexed by id,
// each unused id a "[PADn]" token of type TokenUnused.
func (b *tokenizerBuilder) arrays() error {
	n, err := b.vocabSize()
	if err != nil {
		return err
	}
	t := b.t
	t.Tokens, t.Types = make([]string, n), make([]int32, n)
	if b.scores != nil {
		t.Scores = make([]float32, n)
	}
	for id := range n {
		tok, ok := b.byID[id]
		if !ok {
			tok = "[PAD" + strconv.Itoa(id) + "]"
			if _, dup := b.ids[tok]; dup {
				return unsupported(tokenizerFile, "model.vocab", tok,
					"a token has the text of the padding of unused id "+strconv.Itoa(id))
			}
			t.Tokens[id], t.Types[id] = tok, TokenUnused
			continue
		}
		t.Tokens[id], t.Types[id] = tok, b.types[id]
		if b.scores != nil {
			t.Scores[id] = b.scores[id]
		}
	}
	return nil
}

// preTokenizer sets a gpt2 model's pre-tokenizer (the option's, or the one
// recognised) and a llama model's space prefix.
func (b *tokenizerBuilder) preTokenizer() error {
	if b.t.Model != "gpt2" {
		asp := spacePrefix(b.hf.Normalizer, b.hf.PreTokenizer)
		if b.cfg.AddPrefixSpace != nil {
			asp = *b.cfg.AddPrefixSpace
		}
		b.t.AddSpacePrefix = &asp
		return nil
	}
	b.t.Pre = b.o.Pre
	if b.t.Pre == "" {
		pre, err := preName(b.hf.PreTokenizer)
		if err != nil {
			return err
		}
		b.t.Pre = pre
	}
	return nil
}

// specialTokens sets the special token ids tokenizer_config.json names,
// whether to add BOS and EOS, and checks that llama.cpp has the ids it
// needs.
func (b *tokenizerBuilder) specialTokens() error {
	t, cfg := b.t, b.cfg
	for _, s := range []struct {
		field string
		raw   json.RawMessage
		dst   *int
	}{{"bos_token", cfg.BOS, &t.BOS}, {"eos_token", cfg.EOS, &t.EOS}, {"unk_token", cfg.UNK, &t.UNK},
		{"pad_token", cfg.PAD, &t.PAD}} {
		if err := b.special(s.field, s.raw, s.dst); err != nil {
			return err
		}
	}
	first := firstSpecial(b.hf.PostProcessor)
	switch {
	case cfg.AddBOS != nil:
		t.AddBOS = *cfg.AddBOS
	case first != "":
		t.AddBOS = true
	default:
		t.AddBOS = t.Model == "llama" && t.BOS >= 0 // SentencePiece's convention, when there is a BOS token
	}
	if t.BOS < 0 && first != "" {
		if id, ok := b.ids[first]; ok {
			t.BOS = id
		}
	}
	if t.UNK >= 0 && t.Types[t.UNK] != TokenUnused {
		t.Types[t.UNK] = TokenUnknown
	}
	t.AddEOS = cfg.AddEOS
	return t.checkSpecial()
}

// special sets *dst to the id of the special token raw of
// tokenizer_config.json's field, if it names one.
func (b *tokenizerBuilder) special(field string, raw json.RawMessage, dst *int) error {
	tok, ok, err := tokenText(raw)
	if err != nil {
		return unsupported(tokenizerConfigFile, field, string(raw), err.Error())
	}
	if !ok {
		return nil
	}
	id, found := b.ids[tok]
	if !found {
		return unsupported(tokenizerConfigFile, field, tok, "not a token of "+tokenizerFile)
	}
	*dst = id
	return nil
}

// checkSpecial returns a *MissingKeyError for a special token id llama.cpp
// needs and t lacks: BOS when it is added, EOS, and a llama model's UNK.
func (t *Tokenizer) checkSpecial() error {
	missing := func(key, field string) error {
		return &MissingKeyError{Key: key, File: tokenizerConfigFile, Fields: []string{field}}
	}
	switch {
	case t.AddBOS && t.BOS < 0:
		return missing("tokenizer.ggml.bos_token_id", "bos_token")
	case t.EOS < 0:
		return missing("tokenizer.ggml.eos_token_id", "eos_token")
	case t.Model == "llama" && t.UNK < 0:
		return missing("tokenizer.ggml.unknown_token_id", "unk_token")
	}
	return nil
}

// chatTemplate sets the chat template of tokenizer_config.json.
func (b *tokenizerBuilder) chatTemplate() error {
	tmpl, err := chatTemplate(b.cfg.ChatTemplate)
	if err != nil {
		return err
	}
	b.t.ChatTemplate = tmpl
	return nil
}

// readMerges reads a BPE model's merges: "left right" strings, or [left,
// right] pairs.
func readMerges(raw json.RawMessage) ([][2]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &UnsupportedError{File: tokenizerFile, Field: "model.merges", Reason: "want a list: " + err.Error()}
	}
	out := make([][2]string, len(items))
	for i, it := range items {
		field := fmt.Sprintf("model.merges[%d]", i)
		var s string
		var pair []string
		switch {
		case json.Unmarshal(it, &s) == nil:
			l, r, ok := strings.Cut(s, " ")
			if !ok || l == "" || r == "" || strings.Contains(r, " ") {
				return nil, &UnsupportedError{File: tokenizerFile, Field: field, Value: s, Reason: "want two tokens separated by one space"}
			}
			out[i] = [2]string{l, r}
		case json.Unmarshal(it, &pair) == nil && len(pair) == 2:
			if pair[0] == "" || pair[1] == "" || strings.Contains(pair[0], " ") || strings.Contains(pair[1], " ") {
				return nil, &UnsupportedError{File: tokenizerFile, Field: field, Value: strings.Join(pair, " "),
					Reason: "a merged token holds a space, which llama.cpp's merge list cannot express"}
			}
			out[i] = [2]string{pair[0], pair[1]}
		default:
			return nil, &UnsupportedError{File: tokenizerFile, Field: field, Value: string(it), Reason: "want \"left right\" or [left, right]"}
		}
	}
	return out, nil
}

// preName recognises the pre-tokenizer of a byte-level BPE model: a
// ByteLevel pre-tokenizer with its own (GPT-2) pattern, or a Split on a
// known pattern followed by a ByteLevel one.
func preName(raw json.RawMessage) (string, error) {
	type pt struct {
		Type     string          `json:"type"`
		UseRegex *bool           `json:"use_regex"`
		Pattern  json.RawMessage `json:"pattern"`
		Pretoks  []pt            `json:"pretokenizers"`
	}
	var p pt
	fail := func(why string) (string, error) {
		return "", &UnsupportedError{File: tokenizerFile, Field: "pre_tokenizer", Value: compact(raw),
			Reason: why + "; name the llama.cpp pre-tokenizer that splits text the same way (such as llama-bpe, qwen2, gpt-2)"}
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Type == "" {
		return fail("no pre-tokenizer")
	}
	if p.Type == "ByteLevel" && (p.UseRegex == nil || *p.UseRegex) {
		return "gpt-2", nil
	}
	if p.Type == "Sequence" && len(p.Pretoks) == 2 && p.Pretoks[0].Type == "Split" && p.Pretoks[1].Type == "ByteLevel" &&
		p.Pretoks[1].UseRegex != nil && !*p.Pretoks[1].UseRegex {
		var pat struct {
			Regex string `json:"Regex"`
		}
		if json.Unmarshal(p.Pretoks[0].Pattern, &pat) == nil {
			if name, ok := prePatterns[pat.Regex]; ok {
				return name, nil
			}
		}
		return fail("the Split pattern is not one llama.cpp is known to implement")
	}
	return fail("not a pre-tokenizer llama.cpp is known to implement")
}

// compact returns JSON without insignificant space, shortened for messages.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return ""
	}
	s := b.String()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// spacePrefix reports whether a SentencePiece-like tokenizer puts "▁" before
// the text: a Prepend normalizer, or a Metaspace pre-tokenizer whose
// prepend_scheme is "first" or "always" (or add_prefix_space).
func spacePrefix(normalizer, pre json.RawMessage) bool {
	type node struct {
		Type           string  `json:"type"`
		Prepend        string  `json:"prepend"`
		PrependScheme  *string `json:"prepend_scheme"`
		AddPrefixSpace *bool   `json:"add_prefix_space"`
		Normalizers    []node  `json:"normalizers"`
		Pretokenizers  []node  `json:"pretokenizers"`
	}
	var walk func(n node) bool
	walk = func(n node) bool {
		switch n.Type {
		case "Prepend":
			return n.Prepend == "▁"
		case "Metaspace":
			if n.PrependScheme != nil {
				return *n.PrependScheme == "first" || *n.PrependScheme == "always"
			}
			return n.AddPrefixSpace == nil || *n.AddPrefixSpace
		}
		for _, c := range append(n.Normalizers, n.Pretokenizers...) {
			if walk(c) {
				return true
			}
		}
		return false
	}
	for _, raw := range []json.RawMessage{normalizer, pre} {
		var n node
		if json.Unmarshal(raw, &n) == nil && walk(n) {
			return true
		}
	}
	return false
}

// firstSpecial returns the special token a TemplateProcessing post-processor
// puts before a single sequence ("" for none).
func firstSpecial(raw json.RawMessage) string {
	type item struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
	}
	type node struct {
		Type       string `json:"type"`
		Single     []item `json:"single"`
		Processors []node `json:"processors"`
	}
	var walk func(n node) string
	walk = func(n node) string {
		if n.Type == "TemplateProcessing" && len(n.Single) > 0 && n.Single[0].SpecialToken != nil {
			return n.Single[0].SpecialToken.ID
		}
		for _, c := range n.Processors {
			if s := walk(c); s != "" {
				return s
			}
		}
		return ""
	}
	var n node
	if json.Unmarshal(raw, &n) != nil {
		return ""
	}
	return walk(n)
}

// tokenText reads a special token of tokenizer_config.json: a string, an
// object with "content", or null.
func tokenText(raw json.RawMessage) (string, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true, nil
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != nil {
		return *obj.Content, true, nil
	}
	return "", false, errors.New("want a string or an object with content")
}

// chatTemplate reads tokenizer_config.json's chat_template: a string, or a
// list of named templates of which the "default" one is taken.
func chatTemplate(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", &UnsupportedError{File: tokenizerConfigFile, Field: "chat_template", Reason: "want a string or a list of named templates"}
	}
	for _, n := range named {
		if n.Name == "default" {
			return n.Template, nil
		}
	}
	return "", nil
}

// looksSpecial reports whether an added token's text marks it as a control
// token although it is not flagged special: <|...|>, <unused...> and a few
// others, as llama.cpp's converter treats them.
func looksSpecial(s string) bool {
	switch s {
	case "<pad>", "<mask>", "<2mass>", "[@BOS@]":
		return true
	}
	return strings.HasPrefix(s, "<|") && strings.HasSuffix(s, "|>") ||
		strings.HasPrefix(s, "<｜") && strings.HasSuffix(s, "｜>") ||
		strings.HasPrefix(s, "<unused") && strings.HasSuffix(s, ">")
}
