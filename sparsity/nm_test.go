package sparsity

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/mask"
)

func TestParsePattern(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Pattern
		ok   bool
	}{
		{"2:4", P24, true},
		{" n2m4 ", P24, true},
		{"N4M8", P48, true},
		{"1:2", P12, true},
		{"15:16", Pattern{15, 16}, true},
		{"3:8", Pattern{3, 8}, true},
		{"4:4", Pattern{}, false},
		{"0:4", Pattern{}, false},
		{"2:3", Pattern{}, false},
		{"2:32", Pattern{}, false},
		{"2-4", Pattern{}, false},
		{"n2", Pattern{}, false},
		{"a:4", Pattern{}, false},
		{"", Pattern{}, false},
		{"2:0004", Pattern{}, false},
	} {
		got, err := ParsePattern(c.in)
		if !c.ok {
			require.ErrorIs(t, err, ErrPattern, c.in)
			var pe *PatternError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, c.in, pe.Pattern)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got)
	}
	assert.Equal(t, "2:4", P24.String())
	assert.Equal(t, 0.5, P24.Density())
	assert.Equal(t, 2, P24.IndexBits())
	assert.Equal(t, 1, P12.IndexBits())
	assert.Equal(t, 4, Pattern{3, 16}.IndexBits())
	assert.ErrorIs(t, Pattern{}.Validate(), ErrPattern)
}

// TestG11 is TensorCast's sparsity golden (docs/TENSORCAST.md), with the
// signs its implementation loses restored.
func TestG11(t *testing.T) {
	x := []float32{0.1, -0.9, 0.5, 0.2, 3, -4, 0, 1}
	got, m, err := Prune(x, []int{8}, -1, P24, Options{})
	require.NoError(t, err)
	assert.Equal(t, []float32{0, -0.9, 0.5, 0, 3, -4, 0, 0}, got)
	// Keep bits: group 0 keeps 1,2 (0b0110), group 1 keeps 0,1 (0b0011).
	assert.Equal(t, []byte{0x36}, m.Bytes())

	got, m, err = Prune(x, []int{8}, 0, Pattern{1, 4}, Options{})
	require.NoError(t, err)
	assert.Equal(t, []float32{0, -0.9, 0, 0, 0, -4, 0, 0}, got)
	assert.Equal(t, []byte{0x22}, m.Bytes())
}

// TestMagnitudeAxis0 groups the columns of an [8, 2] tensor, worked by hand.
func TestMagnitudeAxis0(t *testing.T) {
	// Column 0 is 1..8, column 1 is 8..1 (row-major pairs).
	x := []float32{1, 8, 2, 7, 3, 6, 4, 5, 5, 4, 6, 3, 7, 2, 8, 1}
	m, err := Magnitude(x, []int{8, 2}, 0, P48)
	require.NoError(t, err)
	// 4:8 down each column keeps column 0's rows 4..7 and column 1's rows 0..3.
	want := []bool{
		false, true, false, true, false, true, false, true,
		true, false, true, false, true, false, true, false,
	}
	assert.Equal(t, want, m.Bools())
	// 2:4 down each column: rows 2,3 and 6,7 of column 0; 0,1 and 4,5 of column 1.
	m, err = Magnitude(x, []int{8, 2}, -2, P24)
	require.NoError(t, err)
	want = []bool{
		false, true, false, true, true, false, true, false,
		false, true, false, true, true, false, true, false,
	}
	assert.Equal(t, want, m.Bools())
}

// transposeLast moves axis to the end of a row-major tensor.
func transposeLast(x []float32, shape []int, axis int) ([]float32, []int) {
	outer, inner := 1, 1
	for _, d := range shape[:axis] {
		outer *= d
	}
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	l := shape[axis]
	out := make([]float32, len(x))
	k := 0
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			for a := 0; a < l; a++ {
				out[k] = x[(o*l+a)*inner+i]
				k++
			}
		}
	}
	ns := append(append(slices.Clone(shape[:axis]), shape[axis+1:]...), l)
	return out, ns
}

