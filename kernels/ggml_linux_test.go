//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGGMLStayInBounds runs the ggml block codecs of every tier on slices
// that end at an inaccessible page, for every block count up to 40: a kernel
// that reads or writes past a block faults.
func TestGGMLStayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	forEachTier(t, func(t *testing.T) {
		for nb := 1; nb <= 40; nb++ {
			src := guardedCopy(t, ggmlBlocks(r, nb))
			q8 := guardedTail[byte](t, nb*q8_0BlockBytes)
			q4 := guardedTail[byte](t, nb*q4_0BlockBytes)
			want8, want4 := make([]byte, len(q8)), make([]byte, len(q4))
			quantQ8_0Go(want8, src)
			quantQ4_0Go(want4, src)
			quantizeQ8_0(q8, src)
			quantizeQ4_0(q4, src)
			require.Equal(t, want8, []byte(q8))
			require.Equal(t, want4, []byte(q4))
			dst := guardedTail[float32](t, nb*ggmlBlock)
			dequantizeQ8_0(dst, q8)
			dequantizeQ4_0(dst, q4)
		}
	})
}

// TestKDeqStayInBounds runs every tier's K-quant, IQ4 and 32-element affine
// decoders on slices that end at an inaccessible page, for every block count
// up to 12: a kernel that reads or writes past a block faults.
func TestKDeqStayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	forEachTier(t, func(t *testing.T) {
		for _, c := range kdeqCases {
			for nb := 0; nb <= 12; nb++ {
				src := guardedCopy(t, kdeqBlocks(r, c, nb))
				want := make([]float32, nb*c.elems)
				c.ref(want, src)
				dst := guardedTail[float32](t, nb*c.elems)
				c.run(dst, src)
				requireSame(t, floatBits(want), floatBits(dst), "%s, %d blocks", c.name, nb)
			}
		}
	})
}

// TestWeightedErrorSumsStayInBounds runs every tier's weighted error sums
// on slices that end at an inaccessible page, for every length up to 40.
func TestWeightedErrorSumsStayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	forEachTier(t, func(t *testing.T) {
		for n := 0; n <= 40; n++ {
			w, want, got := weightedInputs(r, n)
			var s0, n0, s1, n1 [ErrorLanes]float64
			weightedErrorSumsGo(&s0, &n0, w, want, got)
			canonicalNaNs(&s0, &n0)
			WeightedErrorSums(&s1, &n1, guardedCopy(t, w), guardedCopy(t, want), guardedCopy(t, got))
			require.Equal(t, f64Bits(s0[:]), f64Bits(s1[:]))
			require.Equal(t, f64Bits(n0[:]), f64Bits(n1[:]))
		}
	})
}
