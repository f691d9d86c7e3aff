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
					src := guardedCopy(t, groupInput(r, n))
					codes := guardedTail[byte](t, g.codeBytes(n))
					scales := guardedTail[byte](t, 2*groups)
					zeros := guardedTail[byte](t, groups)
					wc, ws := make([]byte, len(codes)), make([]byte, len(scales))
					quantIntSymGo(wc, ws, src, g)
					clearLastNibble(wc, n, bits)
					quantizeIntSym(codes, scales, src, g)
					require.Equal(t, wc, []byte(codes), "n %d group %d bits %d", n, group, bits)
					dst := guardedTail[float32](t, n)
					dequantizeIntSym(dst, codes, scales, g)
					quantizeIntAsym(codes, scales, zeros, src, g)
					dequantizeIntAsym(dst, codes, scales, zeros, g)
				}
			}
		}
	})
}

// TestE4M3StayInBounds runs the E4M3 kernels of every tier on slices that
// end at an inaccessible page, for lengths around whole tiles and vectors.
func TestE4M3StayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	forEachTier(t, func(t *testing.T) {
		for _, tl := range []FP8Tiles{{}, {Cols: 0, TileCols: 16}, {Cols: 0, TileCols: 64}} {
			for n := 1; n <= 200; n += 1 + r.IntN(5) {
				_, _, _, _, _, tiles := tl.geometry("test", n)
				src := guardedCopy(t, fp8Input(r, n))
				codes := guardedTail[byte](t, n)
				scales := guardedTail[byte](t, 4*tiles)
				wc := make([]byte, n)
				quantE4M3Go(wc, make([]byte, 4*tiles), src, tl)
				quantizeE4M3(codes, scales, src, tl)
				require.Equal(t, wc, []byte(codes), "n %d %+v", n, tl)
				dst := guardedTail[float32](t, n)
				dequantizeE4M3(dst, codes, scales, tl)
			}
		}
	})
}

// TestMaskStayInBounds runs the mask kernels of every tier on slices that
// end at an inaccessible page: packing, unpacking, selecting into a dst of
// the selected count exactly and expanding from a src of that count.
func TestMaskStayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 50))
	forEachTier(t, func(t *testing.T) {
		for n := 1; n <= 300; n += 1 + r.IntN(3) {
			keep := guardedTail[byte](t, n)
			for i := range keep {
				keep[i] = byte(r.IntN(2))
			}
			packed := guardedTail[byte](t, PackedLen(n, 1))
			PackBits(packed, keep, 1)
			back := guardedTail[byte](t, n)
			UnpackBits(back, packed, 1)
			require.Equal(t, []byte(keep), []byte(back))
			cnt := CountMask(packed, n)
			src := guardedTail[float32](t, n)
			sel := guardedTail[float32](t, cnt)
			require.Equal(t, cnt, SelectMasked(sel, src, packed))
			dst := guardedTail[float32](t, n)
			require.Equal(t, cnt, ExpandMasked(dst, sel, packed))
		}
	})
}
