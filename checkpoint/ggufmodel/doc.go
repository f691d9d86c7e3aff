// Package ggufmodel describes a Hugging Face checkpoint as the llama.cpp
// model GGUF file it converts to: the architecture, the hyper-parameters,
// the tensor names and the tokenizer.
//
// # Architectures
//
// Detect reads config.json. Its model_type chooses the architecture:
// llama and mistral (both llama.cpp's llama), qwen2, qwen3 and gemma. Any
// other model type (or none) gives a nil Model and no error: the caller
// writes its generic GGUF. For a known architecture every hyper-parameter
// llama.cpp needs must be in config.json, or Detect fails with a
// *MissingKeyError that names the GGUF key and the config.json fields it
// is read from; an input llama.cpp cannot run (a RoPE scaling it does not
// implement, head sizes it rejects) is an *UnsupportedError naming the file
// and field.
//
// Model.KV lists the metadata: general.architecture, general.name,
// general.file_type, general.alignment, and the architecture's keys
// (<arch>.context_length, embedding_length, block_count,
// feed_forward_length, attention.head_count, attention.head_count_kv,
// attention.layer_norm_rms_epsilon, rope.freq_base, rope.dimension_count,
// the RoPE scaling keys, key and value lengths when config.json sets
// head_dim, vocab_size), then the tokenizer's (see below), each with the
// value type llama.cpp reads it as.
//
// # Tensors
//
// Model.Tensor maps a Hugging Face tensor name to its GGUF name
// (model.embed_tokens.weight → token_embd.weight,
// model.layers.N.self_attn.q_proj.weight → blk.N.attn_q.weight,
// model.norm.weight → output_norm.weight, lm_head.weight → output.weight,
// ...) with the change its values need on the way:
//
//   - the rows of the query and key projections (weights and biases) of
//     the llama architecture are permuted as llama.cpp's converter does:
//     within each head, the rotary pairs (i, i+d/2) of the Hugging Face
//     layout become adjacent rows (2i, 2i+1), which llama.cpp's RoPE
//     expects;
//   - Gemma's RMSNorm weights get 1 added (Hugging Face stores w−1 and
//     multiplies by 1+w; llama.cpp multiplies by the stored weight);
//   - one-dimensional tensors and norms are stored as F32, the only type
//     llama.cpp's norm and bias operators take on every backend.
//
// An output head tied to the token embedding (tie_word_embeddings, or
// Gemma, or no lm_head in the checkpoint) is not written: llama.cpp uses
// token_embd.weight for both. Rotary inverse frequencies are not model
// weights and are dropped. A tensor the architecture does not use is a
// *TensorError, because llama.cpp refuses a file whose tensor count does
// not match what it loads; Model.Check reports missing tensors and wrong
// shapes the same way before anything is written. Llama 3's "llama3" RoPE
// scaling adds the tensor rope_freqs.weight, listed by Model.Extra.
//
// # Tokenizer
//
// ReadTokenizer converts tokenizer.json (with tokenizer_config.json) to
// tokenizer.ggml.*: a byte-level BPE model becomes llama.cpp's gpt2
// tokenizer (tokens, token types, merges, the pre-tokenizer name, special
// token ids, add_bos_token), and a BPE model with byte fallback or a
// Unigram model becomes its SentencePiece llama tokenizer (tokens, scores,
// token types). Anything else is an *UnsupportedError naming the file and
// field.
package ggufmodel
