//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestSqErrE2M1BlocksStayInBounds runs SqErrE2M1Blocks of every tier with
// the values, the candidates and the errors each ending at an inaccessible
// page.
func TestSqErrE2M1BlocksStayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 17))
	forEachTier(t, func(t *testing.T) {
		for _, blockLen := range []int{1, 3, 32} {
			for nb := 1; nb <= 25; nb++ {
				x, mul, dmul := sqErrBlocksInput(r, "gauss", nb, blockLen, 3)
				checkSqErrBlocks(t, guardedTail[float64](t, len(mul)), guardedCopy(t, x), blockLen,
					guardedCopy(t, mul), guardedCopy(t, dmul), "blockLen=%d nb=%d", blockLen, nb)
			}
		}
	})
}

// TestEncodeE2M1StaysInBounds runs the E2M1 slice encoder of every tier with
// the values and the codes ending at an inaccessible page.
func TestEncodeE2M1StaysInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 18))
	forEachTier(t, func(t *testing.T) {
		for n := 1; n <= 3*64+3; n++ {
			checkEncodeE2M1(t, guardedTail[uint8](t, n), guardedCopy(t, e2m1EncodeInput(r, n)), "n=%d", n)
		}
	})
}
