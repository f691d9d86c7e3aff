package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

var amaxBlockSizes = []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 257}

// TestAbsMaxBlocksTiers checks every tier's AbsMaxBlocks, AbsMaxBlocksMasked,
// AbsMaxBits and AbsMaxBitsMasked against the Go reference, on edge-heavy
// random data, all-zero data, every offset into a 16-float vector, and a
// spread of lengths and block sizes.
func TestAbsMaxBlocksTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	base := edgeFloats(r, 4099+16)
	keepBase := make([]bool, len(base))
	for i := range keepBase {
		keepBase[i] = r.IntN(3) != 0
	}
	zeros := make([]float32, len(base))
	forEachTier(t, func(t *testing.T) {
		for _, n := range testLengths() {
			off := n % 16
			for _, data := range [][]float32{base, zeros} {
				src := data[off : off+n]
				keep := keepBase[off : off+n]
				require.Equal(t, absMaxBitsGo(src), AbsMaxBits(src), "AbsMaxBits n=%d", n)
				require.Equal(t, absMaxBitsMaskedGo(src, keep), AbsMaxBitsMasked(src, keep), "AbsMaxBitsMasked n=%d", n)
				for _, block := range amaxBlockSizes {
					nb := (n + block - 1) / block
					want := make([]uint32, nb+1)
					got := make([]uint32, nb+1)
					want[nb], got[nb] = 0xdead, 0xdead
					absMaxBlocksGo(want[:nb], src, block)
					AbsMaxBlocks(got, src, block)
					requireSame(t, want, got, "AbsMaxBlocks n=%d block=%d", n, block)
					absMaxBlocksMaskedGo(want[:nb], src, keep, block)
					AbsMaxBlocksMasked(got, src, keep, block)
					requireSame(t, want, got, "AbsMaxBlocksMasked n=%d block=%d", n, block)
				}
			}
		}
	})
}
