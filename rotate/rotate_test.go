package rotate

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sylvester's Hadamard matrices of order 2, 4 and 8, written out by hand
// (H₂ⁿ = H₂ ⊗ H₂ⁿ⁻¹), unnormalised.
var (
	h2 = [][]float64{
		{1, 1},
		{1, -1},
	}
	h4 = [][]float64{
		{1, 1, 1, 1},
		{1, -1, 1, -1},
		{1, 1, -1, -1},
		{1, -1, -1, 1},
	}
	h8 = [][]float64{
		{1, 1, 1, 1, 1, 1, 1, 1},
		{1, -1, 1, -1, 1, -1, 1, -1},
		{1, 1, -1, -1, 1, 1, -1, -1},
		{1, -1, -1, 1, 1, -1, -1, 1},
		{1, 1, 1, 1, -1, -1, -1, -1},
		{1, -1, 1, -1, -1, 1, -1, 1},
		{1, 1, -1, -1, -1, -1, 1, 1},
		{1, -1, -1, 1, -1, 1, 1, -1},
	}
)

// The normalisation 1/√n, decimal expansions (not computed by the code).
var invSqrt = map[int]float64{2: 0.70710678118654752440, 4: 0.5, 8: 0.35355339059327376220}

// TestTransformMatchesHandBuilt checks that the transform of each unit
// vector e_j is column j of H/√n, exactly as float64 rounds it.
func TestTransformMatchesHandBuilt(t *testing.T) {
	for _, h := range [][][]float64{h2, h4, h8} {
		n := len(h)
		for j := range n {
			x := make([]float64, n)
			x[j] = 1
			Transform(x)
			for i := range n {
				assert.Equal(t, h[i][j]*invSqrt[n], x[i], "H%d[%d][%d]", n, i, j)
			}
		}
	}
}

// TestTransformIsInvolution checks H·H = I: transforming the columns of
// H/√n gives the identity (to float64 rounding for orders that are not
// powers of four, exactly for those that are).
func TestTransformIsInvolution(t *testing.T) {
	for _, n := range []int{2, 4, 8, 16, 64, 256} {
		for j := range n {
			x := make([]float64, n)
			x[j] = 1
			Transform(x)
			Transform(x)
			for i := range n {
				want := 0.0
				if i == j {
					want = 1
				}
				if n&0x55555555 != 0 { // a power of four: every step is exact
					assert.Equal(t, want, x[i], "n=%d (%d,%d)", n, i, j)
				} else {
					assert.InDelta(t, want, x[i], 1e-15, "n=%d (%d,%d)", n, i, j)
				}
			}
		}
	}
}

// TestApplyMatchesMatrix compares Apply with the product by the hand-built
// matrices, along the last and the first axis.
func TestApplyMatchesMatrix(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, h := range [][][]float64{h2, h4, h8} {
		n := len(h)
		// 3 rows of 2 blocks along the last axis.
		x := make([]float32, 3*2*n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		want := make([]float32, len(x))
		for b := 0; b < len(x); b += n {
			for i := range n {
				s := 0.0
				for k := range n {
					s += h[i][k] * float64(x[b+k])
				}
				want[b+i] = float32(s * invSqrt[n])
			}
		}
		got := append([]float32(nil), x...)
		require.NoError(t, Rotation{Hadamard, n}.Apply(got, []int{3, 2 * n}, 1))
		assertULP(t, want, got, 1)

		// The same values as a [2n, 3] tensor rotated along axis 0.
		xt, wt := transpose(x, 3, 2*n), transpose(want, 3, 2*n)
		require.NoError(t, Rotation{Hadamard, n}.Apply(xt, []int{2 * n, 3}, 0))
		assertULP(t, wt, xt, 1)
	}
}

// assertULP checks got within k units in the last place of want.
func assertULP(t *testing.T, want, got []float32, k float64) {
	t.Helper()
	for i := range want {
		ulp := float64(math.Nextafter32(float32(math.Abs(float64(want[i]))), math.MaxFloat32)) - math.Abs(float64(want[i]))
		assert.LessOrEqual(t, math.Abs(float64(got[i]-want[i])), k*ulp, "value %d: %g vs %g", i, got[i], want[i])
	}
}

func transpose(x []float32, rows, cols int) []float32 {
	out := make([]float32, len(x))
	for i := range rows {
		for j := range cols {
			out[j*rows+i] = x[i*cols+j]
		}
	}
	return out
}

// TestRoundTripBound checks the documented bound of applying a rotation
// twice: |x'_i − x_i| ≤ 2⁻²⁴·(|x_i| + ‖x_B‖₂)·(1 + 2⁻¹²), over random
// blocks, blocks with one outlier, a lone spike, and sizes up to 4096.
func TestRoundTripBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := map[string]func(n int) []float32{
		"normal": func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			return x
		},
		"outlier": func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 1e-3)
			}
			x[r.IntN(n)] = 3e4
			return x
		},
		"spike": func(n int) []float32 {
			x := make([]float32, n)
			x[n/2] = -7.25
			return x
		},
		"wide range": func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(math.Ldexp(r.Float64()-0.5, r.IntN(40)-20))
			}
			return x
		},
	}
	for name, gen := range cases {
		for _, n := range []int{2, 4, 8, 32, 128, 1024, 4096} {
			for range 20 {
				x := gen(n)
				y := append([]float32(nil), x...)
				rot := Rotation{Hadamard, n}
				require.NoError(t, rot.Apply(y, []int{n}, 0))
				require.NoError(t, rot.Apply(y, []int{n}, 0))
				norm := 0.0
				for _, v := range x {
					norm += float64(v) * float64(v)
				}
				norm = math.Sqrt(norm)
				for i := range x {
					bound := math.Ldexp(math.Abs(float64(x[i]))+norm, -24) * (1 + math.Ldexp(1, -12))
					if d := math.Abs(float64(y[i]) - float64(x[i])); d > bound {
						t.Fatalf("%s n=%d: value %d: %g back as %g, off by %g > %g", name, n, i, x[i], y[i], d, bound)
					}
				}
			}
		}
	}
}

