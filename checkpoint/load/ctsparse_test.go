package load_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// ctSparseDir writes, as compressed-tensors would and without our metadata,
// a checkpoint holding the 2×8 example of docs/SPARSITY.md §4 as a
// sparse-24-bitmask F32 weight (bitmask 0x36 0x69), an int8 one with a
// per-row scale, a sparse-bitmask BF16 weight of any density, and a norm;
// with config.json when cfg is not "".
func ctSparseDir(t *testing.T, cfg string) string {
	t.Helper()
	dir := t.TempDir()
	i64 := func(vs ...int64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		return b
	}
	f32 := func(vs ...float32) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
		return b
	}
	ts := []safetensors.Tensor{
		{Name: "m.a.shape", DType: safetensors.I64, Shape: []int{2, 1}, Data: i64(2, 8)},
		{Name: "m.a.compressed", DType: safetensors.F32, Shape: []int{2, 4}, Data: f32(-0.9, 0.5, 3, -4, 1, 2, 5, 6)},
		{Name: "m.a.bitmask", DType: safetensors.U8, Shape: []int{2, 1}, Data: []byte{0x36, 0x69}},
		{Name: "m.b.shape", DType: safetensors.I64, Shape: []int{2, 1}, Data: i64(2, 8)},
		{Name: "m.b.compressed", DType: safetensors.I8, Shape: []int{2, 4}, Data: []byte{0xa6, 0x32, 0x7f, 0xd8, 0x0a, 0x14, 0x32, 0x7f}},
		{Name: "m.b.bitmask", DType: safetensors.U8, Shape: []int{2, 1}, Data: []byte{0x36, 0x69}},
		{Name: "m.b.weight_scale", DType: safetensors.F32, Shape: []int{2, 1}, Data: f32(0.5, 2)},
		// Row 0 keeps columns 0 and 7 (0x81), row 1 none: values 1.5, −2
		// as BF16 0x3fc0, 0xc000.
		{Name: "m.c.shape", DType: safetensors.I64, Shape: []int{2}, Data: i64(2, 8)},
		{Name: "m.c.compressed", DType: safetensors.BF16, Shape: []int{2}, Data: []byte{0xc0, 0x3f, 0x00, 0xc0}},
		{Name: "m.c.bitmask", DType: safetensors.U8, Shape: []int{2, 1}, Data: []byte{0x81, 0x00}},
		{Name: "m.c.row_offsets", DType: safetensors.I64, Shape: []int{2}, Data: i64(0, 2)},
		{Name: "m.norm.weight", DType: safetensors.F32, Shape: []int{2}, Data: f32(1, 1)},
	}
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, nil))
	if cfg != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644))
	}
	return dir
}

func TestOpenCompressedTensorsSparse(t *testing.T) {
	// Without config.json: the formats come from the tensors.
	{
		c, err := load.Open(ctSparseDir(t, ""))
		require.NoError(t, err)
		defer c.Close()
		assert.Equal(t, "compressed-tensors", c.Layout())
		var names []string
		for _, info := range c.Tensors() {
			names = append(names, info.Name)
		}
		assert.Equal(t, []string{"m.a.weight", "m.b.weight", "m.c.weight", "m.norm.weight"}, names)
		a, err := c.Info("m.a.weight")
		require.NoError(t, err)
		assert.Equal(t, []int{2, 8}, a.Shape)
		assert.Equal(t, "float32", a.Type)
		assert.Equal(t, []string{"m.a.shape", "m.a.compressed", "m.a.bitmask"}, a.Stored)
		v, shape, err := c.Float32("m.a.weight")
		require.NoError(t, err)
		assert.Equal(t, []int{2, 8}, shape)
		assert.Equal(t, []float32{0, -0.9, 0.5, 0, 3, -4, 0, 0, 1, 0, 0, 2, 0, 5, 6, 0}, v)
		// int8 codes times the row's scale: 0.5 and 2.
		v, _, err = c.Float32("m.b.weight")
		require.NoError(t, err)
		assert.Equal(t, []float32{0, -45, 25, 0, 63.5, -20, 0, 0, 20, 0, 0, 40, 0, 100, 254, 0}, v)
		b, err := c.Info("m.b.weight")
		require.NoError(t, err)
		assert.Equal(t, "int8_channel", b.Type)
		v, _, err = c.Float32("m.c.weight")
		require.NoError(t, err)
		assert.Equal(t, []float32{1.5, 0, 0, 0, 0, 0, 0, -2, 0, 0, 0, 0, 0, 0, 0, 0}, v)
		tt, err := c.Tensor("m.c.weight")
		require.NoError(t, err)
		assert.Equal(t, 2, tt.Mask.Count())
		tt, err = c.Tensor("m.a.weight")
		require.NoError(t, err)
		assert.Equal(t, 8, tt.Mask.Count())
		rep, err := load.Inspect(c, load.InspectOptions{Stats: true})
		require.NoError(t, err)
		dens := map[string]float64{}
		for _, w := range rep.Converted {
			require.NotNil(t, w.Density, w.Name)
			dens[w.Name] = *w.Density
		}
		assert.Equal(t, map[string]float64{"m.a.weight": 0.5, "m.b.weight": 0.5, "m.c.weight": 0.125}, dens)
	}
	// With config.json's sparsity_config: weights of the other format are
	// listed but do not read.
	for _, tc := range []struct{ format, ok, bad string }{
		{"sparse-24-bitmask", "m.a.weight", "m.c.weight"},
		{"sparse-bitmask", "m.c.weight", "m.a.weight"},
	} {
		c, err := load.Open(ctSparseDir(t, `{"quantization_config": {"quant_method": "compressed-tensors", "sparsity_config": {"format": "`+tc.format+`"}, "version": "0.14.0.1"}}`))
		require.NoError(t, err)
		defer c.Close()
		assert.Equal(t, "compressed-tensors", c.Layout())
		_, _, err = c.Float32(tc.ok)
		assert.NoError(t, err, "%s agrees with the config", tc.ok)
		_, _, err = c.Float32(tc.bad)
		var fe *layout.FormatError
		require.ErrorAs(t, err, &fe)
		assert.Contains(t, err.Error(), "names format "+tc.format)
	}
}
