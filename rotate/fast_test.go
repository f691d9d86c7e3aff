package rotate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stageByStage is the transform as its definition runs it: log₂ n stages
// h = 1, 2, 4, ..., each replacing every pair (x[i+j], x[i+j+h]) by its sum
// and difference, then the scaling by 1/√n. The fused stages of Transform
// and Rows do the same operations on the same values, so they must agree
// with it bit for bit.
func stageByStage(x []float64) {
	n := len(x)
	for h := 1; h < n; h *= 2 {
		for i := 0; i < n; i += 2 * h {
			for j := i; j < i+h; j++ {
				x[j], x[j+h] = x[j]+x[j+h], x[j]-x[j+h]
			}
		}
	}
	s := 1 / math.Sqrt(float64(n))
	if k := math.Log2(float64(n)); int(k)%2 == 0 {
		s = math.Ldexp(1, -int(k)/2) // exact for powers of four
	} else {
		s = math.Ldexp(1, -int(k)/2) * (math.Sqrt2 / 2)
	}
	for i := range x {
		x[i] *= s
	}
}

func randomValues(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(20)-10)))
	}
	return x
}

// TestTransformBitExact: Transform and Rows give the stage-by-stage
// transform's values bit for bit, for every block from 2 to 8192.
func TestTransformBitExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s Scratch
	for n := 2; n <= 8192; n *= 2 {
		src := randomValues(rng, 3*n)
		want := make([]float32, len(src))
		for b := 0; b < len(src); b += n {
			buf := make([]float64, n)
			for k := range buf {
				buf[k] = float64(src[b+k])
			}
			got := append([]float64(nil), buf...)
			stageByStage(buf)
			Transform(got)
			for k := range buf {
				require.Equal(t, math.Float64bits(buf[k]), math.Float64bits(got[k]), "n=%d k=%d", n, k)
				want[b+k] = float32(buf[k])
			}
		}
		r := Rotation{Kind: Hadamard, Block: n}
		dst := make([]float32, len(src))
		r.Rows(dst, src, &s)
		assert.Equal(t, want, dst, "Rows n=%d", n)
		inPlace := append([]float32(nil), src...)
		r.Rows(inPlace, inPlace, &s)
		assert.Equal(t, want, inPlace, "Rows in place n=%d", n)
		applied := append([]float32(nil), src...)
		require.NoError(t, r.Apply(applied, []int{3, n}, 1))
		assert.Equal(t, want, applied, "Apply n=%d", n)
		// The three blocks as the columns of an [n, 3] tensor, rotated along
		// axis 0: the same bits, column by column.
		cols := make([]float32, len(src))
		for b := range 3 {
			for k := range n {
				cols[k*3+b] = src[b*n+k]
			}
		}
		require.NoError(t, r.Apply(cols, []int{n, 3}, 0))
		for b := range 3 {
			for k := range n {
				require.Equal(t, math.Float32bits(want[b*n+k]), math.Float32bits(cols[k*3+b]), "Apply along axis 0, n=%d", n)
			}
		}
	}
}

// TestRowsRefuses: Rows panics on lengths that are not whole blocks, and
// copies for no rotation.
func TestRowsRefuses(t *testing.T) {
	var s Scratch
	r := Rotation{Kind: Hadamard, Block: 4}
	assert.Panics(t, func() { r.Rows(make([]float32, 6), make([]float32, 6), &s) })
	assert.Panics(t, func() { r.Rows(make([]float32, 4), make([]float32, 8), &s) })
	assert.Panics(t, func() { Rotation{Kind: Hadamard}.Rows(make([]float32, 4), make([]float32, 4), &s) })
	dst := make([]float32, 2)
	Rotation{}.Rows(dst, []float32{1, 2}, &s)
	assert.Equal(t, []float32{1, 2}, dst)
}

// BenchmarkRows measures Rows in place on 64 Ki values (a cache-sized chunk
// of a conversion) on the kernels' tier; TCAST_KERNELS=generic runs the Go
// reference for comparison.
func BenchmarkRows(b *testing.B) {
	for _, n := range []int{16, 32, 128, 1024} {
		b.Run("B"+itoa(n), func(b *testing.B) {
			x := randomValues(rand.New(rand.NewPCG(3, 4)), 64<<10)
			r := Rotation{Kind: Hadamard, Block: n}
			var s Scratch
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				r.Rows(x, x, &s)
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
