package sparsity

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// valid24Blocks enumerates, independently of the package's table, every
// 16-bit 4×4 mask (bit 4r+c) with two bits in each row and each column, in
// increasing order.
func valid24Blocks() []uint16 {
	var vs []uint16
	for v := 0; v < 1<<16; v++ {
		ok := true
		for i := range 4 {
			if bits.OnesCount16(uint16(v>>(4*i)&0xf)) != 2 || bits.OnesCount16(uint16(v>>i&0x1111)) != 2 {
				ok = false
			}
		}
		if ok {
			vs = append(vs, uint16(v))
		}
	}
	return vs
}

func TestTransposable24Table(t *testing.T) {
	want := valid24Blocks()
	require.Len(t, want, 90)
	got := make([]uint16, len(transposable24))
	for i, b := range transposable24 {
		got[i] = b.bits
	}
	assert.Equal(t, want, got)
}

func TestTransposable24HandDerived(t *testing.T) {
	// Block-diagonal weights: rows 0,1 keep columns 0,1 (0x3), rows 2,3 keep
	// columns 2,3 (0xc): bytes 0x33, 0xcc.
	x := []float32{
		9, -9, 1, 0,
		9, 9, 0, 1,
		1, 0, -9, 9,
		0, 1, 9, 9,
	}
	m, err := Transposable24(x, []int{4, 4})
	require.NoError(t, err)
	assert.Equal(t, []byte{0x33, 0xcc}, m.Bytes())

	// All equal: every pattern ties and the smallest mask wins. Minimising
	// row 3 first (the high nibble) gives columns 0,1 (0x3), then row 2 the
	// same, which leaves columns 2,3 (0xc) to rows 0 and 1: 0x33cc, bytes
	// 0xcc, 0x33.
	ones := slices.Repeat([]float32{1}, 16)
	m, err = Transposable24(ones, []int{4, 4})
	require.NoError(t, err)
	assert.Equal(t, []byte{0xcc, 0x33}, m.Bytes())

	// An Inf outweighs any finite sum.
	x[3] = float32(math.Inf(-1)) // row 0, column 3
	m, err = Transposable24(x, []int{4, 4})
	require.NoError(t, err)
	assert.True(t, m.Get(3))

	_, err = Transposable24(make([]float32, 24), []int{4, 6})
	require.ErrorIs(t, err, ErrShape)
	_, err = Transposable24(make([]float32, 24), []int{6, 4})
	require.ErrorIs(t, err, ErrShape)
	_, err = Transposable24(make([]float32, 4), []int{4})
	require.ErrorIs(t, err, ErrShape)
}

// TestTransposable24Optimal compares each block with a brute force over all
// 65536 masks: same kept sum, same pattern (first maximum in increasing
// order), and the mask is 2:4 along both axes.
func TestTransposable24Optimal(t *testing.T) {
	valid := valid24Blocks()
	r := rand.New(rand.NewPCG(3, 4))
	shape := []int{2, 8, 12}
	x := make([]float32, 2*8*12)
	for i := range x {
		if r.IntN(3) == 0 {
			x[i] = float32(r.IntN(5) - 2) // ties
		} else {
			x[i] = float32(r.NormFloat64())
		}
	}
	m, err := Transposable24(x, shape)
	require.NoError(t, err)
	require.NoError(t, Check(m, -1, P24))
	require.NoError(t, Check(m, -2, P24))
	for b := 0; b < 2; b++ {
		for r0 := 0; r0 < 8; r0 += 4 {
			for c0 := 0; c0 < 12; c0 += 4 {
				at := func(r, c int) int { return b*96 + (r0+r)*12 + c0 + c }
				best, bestSum := uint16(0), -1.0
				for _, v := range valid {
					s := 0.0
					for i := range 16 {
						if v>>i&1 != 0 {
							s += math.Abs(float64(x[at(i/4, i%4)]))
						}
					}
					if s > bestSum {
						best, bestSum = v, s
					}
				}
				var got uint16
				for i := range 16 {
					if m.Get(at(i/4, i%4)) {
						got |= 1 << i
					}
				}
				require.Equal(t, best, got, "block %d %d %d", b, r0, c0)
			}
		}
	}
}

