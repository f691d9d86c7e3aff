package layout

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/sparsity"
	"github.com/tensorcast-go/tensorcast/tcast"
)

//go:generate /usr/bin/python3 testdata/ctsparse/gen_golden.py

// TestCTSparseNumPy checks the sparse formats against NumPy: the golden
// cases of testdata/ctsparse/gen_golden.py hold matrices, their 2:4 and 4:8
// masks chosen by NumPy (a stable argsort per group), the bitmasks
// numpy.packbits(..., axis=-1, bitorder="little") makes of them, the values
// and row offsets. Our pruning and encoding must give the same bytes, and
// our decoder must read NumPy's tensors, including compressed-tensors' own
// sparse-bitmask of x != 0. .ci/run makes the cases afresh with NumPy and
// runs this test on them.
func TestCTSparseNumPy(t *testing.T) {
	arrays, err := npy.ReadNPZ(filepath.Join("testdata", "ctsparse", "golden.npz"))
	require.NoError(t, err)
	cases := map[string]map[string]*npy.Array{}
	var order []string
	for _, a := range arrays {
		c, field, ok := strings.Cut(a.Name, ".")
		require.True(t, ok, a.Name)
		if cases[c] == nil {
			cases[c] = map[string]*npy.Array{}
			order = append(order, c)
		}
		cases[c][field] = a.Array
	}
	require.Len(t, order, 16)
	f32 := func(a *npy.Array) []float32 {
		v, err := a.Float32s()
		require.NoError(t, err)
		return v
	}
	f32bytes := func(a *npy.Array) []byte {
		return lef32(f32(a)...)
	}
	i64 := func(a *npy.Array) []byte {
		require.Equal(t, npy.Int64, a.DType)
		return a.Data
	}
	base, _ := Get("compressed-tensors")
	n48 := 0
	for _, name := range order {
		c := cases[name]
		x, shape := f32(c["x"]), c["x"].Shape
		rows, cols := shape[0], shape[1]
		t.Run(name, func(t *testing.T) {
			check := func(p sparsity.Pattern, f SparseFormat, keepName string, want []ldrExpect) {
				keep := make([]bool, len(c[keepName].Data))
				for i, b := range c[keepName].Data {
					keep[i] = b != 0
				}
				m, err := sparsity.Magnitude(x, shape, -1, p)
				require.NoError(t, err)
				nm, err := mask.FromBools(shape, keep)
				require.NoError(t, err)
				require.True(t, nm.Equal(m), "%v: our magnitude mask is NumPy's", p)
				ct, err := tcast.Cast(x, shape, tcast.MustLookup("float32"), &tcast.Options{Form: tcast.Actual, Keep: m})
				require.NoError(t, err)
				ts, _, got := ctSparseRoundTrip(t, ctPruned(t, p, f), "w.weight", ct)
				ldrCheckTensors(t, ts, want)
				assert.True(t, nm.Equal(got.Mask))
				// NumPy's tensors, read without our metadata.
				src := newLdrSource(ts, nil)
				back, ok, err := base.Decode("w.weight", src)
				require.NoError(t, err)
				require.True(t, ok)
				assert.True(t, nm.Equal(back.Mask))
			}
			check(sparsity.P24, Sparse24Bitmask, "keep24", []ldrExpect{
				{"w.shape", safetensors.I64, []int{2, 1}, lei64(int64(rows), int64(cols))},
				{"w.compressed", safetensors.F32, []int{rows, cols / 2}, f32bytes(c["c24"])},
				{"w.bitmask", safetensors.U8, c["bm24"].Shape, c["bm24"].Data},
			})
			if c["keep48"] != nil {
				n48++
				check(sparsity.P48, SparseBitmask, "keep48", []ldrExpect{
					{"w.shape", safetensors.I64, []int{2}, lei64(int64(rows), int64(cols))},
					{"w.compressed", safetensors.F32, c["c48"].Shape, f32bytes(c["c48"])},
					{"w.bitmask", safetensors.U8, c["bm48"].Shape, c["bm48"].Data},
					{"w.row_offsets", safetensors.I64, []int{rows}, i64(c["ro48"])},
				})
			}
			// compressed-tensors' own sparse-bitmask (values x != 0).
			ts := []Tensor{
				{Spec: specOf("w.shape", safetensors.I64, []int{2}), Data: lei64(int64(rows), int64(cols))},
				{Spec: specOf("w.compressed", safetensors.F32, c["cnz"].Shape), Data: f32bytes(c["cnz"])},
				{Spec: specOf("w.bitmask", safetensors.U8, c["bmnz"].Shape), Data: c["bmnz"].Data},
				{Spec: specOf("w.row_offsets", safetensors.I64, []int{rows}), Data: i64(c["ronz"])},
			}
			got, ok, err := base.Decode("w.weight", newLdrSource(ts, nil))
			require.NoError(t, err)
			require.True(t, ok)
			v, err := tcast.Decompress(got)
			require.NoError(t, err)
			for i := range x {
				require.Equal(t, math.Float32bits(x[i]), math.Float32bits(v[i]), "element %d", i)
				require.Equal(t, x[i] != 0, got.Mask.Get(i), "mask element %d", i)
			}
		})
	}
	assert.Equal(t, 8, n48, "cases with 4:8")
}
