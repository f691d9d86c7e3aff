//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestSearchE2M1StaysInBounds runs searchMXFP4 and searchNVFP4 of every
// tier with the values, the codes and the scales each ending at an
// inaccessible page.
func TestSearchE2M1StaysInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 41))
	forEachTier(t, func(t *testing.T) {
		for _, nb := range []int{1, 2, 15, 16, 17, 31, 32, 33, 48} {
			x := searchE2M1Input(r, nb, mxBlock)
			want, wantS := make([]byte, len(x)/2), make([]byte, nb)
			searchMXFP4Go(want, wantS, x)
			checkSearchMXFP4(t, guardedTail[byte](t, len(x)/2), guardedTail[byte](t, nb), guardedCopy(t, x),
				want, wantS, "mxfp4 nb=%d", nb)
			wantN, wantNS := make([]byte, len(x)/2), make([]byte, 2*nb)
			searchNVFP4Go(wantN, wantNS, x, 1.0/2688)
			checkSearchNVFP4(t, guardedTail[byte](t, len(x)/2), guardedTail[byte](t, 2*nb), guardedCopy(t, x),
				1.0/2688, wantN, wantNS, "nvfp4 nb=%d", 2*nb)
		}
	})
}
