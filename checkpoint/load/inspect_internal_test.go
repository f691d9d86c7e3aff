package load

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNaturalCompareAndMaskDensity(t *testing.T) {
	names := []string{"model.layers.10.x", "model.layers.2.x", "lm_head", "model.layers.2", "a01", "a1", "a2b", "a10"}
	slices.SortFunc(names, naturalCompare)
	assert.Equal(t, []string{"a1", "a01", "a2b", "a10", "lm_head", "model.layers.2", "model.layers.2.x", "model.layers.10.x"}, names)

	for _, c := range []struct {
		b      []byte
		n      int
		packed bool
		want   float64
	}{
		{[]byte{0xff}, 8, true, 1},
		{[]byte{0x0f}, 4, true, 1},
		{[]byte{0xf0}, 4, true, 0}, // bits beyond n are ignored
		{[]byte{0x01, 0x80}, 16, true, 2.0 / 16},
		{[]byte{0x55, 0x01}, 9, true, 5.0 / 9},
		{[]byte{1, 0, 7, 0}, 4, false, 0.5},
	} {
		got, err := maskDensity(c.b, c.n, c.packed)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%x/%d", c.b, c.n)
	}
	_, err := maskDensity([]byte{1}, 9, true)
	assert.Error(t, err)
}
