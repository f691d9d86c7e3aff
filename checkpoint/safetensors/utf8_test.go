package safetensors

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestInvalidUTF8 pins the offset the header's and the index's UTF-8
// errors report: the first byte that starts no valid sequence.
func TestInvalidUTF8(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"é€😀", 9},
		{"ab\xffcd", 2},
		{"\x80", 0},
		{"é\xc3", 2},         // a sequence cut short
		{"a\xed\xa0\x80", 1}, // a surrogate
	} {
		assert.Equal(t, c.want, invalidUTF8([]byte(c.in)), "%q", c.in)
	}
}
