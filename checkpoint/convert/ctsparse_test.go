package convert

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/sparsity"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// refKeep is an independent N:M selection along the rows of a [rows, cols]
// matrix: in every group the n largest |x| are kept, equal magnitudes going
// to the lower column (a stable sort of the group by decreasing |x|).
func refKeep(x []float32, cols, n, m int) []bool {
	keep := make([]bool, len(x))
	for g := 0; g < len(x); g += m {
		idx := []int{}
		for i := range m {
			idx = append(idx, g+i)
		}
		sort.SliceStable(idx, func(a, b int) bool {
			return math.Abs(float64(x[idx[a]])) > math.Abs(float64(x[idx[b]]))
		})
		for _, i := range idx[:n] {
			keep[i] = true
		}
	}
	return keep
}

// ctPruneOpts returns options converting to compressed-tensors pruned to p
// in format f, with datatype dt ("" for none).
func ctPruneOpts(t *testing.T, dt string, p sparsity.Pattern, f layout.SparseFormat) Options {
	t.Helper()
	base, err := layout.Get("compressed-tensors")
	require.NoError(t, err)
	l, err := base.(layout.Pruner).WithPruning(layout.Pruning{Pattern: p, Format: f})
	require.NoError(t, err)
	o := Options{Layout: l, Axis: -1, Workers: 2}
	if dt != "" {
		o.DataType = tcast.MustLookup(dt)
	}
	return o
}

// qcOf returns config.json's quantization_config of an output directory.
func qcOf(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(b, &cfg))
	qc, _ := cfg["quantization_config"].(map[string]any)
	return qc
}

