package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
)

// synthCorpus is the text synth -arch llama learns its tokenizer's merges
// from (written for this purpose).
const synthCorpus = `The small model reads a line of text and guesses the next word. It has seen
no books and no web pages: its weights were drawn at random, so its guesses are noise, but
the noise is shaped like a real model's. Every layer holds the same kinds of matrices as a
large language model: the attention projections for queries, keys and values, the output
projection, and the three matrices of the feed forward block. The norms are close to one.
The tokenizer splits words into pieces that appear often in this paragraph, such as the, ing,
tion and model. A converter turns the checkpoint into the file format of the runtime, with
the names, the numbers and the vocabulary that the runtime expects to find there. Then the
runtime loads the file, evaluates a prompt of a few tokens, and writes out the logits for
each position. When the weights are stored with fewer bits, the logits move a little; the
test measures how far. Numbers like 2048, 4096 and 32000 show up in model cards, and so do
words like context, layer, head, token, vector, matrix, quantize, block and scale.`

// Special tokens of the synth tokenizer, after its byte tokens and merges.
var synthSpecials = []string{"<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"}

// synthMinMerges is the fewest merges the synth tokenizer keeps, whatever
// -vocab is.
const synthMinMerges = 41

// synthPreSplit approximates Llama 3's pre-tokenizer for learning merges
// (Go's regexp has no lookahead; merges learned from slightly different
// pieces are still valid merges).
var synthPreSplit = regexp.MustCompile(`[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+`)

// synthTok is the tokenizer of a synth -arch llama checkpoint.
type synthTok struct {
	json, config []byte
	size         int // tokens: ids 0..size-1
	merges       int
	bos, eos     int
}

// byteLevel maps each byte to the printable character byte-level BPE
// writes it as: printable Latin-1 bytes stand for themselves, the others
// (control characters, space, ...) for 256, 257, ... in byte order.
func byteLevel() [256]string {
	var m [256]string
	n := 0
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			m[b] = string(rune(b))
		} else {
			m[b] = string(rune(256 + n))
			n++
		}
	}
	return m
}

// bpeWord is a word of a corpus as its symbols, with its count.
type bpeWord struct {
	syms  []string
	count int
}

// learnMerges learns BPE merges from words (whose symbols it merges in
// place), as BPE trainers do: each step merges, in every word, the
// adjacent pair that occurs most often (ties to the smaller "a b" text),
// while more(the merges so far) holds and some pair occurs twice.
func learnMerges(words []bpeWord, more func(merges [][2]string) bool) [][2]string {
	var merges [][2]string
	for more(merges) {
		pairs := map[[2]string]int{}
		for _, w := range words {
			for i := 0; i+1 < len(w.syms); i++ {
				pairs[[2]string{w.syms[i], w.syms[i+1]}] += w.count
			}
		}
		var best [2]string
		bestN := 1
		for p, n := range pairs {
			if n > bestN || n == bestN && n > 1 && p[0]+" "+p[1] < best[0]+" "+best[1] {
				best, bestN = p, n
			}
		}
		if bestN < 2 {
			break // nothing left that occurs twice
		}
		merges = append(merges, best)
		for i := range words {
			s := words[i].syms
			out := s[:0]
			for j := 0; j < len(s); j++ {
				if j+1 < len(s) && s[j] == best[0] && s[j+1] == best[1] {
					out = append(out, best[0]+best[1])
					j++
				} else {
					out = append(out, s[j])
				}
			}
			words[i].syms = out
		}
	}
	return merges
}

// synthTokenizer builds the tokenizer: 256 byte tokens (id = byte), merges
// learned from synthCorpus (as many as fit maxVocab with the special
// tokens, at least synthMinMerges), then the special tokens.
func synthTokenizer(maxVocab int) *synthTok {
	bl := byteLevel()
	want := max(synthMinMerges, maxVocab-256-len(synthSpecials))
	merges := learnMerges(synthWords(bl), func(m [][2]string) bool { return len(m) < want })

	vocab := map[string]int{}
	for b := range 256 {
		vocab[bl[b]] = b
	}
	mergeText := make([]string, len(merges))
	for i, m := range merges {
		vocab[m[0]+m[1]] = 256 + i
		mergeText[i] = m[0] + " " + m[1]
	}
	t := &synthTok{merges: len(merges), size: 256 + len(merges) + len(synthSpecials)}
	t.bos, t.eos = 256+len(merges), 256+len(merges)+1
	t.json = indentJSON(synthTokenizerJSON(vocab, mergeText, t.bos))
	t.config = indentJSON(map[string]any{
		"add_bos_token": true, "add_eos_token": false,
		"bos_token": synthSpecials[0], "eos_token": synthSpecials[1],
		"clean_up_tokenization_spaces": true, "model_max_length": 2048,
		"model_input_names": []string{"input_ids", "attention_mask"},
		"tokenizer_class":   "PreTrainedTokenizerFast",
	})
	return t
}

// synthWords returns synthCorpus as words of byte-level symbols (bl: the
// symbol of each byte), with their counts, in the order of the words.
func synthWords(bl [256]string) []bpeWord {
	counts := map[string]int{}
	for _, piece := range synthPreSplit.FindAllString(synthCorpus, -1) {
		counts[piece]++
	}
	var words []bpeWord
	for _, piece := range sortedKeys(counts) {
		var syms []string
		for _, b := range []byte(piece) {
			syms = append(syms, bl[b])
		}
		words = append(words, bpeWord{syms, counts[piece]})
	}
	return words
}

// synthTokenizerJSON is the tokenizer.json of a byte-level BPE of vocab and
// merges whose special tokens, synthSpecials, take the ids from bos on.
func synthTokenizerJSON(vocab map[string]int, merges []string, bos int) map[string]any {
	type added struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	}
	var addedTokens []added
	for i, s := range synthSpecials {
		addedTokens = append(addedTokens, added{ID: bos + i, Content: s, Special: true})
	}
	bosText := synthSpecials[0]
	return map[string]any{
		"version":      "1.0",
		"truncation":   nil,
		"padding":      nil,
		"added_tokens": addedTokens,
		"normalizer":   nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]string{
				"Regex": `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`},
				"behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
		}},
		"post_processor": map[string]any{"type": "TemplateProcessing",
			"single": []any{map[string]any{"SpecialToken": map[string]any{"id": bosText, "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
			"pair": []any{map[string]any{"SpecialToken": map[string]any{"id": bosText, "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
				map[string]any{"SpecialToken": map[string]any{"id": bosText, "type_id": 1}},
				map[string]any{"Sequence": map[string]any{"id": "B", "type_id": 1}}},
			"special_tokens": map[string]any{bosText: map[string]any{"id": bosText, "ids": []int{bos}, "tokens": []string{bosText}}}},
		"decoder": map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": nil,
			"end_of_word_suffix": nil, "fuse_unk": false, "byte_fallback": false, "ignore_merges": true,
			"vocab": vocab, "merges": merges},
	}
}

// indentJSON encodes v (maps, slices, strings and numbers, which always
// encode) indented, with <, > and & as themselves, as Hugging Face writes
// tokenizer files.
func indentJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	return b.Bytes()
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
