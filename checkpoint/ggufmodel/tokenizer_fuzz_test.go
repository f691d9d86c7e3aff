package ggufmodel

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseTokenizer: ParseTokenizer never panics on any tokenizer.json
// and tokenizer_config.json; it refuses them with an *UnsupportedError or a
// *MissingKeyError naming the file, or gives a tokenizer whose arrays agree:
// one type (and, when scored, one score) per token, as many tokens as
// VocabSize asks for, special ids within the vocabulary, and metadata keys.
// Seeds: the byte-level BPE tokenizer tcast synth -arch llama writes
// (testdata/synth-llama, -vocab 320), the hand-written tokenizers of
// tokenizer_test.go, broken variants, and the hostile tokenizer files of
// the repository's testdata/bad/config.
func FuzzParseTokenizer(f *testing.F) {
	tj, err := os.ReadFile(filepath.Join("testdata", "synth-llama", tokenizerFile))
	if err != nil {
		f.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join("testdata", "synth-llama", tokenizerConfigFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tj, cfg, uint16(320), "")
	f.Add(tj, cfg, uint16(0), "llama-bpe")
	f.Add(tj, []byte(nil), uint16(300), "")
	f.Add([]byte(bpeTokenizer(splitPre(llama3Pattern))), []byte(`{"eos_token": "<|end|>", "chat_template": "{{ x }}"}`), uint16(0), "")
	f.Add([]byte(spmTokenizer), []byte(`{"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}`), uint16(10), "")
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":-1},"merges":["a b"]}}`), []byte(`{}`), uint16(0), "")
	f.Add([]byte(`{"model":{"type":"Unigram","vocab":[["a",0.5],["b","x"]]}}`), []byte(`{"bos_token":{"content":"a"}}`), uint16(2), "")
	f.Add([]byte(`{"model":{"type":"WordPiece"}}`), []byte(`null`), uint16(0), "")
	f.Add([]byte(`{"added_tokens":[{"id":16777216,"content":"x"}],"model":{"type":"BPE","vocab":{}}}`), []byte(nil), uint16(0), "qwen2")
	f.Add([]byte(`[]`), []byte(`[]`), uint16(1), "gpt-2")
	// The hostile tokenizer files of the repository's testdata/bad
	// (internal/badinput), each with the synth tokenizer beside it.
	for _, c := range []struct {
		dir    string
		config bool
	}{{"tokenizer-json", false}, {"tokenizer-config-json", true}} {
		for _, pat := range []string{"*", filepath.Join("truncated", "*")} {
			want := tokenizerFile
			if c.config {
				want = tokenizerConfigFile
			}
			paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "bad", "config", c.dir, pat, want))
			if err != nil {
				f.Fatal(err)
			}
			for _, p := range paths {
				b, err := os.ReadFile(p)
				if err != nil {
					f.Fatal(err)
				}
				if c.config {
					f.Add(tj, b, uint16(0), "")
				} else {
					f.Add(b, cfg, uint16(0), "")
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, tokenizerJSON, configJSON []byte, vocab uint16, pre string) {
		o := TokenizerOptions{VocabSize: int(vocab), Pre: pre}
		tok, err := ParseTokenizer(tokenizerJSON, configJSON, o)
		if err != nil {
			var ue *UnsupportedError
			var me *MissingKeyError
			switch {
			case errors.As(err, &ue):
				if ue.File != tokenizerFile && ue.File != tokenizerConfigFile {
					t.Fatalf("error names file %q: %v", ue.File, err)
				}
			case errors.As(err, &me):
			default:
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if tok == nil {
			return // not a tokenizer llama.cpp needs (nil, nil)
		}
		n := len(tok.Tokens)
		if len(tok.Types) != n || (tok.Scores != nil && len(tok.Scores) != n) {
			t.Fatalf("%d tokens, %d types, %d scores", n, len(tok.Types), len(tok.Scores))
		}
		if o.VocabSize > 0 && n != o.VocabSize {
			t.Fatalf("%d tokens, VocabSize %d", n, o.VocabSize)
		}
		for _, id := range []int{tok.BOS, tok.EOS, tok.UNK, tok.PAD} {
			if id < -1 || id >= n {
				t.Fatalf("special id %d of %d tokens", id, n)
			}
		}
		if len(tok.KV()) == 0 {
			t.Fatal("no metadata keys")
		}
	})
}