func TestThreshold(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(-1))
	x := []float32{0.5, -1, 0, float32(math.Copysign(0, -1)), 2, nan, inf, 0.25}
	m, err := Threshold(x, []int{2, 4}, 0.5)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x72}, m.Bytes()) // -1, 2, NaN, -Inf: bits 1,4,5,6
	m, err = Threshold(x, []int{8}, 0)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xf3}, m.Bytes()) // the non-zeros: bits 0,1,4,5,6,7
	_, err = Threshold(x, []int{8}, -1)
	require.ErrorIs(t, err, ErrScores)
	_, err = Threshold(x, []int{8}, nan)
	require.ErrorIs(t, err, ErrScores)
	_, err = Threshold(x, []int{9}, 1)
	require.ErrorIs(t, err, ErrShape)
}

func TestDensity(t *testing.T) {
	x := []float32{3, 1, 4, 1, 5, 9, 2, 6}
	m, err := Density(x, []int{8}, 0.5, DensityOptions{})
	require.NoError(t, err)
	assert.Equal(t, []byte{0xb4}, m.Bytes()) // 9, 6, 5, 4 at 5, 7, 4, 2
	m, err = Density(slices.Repeat([]float32{-1}, 8), []int{8}, 0.25, DensityOptions{})
	require.NoError(t, err)
	assert.Equal(t, []byte{0x03}, m.Bytes()) // ties: the first two
	m, err = Density(x, []int{2, 4}, 0.5, DensityOptions{PerRow: true})
	require.NoError(t, err)
	assert.Equal(t, []byte{0xa5}, m.Bytes()) // 3, 4 | 9, 6
	m, err = Density(x, []int{8}, 0.3, DensityOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, m.Count()) // ⌊2.4 + 0.5⌋
	m, err = Density(x, []int{8}, 1, DensityOptions{})
	require.NoError(t, err)
	assert.Equal(t, 8, m.Count())
	m, err = Density(x, []int{8}, 0, DensityOptions{})
	require.NoError(t, err)
	assert.Equal(t, 0, m.Count())
	m, err = Density(x, []int{8}, 0.25, DensityOptions{Scores: []float32{0, 0, 0, 0, 0, 0, 1, 1}})
	require.NoError(t, err)
	assert.Equal(t, []byte{0xc0}, m.Bytes())

	_, err = Density(x, []int{8}, 1.5, DensityOptions{})
	require.ErrorIs(t, err, ErrOptions)
	_, err = Density(x, []int{8}, math.NaN(), DensityOptions{})
	require.ErrorIs(t, err, ErrOptions)
	_, err = Density(x, []int{8}, 0.5, DensityOptions{Scores: []float32{1}})
	require.ErrorIs(t, err, ErrShape)
	_, err = Density(x, []int{8}, 0.5, DensityOptions{Scores: []float32{1, 1, 1, 1, 1, 1, 1, -1}})
	require.ErrorIs(t, err, ErrScores)
}

// TestDensityReference compares Density with a stable sort on random keys
// spread over both 16-bit halves, with ties and NaNs.
func TestDensityReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 7, 100, 1000} {
		x := make([]float32, n)
		for i := range x {
			switch r.IntN(8) {
			case 0:
				x[i] = float32(math.NaN())
			case 1:
				x[i] = float32(r.IntN(3))
			default:
				x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(40)-20))
			}
		}
		for _, d := range []float64{0.1, 0.5, 0.77, 0.999} {
			m, err := Density(x, []int{n}, d, DensityOptions{})
			require.NoError(t, err)
			k := int(math.Floor(d*float64(n) + 0.5))
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			key := func(i int) uint32 { return math.Float32bits(x[i]) & 0x7fffffff }
			slices.SortStableFunc(idx, func(a, b int) int {
				switch {
				case key(a) > key(b):
					return -1
				case key(a) < key(b):
					return 1
				}
				return 0
			})
			want := make([]bool, n)
			for _, i := range idx[:k] {
				want[i] = true
			}
			require.Equal(t, want, m.Bools(), "n=%d d=%v", n, d)
		}
	}
}
