package ggufmix

import (
	"regexp"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/internal/names"
)

// overrideTypes are the types an override may ask for: the float types and
// the block types the gguf layout writes (but Q8_K, which llama.cpp keeps
// for its dot products); a test ties the list to the layout's.
var overrideTypes = []gguf.Type{
	gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16,
	gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1, gguf.TypeQ8_0,
	gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K,
	gguf.TypeIQ4_NL, gguf.TypeIQ4_XS, gguf.TypeIQ3_S, gguf.TypeIQ3_XXS, gguf.TypeIQ2_S,
	gguf.TypeIQ2_XS, gguf.TypeIQ2_XXS, gguf.TypeIQ1_M, gguf.TypeIQ1_S, gguf.TypeMXFP4,
	gguf.TypeTQ1_0, gguf.TypeTQ2_0, gguf.TypeQ1_0, gguf.TypeQ2_0,
}

// Override forces a type on the tensors whose name matches a regular
// expression, like llama-quantize's --tensor-type. Build one with
// ParseOverride.
type Override struct {
	// Value is the text it was parsed from ("ffn_down=q6_k").
	Value string
	// Pattern matches anywhere in a tensor name (Go regexp syntax,
	// unanchored: "ffn_down" matches "blk.0.ffn_down.weight").
	Pattern *regexp.Regexp
	// Type is the type matching tensors get (before the row-length
	// fallback).
	Type gguf.Type
}

// ParseOverride parses "REGEXP=TYPE", as llama-quantize's --tensor-type
// takes it: the text after the last '=' is a type name (case-insensitive:
// "q6_k", "Q8_0", "f16"), the text before it a regular expression matched
// anywhere in the tensor name. An empty pattern, a bad regular expression
// or an unknown type is an *OverrideError naming the value.
func ParseOverride(s string) (Override, error) {
	i := strings.LastIndexByte(s, '=')
	if i < 0 {
		return Override{}, &OverrideError{Value: s, Reason: "want REGEXP=TYPE"}
	}
	pat, typ := s[:i], strings.TrimSpace(s[i+1:])
	if pat == "" {
		return Override{}, &OverrideError{Value: s, Reason: "empty tensor name pattern"}
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return Override{}, &OverrideError{Value: s, Reason: "bad regular expression", Err: err}
	}
	t, oe := parseType(typ)
	if oe != nil {
		oe.Value = s
		return Override{}, oe
	}
	return Override{Value: s, Pattern: re, Type: t}, nil
}

// ParseOverrides parses each value with ParseOverride, keeping their
// order (the first match wins).
func ParseOverrides(values []string) ([]Override, error) {
	out := make([]Override, 0, len(values))
	for _, v := range values {
		o, err := ParseOverride(v)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// ParseType returns the ggml type named s, case-insensitively ("q8_0",
// "Q6_K", "f16"), among the types an Override may ask for; any other name
// is an *OverrideError whose Value is s, listing the closest names.
func ParseType(s string) (gguf.Type, error) {
	t, err := parseType(strings.TrimSpace(s))
	if err != nil {
		err.Value = s
		return 0, err
	}
	return t, nil
}

// parseType returns the override type named s, case-insensitively.
func parseType(s string) (gguf.Type, *OverrideError) {
	if s == "" {
		return 0, &OverrideError{Reason: "missing type after '='"}
	}
	if strings.EqualFold(s, gguf.TypeQ8_K.String()) {
		return 0, &OverrideError{Reason: "Q8_K is ggml's intermediate for dot products, " +
			"not a weight type llama.cpp computes with: use q8_0 (8.5 bits per value)",
			Generic: strings.ToLower(gguf.TypeQ8_K.String())}
	}
	known := make([]string, len(overrideTypes))
	for i, t := range overrideTypes {
		if strings.EqualFold(t.String(), s) {
			return t, nil
		}
		known[i] = strings.ToLower(t.String())
	}
	return 0, &OverrideError{Reason: "unknown type " + quote(s), Closest: names.Closest(s, known, 3)}
}

// Match returns the first of overrides whose pattern matches name (the
// first override given wins), and false when none does.
func Match(overrides []Override, name string) (Override, bool) {
	for _, o := range overrides {
		if o.Pattern != nil && o.Pattern.MatchString(name) {
			return o, true
		}
	}
	return Override{}, false
}

// override gives d the type of the first of overrides matching its name,
// with the words the report shows, and reports whether one matched.
func override(overrides []Override, d *Decision) bool {
	o, ok := Match(overrides, d.Name)
	if ok {
		d.Type, d.Override, d.Asked = o.Type, o.Value, true
		d.Reason = "override " + o.Value + ": " + o.Type.String()
	}
	return ok
}

// Overridden decides tensor t by the first of overrides matching its name
// alone, for output without a mix (one type for every other weight): the
// decision as a mix would make it (type, override value, reason), and
// false when no override matches. A row length the type's block does not
// divide falls back as in a mix when fallBack is set, and is otherwise a
// *TensorError naming the tensor, the value and the row length.
func Overridden(overrides []Override, t Tensor, fallBack bool) (Decision, bool, error) {
	d := Decision{Name: t.Name, Category: CategoryOf(t.Name), Layer: LayerOf(t.Name), Quantize: true}
	if !override(overrides, &d) {
		return Decision{}, false, nil
	}
	ne0, err := rowLength(t)
	if err != nil {
		return Decision{}, true, err
	}
	if why := misfit(d.Type, ne0); why != "" && !fallBack {
		return Decision{}, true, &TensorError{Name: t.Name, Reason: "override " + d.Override + ": " + why}
	}
	if err := d.fallBack(ne0); err != nil {
		return Decision{}, true, err
	}
	return d, true, nil
}

// Overrides is a list of overrides that works as a repeatable command-line
// flag (flag.Value): each value is parsed with ParseOverride and appended,
// so the first one given wins.
type Overrides []Override

// Set parses one REGEXP=TYPE value and appends it.
func (o *Overrides) Set(v string) error {
	x, err := ParseOverride(v)
	if err != nil {
		return err
	}
	*o = append(*o, x)
	return nil
}

// String returns the values, comma-separated.
func (o *Overrides) String() string {
	if o == nil {
		return ""
	}
	vs := make([]string, len(*o))
	for i, x := range *o {
		vs[i] = x.Value
	}
	return strings.Join(vs, ",")
}
