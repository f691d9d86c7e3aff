package ggufmix

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// randomCandidates returns n tensors' candidates: 2 to 5 types each, of
// random sizes and errors (not all on a convex hull, some dominated).
func randomCandidates(rng *rand.Rand, n int) [][]Candidate {
	cands := make([][]Candidate, n)
	for i := range cands {
		for k := range 2 + rng.IntN(4) {
			cands[i] = append(cands[i], Candidate{Type: TargetTypes[k], Bytes: int64(1 + rng.IntN(40)),
				Err: rng.Float64() * 100})
		}
	}
	return cands
}

// bruteForce returns the least total error of any choice of one candidate
// per tensor within budget (+Inf when none fits).
func bruteForce(cands [][]Candidate, budget int64) float64 {
	best := math.Inf(1)
	var rec func(i int, bytes int64, err float64)
	rec = func(i int, bytes int64, err float64) {
		if bytes > budget {
			return
		}
		if i == len(cands) {
			best = min(best, err)
			return
		}
		for _, c := range cands[i] {
			rec(i+1, bytes+c.Bytes, err+c.Err)
		}
	}
	rec(0, 0, 0)
	return best
}

// TestFitOptimal checks Fit against every choice on random instances: the
// total stays within the budget, and the error is at most the least error
// of any choice within the budget less the largest step between two of a
// tensor's candidates (at the first upgrade that does not fit, the bytes
// are above that, and there the choice is the best within its bytes). The
// budgets leave room for such a choice in every case.
func TestFitOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		cands := randomCandidates(rng, 1+rng.IntN(5))
		var least, most, step int64
		for _, c := range cands {
			lo, hi := c[0].Bytes, c[0].Bytes
			for _, x := range c {
				lo, hi = min(lo, x.Bytes), max(hi, x.Bytes)
			}
			least, most, step = least+lo, most+hi, max(step, hi-lo)
		}
		budget := least + step + rng.Int64N(most-least+1)
		ds := make([]Decision, len(cands))
		require.NoError(t, Fit(ds, cands, budget), "trial %d", trial)
		var bytes int64
		var err float64
		for i, d := range ds {
			for _, c := range cands[i] {
				if c.Type == d.Type {
					bytes, err = bytes+c.Bytes, err+c.Err
					break
				}
			}
		}
		assert.LessOrEqual(t, bytes, budget, "trial %d", trial)
		bound := bruteForce(cands, budget-step)
		require.False(t, math.IsInf(bound, 1), "trial %d: no choice within %d", trial, budget-step)
		assert.LessOrEqual(t, err, bound+1e-9, "trial %d: budget %d", trial, budget)
	}
}

// TestFitNaN checks that an error that is not a number counts as +Inf:
// the tensor moves off that candidate first.
func TestFitNaN(t *testing.T) {
	ds := make([]Decision, 2)
	cands := [][]Candidate{
		{{gguf.TypeQ2_K, 10, math.NaN()}, {gguf.TypeQ4_K, 20, 5}},
		{{gguf.TypeQ2_K, 10, 30}, {gguf.TypeQ4_K, 20, 1}},
	}
	require.NoError(t, Fit(ds, cands, 30))
	assert.Equal(t, []gguf.Type{gguf.TypeQ4_K, gguf.TypeQ2_K}, []gguf.Type{ds[0].Type, ds[1].Type})
}

// TestFitDecisions checks what Fit does to the decisions: it retypes
// those with candidates (type, reason, NeedsImatrix, no fallback) and
// leaves the others, and refuses a budget below the smallest types.
func TestFitDecisions(t *testing.T) {
	ds := []Decision{
		{Name: "blk.0.ffn_down.weight", Category: FFNDown, Type: gguf.TypeQ4_K, Quantize: true, Fallback: true},
		{Name: "output.weight", Category: Output, Type: gguf.TypeQ6_K, Quantize: true, Asked: true},
		{Name: "blk.0.attn_v.weight", Category: AttnV, Type: gguf.TypeQ4_K, Quantize: true},
	}
	cands := [][]Candidate{
		{{gguf.TypeIQ2_XXS, 10, 50}, {gguf.TypeQ4_K, 20, 10}, {gguf.TypeQ8_0, 40, 1}},
		nil,
		{{gguf.TypeQ2_K, 10, 30}, {gguf.TypeQ4_K, 20, 20}},
	}
	fixed := ds[1]
	require.NoError(t, Fit(ds, cands, 30))
	assert.Equal(t, gguf.TypeQ4_K, ds[0].Type) // saves 4/byte, against attn_v's 1
	assert.False(t, ds[0].Fallback)
	assert.Equal(t, "size target: Q4_K, of 3 candidate types", ds[0].Reason)
	assert.Equal(t, gguf.TypeQ2_K, ds[2].Type)
	assert.Equal(t, fixed, ds[1])
	assert.True(t, ds[1].Asked && !ds[1].Tunable() && ds[0].Tunable())

	require.NoError(t, Fit(ds, cands, 20))
	assert.Equal(t, gguf.TypeIQ2_XXS, ds[0].Type)
	assert.True(t, ds[0].NeedsImatrix)

	err := Fit(ds, cands, 19)
	var te *TargetError
	require.ErrorAs(t, err, &te)
	assert.True(t, errors.Is(err, ErrTargetTooSmall))
	assert.Equal(t, TargetError{Budget: 19, Least: 20}, *te)
	assert.EqualError(t, err, "size target too small: the tensors it chooses types for take 20 bytes at least, and it leaves them 19")
}

// TestCandidates checks the types a target may choose: blocks that divide
// the row, and the IQ types that need an importance vector only with one
// (but for the output head, which never needs one).
func TestCandidates(t *testing.T) {
	down := Decision{Category: FFNDown, Quantize: true}
	all := Candidates(down, 4096, true)
	assert.Equal(t, TargetTypes, all)
	assert.Equal(t, []gguf.Type{gguf.TypeQ2_K, gguf.TypeIQ3_S, gguf.TypeQ3_K, gguf.TypeIQ4_XS, gguf.TypeIQ4_NL,
		gguf.TypeQ4_K, gguf.TypeQ5_0, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ8_0}, Candidates(down, 4096, false))
	assert.Equal(t, []gguf.Type{gguf.TypeIQ4_NL, gguf.TypeQ5_0, gguf.TypeQ8_0}, Candidates(down, 96, true))
	assert.Equal(t, TargetTypes, Candidates(Decision{Category: Output, Quantize: true}, 512, false))
}
