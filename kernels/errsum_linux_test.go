//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestErrorSumsStayInBounds runs ErrorSums of every tier on slices that end
// at an inaccessible page, for every length up to three vectors and a bit.
func TestErrorSumsStayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	forEachTier(t, func(t *testing.T) {
		for n := 1; n <= 3*64+3; n++ {
			want, got := guardedTail[float32](t, n), guardedTail[float32](t, n)
			w, g := errorInputs(r, n, false)
			copy(want, w)
			copy(got, g)
			checkErrorSums(t, want, got, "n=%d", n)
		}
	})
}
