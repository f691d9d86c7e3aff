package spans

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdd adds ranges by hand and checks the runs, length, overlaps refused
// and holes.
func TestAdd(t *testing.T) {
	var s Set
	assert.True(t, s.Whole(0))
	assert.False(t, s.Whole(1))
	require.NoError(t, s.Add(10, 20))
	require.NoError(t, s.Add(5, 5), "empty")
	require.NoError(t, s.Add(30, 40))
	assert.Equal(t, 2, s.Runs())
	assert.Equal(t, int64(20), s.Len())
	for _, c := range []struct {
		lo, hi, at int64
	}{
		{15, 16, 15}, {5, 11, 10}, {19, 31, 19}, {25, 35, 30}, {0, 100, 10}, {39, 41, 39}, {20, 31, 30},
	} {
		err := s.Add(c.lo, c.hi)
		var oe *OverlapError
		require.True(t, errors.As(err, &oe), "%d..%d", c.lo, c.hi)
		assert.Equal(t, c.at, oe.At, "%d..%d", c.lo, c.hi)
	}
	assert.Equal(t, int64(20), s.Len(), "refused ranges change nothing")
	hole, ok := s.Hole(40)
	assert.True(t, ok)
	assert.Equal(t, int64(0), hole)
	require.NoError(t, s.Add(20, 30), "joins both sides")
	assert.Equal(t, 1, s.Runs())
	require.NoError(t, s.Add(0, 10), "joins the right")
	require.NoError(t, s.Add(40, 41), "joins the left")
	assert.True(t, s.Whole(41))
	assert.False(t, s.Whole(42))
	hole, ok = s.Hole(42)
	assert.True(t, ok)
	assert.Equal(t, int64(41), hole)
	_, ok = s.Hole(41)
	assert.False(t, ok)
}

// TestRandomOrder adds the pieces of a region in random orders, with
// repeats, and compares the set with a byte map.
func TestRandomOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := 1 + r.IntN(200)
		var cuts []int64
		for i := int64(0); i < int64(n); i += int64(1 + r.IntN(9)) {
			cuts = append(cuts, i)
		}
		cuts = append(cuts, int64(n))
		var s Set
		have := make([]bool, n)
		order := r.Perm(len(cuts) - 1)
		for _, k := range order {
			lo, hi := cuts[k], cuts[k+1]
			if r.IntN(4) == 0 { // a range that may overlap
				lo = int64(r.IntN(n))
				hi = lo + int64(r.IntN(n-int(lo))+1)
			}
			overlaps := false
			for i := lo; i < hi; i++ {
				overlaps = overlaps || have[i]
			}
			err := s.Add(lo, hi)
			require.Equal(t, overlaps, err != nil, "round %d: %d..%d", round, lo, hi)
			if err == nil {
				for i := lo; i < hi; i++ {
					have[i] = true
				}
			}
		}
		count, first := int64(0), int64(-1)
		for i, h := range have {
			if h {
				count++
			} else if first < 0 {
				first = int64(i)
			}
		}
		assert.Equal(t, count, s.Len(), "round %d", round)
		assert.Equal(t, first < 0, s.Whole(int64(n)), "round %d", round)
		hole, ok := s.Hole(int64(n))
		assert.Equal(t, first >= 0, ok, "round %d", round)
		if ok {
			assert.Equal(t, first, hole, "round %d", round)
		}
	}
}
