//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSelectNMStaysInBounds runs the N:M selection of every tier on floats
// and masks that end at an inaccessible page, for every pattern and whole
// number of groups up to three runs of 32 floats and a bit.
func TestSelectNMStaysInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	forEachTier(t, func(t *testing.T) {
		for _, p := range nmPatterns() {
			n, m := p[0], p[1]
			for l := m; l <= 3*32+16; l += m {
				src := guardedCopy(t, nmInput(r, l))
				dst := guardedTail[byte](t, PackedLen(l, 1))
				want := make([]byte, len(dst))
				selectNMTail(want, src, n, m)
				SelectNM(dst, src, n, m)
				require.Equal(t, want, dst, "%d:%d, %d floats", n, m, l)
			}
		}
	})
}
