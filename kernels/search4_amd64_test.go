//go:build amd64 && !purego

package kernels

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSearchE2M1Redo: on gaussian data the AVX-512 search kernels settle
// nearly every block by their float32 estimates (the Go reference redoes
// fewer than 1 in 500), and blocks where two candidates' errors tie exactly
// are left to the reference. Without the kernels (CPU below AVX-512 DQ)
// there is nothing to count.
func TestSearchE2M1Redo(t *testing.T) {
	if hwTier < tierAVX512 || !hasSearchAVX512 {
		return
	}
	r := rand.New(rand.NewPCG(14, 45))
	x := make([]float32, 1<<18)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	count := func(redo []uint16) int {
		n := 0
		for _, m := range redo {
			n += bits.OnesCount16(m)
		}
		return n
	}
	redo := make([]uint16, len(x)/(e2m1SearchGroup*mxBlock))
	searchMXFP4AVX512(make([]byte, len(x)/2), make([]byte, len(x)/mxBlock), x, redo)
	require.Less(t, count(redo), len(x)/mxBlock/500, "mxfp4")
	redo = make([]uint16, len(x)/(e2m1SearchGroup*nvfp4Block))
	st := math.Float32frombits(AbsMaxBits(x)) / 2688
	searchNVFP4AVX512(make([]byte, len(x)/2), make([]byte, len(x)/nvfp4Block), x, st, 6*st, redo)
	require.Less(t, count(redo), len(x)/nvfp4Block/500, "nvfp4")

	// Blocks of 4 and 0s: exact at the rule's scale 2^0 and at 2^1 (4 =
	// 2·2), a tie that only the float64 sums may decide.
	y := make([]float32, e2m1SearchGroup*mxBlock)
	for i := 0; i < len(y); i += 4 {
		y[i] = 4
	}
	redo = make([]uint16, 1)
	searchMXFP4AVX512(make([]byte, len(y)/2), make([]byte, len(y)/mxBlock), y, redo)
	require.Equal(t, []uint16{0xffff}, redo, "mxfp4 ties")
}
