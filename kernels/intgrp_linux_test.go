//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIntGroupsStayInBounds runs the integer-group kernels of every tier on
// slices that end at an inaccessible page (codes, scales, zero points and
// values), for lengths around whole groups and vectors.
func TestIntGroupsStayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	forEachTier(t, func(t *testing.T) {
		for _, group := range []int{16, 32, 64, 0} {
			for n := 1; n <= 200; n += 1 + r.IntN(7) {
				for _, bits := range []int{8, 4} {
					g := IntGroups{Bits: bits, Group: group, Scale: ScaleFloat16}
					_, _, groups := g.geometry("test", n)
					src := guardedTail[float32](t, n)
					copy(src, groupInput(r, n))
					codes := guardedTail[byte](t, g.codeBytes(n))
					scales := guardedTail[byte](t, 2*groups)
					zeros := guardedTail[byte](t, groups)
					wc, ws := make([]byte, len(codes)), make([]byte, len(scales))
					quantIntSymGo(wc, ws, src, g)
					clearLastNibble(wc, n, bits)
					QuantizeIntSym(codes, scales, src, g)
					require.Equal(t, wc, []byte(codes), "n %d group %d bits %d", n, group, bits)
					dst := guardedTail[float32](t, n)
					DequantizeIntSym(dst, codes, scales, g)
					QuantizeIntAsym(codes, scales, zeros, src, g)
					DequantizeIntAsym(dst, codes, scales, zeros, g)
				}
			}
		}
	})
}
