package ggufmix

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseOverride: ParseOverride never panics on a -type-for value; it
// refuses it with an *OverrideError naming the value, or gives an override
// whose type is a known ggml type named by the text after the last '='
// (spaces around it ignored), whose pattern is the text before it, and
// which parses again from the type's own name. testdata/fuzz holds a value
// with a space before its type, which the fuzzer found.
func FuzzParseOverride(f *testing.F) {
	for _, s := range []string{"ffn_down=q6_k", `blk\.[0-3]\.attn_v=Q8_0`, "token_embd=f16", "output.weight=BF16",
		"a=b=q4_k", "=q4_k", "x=", "ffn_down", "(=q4_0", "x=q7_k", `\p{=iq4_xs`, "x=mxfp4", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOverride(s)
		if err != nil {
			var oe *OverrideError
			if !errors.As(err, &oe) || oe.Value != s {
				t.Fatalf("%q: %T %v", s, err, err)
			}
			return
		}
		i := strings.LastIndexByte(s, '=')
		if i <= 0 || o.Value != s || o.Pattern == nil || o.Pattern.String() != s[:i] {
			t.Fatalf("%q: override %+v", s, o)
		}
		if !strings.EqualFold(o.Type.String(), strings.TrimSpace(s[i+1:])) { // spaces around the type are ignored
			t.Fatalf("%q: type %v", s, o.Type)
		}
		again, err := ParseOverride(s[:i] + "=" + o.Type.String())
		if err != nil || again.Type != o.Type {
			t.Fatalf("%q: the type's own name %q does not parse back: %v", s, o.Type, err)
		}
	})
}
