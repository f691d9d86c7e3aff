//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSearchIntSymStaysInBounds runs searchIntSym of every tier on slices
// that end at an inaccessible page (values, codes and scales), for lengths
// around whole groups, vectors and chunks.
func TestSearchIntSymStaysInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 50))
	forEachTier(t, func(t *testing.T) {
		for _, group := range []int{16, 32, 128, 0} {
			for _, n := range []int{1, 15, 16, 17, 127, 128, 130, 255, 256, 2048 + 16, 8192 + 128, 3 * 8192} {
				for _, bits := range []int{8, 4} {
					for _, f := range []ScaleFormat{ScaleFloat16, ScaleFloat32} {
						g := IntGroups{Bits: bits, Group: group, Scale: f}
						_, _, groups := g.geometry("test", n)
						src := guardedCopy(t, intSearchInput(r, n))
						codes := guardedTail[byte](t, g.codeBytes(n))
						scales := guardedTail[byte](t, groups*f.Bytes())
						wc, ws := make([]byte, len(codes)), make([]byte, len(scales))
						searchIntSymGo(wc, ws, src, g)
						clearLastNibble(wc, n, bits)
						searchIntSym(codes, scales, src, g)
						require.Equal(t, wc, []byte(codes), "n %d group %d bits %d", n, group, bits)
						require.Equal(t, ws, []byte(scales), "n %d group %d bits %d", n, group, bits)
					}
				}
			}
		}
	})
}
