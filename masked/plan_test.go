package masked

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// naiveReduce is an independent reference for the visiting order: it walks
// every element with nested index arithmetic and collects, for each output
// position, the (position within the reduced dimensions, value, keep) triples.
func naiveReduce(shape []int, red []bool, data []float64, mask []bool) (nOut int, blocks [][]float64, keeps [][]bool) {
	nOut = 1
	for d, s := range shape {
		if !red[d] {
			nOut *= s
		}
	}
	nRed := len(data) / max(nOut, 1)
	blocks = make([][]float64, nOut)
	keeps = make([][]bool, nOut)
	for o := range blocks {
		blocks[o] = make([]float64, nRed)
		keeps[o] = make([]bool, nRed)
	}
	idx := make([]int, len(shape))
	for flat := range data {
		rem := flat
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d] = rem % shape[d]
			rem /= shape[d]
		}
		o, r := 0, 0
		for d, s := range shape {
			if red[d] {
				r = r*s + idx[d]
			} else {
				o = o*s + idx[d]
			}
		}
		blocks[o][r] = data[flat]
		keeps[o][r] = mask[flat]
	}
	return nOut, blocks, keeps
}

// TestPlanModes reduces a [3,5,37] tensor (37 > the 16-block tile, so tiles
// of 16, 16 and 5) and a [4,3,2,5] one over every subset of dimensions, which
// runs the direct, gathered and tiled visits, and compares with the naive
// reference: sums of half-integers (exact), amax, argmax, and cumsum along each
// dimension.
func TestPlanModes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, shape := range [][]int{{3, 5, 37}, {4, 3, 2, 5}, {1, 7, 1, 19}} {
		n := 1
		for _, s := range shape {
			n *= s
		}
		data := make([]float64, n)
		mask := make([]bool, n)
		for i := range data {
			data[i] = float64(rng.IntN(33)-16) / 2
			mask[i] = rng.IntN(3) > 0
			if !mask[i] && rng.IntN(2) == 0 {
				data[i] = math.NaN()
			}
		}
		x := mustNew(t, data, shape, mask, nil)
		for bits := 1; bits < 1<<len(shape); bits++ {
			var dims []int
			red := make([]bool, len(shape))
			for d := range shape {
				if bits&(1<<d) != 0 {
					dims = append(dims, d)
					red[d] = true
				}
			}
			t.Run(fmt.Sprint(shape, dims), func(t *testing.T) {
				nOut, blocks, keeps := naiveReduce(shape, red, data, mask)
				wantSum := make([]float64, nOut)
				wantMax := make([]float64, nOut)
				wantArg := make([]int, nOut)
				wantMask := make([]bool, nOut)
				for o := range blocks {
					wantMax[o], wantArg[o] = math.Inf(-1), -1
					for r, v := range blocks[o] {
						if !keeps[o][r] {
							continue
						}
						wantSum[o] += v
						wantMask[o] = true
						if v > wantMax[o] || wantArg[o] < 0 {
							wantMax[o], wantArg[o] = v, r
						}
					}
				}
				s, err := Sum(x, Options{Dims: dims})
				require.NoError(t, err)
				assert.Equal(t, wantSum, s.Data())
				assert.Equal(t, wantMask, s.Mask())
				m, err := Amax(x, Options{Dims: dims})
				require.NoError(t, err)
				assert.Equal(t, wantMax, m.Data())
				a, err := Argmax(x, Options{Dims: dims})
				require.NoError(t, err)
				assert.Equal(t, wantArg, a.Data())
			})
		}
		for dim := range shape {
			t.Run(fmt.Sprint(shape, "cumsum", dim), func(t *testing.T) {
				red := make([]bool, len(shape))
				red[dim] = true
				_, blocks, keeps := naiveReduce(shape, red, data, mask)
				c, err := Cumsum(x, dim, AccData)
				require.NoError(t, err)
				// Map each output element back to its line and position.
				_, got, _ := naiveReduce(shape, red, c.Data(), mask)
				for o := range blocks {
					run := 0.0
					for r, v := range blocks[o] {
						if keeps[o][r] {
							run += v
						}
						require.Equal(t, run, got[o][r], "line %d pos %d", o, r)
					}
				}
				assert.Equal(t, mask, c.Mask())
			})
		}
	}
}

func TestNormInfFastPath(t *testing.T) {
	// Norm +Inf over trailing dims of float32 goes through kernels; the same
	// reduction over a leading dim and on float64 goes through the block
	// kernel. Both must agree with max|x| by hand.
	nan := float32(math.NaN())
	data := []float32{-3, 2, nan, 1, 0, -7, 5, -5, 4, float32(math.Inf(-1)), 8, 1}
	mask := []bool{true, true, false, true, true, true, true, false, true, false, true, false}
	x, err := New(data, []int{3, 4}, mask, nil)
	require.NoError(t, err)
	r, err := Norm(x, math.Inf(1), Options{Dims: []int{1}})
	require.NoError(t, err)
	// Kept rows: {-3, 2, 1}, {0, -7, 5}, {4, 8}.
	assert.Equal(t, []float32{3, 7, 8}, r.Data())
	assert.Equal(t, []bool{true, true, true}, r.Mask())
	r, err = Norm(x, math.Inf(1), Options{Dims: []int{0}})
	require.NoError(t, err)
	// Kept columns: {-3, 0, 4}, {2, -7}, {5, 8}, {1}.
	assert.Equal(t, []float32{4, 7, 8, 1}, r.Data())
	r, err = Norm(x, math.Inf(1), Options{})
	require.NoError(t, err)
	assert.Equal(t, []float32{8}, r.Data())

	// A kept NaN gives NaN; a fully masked row gives 0.
	y, err := New([]float32{1, nan, 2, 9}, []int{2, 2}, []bool{true, true, false, false}, nil)
	require.NoError(t, err)
	r, err = Norm(y, math.Inf(1), Options{Dims: []int{-1}, KeepDim: true})
	require.NoError(t, err)
	assert.True(t, math.IsNaN(float64(r.Data()[0])))
	assert.Equal(t, float32(0), r.Data()[1])
	assert.Equal(t, []bool{true, false}, r.Mask())
	assert.Equal(t, []int{2, 1}, r.Shape())
}

// A reduction over a leading dimension longer than the tile budget gathers one
// block at a time.
func TestPlanTileBudget(t *testing.T) {
	n := tileBudget + 3
	data := make([]float32, 2*n)
	for i := range data {
		data[i] = 1
	}
	x, err := New(data, []int{n, 2}, []bool{true, false}, []int{2})
	require.NoError(t, err)
	require.Equal(t, planTiled, newPlan([]int{n, 2}, []bool{true, false}).mode)
	s, err := Sum(x, Options{Dims: []int{0}})
	require.NoError(t, err)
	assert.Equal(t, []float32{float32(n), 0}, s.Data())
	assert.Equal(t, []bool{true, false}, s.Mask())
}
