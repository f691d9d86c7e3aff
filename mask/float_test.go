package mask

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func f32bits(x []float32) []uint32 {
	out := make([]uint32, len(x))
	for i, v := range x {
		out[i] = math.Float32bits(v)
	}
	return out
}

var (
	nanPayload = math.Float32frombits(0x7fc01234)
	negZero    = math.Float32frombits(0x80000000)
	inf        = float32(math.Inf(1))
)

func TestSelectHand(t *testing.T) {
	m := mustBools(t, []int{3, 3}, "101 100 011")
	a := []float32{1, 2, 3, 4, 5, 6, 7, nanPayload, negZero}
	b := []float32{-1, -2, -3, -4, -5, -6, -7, -8, -9}
	dst := make([]float32, 9)
	require.NoError(t, m.Select(dst, a, b))
	assert.Equal(t, f32bits([]float32{1, -2, 3, 4, -5, -6, -7, nanPayload, negZero}), f32bits(dst))
	// In place over b.
	require.NoError(t, m.Select(b, a, b))
	assert.Equal(t, f32bits(dst), f32bits(b))

	err := m.Select(dst, a, b[:8])
	assert.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), "b holds 8 floats for 9 elements")
}

func TestCompactExpandHand(t *testing.T) {
	m := mustBools(t, []int{9}, "1011 0000 1")
	src := []float32{1, 2, 3, inf, 5, 6, 7, 8, nanPayload}
	dst := make([]float32, 4)
	n, err := m.Compact(dst, src)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	assert.Equal(t, f32bits([]float32{1, 3, inf, nanPayload}), f32bits(dst))
	back := []float32{9, 9, 9, 9, 9, 9, 9, 9, 9}
	n, err = m.Expand(back, dst)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	assert.Equal(t, f32bits([]float32{1, 0, 3, inf, 0, 0, 0, 0, nanPayload}), f32bits(back))

	_, err = m.Compact(make([]float32, 3), src)
	assert.ErrorIs(t, err, ErrShape)
	_, err = m.Compact(dst, src[:8])
	assert.ErrorIs(t, err, ErrShape)
	_, err = m.Expand(back, dst[:3])
	assert.ErrorIs(t, err, ErrShape)
	_, err = m.Expand(back[:8], dst)
	assert.ErrorIs(t, err, ErrShape)
}

func TestApplyHand(t *testing.T) {
	m := mustBools(t, []int{2, 3}, "110 001")
	// The mask's own shape.
	x := []float32{1, 2, 3, 4, 5, negZero}
	require.NoError(t, m.Apply(x, []int{2, 3}))
	assert.Equal(t, f32bits([]float32{1, 2, 0, 0, 0, negZero}), f32bits(x))
	// One extra trailing dimension: each flag covers two entries.
	x = []float32{1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}
	require.NoError(t, m.Apply(x, []int{2, 3, 2}))
	assert.Equal(t, []float32{1, 1, 2, 2, 0, 0, 0, 0, 0, 0, 6, 6}, x)
	// A trailing dimension of 0.
	require.NoError(t, m.Apply(nil, []int{2, 3, 0}))

	for _, bad := range []struct {
		n     int
		shape []int
	}{{6, []int{3, 2}}, {6, []int{6}}, {5, []int{2, 3}}, {12, []int{2, 3, 2, 1}}, {11, []int{2, 3, 2}}, {0, []int{2, 3, -1}}, {12, []int{1, 2, 3, 2}}} {
		err := m.Apply(make([]float32, bad.n), bad.shape)
		assert.ErrorIs(t, err, ErrShape, "%v", bad)
	}
}

// TestFloatOpsRandom checks Select, Compact, Expand and Apply against the
// element-wise definitions, over lengths that are no multiple of 8, 16 or 64
// and values that include NaN payloads, infinities and −0.
func TestFloatOpsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	special := []float32{nanPayload, negZero, inf, -inf, math.Float32frombits(1), 0}
	for _, n := range []int{0, 1, 5, 8, 15, 16, 17, 31, 33, 63, 64, 65, 100, 257, 1000} {
		for _, density := range []int{0, 1, 2, 7} {
			keep := make([]bool, n)
			for i := range keep {
				keep[i] = density == 1 || density > 1 && r.IntN(density) == 0
			}
			m, err := FromBools([]int{n}, keep)
			require.NoError(t, err)
			a, b := make([]float32, n), make([]float32, n)
			for i := range a {
				a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
				if r.IntN(5) == 0 {
					a[i] = special[r.IntN(len(special))]
				}
			}
			want := make([]float32, n)
			var kept []float32
			zeroed := make([]float32, n)
			for i := range want {
				if keep[i] {
					want[i] = a[i]
					kept = append(kept, a[i])
					zeroed[i] = a[i]
				} else {
					want[i] = b[i]
				}
			}
			dst := make([]float32, n)
			require.NoError(t, m.Select(dst, a, b))
			require.Equal(t, f32bits(want), f32bits(dst), "select n=%d", n)
			comp := make([]float32, n)
			c, err := m.Compact(comp, a)
			require.NoError(t, err)
			require.Equal(t, f32bits(kept), f32bits(comp[:c]))
			exp := make([]float32, n)
			_, err = m.Expand(exp, comp[:c])
			require.NoError(t, err)
			require.Equal(t, f32bits(zeroed), f32bits(exp))
			x := append([]float32(nil), a...)
			require.NoError(t, m.Apply(x, []int{n}))
			require.Equal(t, f32bits(zeroed), f32bits(x))
			// Trailing dimension 3.
			x3 := make([]float32, 3*n)
			want3 := make([]float32, 3*n)
			for i := range x3 {
				x3[i] = a[i/3] + float32(i%3)
				if keep[i/3] {
					want3[i] = x3[i]
				}
			}
			require.NoError(t, m.Apply(x3, []int{n, 3}))
			require.Equal(t, f32bits(want3), f32bits(x3))
		}
	}
}
