package shape

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestElements(t *testing.T) {
	big := 1 << 20
	tests := []struct {
		dims   []int
		n, neg int
		ok     bool
	}{
		{nil, 1, -1, true}, // a scalar
		{[]int{}, 1, -1, true},
		{[]int{3, 4, 5}, 60, -1, true},
		{[]int{3, 0, 5}, 0, -1, true},
		{[]int{0, -1}, 0, 1, false}, // a zero does not hide a negative dimension
		{[]int{2, -3, 4}, 0, 1, false},
		{[]int{big, big, big}, 0, -1, false},           // 2^60: too many
		{[]int{big, big, big, -1}, 0, -1, false},       // the first problem wins
		{[]int{MaxElements, 1}, MaxElements, -1, true}, // the limit itself
		{[]int{MaxElements/2 + 1, 2}, 0, -1, false},
		{[]int{math.MaxInt, 0}, 0, -1, false},
	}
	for _, tc := range tests {
		n, neg, ok := Elements(tc.dims)
		assert.Equal(t, []any{tc.n, tc.neg, tc.ok}, []any{n, neg, ok}, "%v", tc.dims)
	}
}
