package ggufmodel_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmodel"
)

// A SentencePiece tokenizer converted to BPE with byte fallback (as Llama
// 2's tokenizer.json is), with one added token that is not special, given
// as the 9 rows of a token embedding. Each id gets a llama_token_type; the
// vocabulary's scores rank its merges as SentencePiece's do: ▁a, made by
// the merge of rank 0, scores 0, every other token −(1 merge + id).
func ExampleParseTokenizer() {
	tokenizerJSON := `{
  "added_tokens": [
    {"id": 0, "content": "<unk>", "special": true},
    {"id": 1, "content": "<s>", "special": true},
    {"id": 2, "content": "</s>", "special": true},
    {"id": 7, "content": "<tool>", "special": false}
  ],
  "normalizer": {"type": "Prepend", "prepend": "▁"},
  "pre_tokenizer": null,
  "decoder": {"type": "ByteFallback"},
  "model": {"type": "BPE", "byte_fallback": true, "unk_token": "<unk>",
    "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, "▁": 4, "a": 5, "▁a": 6},
    "merges": [["▁", "a"]]}
}`
	configJSON := `{"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}`
	t, err := ggufmodel.ParseTokenizer([]byte(tokenizerJSON), []byte(configJSON),
		ggufmodel.TokenizerOptions{VocabSize: 9})
	if err != nil {
		log.Fatal(err)
	}
	kind := map[int32]string{
		ggufmodel.TokenNormal: "normal", ggufmodel.TokenUnknown: "unknown",
		ggufmodel.TokenControl: "control", ggufmodel.TokenUserDefined: "user-defined",
		ggufmodel.TokenUnused: "unused", ggufmodel.TokenByte: "byte",
	}
	fmt.Println(t.Model, t.BOS, t.EOS, t.UNK, t.AddBOS)
	for id, tok := range t.Tokens {
		fmt.Println(id, tok, kind[t.Types[id]])
	}
	fmt.Println(t.Scores[:7])
	// Output:
	// llama 1 2 0 true
	// 0 <unk> unknown
	// 1 <s> control
	// 2 </s> control
	// 3 <0x0A> byte
	// 4 ▁ normal
	// 5 a normal
	// 6 ▁a normal
	// 7 <tool> user-defined
	// 8 [PAD8] unused
	// [-1 -2 -3 -4 -5 -6 0]
}

// A tensor the architecture does not use, a checkpoint without
// tokenizer.json, and a tokenizer llama.cpp cannot run are typed errors
// naming the tensor, the key and the field.
func Example_errors() {
	m, err := ggufmodel.Detect([]byte(`{"model_type": "llama",
  "hidden_size": 128, "intermediate_size": 320, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 300,
  "max_position_embeddings": 2048, "rms_norm_eps": 1e-05}`))
	if err != nil {
		log.Fatal(err)
	}
	_, err = m.Tensor("model.layers.0.mlp.fc1.weight")
	var te *ggufmodel.TensorError
	fmt.Println(errors.As(err, &te), te.Arch, te.Tensor)

	dir, err := os.MkdirTemp("", "ggufmodel-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	_, err = ggufmodel.ReadTokenizer(dir, ggufmodel.TokenizerOptions{})
	var mk *ggufmodel.MissingKeyError
	fmt.Println(errors.As(err, &mk), mk.Key)

	wordPiece := `{"model": {"type": "WordPiece", "vocab": {"a": 0}}}`
	_, err = ggufmodel.ParseTokenizer([]byte(wordPiece), nil, ggufmodel.TokenizerOptions{})
	var ue *ggufmodel.UnsupportedError
	fmt.Println(errors.As(err, &ue), ue.File, ue.Field, ue.Value)
	// Output:
	// true llama model.layers.0.mlp.fc1.weight
	// true tokenizer.ggml.model
	// true tokenizer.json model.type WordPiece
}
