//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLUTSelectWeightedStaysInBounds runs SelectWeighted on every tier on
// slices (values, weights, codes, meta, multipliers, scales) that end at an
// inaccessible page, at every length up to three groups of 64 and a bit.
func TestLUTSelectWeightedStaysInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	sels := []selCase{newSelCase(r, 16, 40, 0x08, false), newSelCase(r, 2, 13, 0x08, true), newSelCase(r, 8, 256, 0x80, true)}
	forEachTier(t, func(t *testing.T) {
		for n := 1; n <= 3*64+3; n++ {
			for _, group := range []int{2, 4, 8, 32, 48} {
				block := 2 * group
				nb, ng := (n+block-1)/block, (n+group-1)/group
				x := guardedCopy(t, lutInputs(r, sels[0].bounds, n))
				w := guardedTail[float32](t, n)
				for i := range w {
					w[i] = float32(r.ExpFloat64())
				}
				muls := guardedTail[float32](t, nb)
				scales := guardedTail[float32](t, nb)
				for i := range muls {
					muls[i], scales[i] = edgeMul(r), edgeMul(r)
				}
				codes := guardedTail[uint8](t, n)
				meta := guardedTail[uint8](t, ng)
				for _, s := range sels {
					wantC, wantM := make([]uint8, n), make([]uint8, ng)
					lutSelectWeightedGo(s.s, wantC, wantM, x, w, group, block, muls, scales)
					s.s.SelectWeighted(codes, meta, x, w, group, block, muls, scales)
					require.Equal(t, wantM, meta, "meta n %d group %d", n, group)
					require.Equal(t, wantC, codes, "codes n %d group %d", n, group)
				}
			}
		}
	})
}
