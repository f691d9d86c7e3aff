package tcast

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaskedNaNBlockStoresDroppedAsZero casts with a keep mask a tensor
// whose first block holds a NaN: the block gets the NaN policy (its kept
// elements the E4M3 NaN code 0x7F, docs/NUMERICS.md §4.2 and §6), while
// its dropped elements are stored as zero, as in every other block, on the
// block-by-block path and the kernels' alike.
func TestMaskedNaNBlockStoresDroppedAsZero(t *testing.T) {
	shape := []int{2, 64}
	x := make([]float32, 128)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	x[0] = float32(math.NaN())
	keep := make([]bool, 128)
	for i := range keep {
		keep[i] = true
	}
	dropped := []int{1, 2, 3, 40, 65}
	for _, i := range dropped {
		keep[i] = false
	}
	m := keepMask(t, shape, keep)
	for _, c := range []struct {
		name    string
		nanEnds int // the kept elements before this index are NaN codes
	}{
		{"mxfp8e4", 32}, // the first block of 32
		{"fp8e4_tensor", 128},
		{"fp8e4_block128", 128}, // one 128×128 tile holds the tensor
	} {
		dt := MustLookup(c.name)
		for _, kernel := range []bool{false, true} {
			msg := fmt.Sprintf("%s kernel=%v", c.name, kernel)
			opts := &Options{Form: Actual, Keep: m}
			got, err := cast(x, shape, dt, opts, kernel)
			require.NoError(t, err, msg)
			codes := got.Data.Bytes
			require.Len(t, codes, 128, msg)
			for _, i := range dropped {
				assert.Equal(t, byte(0), codes[i], "%s: dropped element %d", msg, i)
			}
			for i := 0; i < c.nanEnds; i++ {
				if keep[i] {
					assert.Equal(t, byte(0x7f), codes[i], "%s: kept element %d of the NaN block", msg, i)
				}
			}
		}
	}
}