// TestMagnitudeProperties checks, on random tensors of several ranks and
// every axis and pattern, that every group keeps exactly N, that no dropped
// magnitude exceeds a kept one of its group, that ties go to the lower index,
// and that grouping along an inner axis equals grouping along the last axis
// of the transposed tensor.
func TestMagnitudeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range []Pattern{P12, P24, {1, 4}, {3, 4}, P48, {3, 8}, {5, 16}} {
		for _, shape := range [][]int{{p.M * 3}, {3, p.M * 2}, {p.M, 5}, {2, p.M, 3}, {2, 2, p.M}} {
			n := 1
			for _, d := range shape {
				n *= d
			}
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.IntN(9) - 4) // many ties
			}
			for axis := range shape {
				if shape[axis]%p.M != 0 {
					continue
				}
				m, err := Magnitude(x, shape, axis, p)
				require.NoError(t, err)
				require.NoError(t, Check(m, axis, p))
				keep := m.Bools()
				xt, st := transposeLast(x, shape, axis)
				kt, _ := transposeLast(boolsF(keep), shape, axis)
				for g := 0; g < len(xt); g += p.M {
					kept, minKept, maxDrop := 0, float32(math.Inf(1)), float32(-1)
					lastKept, firstDrop := -1, p.M
					for i := 0; i < p.M; i++ {
						v := float32(math.Abs(float64(xt[g+i])))
						if kt[g+i] == 1 {
							kept++
							minKept = min(minKept, v)
						} else {
							maxDrop = max(maxDrop, v)
						}
					}
					require.Equal(t, p.N, kept)
					require.GreaterOrEqual(t, minKept, maxDrop)
					// Ties at the cut: every kept element equal to the cut
					// comes before every dropped one equal to it.
					for i := 0; i < p.M; i++ {
						v := float32(math.Abs(float64(xt[g+i])))
						if v == minKept && v == maxDrop {
							if kt[g+i] == 1 {
								lastKept = i
							} else {
								firstDrop = min(firstDrop, i)
							}
						}
					}
					require.Less(t, lastKept, firstDrop, "tie broken toward the lower index")
				}
				// The same selection along the last axis of the transposed tensor.
				mt, err := Magnitude(xt, st, -1, p)
				require.NoError(t, err)
				require.Equal(t, boolsU(kt), mt.Bools(), "%v axis %d %v", shape, axis, p)
			}
		}
	}
}

func boolsF(b []bool) []float32 {
	f := make([]float32, len(b))
	for i, v := range b {
		if v {
			f[i] = 1
		}
	}
	return f
}

func boolsU(f []float32) []bool {
	b := make([]bool, len(f))
	for i, v := range f {
		b[i] = v == 1
	}
	return b
}

func TestByScoresAndWanda(t *testing.T) {
	w := []float32{1, -2, 3, 4, -1, 2, -3, 4}
	shape := []int{2, 4}
	// By magnitude each row keeps its 3 and 4.
	m, err := Magnitude(w, shape, -1, P24)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xcc}, m.Bytes())

	// Norms 10, 1, 1, 0.1 give scores 10, 2, 3, 0.4 in row 0 (keep 0, 2)
	// and 10, 2, 3, 0.4 in row 1 too.
	norms := []float32{10, 1, 1, 0.1}
	m, err = Wanda(w, shape, -1, P24, norms)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x55}, m.Bytes())

	// The same through NM's options, and through explicit scores.
	m2, err := NM(w, shape, -1, P24, Options{Norms: norms})
	require.NoError(t, err)
	assert.True(t, m.Equal(m2))
	m3, err := NM(w, shape, -1, P24, Options{Scores: []float32{10, 2, 3, 0.4, 10, 2, 3, 0.4}})
	require.NoError(t, err)
	assert.True(t, m.Equal(m3))

	// Wanda along axis 0 of the transposed weight [4, 2].
	wt := []float32{1, -1, -2, 2, 3, -3, 4, 4}
	m4, err := Wanda(wt, []int{4, 2}, 0, P24, norms)
	require.NoError(t, err)
	// rows 0 and 2 kept in both columns.
	assert.Equal(t, []bool{true, true, false, false, true, true, false, false}, m4.Bools())

	// Bad norms and scores.
	_, err = Wanda(w, shape, -1, P24, []float32{1, 2, 3})
	require.ErrorIs(t, err, ErrShape)
	_, err = Wanda(w, shape, -1, P24, []float32{1, -2, 3, 4})
	require.ErrorIs(t, err, ErrScores)
	var se *ScoreError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 1, se.Offset)
	assert.Equal(t, "activation norm", se.What)
	_, err = ByScores([]float32{1, 2, 3, float32(math.NaN()), 0, 0, 0, 0}, shape, -1, P24)
	require.ErrorIs(t, err, ErrScores)
	_, err = ByScores([]float32{1, 2, 3}, shape, -1, P24)
	require.ErrorIs(t, err, ErrShape)
	_, err = NM(w, shape, -1, P24, Options{Scores: []float32{1}, Norms: norms})
	require.ErrorIs(t, err, ErrOptions)
	_, err = NM(w[:4], shape, -1, P24, Options{Scores: []float32{10, 2, 3, 0.4, 10, 2, 3, 0.4}})
	require.ErrorIs(t, err, ErrShape)
}

