package tcast

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCodebookImportance: mxfi4 (tables f = E2M1 {0 .5 1 1.5 2 3 4 6} and
// i = {0 1 … 7}, subtiles of 4, an E8M0 scale per 32). One row of 32: the
// first subtile 0.6, 0.6, 0.6, 7, the rest zeros; amax 7 keeps the scale at
// 1. Plain error: f 3·0.1² + 1² = 1.03, i 3·0.4² + 0 = 0.48, so i, decoding
// to 1, 1, 1, 7. Columns 0–2 weighted 4 and column 3 weighted 1: f 4·0.03 +
// 1 = 1.12, i 4·0.48 = 1.92, so f, decoding to 0.5, 0.5, 0.5, 6. The zero
// subtiles take table f (0 either way, the first table). Cast along the
// first axis of the transpose, each subtile runs down one column: the
// importance cannot change the choice and the bytes are those without it.
func TestCodebookImportance(t *testing.T) {
	dt := MustLookup("mxfi4")
	x := make([]float32, 32)
	copy(x, []float32{0.6, 0.6, 0.6, 7})
	w := make([]float32, 32)
	for i := range w {
		w[i] = 1
	}
	w[0], w[1], w[2] = 4, 4, 4
	shape := []int{1, 32}
	for _, stream := range []bool{true, false} {
		plain, err := castPath(x, shape, dt, nil, true, stream)
		require.NoError(t, err)
		assert.Equal(t, []float32{1, 1, 1, 7}, plain.Values[:4])
		weighted, err := castPath(x, shape, dt, &Options{Importance: w}, true, stream)
		require.NoError(t, err)
		assert.Equal(t, []float32{0.5, 0.5, 0.5, 6}, weighted.Values[:4])
		assert.Equal(t, make([]float32, 28), weighted.Values[4:])

		// The transpose, shape [32, 1], scaled along its first axis: the
		// importance is one value (column 0's) for the whole tile.
		tshape := []int{32, 1}
		a, err := castPath(x, tshape, dt, &Options{Axis: FirstAxis, Form: Actual}, true, stream)
		require.NoError(t, err)
		b, err := castPath(x, tshape, dt, &Options{Axis: FirstAxis, Form: Actual, Importance: []float32{3}}, true, stream)
		require.NoError(t, err)
		for i, p := range a.Parts() {
			assert.Equal(t, p.Bytes, b.Parts()[i].Bytes, p.Name)
		}
	}
}

// TestCodebookImportanceUnitAndParity: importance vectors of all ones give
// the bytes of a cast without importance (every subtile's weights are
// equal); random importance gives the same bytes row by row as block by
// block, for a stack of matrices with a vector each too.
func TestCodebookImportanceUnitAndParity(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, name := range []string{"mxfi4", "mxfp4e", "icb44fi2_e32s8", "icb44fi4_f32s4", "mx6cb"} {
		dt := MustLookup(name)
		for _, shape := range [][]int{{6, 96}, {2, 3, 64}, {3, 77}} {
			n, _ := product(shape)
			cols := shape[len(shape)-1]
			mats := 1
			if len(shape) == 3 {
				mats = shape[0]
			}
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			ones, imp := make([]float32, cols*mats), make([]float32, cols*mats)
			for i := range imp {
				ones[i] = 1
				imp[i] = float32(r.ExpFloat64() * 10)
			}
			for _, form := range []Form{Actual, Compressed} {
				base, err := Cast(x, shape, dt, &Options{Form: form})
				require.NoError(t, err)
				unit, err := Cast(x, shape, dt, &Options{Form: form, Importance: ones})
				require.NoError(t, err)
				fast, err := castPath(x, shape, dt, &Options{Form: form, Importance: imp}, true, true)
				require.NoError(t, err)
				slow, err := castPath(x, shape, dt, &Options{Form: form, Importance: imp}, true, false)
				require.NoError(t, err)
				for i, p := range base.Parts() {
					require.Equal(t, p.Bytes, unit.Parts()[i].Bytes, "%s %v: unit importance, part %s", name, shape, p.Name)
					require.Equal(t, slow.Parts()[i].Bytes, fast.Parts()[i].Bytes, "%s %v: rows and blocks, part %s", name, shape, p.Name)
				}
			}
		}
	}
}

// TestCodebookImportanceErrors: a vector that is no whole number of column
// vectors for the matrices, or a bad value, is an error for a codebook of
// several tables; rule-scaled datatypes and a single table ignore it.
func TestCodebookImportanceErrors(t *testing.T) {
	x := make([]float32, 4*32)
	shape := []int{4, 32}
	for _, imp := range [][]float32{
		make([]float32, 31),
		make([]float32, 3*32), // 3 matrices do not divide 4 rows
		append(make([]float32, 31), -1),
		append(make([]float32, 31), float32(math.NaN())),
		append(make([]float32, 31), float32(math.Inf(1))),
	} {
		_, err := Cast(x, shape, MustLookup("mxfi4"), &Options{Importance: imp})
		assert.Error(t, err, "%d values", len(imp))
	}
	for _, name := range []string{"mxfp4e2", "nf4"} {
		_, err := Cast(x, shape, MustLookup(name), &Options{Importance: make([]float32, 31)})
		assert.NoError(t, err, name)
	}
	_, err := Cast(x, shape, MustLookup("mxfi4"), &Options{Importance: make([]float32, 2*32)})
	assert.NoError(t, err, "two matrices of two rows")
}
