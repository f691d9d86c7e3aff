// Package ggufmix chooses the ggml type of every tensor of a GGUF model
// for the quantization mixes llama-quantize names (Q4_K_M, Q5_K_S, Q3_K_L,
// Q2_K, Q6_K, Q8_0, IQ4_NL, IQ4_XS, IQ3_M, IQ2_XXS, IQ1_S, TQ1_0,
// MXFP4_MOE, ...), with a reason
// for each choice,
// per-tensor overrides by regular expression, and the fallback for rows
// that a block type does not divide.
//
// A Mix is a base block type and the rules llama.cpp attaches to its name.
// Plan applies it to a whole model's tensor list. Names may be GGUF names
// ("blk.3.attn_v.weight") or Hugging Face ones
// ("model.layers.3.self_attn.v_proj.weight"); the rules look at the
// Category and layer of each name, the row length (last dimension of the
// row-major shape), and the Model's layer count, head counts, expert
// count and architecture.
//
// # Rules
//
// In llama-quantize's order, for each tensor:
//
//  1. Tensors that are never quantized keep their type (Tensor.Keep, F32
//     by default): those of fewer than 2 dimensions, names not ending in
//     "weight", norms, expert routers (ffn_gate_inp), positional and a few
//     small architecture-specific tensors; so does every tensor with
//     MixCOPY, and the output head with Options.KeepOutput.
//  2. Options.TokenEmbeddingType and Options.OutputType set the token
//     embedding's and the output head's types.
//  3. The first Override whose pattern matches the name sets the type.
//  4. Otherwise, for mixes with a block base type and unless Pure, the mix
//     rules: the output head (and a token embedding that doubles as it)
//     gets Q6_K (Q5_K in the IQ1 and IQ2 mixes and IQ3_XXS), or Q8_0 when
//     its row is not a multiple of the base block or the model is a
//     falcon; attention V (and fused QKV, MLA's kv_b)
//     and FFN down get more bits in the layers use_more_bits picks (the
//     first and last eighth and every third layer between) for the _M
//     mixes, in the first four (Q4_K_S) or two (Q3_K_M) layers, or
//     throughout (Q3_K_L, Q2_K); attn_output gets more bits in Q2_K,
//     Q3_K_M and Q3_K_L; 8-expert models, grouped-query attention and
//     70B models have rules of their own; IQ3_XXS and IQ3_XS give
//     attention Q and K (IQ3_XS also FFN gate and up) a smaller grid
//     type, and the IQ1 and IQ2 mixes have a rule set of their own.
//     docs/GGUF.md tables them.
//  5. A block type whose block does not divide the row length falls back:
//     the IQ types → IQ4_NL, Q2_K, Q3_K, TQ1_0, TQ2_0 and Q2_0 → Q4_0, Q4_K →
//     Q5_0, Q5_K → Q5_1, Q6_K → Q8_0, and to F16 when the replacement
//     does not fit either or for a 32-element type that does not fit; a
//     larger block without a replacement (Q1_0) is a *TensorError, as
//     llama-quantize stops.
//
// Decision.NeedsImatrix marks the types llama-quantize quantizes only with
// an importance matrix: Q2_K in Q2_K_S and the IQ grid types but IQ3_S.
// Positions count only the tensors that may be quantized (no biases), as
// llama-quantize's counters do.
//
// # Size targets
//
// Fit goes beyond llama-quantize: given each tunable tensor's Candidates
// with their bytes and errors (package convert measures them), it chooses
// the types that meet a byte budget with a small total error (the
// Lagrangian choice along each tensor's lower convex hull), and marks the
// decisions ("size target: ..."). A budget below the smallest candidates'
// total is a *TargetError.
//
// # Differences from llama-quantize
//
// Overrides apply to every mix, also F16, BF16 and F32 (llama-quantize
// ignores --tensor-type for them), and their patterns are Go regular
// expressions used as given (llama-quantize lowercases them).
// llama-quantize advances its attention-V and FFN counters only for the
// tensors its rules see, so an override on one attn_v shifts the layer
// position of the later ones; here positions do not depend on overrides.
package ggufmix
