package ggufmix

import (
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/internal/names"
)

// Mix is one of llama-quantize's file types: a base block type that most
// weights get and the per-tensor rules of that name. The zero Mix is not a
// valid mix; get one from Lookup or Mixes.
type Mix struct {
	name  string
	ftype uint32
	base  gguf.Type
}

// The mixes, with llama.cpp's llama_ftype values (general.file_type).
var (
	MixF32  = Mix{"F32", 0, gguf.TypeF32}
	MixF16  = Mix{"F16", 1, gguf.TypeF16}
	MixQ4_0 = Mix{"Q4_0", 2, gguf.TypeQ4_0}
	MixQ4_1 = Mix{"Q4_1", 3, gguf.TypeQ4_1}
	MixQ8_0 = Mix{"Q8_0", 7, gguf.TypeQ8_0}
	MixQ5_0 = Mix{"Q5_0", 8, gguf.TypeQ5_0}
	MixQ5_1 = Mix{"Q5_1", 9, gguf.TypeQ5_1}
	MixQ2_K = Mix{"Q2_K", 10, gguf.TypeQ2_K}
	// MixQ2_K_S is Q2_K with fewer rules, whose Q2_K tensors need an
	// importance matrix (Decision.NeedsImatrix).
	MixQ2_K_S = Mix{"Q2_K_S", 21, gguf.TypeQ2_K}
	MixQ3_K_S = Mix{"Q3_K_S", 11, gguf.TypeQ3_K}
	MixQ3_K_M = Mix{"Q3_K_M", 12, gguf.TypeQ3_K}
	MixQ3_K_L = Mix{"Q3_K_L", 13, gguf.TypeQ3_K}
	MixQ4_K_S = Mix{"Q4_K_S", 14, gguf.TypeQ4_K}
	MixQ4_K_M = Mix{"Q4_K_M", 15, gguf.TypeQ4_K}
	MixQ5_K_S = Mix{"Q5_K_S", 16, gguf.TypeQ5_K}
	MixQ5_K_M = Mix{"Q5_K_M", 17, gguf.TypeQ5_K}
	MixQ6_K   = Mix{"Q6_K", 18, gguf.TypeQ6_K}
	// The IQ1, IQ2 and IQ3 mixes. Their grid types IQ1_S, IQ1_M, IQ2_XXS,
	// IQ2_XS, IQ2_S and IQ3_XXS are quantized only with an importance
	// matrix (Decision.NeedsImatrix). IQ2_S's base is IQ2_XS and IQ2_M's
	// IQ2_S; IQ3_XS, IQ3_S and IQ3_M share the base IQ3_S.
	MixIQ2_XXS = Mix{"IQ2_XXS", 19, gguf.TypeIQ2_XXS}
	MixIQ2_XS  = Mix{"IQ2_XS", 20, gguf.TypeIQ2_XS}
	MixIQ3_XS  = Mix{"IQ3_XS", 22, gguf.TypeIQ3_S}
	MixIQ3_XXS = Mix{"IQ3_XXS", 23, gguf.TypeIQ3_XXS}
	MixIQ1_S   = Mix{"IQ1_S", 24, gguf.TypeIQ1_S}
	MixIQ3_S   = Mix{"IQ3_S", 26, gguf.TypeIQ3_S}
	MixIQ3_M   = Mix{"IQ3_M", 27, gguf.TypeIQ3_S}
	MixIQ2_S   = Mix{"IQ2_S", 28, gguf.TypeIQ2_XS}
	MixIQ2_M   = Mix{"IQ2_M", 29, gguf.TypeIQ2_S}
	MixIQ1_M   = Mix{"IQ1_M", 31, gguf.TypeIQ1_M}
	MixIQ4_NL  = Mix{"IQ4_NL", 25, gguf.TypeIQ4_NL}
	MixIQ4_XS  = Mix{"IQ4_XS", 30, gguf.TypeIQ4_XS}
	MixBF16    = Mix{"BF16", 32, gguf.TypeBF16}
	MixTQ1_0   = Mix{"TQ1_0", 36, gguf.TypeTQ1_0}
	MixTQ2_0   = Mix{"TQ2_0", 37, gguf.TypeTQ2_0}
	// MixMXFP4_MOE gives the experts' tensors (3-D, more than one
	// expert) MXFP4 and every other quantized tensor Q8_0.
	MixMXFP4_MOE = Mix{"MXFP4_MOE", 38, gguf.TypeMXFP4}
	MixQ1_0      = Mix{"Q1_0", 40, gguf.TypeQ1_0}
	MixQ2_0      = Mix{"Q2_0", 41, gguf.TypeQ2_0}
	// MixCOPY quantizes nothing: every tensor keeps its type
	// (Tensor.Keep), and the file keeps its input's general.file_type.
	MixCOPY = Mix{name: "COPY"}
)

