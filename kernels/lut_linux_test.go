//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLUTStaysInBounds runs the lookup-table and nibble kernels of every tier on
// slices (inputs, outputs, multipliers, scales and meta) that end at an
// inaccessible page, at every length up to three AVX-512 groups of 64 and a
// bit: the masked tails must not touch the bytes after a slice.
func TestLUTStaysInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	enc16 := newLUTCase(r, 16, 0x08, true)
	enc64 := newLUTCase(r, 50, 0, false)
	sel := newSelCase(r, 16, 40, 0x08, false)
	sel2 := newSelCase(r, 2, 13, 0x08, true)
	sel256 := newSelCase(r, 2, 256, 0x80, true)
	luts := make([]float32, 16*4)
	for i := range luts {
		luts[i] = float32(i)
	}
	forEachTier(t, func(t *testing.T) {
		for n := 1; n <= 3*64+3; n++ {
			codes := guardedTail[uint8](t, n)
			for i := range codes {
				codes[i] = uint8(r.Uint32())
			}
			packed := guardedTail[byte](t, PackedLen(n, 4))
			want := make([]byte, len(packed))
			packBitsGo(want, codes, 4)
			PackBits(packed, codes, 4)
			require.Equal(t, want, packed, "pack nibbles %d", n)
			unpackBitsGo(codes, packed, 4)
			back := guardedTail[uint8](t, n)
			UnpackBits(back, packed, 4)
			require.Equal(t, codes, back, "unpack nibbles %d", n)
			for _, group := range []int{2, 4, 8, 32, 48} {
				block := 2 * group
				nb, ng := (n+block-1)/block, (n+group-1)/group
				x := guardedCopy(t, lutInputs(r, sel.bounds, n))
				muls := guardedTail[float32](t, nb)
				scales := guardedTail[float32](t, nb)
				for i := range muls {
					muls[i], scales[i] = edgeMul(r), edgeMul(r)
				}
				codes := guardedTail[uint8](t, n)
				for _, c := range []lutCase{enc16, enc64} {
					want := make([]uint8, n)
					lutEncodeBlocksGo(c.e, want, x, block, muls)
					c.e.EncodeBlocks(codes, x, block, muls)
					require.Equal(t, want, codes, "encode n %d block %d", n, block)
				}
				meta := guardedTail[uint8](t, ng)
				for _, s := range []selCase{sel, sel2, sel256} {
					wantC, wantM := make([]uint8, n), make([]uint8, ng)
					lutSelectGo(s.s, wantC, wantM, x, group, block, muls, scales)
					s.s.Select(codes, meta, x, group, block, muls, scales)
					require.Equal(t, wantM, meta, "select meta n %d group %d", n, group)
					require.Equal(t, wantC, codes, "select codes n %d group %d", n, group)
				}
				dst := guardedTail[float32](t, n)
				want := make([]float32, n)
				lutDecodeGroupsGo(want, codes, meta, group, block, 16, luts, scales)
				LUTDecodeGroups(dst, codes, meta, group, block, 16, luts, scales)
				requireSame(t, floatBits(want), floatBits(dst), "decode groups n %d", n)
				lutDecodeGroupsGo(want, codes, meta, group, block, 32, luts[:32], scales)
				LUTDecodeGroups(dst, codes, meta, group, block, 32, luts[:32], scales)
				requireSame(t, floatBits(want), floatBits(dst), "decode groups (gather) n %d", n)
			}
		}
	})
}