// TestRoundTripPowersOfTwo: values that are small integers times a power of
// two stay exact through orders that are powers of four, where every step
// of the transform is exact.
func TestRoundTripPowersOfTwo(t *testing.T) {
	x := []float32{1, -2, 0.5, 3, 0, -0.25, 8, 1.5, -1, 2, 4, -3, 0.75, 6, -5, 1}
	y := append([]float32(nil), x...)
	rot := Rotation{Hadamard, 16}
	require.NoError(t, rot.Apply(y, []int{16}, 0))
	require.NoError(t, rot.Apply(y, []int{16}, 0))
	assert.Equal(t, x, y)
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Rotation
	}{
		{"", Rotation{}},
		{"none", Rotation{}},
		{"hadamard", Rotation{Kind: Hadamard}},
		{"Hadamard:64", Rotation{Hadamard, 64}},
		{"hadamard:2", Rotation{Hadamard, 2}},
		{"hadamard:65536", Rotation{Hadamard, 65536}},
	} {
		got, err := Parse(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	for _, in := range []string{"hadamard:0", "hadamard:1", "hadamard:48", "hadamard:x", "hadamard:131072", "givens", "none:4", "hadamard:-4"} {
		_, err := Parse(in)
		assert.ErrorIs(t, err, ErrSyntax, in)
	}
	assert.Equal(t, "hadamard:32", Rotation{Hadamard, 32}.String())
	assert.Equal(t, "hadamard", Rotation{Kind: Hadamard}.String())
	assert.Equal(t, "", Rotation{}.String())
}

func TestWithDefaultBlock(t *testing.T) {
	h := Rotation{Kind: Hadamard}
	for _, c := range []struct {
		tile, want int
	}{{0, 128}, {32, 32}, {16, 16}, {128, 128}} {
		got, err := h.WithDefaultBlock(c.tile)
		require.NoError(t, err)
		assert.Equal(t, c.want, got.Block, "tile %d", c.tile)
	}
	got, err := Rotation{Hadamard, 8}.WithDefaultBlock(32)
	require.NoError(t, err)
	assert.Equal(t, 8, got.Block, "a named block stays")
	_, err = h.WithDefaultBlock(48)
	assert.ErrorContains(t, err, "hadamard:BLOCK")
}

func TestApplyErrors(t *testing.T) {
	x := make([]float32, 2*96)
	err := Rotation{Hadamard, 64}.Apply(x, []int{2, 96}, 1)
	var le *LengthError
	require.True(t, errors.As(err, &le), "%v", err)
	assert.Equal(t, LengthError{Rotation: Rotation{Hadamard, 64}, Axis: 1, Length: 96}, *le)
	assert.ErrorContains(t, err, "axis 1 holds 96")
	assert.Error(t, Rotation{Hadamard, 32}.Apply(x, []int{2, 96}, 2))
	assert.Error(t, Rotation{Hadamard, 32}.Apply(x[:10], []int{2, 96}, 1))
	assert.ErrorIs(t, Rotation{Hadamard, 24}.Apply(x, []int{2, 96}, 1), ErrSyntax)
	assert.NoError(t, Rotation{}.Apply(x, []int{2, 96}, 1))
}
