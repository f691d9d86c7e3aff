package golden

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDiff(t *testing.T) {
	assert.Equal(t, "", Diff("a\nb\n", "b\na\n"), "the same lines in another order")
	assert.Equal(t, "- b\n+ c\n+ d\n", Diff("a\nb", "a\nc\nd"))
	assert.Equal(t, "- x\n", Diff("x\ny", "y"))
}