// mixes lists every mix in llama_ftype order.
var mixes = []Mix{
	MixF32, MixF16, MixQ4_0, MixQ4_1, MixQ8_0, MixQ5_0, MixQ5_1, MixQ2_K, MixQ3_K_S, MixQ3_K_M,
	MixQ3_K_L, MixQ4_K_S, MixQ4_K_M, MixQ5_K_S, MixQ5_K_M, MixQ6_K, MixIQ2_XXS, MixIQ2_XS,
	MixQ2_K_S, MixIQ3_XS, MixIQ3_XXS, MixIQ1_S, MixIQ4_NL, MixIQ3_S, MixIQ3_M, MixIQ2_S,
	MixIQ2_M, MixIQ4_XS, MixIQ1_M, MixBF16, MixTQ1_0, MixTQ2_0, MixMXFP4_MOE, MixQ1_0, MixQ2_0,
	MixCOPY,
}

// aliases are llama-quantize's short names for the _M mixes.
var aliases = map[string]Mix{"Q3_K": MixQ3_K_M, "Q4_K": MixQ4_K_M, "Q5_K": MixQ5_K_M}

// ForType returns the mix a file whose weights are of type t is labelled
// with (its general.file_type), as llama.cpp's loader names a file by its
// most common type: the mix of the type's name (IQ3_S rather than IQ3_XS
// of the same base; IQ2_S, although that mix's own base is IQ2_XS), the
// _M mix for the K types that have several (Q4_K is Q4_K_M, as
// llama-quantize's aliases have it), else the mix of that base type
// (MXFP4_MOE for MXFP4); false for a type without one (Q8_K).
func ForType(t gguf.Type) (Mix, bool) {
	if m, ok := aliases[t.String()]; ok {
		return m, true
	}
	for _, m := range mixes {
		if m.name == t.String() {
			return m, true
		}
	}
	for _, m := range mixes {
		if m.base == t && !m.Copies() {
			return m, true
		}
	}
	return Mix{}, false
}

// Mixes returns every mix, in llama_ftype order.
func Mixes() []Mix { return append([]Mix(nil), mixes...) }

// Lookup returns the mix of the given name, case-insensitively: "Q4_K_M",
// "q5_k_s", "IQ4_XS", "iq2_xxs", ..., and llama-quantize's aliases
// "Q3_K", "Q4_K" and "Q5_K" for the _M mixes. An unknown name gives a
// *UnknownMixError that lists the closest names.
func Lookup(name string) (Mix, error) {
	up := strings.ToUpper(strings.TrimSpace(name))
	for _, m := range mixes {
		if m.name == up {
			return m, nil
		}
	}
	if m, ok := aliases[up]; ok {
		return m, nil
	}
	known := make([]string, 0, len(mixes)+len(aliases))
	for _, m := range mixes {
		known = append(known, m.name)
	}
	return Mix{}, &UnknownMixError{Name: name, Closest: names.Closest(up, known, 3)}
}

// String returns llama-quantize's name of the mix ("Q4_K_M"), or "" for
// the zero Mix.
func (m Mix) String() string { return m.name }

// FileType returns the mix's llama_ftype value, which a GGUF model stores
// as general.file_type (15 for Q4_K_M); 0 for MixCOPY, whose output keeps
// its input's.
func (m Mix) FileType() uint32 { return m.ftype }

// Base returns the block type most weights of the mix get (Q4_K for
// Q4_K_M and Q4_K_S); F32 for MixCOPY, which changes no type.
func (m Mix) Base() gguf.Type { return m.base }

// Copies reports whether m is MixCOPY, which keeps every tensor's type.
func (m Mix) Copies() bool { return m == MixCOPY }

// IsZero reports whether m is the zero Mix.
func (m Mix) IsZero() bool { return m.name == "" }

// quantized reports whether the mix's base type is a block type; only
// then do the mix rules, the fallback and (in llama-quantize) the
// overrides apply.
func (m Mix) quantized() bool { return m.base.Quantized() }
