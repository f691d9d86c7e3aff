package names

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"e4m3", "e4m3", 0}, {"e4m3", "e5m3", 1}, {"mxfp3", "mxfp4", 1}, {"kitten", "sitting", 3}, {"", "abc", 3},
		// Adjacent swaps count one edit (optimal string alignment).
		{"mxpf4", "mxfp4", 1}, {"ab", "ba", 1}, {"ca", "abc", 3}, {"gguff", "gguf", 1}} {
		assert.Equal(t, tc.d, EditDistance(tc.a, tc.b), "%q %q", tc.a, tc.b)
	}
	assert.Greater(t, EditDistance(strings.Repeat("a", 65), "a"), 1000)
}

func TestClosest(t *testing.T) {
	known := []string{"mxfp4", "mxfp6", "mxfp8", "nvfp4", "mxint8", "mxfp4"}
	assert.Equal(t, []string{"mxfp4", "mxfp6", "mxfp8"}, Closest("mxfp3", known, 3))
	assert.Equal(t, []string{"mxfp4"}, Closest("MXFP4", known, 1))
	assert.Empty(t, Closest("completely-different", known, 3))
	// A swapped pair of letters ranks the intended name first.
	assert.Equal(t, "mxfp4", Closest("mxpf4", []string{"mx4", "mxbf6", "mxbf8", "mxfp4"}, 3)[0])
}

// TestClosestSpelling checks that names differing only in separators are
// nearest ("q4km" is Q4_K_M without its underscores), ties broken by the
// distance as written.
func TestClosestSpelling(t *testing.T) {
	known := []string{"Q4_0", "Q4_K_S", "Q4_K_M", "Q5_K_M", "q4_0", "q4_1", "q4_k", "mxfp4"}
	for _, c := range []struct {
		key  string
		want []string
	}{
		// Stripped: q4km is 0 from q4km, 1 from q4k, q4ks and q5km; as
		// written "q4km" is 2 edits from q4_k, 3 from Q4_K_S and Q5_K_M.
		{"q4km", []string{"Q4_K_M", "q4_k", "Q4_K_S"}},
		// q4kx is 1 from q4ks, q4km and q4k; as written 1, 1 and 2.
		{"Q4_K_X", []string{"Q4_K_S", "Q4_K_M", "q4_k"}},
		{"mx-fp4", []string{"mxfp4"}},
		{"completely-different", []string{}},
	} {
		assert.Equal(t, c.want, ClosestSpelling(c.key, known, 3), c.key)
	}
}
