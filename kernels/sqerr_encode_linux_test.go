//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

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

// TestMulSliceStaysInBounds runs MulSlice of every tier with both slices
// ending at an inaccessible page.
func TestMulSliceStaysInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 19))
	forEachTier(t, func(t *testing.T) {
		for n := 1; n <= 3*64+3; n++ {
			src := guardedCopy(t, edgeFloats(r, n))
			dst := guardedTail[float32](t, n)
			MulSlice(dst, src, 0.25)
			for i, x := range src {
				if w := x * 0.25; w == w {
					require.Equal(t, w, dst[i])
				}
			}
		}
	})
}