// TestCTSparseConvertRoundTrip converts the small model to compressed-tensors
// pruned 2:4, unquantized and with the 8-bit datatypes, and checks that every
// pruned weight reads back as the prune (an independent 2:4 selection) then
// cast of its source, bit for bit, with its mask, and the config.
func TestCTSparseConvertRoundTrip(t *testing.T) {
	src := smallModel(t, t.TempDir())
	in, err := load.Open(src)
	require.NoError(t, err)
	defer in.Close()
	for _, tc := range []struct {
		dt, qformat, typ string
		f                layout.SparseFormat
		stored           []string // suffixes of a pruned module's tensors
	}{
		{"", "", "bfloat16", layout.SparseNatural, []string{".shape", ".compressed", ".bitmask"}},
		{"float32", "", "float32", layout.Sparse24Bitmask, []string{".shape", ".compressed", ".bitmask"}},
		{"", "", "bfloat16", layout.SparseBitmask, []string{".shape", ".compressed", ".bitmask", ".row_offsets"}},
		{"fp8e4_channel", "float-quantized", "fp8e4_channel", layout.SparseNatural, []string{".shape", ".compressed", ".bitmask", ".weight_scale"}},
		{"int8_channel", "int-quantized", "int8_channel", layout.SparseNatural, []string{".shape", ".compressed", ".bitmask", ".weight_scale"}},
		{"int8_g32", "int-quantized", "int8_g32", layout.SparseBitmask, []string{".shape", ".compressed", ".bitmask", ".row_offsets", ".weight_scale"}},
		{"", "", "bfloat16", layout.SparseDense, []string{".weight"}},
		{"mxfp4", "mxfp4-pack-quantized", "mxfp4e2", layout.SparseDense, []string{".weight_packed", ".weight_scale"}},
	} {
		t.Run(tc.typ+"/"+string(tc.f), func(t *testing.T) {
			out := t.TempDir()
			o := ctPruneOpts(t, tc.dt, sparsity.P24, tc.f)
			res, err := Convert(src, out, o)
			require.NoError(t, err)
			assert.Equal(t, 6, res.Cast())
			c, err := load.Open(out)
			require.NoError(t, err)
			defer c.Close()
			assert.Equal(t, "compressed-tensors", c.Layout())
			var zeros, elems int64
			for _, ti := range in.Tensors() {
				x, _, err := in.Float32(ti.Name)
				require.NoError(t, err)
				ci, err := c.Info(ti.Name)
				require.NoError(t, err)
				got, shape, err := c.Float32(ti.Name)
				require.NoError(t, err)
				assert.Equal(t, ti.Shape, shape)
				if !ci.Quantized() {
					sameBits(t, x, got, ti.Name+" kept")
					continue
				}
				assert.Equal(t, tc.typ, ci.Type, ti.Name)
				p := strings.TrimSuffix(ti.Name, ".weight")
				var stored []string
				for _, s := range tc.stored {
					stored = append(stored, p+s)
				}
				assert.Equal(t, stored, ci.Stored, ti.Name)
				keep := refKeep(x, ti.Shape[1], 2, 4)
				km, err := mask.FromBools(ti.Shape, keep)
				require.NoError(t, err)
				dt := tcast.MustLookup(tc.typ)
				want, err := tcast.Cast(x, ti.Shape, dt, &tcast.Options{Keep: km})
				require.NoError(t, err)
				sameBits(t, want.Values, got, ti.Name)
				for i, k := range keep {
					if !k {
						require.Zero(t, math.Float32bits(got[i]), "%s: pruned element %d is +0", ti.Name, i)
					}
					if got[i] == 0 {
						zeros++
					}
				}
				elems += int64(len(x))
				tt, err := c.Tensor(ti.Name)
				require.NoError(t, err)
				if tc.f == layout.SparseDense {
					assert.Nil(t, tt.Mask)
					continue
				}
				require.NotNil(t, tt.Mask)
				assert.True(t, km.Equal(tt.Mask), "%s: the mask is the 2:4 selection", ti.Name)
				assert.Equal(t, 0.5, sparsity.MaskDensity(tt.Mask))
			}
			qc := qcOf(t, out)
			if tc.f == layout.SparseDense {
				if tc.qformat == "" {
					assert.Nil(t, qc, "a pruned unquantized model has no quantization_config")
				} else {
					assert.Equal(t, tc.qformat, qc["format"])
					assert.NotContains(t, qc, "sparsity_config")
				}
				return
			}
			sc := qc["sparsity_config"].(map[string]any)
			format := "sparse-24-bitmask"
			if tc.f == layout.SparseBitmask {
				format = "sparse-bitmask"
			}
			assert.Equal(t, format, sc["format"])
			assert.Equal(t, "2:4", sc["sparsity_structure"])
			assert.Equal(t, float64(zeros)/float64(elems), sc["global_sparsity"], "measured: zeros of the pruned weights as written")
			assert.GreaterOrEqual(t, sc["global_sparsity"], 0.5)
			assert.Len(t, sc["targets"], 6)
			assert.Equal(t, []any{"model.embed_tokens", "model.layers.0.input_layernorm", "model.layers.1.input_layernorm"}, sc["ignore"])
			assert.Equal(t, "compressed-tensors", qc["quant_method"])
			assert.Equal(t, "0.14.0.1", qc["version"])
			if tc.qformat == "" {
				assert.NotContains(t, qc, "format")
				assert.NotContains(t, qc, "config_groups")
			} else {
				assert.Equal(t, tc.qformat, qc["format"])
			}
			// The report: bits per value of what is stored, and a note.
			elemBits := tcast.MustLookup(tc.typ).Elem().Bits()
			for _, r := range res.Tensors {
				if r.DataType != "" {
					assert.Contains(t, r.Note, "pruned 2:4 ("+format+"), density 0.5")
					assert.Less(t, r.Bits, float64(elemBits), "half the values, a bit each of mask, and scales")
				}
			}
			// inspect: the density of each bitmask and the stored bits.
			rep, err := load.Inspect(c, load.InspectOptions{})
			require.NoError(t, err)
			require.Len(t, rep.Converted, 6)
			for _, w := range rep.Converted {
				require.NotNil(t, w.Density, w.Name)
				assert.Equal(t, 0.5, *w.Density)
				assert.Less(t, w.BitsPerValue, float64(elemBits))
			}
		})
	}
}