func TestCheckAndGivenMask(t *testing.T) {
	shape := []int{2, 8}
	x := make([]float32, 16)
	ok, err := mask.FromBools(shape, []bool{
		true, false, false, true, false, true, true, false,
		false, false, true, true, true, true, false, false,
	})
	require.NoError(t, err)
	require.NoError(t, Check(ok, -1, P24))
	got, err := NM(x, shape, -1, P24, Options{Mask: ok})
	require.NoError(t, err)
	assert.True(t, got.Equal(ok))
	// As 4:8 it is fine too; along axis 0 with 1:2 every column keeps one.
	require.NoError(t, Check(ok, -1, P48))
	err = Check(ok, 0, P12)
	require.ErrorIs(t, err, ErrNotNM)
	var ge *GroupError
	require.ErrorAs(t, err, &ge)
	// Column 0 keeps row 0 only: fine; column 1 keeps none → group at [0 1].
	assert.Equal(t, []int{0, 1}, ge.Index)
	assert.Equal(t, 1, ge.Offset)
	assert.Equal(t, 0, ge.Kept)
	assert.Equal(t, 0, ge.Axis)

	bad, err := mask.FromBools(shape, []bool{
		true, false, false, true, false, true, true, false,
		false, true, true, true, true, true, false, false,
	})
	require.NoError(t, err)
	_, err = NM(x, shape, -1, P24, Options{Mask: bad})
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, []int{1, 0}, ge.Index)
	assert.Equal(t, 8, ge.Offset)
	assert.Equal(t, 3, ge.Kept)
	assert.Contains(t, err.Error(), "2:4")

	other, err := mask.New([]int{16})
	require.NoError(t, err)
	_, err = NM(x, shape, -1, P24, Options{Mask: other})
	require.ErrorIs(t, err, ErrShape)
}

func TestShapeErrors(t *testing.T) {
	x := make([]float32, 12)
	for _, c := range []struct {
		shape []int
		axis  int
		p     Pattern
		err   error
	}{
		{[]int{3, 4}, 0, P24, ErrShape},  // 3 is not a multiple of 4
		{[]int{3, 4}, 2, P24, ErrShape},  // axis out of range
		{[]int{3, 4}, -3, P24, ErrShape}, // axis out of range
		{[]int{}, 0, P24, ErrShape},      // scalar
		{[]int{3, -4}, 1, P24, ErrShape}, // negative dimension
		{[]int{2, 4}, 1, P24, ErrShape},  // length mismatch (8 for 12)
		{[]int{3, 4}, 1, Pattern{2, 2}, ErrPattern},
	} {
		_, err := Magnitude(x, c.shape, c.axis, c.p)
		require.ErrorIs(t, err, c.err, "%v axis %d %v", c.shape, c.axis, c.p)
	}
	m, err := Magnitude(x, []int{3, 4}, 1, P24)
	require.NoError(t, err)
	assert.Equal(t, []int{3, 4}, m.Shape())
	// Empty tensors are fine.
	m, err = Magnitude(nil, []int{0, 4}, 1, P24)
	require.NoError(t, err)
	assert.Equal(t, 0, m.Len())
}
