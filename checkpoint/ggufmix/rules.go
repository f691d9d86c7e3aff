package ggufmix

import (
	"fmt"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// position places a tensor among its kind for the layer-dependent rules:
// attnV of nAttnV for the attention-V rules, ffn of nFFN for the FFN
// rules (the layer, for a mixture of experts), and ffnRank, the rank
// among the FFN tensors of its kind even for a mixture of experts, for
// the IQ1 and IQ2 mixes' FFN-down rule.
type position struct {
	attnV, nAttnV int
	ffn, nFFN     int
	ffnRank       int
}

// useMoreBits is llama-quantize's choice of layers that get more bits in
// the _M mixes: the first eighth, the last eighth, and every third layer
// in between (i − n/8 ≡ 2 mod 3), with integer division.
func useMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// moreBitsWhy explains a useMoreBits verdict for the report.
func moreBitsWhy(i, n int) string {
	switch {
	case i < n/8:
		return fmt.Sprintf("%d of %d, in the first eighth", i, n)
	case i >= 7*n/8:
		return fmt.Sprintf("%d of %d, in the last eighth", i, n)
	default:
		return fmt.Sprintf("%d of %d, every third layer in between", i, n)
	}
}

// ruleType applies the mix's rules to one quantizable tensor whose
// default is the mix's base type, as llama-quantize's per-tensor type
// choice does, and says why. shape is the row-major shape.
func ruleType(mix Mix, m Model, cat Category, p position, shape []int, tied bool, opt Options) (gguf.Type, string) {
	r := &ruleArgs{mix: mix, m: m, cat: cat, p: p, ne0: shape[len(shape)-1], imatrix: opt.Imatrix,
		outType: opt.OutputType, experts: len(shape) >= 3 && shape[len(shape)-3] > 1}
	key := cat
	if tied && cat == TokenEmbd {
		key = Output // the token embedding doubles as the output head
	}
	if rule, ok := mixRules[mix]; ok && key != Output {
		return rule(r)
	}
	if rule, ok := categoryRules[key]; ok {
		return rule(r)
	}
	return r.keep() // Other: no rules
}

// categoryRules holds the rule of each category that has rules; the
// others keep the mix's base type.
var categoryRules = map[Category]func(*ruleArgs) (gguf.Type, string){
	Output:     outputRule,
	TokenEmbd:  tokenEmbdRule,
	AttnV:      attnVRule,
	AttnQKV:    attnVRule,
	AttnKVB:    attnVRule,
	AttnK:      attnKRule,
	AttnQ:      attnQRule,
	FFNDown:    ffnDownRule,
	FFNGate:    ffnGateUpRule,
	FFNUp:      ffnGateUpRule,
	AttnOutput: attnOutputRule,
}

// mixRules holds the rules of the mixes whose own rules replace the
// categories' for every tensor but the output head.
var mixRules = map[Mix]func(*ruleArgs) (gguf.Type, string){
	MixMXFP4_MOE: mxfp4MoERule,

	MixIQ2_XXS: lowIQRule, MixIQ2_XS: lowIQRule, MixIQ2_S: lowIQRule,
	MixIQ2_M: lowIQRule, MixIQ1_S: lowIQRule, MixIQ1_M: lowIQRule,
}

// ruleArgs is what a category's rule looks at: the mix, the model, the
// tensor's category, position among its kind and row length, whether it
// stacks several experts (a third dimension, ggml's ne[2], above 1),
// whether an importance matrix is given and the output type asked for.
type ruleArgs struct {
	mix     Mix
	m       Model
	cat     Category
	p       position
	ne0     int
	experts bool
	imatrix bool
	outType *gguf.Type
}

// is reports whether the mix is one of ms.
func (r *ruleArgs) is(ms ...Mix) bool {
	for _, x := range ms {
		if x == r.mix {
			return true
		}
	}
	return false
}

// falcon reports whether the model is a falcon, which has rules of its own.
func (r *ruleArgs) falcon() bool { return r.m.Arch == "falcon" }

// keep gives the mix's base type.
func (r *ruleArgs) keep() (gguf.Type, string) { return r.mix.base, r.mix.name + " base type" }

// give gives type t for the reason "MIX: what: T".
func (r *ruleArgs) give(t gguf.Type, what string) (gguf.Type, string) {
	return t, fmt.Sprintf("%s: %s: %v", r.mix.name, what, t)
}

// outputTypes are the output head's types of the mixes whose head gets
// other than Q6_K: the IQ1 and IQ2 mixes and IQ3_XXS.
var outputTypes = map[Mix]gguf.Type{
	MixIQ2_XXS: gguf.TypeQ5_K, MixIQ2_XS: gguf.TypeQ5_K, MixIQ2_S: gguf.TypeQ5_K,
	MixIQ2_M: gguf.TypeQ5_K, MixIQ1_S: gguf.TypeQ5_K, MixIQ1_M: gguf.TypeQ5_K,
	MixIQ3_XXS: gguf.TypeQ5_K,
}

// outputRule: the output head (or the token embedding doubling as it) gets
// the OutputType asked for, else Q6_K (outputTypes' in the lowest mixes),
// Q8_0 for falcon, for a row length the base type does not divide and in
// MXFP4_MOE.
func outputRule(r *ruleArgs) (gguf.Type, string) {
	base := r.mix.base
	what := "output head"
	if r.cat == TokenEmbd {
		what = "token embedding doubling as the output head (no output.weight)"
	}
	switch t, ok := outputTypes[r.mix]; {
	case r.outType != nil:
		return *r.outType, what + ": output head type asked for: " + r.outType.String()
	case r.mix == MixMXFP4_MOE:
		return gguf.TypeQ8_0, "MXFP4_MOE: " + what + ": Q8_0"
	case r.falcon():
		return gguf.TypeQ8_0, what + " of a falcon model: Q8_0"
	case r.ne0%base.BlockSize() != 0:
		return gguf.TypeQ8_0, fmt.Sprintf("%s with row length %d not a multiple of %d: Q8_0",
			what, r.ne0, base.BlockSize())
	case ok:
		return r.give(t, what)
	case base != gguf.TypeQ8_0:
		return gguf.TypeQ6_K, what + ": Q6_K"
	}
	return base, what + ": " + r.mix.name + " base type"
}

// tokenEmbdTypes are the token embedding's types (with an output head of
// its own) in the mixes that do not give it their base type.
var tokenEmbdTypes = map[Mix]gguf.Type{
	MixTQ1_0: gguf.TypeQ4_K, MixTQ2_0: gguf.TypeQ4_K, MixQ2_0: gguf.TypeQ4_K,
	MixIQ2_XXS: gguf.TypeQ2_K, MixIQ2_XS: gguf.TypeQ2_K, MixIQ1_S: gguf.TypeQ2_K,
	MixIQ1_M: gguf.TypeQ2_K, MixIQ2_S: gguf.TypeIQ3_S, MixIQ2_M: gguf.TypeIQ3_S,
	MixIQ3_XXS: gguf.TypeIQ3_S,
}

// tokenEmbdRule: the token embedding (with an output head of its own)
// gets tokenEmbdTypes' type.
func tokenEmbdRule(r *ruleArgs) (gguf.Type, string) {
	if t, ok := tokenEmbdTypes[r.mix]; ok {
		return r.give(t, "token embedding")
	}
	return r.keep()
}

// mxfp4MoERule: MXFP4_MOE gives the experts' tensors MXFP4 and the others
// Q8_0; for bailingmoe3, whose attention tensors are 3-D too, only the
// FFN's experts are MXFP4.
func mxfp4MoERule(r *ruleArgs) (gguf.Type, string) {
	ffn := r.cat == FFNUp || r.cat == FFNGate || r.cat == FFNDown
	if r.experts && (r.m.Arch != "bailingmoe3" || ffn) {
		return gguf.TypeMXFP4, "MXFP4_MOE: experts' tensor: MXFP4"
	}
	return gguf.TypeQ8_0, "MXFP4_MOE: not an experts' tensor: Q8_0"
}

// lowIQ is what an IQ1 or IQ2 mix gives beyond its base type: more to
// attention V without grouped-query attention or many experts and to FFN
// down in the first eighth of the layers, and attnOutput to attention
// output (the base type when F32, the zero Type).
type lowIQ struct{ more, attnOutput gguf.Type }

// lowIQs are the IQ1 and IQ2 mixes, whose rules (lowIQRule) replace the
// categories'.
var lowIQs = map[Mix]lowIQ{
	MixIQ2_XXS: {more: gguf.TypeQ2_K}, MixIQ2_XS: {more: gguf.TypeQ2_K},
	MixIQ1_S: {more: gguf.TypeQ2_K, attnOutput: gguf.TypeIQ2_XXS},
	MixIQ1_M: {more: gguf.TypeQ2_K, attnOutput: gguf.TypeIQ2_XXS},
	MixIQ2_S: {more: gguf.TypeIQ3_S, attnOutput: gguf.TypeIQ3_S},
	MixIQ2_M: {more: gguf.TypeIQ3_S, attnOutput: gguf.TypeIQ3_S},
}

// lowIQRule: the IQ1 and IQ2 mixes' rules, which replace the categories'
// but for the token embedding (tokenEmbdRule): attention V gets Q4_K with
// 4 or more heads per KV head or 4 or more experts, else the mix's more
// type, which FFN down gets in the first eighth of its tensors; attention
// K gets Q4_K in an 8-expert model, attention output Q5_K there, else the
// mix's attnOutput type. Neither the 70B nor falcon's adjustments apply.
func lowIQRule(r *ruleArgs) (gguf.Type, string) {
	l := lowIQs[r.mix]
	switch c := r.cat; {
	case c == TokenEmbd:
		return tokenEmbdRule(r)
	case c.attnVLike() && r.m.gqa() >= 4:
		return r.give(gguf.TypeQ4_K, fmt.Sprintf("%s with grouped-query attention "+
			"(%d heads per KV head ≥ 4)", c, r.m.gqa()))
	case c.attnVLike() && r.m.Experts >= 4:
		return r.give(gguf.TypeQ4_K, fmt.Sprintf("%s of a %d-expert model (≥ 4)", c, r.m.Experts))
	case c.attnVLike():
		return r.give(l.more, c.String())
	case c == AttnK && r.m.Experts == 8:
		return r.give(gguf.TypeQ4_K, "attn_k of an 8-expert model")
	case c == FFNDown && r.p.ffnRank < r.p.nFFN/8:
		return r.give(l.more, fmt.Sprintf("ffn_down tensor %d, in the first eighth of %d layers",
			r.p.ffnRank, r.p.nFFN))
	case c == AttnOutput && r.m.Experts == 8:
		return r.give(gguf.TypeQ5_K, "attn_output of an 8-expert model")
	case c == AttnOutput && l.attnOutput != gguf.TypeF32:
		return r.give(l.attnOutput, "attn_output")
	}
	return r.keep()
}

// attnVRule: attn_v and the fused projections holding it get more bits in
// the low mixes, with grouped-query attention and in use_more_bits layers;
// then a 70B model's and an 8-expert model's adjustments.
func attnVRule(r *ruleArgs) (gguf.Type, string) {
	t, why := attnVType(r)
	if r.m.is70B() && (t == gguf.TypeQ3_K || t == gguf.TypeQ4_K) {
		t, why = gguf.TypeQ5_K, why+"; a 70B model's small shared V: Q5_K"
	}
	if r.m.Experts == 8 {
		t, why = gguf.TypeQ8_0, why+"; an 8-expert model: Q8_0"
	}
	return t, why
}

// attnVGQATypes are attention V's types with 4 or more heads per KV head,
// in the mixes that have one.
var attnVGQATypes = map[Mix]gguf.Type{
	MixQ2_K: gguf.TypeQ4_K, MixQ2_K_S: gguf.TypeQ4_K, MixIQ3_XXS: gguf.TypeQ4_K,
	MixIQ3_XS: gguf.TypeQ4_K, MixIQ3_S: gguf.TypeQ4_K, MixIQ4_NL: gguf.TypeQ5_K,
	MixIQ4_XS: gguf.TypeQ5_K,
}

// attnVTypes are attention V's types in the mixes that give every one the
// same (without grouped-query attention, for those of attnVGQATypes).
var attnVTypes = map[Mix]gguf.Type{
	MixQ2_K: gguf.TypeQ3_K, MixQ3_K_L: gguf.TypeQ5_K, MixIQ3_M: gguf.TypeQ4_K,
}

// attnVType is attnVRule's choice by mix.
func attnVType(r *ruleArgs) (gguf.Type, string) {
	cat, name, gqa := r.cat, r.mix.name, r.m.gqa()
	i, n := r.p.attnV, r.p.nAttnV
	t, gqaOK := attnVGQATypes[r.mix]
	all, allOK := attnVTypes[r.mix]
	switch {
	case gqaOK && gqa >= 4:
		return t, fmt.Sprintf("%s: %s with grouped-query attention "+
			"(%d heads per KV head ≥ 4): %v", name, cat, gqa, t)
	case allOK:
		return r.give(all, cat.String())
	case r.mix == MixIQ3_XXS && !r.imatrix:
		return r.give(gguf.TypeIQ3_S, cat.String()+" without an importance matrix")
	case r.mix == MixQ3_K_M && i < 2:
		return gguf.TypeQ5_K, fmt.Sprintf("Q3_K_M: %s %d of %d, among the first 2: Q5_K", cat, i, n)
	case r.mix == MixQ3_K_M:
		return gguf.TypeQ4_K, fmt.Sprintf("Q3_K_M: %s: Q4_K", cat)
	case r.is(MixQ4_K_M, MixQ5_K_M) && useMoreBits(i, n):
		return gguf.TypeQ6_K, fmt.Sprintf("%s: %s %s (use_more_bits): Q6_K", name, cat, moreBitsWhy(i, n))
	case r.mix == MixQ4_K_S && i < 4:
		return gguf.TypeQ5_K, fmt.Sprintf("Q4_K_S: %s %d of %d, among the first 4: Q5_K", cat, i, n)
	}
	return r.keep()
}

// attnQKTypes are the types of attention Q and K (for K, but in an
// 8-expert model) in the mixes that give them other than the base type.
var attnQKTypes = map[Mix]gguf.Type{MixIQ3_XS: gguf.TypeIQ3_XXS, MixIQ3_XXS: gguf.TypeIQ2_S}

// attnKRule: attn_k of an 8-expert model gets Q8_0, else attnQKTypes'
// type.
func attnKRule(r *ruleArgs) (gguf.Type, string) {
	if r.m.Experts == 8 {
		return gguf.TypeQ8_0, r.mix.name + ": attn_k of an 8-expert model: Q8_0"
	}
	return attnQRule(r)
}

// attnQRule: attn_q gets attnQKTypes' type.
func attnQRule(r *ruleArgs) (gguf.Type, string) {
	if t, ok := attnQKTypes[r.mix]; ok {
		return r.give(t, r.cat.String())
	}
	return r.keep()
}

// ffnMiddleTypes are the types of FFN gate and up outside the first and
// the last eighth of the layers, in the mixes that have them.
var ffnMiddleTypes = map[Mix]gguf.Type{MixIQ3_XS: gguf.TypeIQ3_XXS}

// ffnGateUpRule: ffn_gate and ffn_up get ffnMiddleTypes' type between
// the first and the last eighth of the layers.
func ffnGateUpRule(r *ruleArgs) (gguf.Type, string) {
	i, n := r.p.ffn, r.p.nFFN
	if t, ok := ffnMiddleTypes[r.mix]; ok && i >= n/8 && i < 7*n/8 {
		return r.give(t, fmt.Sprintf("%s in layer %d of %d, between the first and the last eighth",
			r.cat, i, n))
	}
	return r.keep()
}

// ffnDownRule: ffn_down gets more bits in the low and _M mixes, in the
// first layers and the use_more_bits ones, with falcon's exceptions.
func ffnDownRule(r *ruleArgs) (gguf.Type, string) {
	i, n := r.p.ffn, r.p.nFFN
	switch r.mix {
	case MixQ2_K:
		return gguf.TypeQ3_K, "Q2_K: ffn_down: Q3_K"
	case MixQ2_K_S:
		if i < n/8 {
			return gguf.TypeQ4_K, fmt.Sprintf("Q2_K_S: ffn_down in layer %d of %d, in the first eighth: Q4_K", i, n)
		}
	case MixIQ3_XXS, MixIQ3_M:
		return ffnDownIQ3(r, i, n)
	case MixQ3_K_M:
		return ffnDownQ3KM(r, i, n)
	case MixQ3_K_L:
		if r.falcon() {
			return gguf.TypeQ4_K, "Q3_K_L: ffn_down of a falcon model: Q4_K"
		}
		return gguf.TypeQ5_K, "Q3_K_L: ffn_down: Q5_K"
	case MixQ4_K_M:
		return ffnDownQ4KM(r, i, n)
	case MixIQ4_NL, MixIQ4_XS:
		if i < n/8 && !r.imatrix {
			return gguf.TypeQ5_K, fmt.Sprintf("%s: ffn_down in layer %d of %d, in the first eighth, "+
				"without an importance matrix: Q5_K", r.mix.name, i, n)
		}
	case MixQ5_K_M:
		if useMoreBits(i, n) {
			return gguf.TypeQ6_K, fmt.Sprintf("Q5_K_M: ffn_down in layer %s (use_more_bits): Q6_K", moreBitsWhy(i, n))
		}
	case MixQ4_K_S:
		if !r.falcon() && i < n/8 {
			return gguf.TypeQ5_K, fmt.Sprintf("Q4_K_S: ffn_down in layer %d of %d, in the first eighth: Q5_K", i, n)
		}
	case MixQ4_0, MixQ5_0:
		if r.imatrix && i < n/8 {
			t := gguf.TypeQ4_1
			if r.mix == MixQ5_0 {
				t = gguf.TypeQ5_1
			}
			return t, fmt.Sprintf("%s: ffn_down in layer %d of %d, in the first eighth, "+
				"with an importance matrix: %v", r.mix.name, i, n, t)
		}
	}
	return r.keep()
}

// ffnDownIQ3 is IQ3_XXS's and IQ3_M's ffn_down rule for layer i of n:
// IQ3_XXS without an importance matrix gives Q4_K in the first eighth and
// Q3_K elsewhere; IQ3_M gives Q4_K in the first eighth and, in an
// 8-expert model, in the use_more_bits layers.
func ffnDownIQ3(r *ruleArgs, i, n int) (gguf.Type, string) {
	first := fmt.Sprintf("ffn_down in layer %d of %d, in the first eighth", i, n)
	switch xxs := r.mix == MixIQ3_XXS; {
	case xxs && r.imatrix:
	case xxs && i < n/8:
		return r.give(gguf.TypeQ4_K, first+", without an importance matrix")
	case xxs:
		return r.give(gguf.TypeQ3_K, "ffn_down without an importance matrix")
	case i < n/8:
		return r.give(gguf.TypeQ4_K, first)
	case r.m.Experts == 8 && useMoreBits(i, n):
		return r.give(gguf.TypeQ4_K, fmt.Sprintf("ffn_down of an 8-expert model in layer %s "+
			"(use_more_bits)", moreBitsWhy(i, n)))
	}
	return r.keep()
}

// ffnDownQ3KM is Q3_K_M's ffn_down rule for layer i of n.
func ffnDownQ3KM(r *ruleArgs, i, n int) (gguf.Type, string) {
	switch {
	case i < n/16:
		return gguf.TypeQ5_K, fmt.Sprintf("Q3_K_M: ffn_down in layer %d of %d, in the first sixteenth: Q5_K",
			i, n)
	case !r.falcon() || useMoreBits(i, n):
		return gguf.TypeQ4_K, "Q3_K_M: ffn_down: Q4_K"
	}
	return gguf.TypeQ3_K, "Q3_K_M: ffn_down of a falcon model outside use_more_bits: Q3_K"
}

// ffnDownQ4KM is Q4_K_M's ffn_down rule for layer i of n.
func ffnDownQ4KM(r *ruleArgs, i, n int) (gguf.Type, string) {
	switch {
	case r.falcon() && i < n/16:
		return gguf.TypeQ6_K, fmt.Sprintf("Q4_K_M: falcon ffn_down in layer %d of %d, "+
			"in the first sixteenth: Q6_K", i, n)
	case r.falcon() && useMoreBits(i, n):
		return gguf.TypeQ5_K, fmt.Sprintf("Q4_K_M: falcon ffn_down in layer %s (use_more_bits): Q5_K",
			moreBitsWhy(i, n))
	case !r.falcon() && useMoreBits(i, n):
		return gguf.TypeQ6_K, fmt.Sprintf("Q4_K_M: ffn_down in layer %s (use_more_bits): Q6_K",
			moreBitsWhy(i, n))
	}
	return r.keep()
}

// attnOutputTypes are attention output's types, but in a falcon or an
// 8-expert model, in the mixes that give it other than the base type.
var attnOutputTypes = map[Mix]gguf.Type{
	MixQ2_K: gguf.TypeQ3_K, MixQ3_K_M: gguf.TypeQ4_K, MixQ3_K_L: gguf.TypeQ5_K,
	MixIQ3_XXS: gguf.TypeIQ3_S, MixIQ3_M: gguf.TypeQ4_K,
}

// attnOutput8Experts are the mixes that give attention output Q5_K in an
// 8-expert model (not a falcon).
var attnOutput8Experts = map[Mix]bool{
	MixQ2_K: true, MixQ3_K_S: true, MixQ3_K_M: true, MixQ4_K_S: true, MixQ4_K_M: true,
	MixIQ4_NL: true, MixIQ4_XS: true, MixIQ3_XXS: true, MixIQ3_XS: true, MixIQ3_S: true,
	MixIQ3_M: true,
}

// attnOutputRule: attn_output gets more bits in the low mixes, with
// falcon's and 8-expert models' rules of their own.
func attnOutputRule(r *ruleArgs) (gguf.Type, string) {
	t, ok := attnOutputTypes[r.mix]
	switch {
	case r.falcon():
		if r.mix == MixQ3_K_L {
			return gguf.TypeQ4_K, "Q3_K_L: attn_output of a falcon model: Q4_K"
		}
	case r.m.Experts == 8:
		if attnOutput8Experts[r.mix] {
			return r.give(gguf.TypeQ5_K, "attn_output of an 8-expert model")
		}
	case ok:
		return r.give(t, "attn_output")
	}
	return r.keep()
}

// fallback is llama-quantize's replacement for a block type whose block
// does not divide the row length: the 256-element K and IQ types and the
// 1- and 2-bit types fall back to a 32-element type of similar size, and
// anything that still does not fit (or a 32-element type that does not)
// to F16. The other types of larger blocks (Q1_0, Q8_K, NVFP4) have no
// fallback: the error names the type.
func fallback(t gguf.Type, ne0 int) (gguf.Type, string, error) {
	why := misfit(t, ne0)
	if why == "" {
		return t, "", nil
	}
	var f gguf.Type
	switch t {
	case gguf.TypeIQ1_S, gguf.TypeIQ1_M, gguf.TypeIQ2_XXS, gguf.TypeIQ2_XS, gguf.TypeIQ2_S,
		gguf.TypeIQ3_XXS, gguf.TypeIQ3_S, gguf.TypeIQ4_XS:
		f = gguf.TypeIQ4_NL
	case gguf.TypeQ2_0, gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeTQ1_0, gguf.TypeTQ2_0:
		f = gguf.TypeQ4_0
	case gguf.TypeQ4_K:
		f = gguf.TypeQ5_0
	case gguf.TypeQ5_K:
		f = gguf.TypeQ5_1
	case gguf.TypeQ6_K:
		f = gguf.TypeQ8_0
	default:
		if t.BlockSize() > 32 {
			return 0, "", fmt.Errorf("%s, and %v has no fallback type (as in llama-quantize)", why, t)
		}
		f = gguf.TypeF16
	}
	if ne0%f.BlockSize() != 0 {
		f = gguf.TypeF16
	}
	return f, why + ": falls back to " + f.String(), nil
}

// misfit says why a row of ne0 values does not hold whole blocks of type
// t, and is "" when it does.
func misfit(t gguf.Type, ne0 int) string {
	if !t.Quantized() || ne0%t.BlockSize() == 0 {
		return ""
	}
	return fmt.Sprintf("row length %d is not a multiple of %v's block of %d", ne0, t, t.BlockSize())
}
