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
