package castdir

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/scale"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

// The golden directories under testdata/golden were first written by
// `tcast cast` before the format moved into this package (run in testdata/,
// so info.json records the inputs as input/NAME.npy); -update rewrites them
// from Write, for a deliberate change of the format.
var update = flag.Bool("update", false, "rewrite testdata/golden from Write")

// goldenCase is one cast: `tcast cast -dtype DTYPE [options] input/INPUT`.
type goldenCase struct {
	name, dtype, input string
	axis               int
	mode               scale.Mode
	elem               dtype.Options
	keep               string
}

var goldenCases = []goldenCase{
	{name: "mxfp4_keep", dtype: "mxfp4", input: "m4x64.npy", axis: -1, keep: "keep4x64.npy"},
	{name: "nvfp4", dtype: "nvfp4", input: "s2x48.npy", axis: -1},
	{name: "uint4_g32", dtype: "uint4_g32", input: "s3x64.npy", axis: -1},
	{name: "mx6", dtype: "mx6", input: "s2x48.npy", axis: -1},
	{name: "mxfp8e4_stochastic", dtype: "mxfp8e4", input: "m3x40.npy", axis: -1, mode: scale.Even,
		elem: dtype.Options{Rounding: dtype.RoundStochastic, Seed: 3}},
	{name: "fp8e4_block128_axis0", dtype: "fp8e4_block128", input: "m12x140.npy", axis: 0},
	{name: "mxint8_axis0", dtype: "mxint8", input: "s64x3.npy", axis: 0, elem: dtype.Options{FullRange: true}},
	{name: "mxfp4_scalar", dtype: "mxfp4", input: "scalar.npy", axis: -1},
	{name: "e4m3fn", dtype: "e4m3fn", input: "s50.npy", axis: -1},
	{name: "bfloat16_ieee", dtype: "bfloat16", input: "s50.npy", axis: -1, elem: dtype.Options{Overflow: dtype.OverflowIEEE}},
	{name: "float32", dtype: "float32", input: "s50.npy", axis: -1},
	{name: "e2m1_away", dtype: "e2m1", input: "m3x3.npy", axis: -1, elem: dtype.Options{Rounding: dtype.RoundAway}},
	{name: "int8_full", dtype: "int8", input: "s50.npy", axis: -1, elem: dtype.Options{FullRange: true}},
	{name: "e8m0", dtype: "e8m0", input: "m3x3.npy", axis: -1},
}

// castCase casts a golden case's input as tcast cast does and returns the
// input values, the Actual tensor and the WriteOptions recording it.
func castCase(t *testing.T, c goldenCase) ([]float32, *tc.Tensor, WriteOptions) {
	t.Helper()
	arr, err := npy.ReadFile(filepath.Join("testdata", "input", c.input))
	require.NoError(t, err)
	x, err := arr.Float32s()
	require.NoError(t, err)
	opts := WriteOptions{Input: "input/" + c.input, InputDType: arr.DType.String(), Elem: c.elem,
		AllowNonFinite: true} // the inputs hold NaN and Inf on purpose
	var keep *mask.Mask
	if c.keep != "" {
		opts.Keep = "input/" + c.keep
		keep, err = npy.ReadMaskFile(filepath.Join("testdata", "input", c.keep))
		require.NoError(t, err)
	}
	axis := c.axis
	if axis < 0 {
		axis += max(len(arr.Shape), 1)
	}
	dt, err := tc.Lookup(c.dtype)
	if err == nil && dt.Spec() != nil {
		ax := c.axis
		if ax == 0 {
			ax = tc.FirstAxis // the zero Axis means the last
		}
		o := tc.Options{Form: tc.Actual, Axis: ax, Mode: c.mode, Rounding: c.elem.Rounding, Seed: c.elem.Seed,
			FullRange: c.elem.FullRange, Keep: keep}
		act, err := tc.Cast(x, arr.Shape, dt, &o)
		require.NoError(t, err)
		return x, act, opts
	}
	f := (*dtype.Format)(nil)
	if dt != nil {
		f = dt.Elem()
	} else {
		f = dtype.MustParse(c.dtype)
	}
	act, err := tc.CastFormat(x, arr.Shape, f, c.elem)
	require.NoError(t, err)
	act.DataType, act.Axis, act.Mode = dt, axis, c.mode
	return x, act, opts
}

func TestWriteGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			x, act, opts := castCase(t, c)
			out := filepath.Join(t.TempDir(), "cast")
			require.NoError(t, Write(out, x, act, opts))
			golden := filepath.Join("testdata", "golden", c.name)
			if *update {
				require.NoError(t, os.RemoveAll(golden))
				require.NoError(t, os.CopyFS(golden, os.DirFS(out)))
			}
			want, err := os.ReadDir(golden)
			require.NoError(t, err)
			got, err := os.ReadDir(out)
			require.NoError(t, err)
			names := func(es []os.DirEntry) (s []string) {
				for _, e := range es {
					s = append(s, e.Name())
				}
				return s
			}
			require.Equal(t, names(want), names(got))
			for _, e := range got {
				w, err := os.ReadFile(filepath.Join(golden, e.Name()))
				require.NoError(t, err)
				g, err := os.ReadFile(filepath.Join(out, e.Name()))
				require.NoError(t, err)
				assert.Equal(t, string(w), string(g), "%s byte for byte", e.Name())
				info, err := e.Info()
				require.NoError(t, err)
				assert.Zero(t, info.Mode().Perm()&^0o644, "%s mode %v", e.Name(), info.Mode())
			}
		})
	}
}

func TestReadGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			golden := filepath.Join("testdata", "golden", c.name)
			d, err := Open(golden)
			require.NoError(t, err)
			x, act, _ := castCase(t, c)
			assert.Equal(t, act.Shape, d.Shape())
			assert.Equal(t, act.Axis, d.Info.Axis)
			assert.Equal(t, c.mode, d.Mode)
			assert.Equal(t, act.Data.Format, d.Format)
			if act.DataType == nil {
				assert.Nil(t, d.DataType)
			} else {
				assert.Equal(t, act.DataType.Code(), d.DataType.Code())
			}

			// The tensor read back is the Compressed form of the cast.
			got, err := d.Tensor()
			require.NoError(t, err)
			want := act
			if act.DataType != nil {
				want, err = tc.Compress(act)
				require.NoError(t, err)
			}
			assert.Equal(t, tc.Compressed, got.Form)
			assert.Equal(t, got.Data.Bits <= 8, got.Data.Packed)
			if act.DataType != nil {
				require.Equal(t, len(want.Parts()), len(got.Parts()))
				for i, p := range want.Parts() {
					assert.Equal(t, p.Name, got.Parts()[i].Name)
					assert.Equal(t, p.Bytes, got.Parts()[i].Bytes, p.Name)
					assert.Equal(t, p.Shape, got.Parts()[i].Shape, p.Name)
				}
			}

			// Float32 equals dequant.npy bit for bit.
			v, shape, err := d.Float32()
			require.NoError(t, err)
			assert.Equal(t, act.Shape, shape)
			deq, err := npy.ReadFile(filepath.Join(golden, DequantFile))
			require.NoError(t, err)
			ref, err := deq.Float32s()
			require.NoError(t, err)
			require.Len(t, v, len(ref))
			for i := range v {
				require.Equal(t, math.Float32bits(ref[i]), math.Float32bits(v[i]), "element %d", i)
			}
			require.Len(t, x, len(v))
			assert.True(t, slices.Contains(d.Files(), PackedFile))
		})
	}
}