// TestCTSparseFixture converts the 1×1 convolutions of the real iris fixture,
// as 2-D weights, pruned 2:4 without quantization: every pruned weight reads
// back with density exactly 0.5 and the independently pruned BF16 values.
func TestCTSparseFixture(t *testing.T) {
	f, err := safetensors.Open(iris)
	require.NoError(t, err)
	defer f.Close()
	var ts []safetensors.Tensor
	for _, ti := range f.Tensors() {
		if len(ti.Shape) != 4 || ti.Shape[0] != 1 || ti.Shape[1] != 1 || ti.Shape[3]%4 != 0 {
			continue
		}
		b, err := f.Bytes(ti.Name)
		require.NoError(t, err)
		ts = append(ts, safetensors.Tensor{Name: ti.Name, DType: ti.DType, Shape: ti.Shape[2:], Data: b})
	}
	require.Greater(t, len(ts), 40)
	src := filepath.Join(t.TempDir(), "iris2d.safetensors")
	require.NoError(t, safetensors.WriteFile(src, ts, nil))
	out := t.TempDir()
	res, err := Convert(src, out, ctPruneOpts(t, "", sparsity.P24, layout.SparseNatural))
	require.NoError(t, err)
	assert.Equal(t, len(ts), res.Cast())
	c, err := load.Open(out)
	require.NoError(t, err)
	defer c.Close()
	in, err := load.Open(src)
	require.NoError(t, err)
	defer in.Close()
	for _, ti := range ts {
		tt, err := c.Tensor(ti.Name)
		require.NoError(t, err)
		require.NotNil(t, tt.Mask, ti.Name)
		assert.Equal(t, ti.Shape[0]*ti.Shape[1]/2, tt.Mask.Count(), "%s: density exactly 0.5", ti.Name)
		x, _, err := in.Float32(ti.Name)
		require.NoError(t, err)
		got, _, err := c.Float32(ti.Name)
		require.NoError(t, err)
		for i, k := range refKeep(x, ti.Shape[1], 2, 4) {
			want := x[i]
			if !k {
				want = 0
			}
			require.Equal(t, math.Float32bits(want), math.Float32bits(got[i]), "%s element %d", ti.Name, i)
		}
	}
	rep, err := load.Inspect(c, load.InspectOptions{})
	require.NoError(t, err)
	for _, w := range rep.Converted {
		assert.Equal(t, 0.5, *w.Density, w.Name)
	}
}

// TestCTSparseConvertRefuses: the combinations a sparse format cannot hold
// are refused before the input is read; a pruned layout takes no -dtype,
// and others need one.
func TestCTSparseConvertRefuses(t *testing.T) {
	for _, dt := range []string{"nvfp4", "mxfp4", "int4_g128", "mxfp8e4"} {
		_, err := Convert("does-not-exist.safetensors", t.TempDir(), ctPruneOpts(t, dt, sparsity.P24, layout.SparseNatural))
		var se *layout.SparsityError
		require.ErrorAs(t, err, &se, dt)
		assert.Equal(t, "Pruning.Format", se.Option)
		assert.NotContains(t, err.Error(), "does-not-exist")
	}
	_, err := Convert("does-not-exist.safetensors", t.TempDir(), opts(t, "mxfp4", "compressed-tensors").withoutDataType())
	assert.ErrorIs(t, err, ErrNoDataType)
	// A row length that is not a multiple of M keeps the weight, saying why.
	dir := t.TempDir()
	src := filepath.Join(dir, "m.safetensors")
	require.NoError(t, safetensors.WriteFile(src, []safetensors.Tensor{
		{Name: "a.weight", DType: safetensors.F32, Shape: []int{4, 12}, Data: make([]byte, 4*48)},
		{Name: "b.weight", DType: safetensors.F32, Shape: []int{4, 16}, Data: make([]byte, 4*64)},
	}, nil))
	res, err := Convert(src, t.TempDir(), ctPruneOpts(t, "", sparsity.P48, layout.SparseNatural))
	require.NoError(t, err)
	assert.Contains(t, res.Tensors[0].Note, "not a multiple of 8")
	assert.Equal(t, "float32", res.Tensors[1].DataType)
	assert.True(t, errors.Is(&layout.SparsityError{}, layout.ErrSparsity))
}

func (o Options) withoutDataType() Options { o.DataType = nil; return o }
