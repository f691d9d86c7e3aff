package scale

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSpecTokens pins how a spec splits into segments before they are
// parsed: trimmed, lower-cased, a "multi_" prefix taken off and reported.
func TestSpecTokens(t *testing.T) {
	for _, c := range []struct {
		in     string
		toks   []string
		multi  bool
		reason string
	}{
		{" E8M0_T32 ", []string{"e8m0", "t32"}, false, ""},
		{"multi_float16_float32_t16", []string{"float16", "float32", "t16"}, true, ""},
		{"MULTI_e8m0", []string{"e8m0"}, true, ""},
		{"", nil, false, "empty spec"},
		{"multi_", nil, false, `"multi_" with no number specs after it`},
		{"e8m0 _t32", nil, false, "white space inside the spec"},
		{"e8m0__t32", nil, false, `empty segment 2 (doubled, leading or trailing "_")`},
		{"_e8m0", nil, false, `empty segment 1 (doubled, leading or trailing "_")`},
	} {
		toks, multi, reason := specTokens(c.in)
		assert.Equal(t, c.toks, toks, "%q", c.in)
		assert.Equal(t, c.multi, multi, "%q", c.in)
		assert.Equal(t, c.reason, reason, "%q", c.in)
	}
}
