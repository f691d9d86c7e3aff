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
			want, got := errorInputs(r, n, false)
			checkErrorSums(t, guardedCopy(t, want), guardedCopy(t, got), "n=%d", n)
		}
	})
}
