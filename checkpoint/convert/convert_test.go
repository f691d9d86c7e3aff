package convert

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/sparsity"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// iris is a real BF16 checkpoint: 189 tensors of a trained landmark network
// (testdata/README.md).
const iris = "../../testdata/iris.bf16.safetensors"

func opts(t *testing.T, dt, lay string) Options {
	t.Helper()
	l, err := layout.Get(lay)
	require.NoError(t, err)
	return Options{DataType: tcast.MustLookup(dt), Layout: l, Axis: -1, Workers: 2}
}

func sameBits(t *testing.T, want, got []float32, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	for i := range want {
		if want[i] != want[i] && got[i] != got[i] {
			continue
		}
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("%s: element %d: want %v got %v", msg, i, want[i], got[i])
		}
	}
}

// TestConvertFixtureRoundTrip converts the iris fixture in the tcast layout and
// checks every converted weight against the virtual cast of its source, every
// kept tensor byte for byte, and Verify and Decompress on the result.
func TestConvertFixtureRoundTrip(t *testing.T) {
	for _, dt := range []string{"mxfp4", "nvfp4", "int4_g32", "fp8e4_channel"} {
		t.Run(dt, func(t *testing.T) {
			out := t.TempDir()
			o := opts(t, dt, "tcast")
			res, err := Convert(iris, out, o)
			require.NoError(t, err)
			assert.Len(t, res.Tensors, 189)
			assert.Greater(t, res.Ratio(), 1.5)

			src, err := load.Open(iris)
			require.NoError(t, err)
			defer src.Close()
			c, err := load.Open(out)
			require.NoError(t, err)
			defer c.Close()
			assert.Equal(t, "tcast", c.Layout())
			nconv := 0
			for _, ti := range src.Tensors() {
				x, _, err := src.Float32(ti.Name)
				require.NoError(t, err)
				got, shape, err := c.Float32(ti.Name)
				require.NoError(t, err)
				assert.Equal(t, ti.Shape, shape)
				if ci, _ := c.Info(ti.Name); !ci.Quantized() {
					sameBits(t, x, got, ti.Name+" (kept)")
					continue
				}
				nconv++
				v, err := tcast.Cast(x, ti.Shape, o.DataType, &tcast.Options{Axis: -1})
				require.NoError(t, err)
				sameBits(t, v.Values, got, ti.Name)
			}
			assert.Greater(t, nconv, 50, "most weights are cast")

			vr, err := verifyTensors(iris, out)
			require.NoError(t, err)
			for _, r := range vr {
				if r.Converted {
					require.NotNil(t, r.SQNR, r.Name)
					assert.Greater(t, *r.SQNR, 8.0, r.Name)
				} else {
					assert.Nil(t, r.SQNR, r.Name)
					assert.Zero(t, r.MaxAbsErr, r.Name)
				}
			}

			plain := filepath.Join(t.TempDir(), "plain.safetensors")
			_, err = Decompress(out, plain, DecompressOptions{To: dtype.MustParse("float32")})
			require.NoError(t, err)
			p, err := safetensors.Open(plain)
			require.NoError(t, err)
			defer p.Close()
			assert.Len(t, p.Tensors(), 189)
			for _, ti := range src.Tensors()[:20] {
				want, _, err := c.Float32(ti.Name)
				require.NoError(t, err)
				got, err := p.Float32s(ti.Name)
				require.NoError(t, err)
				sameBits(t, want, got, ti.Name+" decompressed")
			}
		})
	}
}

// TestConvertRefusesAndCleansUp checks that an existing output is kept unless
// Force is set, and that a failed conversion leaves no file behind.
func TestConvertRefusesAndCleansUp(t *testing.T) {
	out := t.TempDir()
	o := opts(t, "mxfp4", "tcast")
	_, err := Convert(iris, out, o)
	require.NoError(t, err)
	_, err = Convert(iris, out, o)
	require.ErrorIs(t, err, atomicfile.ErrExists)
	assert.ErrorContains(t, err, "already exists")
	o.Force = true
	_, err = Convert(iris, out, o)
	require.NoError(t, err)

	// A truncated input: the header parses only if the file is whole.
	b, err := os.ReadFile(iris)
	require.NoError(t, err)
	bad := filepath.Join(t.TempDir(), "bad.safetensors")
	require.NoError(t, os.WriteFile(bad, b[:len(b)/2], 0o644))
	dst := t.TempDir()
	_, err = Convert(bad, dst, opts(t, "mxfp4", "tcast"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.safetensors")
	entries, _ := os.ReadDir(dst)
	assert.Empty(t, entries, "nothing written")
}

// TestDecide covers the default choice of tensors and the filters.
func TestDecide(t *testing.T) {
	tests := []struct {
		name    string
		dtype   safetensors.DType
		shape   []int
		include string
		exclude string
		want    bool
		why     string
	}{
		{"model.layers.0.mlp.down_proj.weight", safetensors.BF16, []int{64, 128}, "", "", true, ""},
		{"model.layers.0.mlp.down_proj.bias", safetensors.BF16, []int{64}, "", "", false, "fewer than 2 dimensions"},
		{"model.layers.0.input_layernorm.weight", safetensors.BF16, []int{64}, "", "", false, "fewer than 2"},
		{"model.embed_tokens.weight", safetensors.BF16, []int{100, 64}, "", "", false, "bias, norm, embedding or output head"},
		{"model.embed_tokens.weight", safetensors.BF16, []int{100, 64}, "embed", "", true, ""},
		{"lm_head.weight", safetensors.F32, []int{100, 64}, "", "", false, "embedding"},
		{"model.layers.0.self_attn.q_proj.weight", safetensors.F16, []int{64, 64}, "", "q_proj", false, "excluded"},
		{"conv.weight", safetensors.F32, []int{3, 3, 32, 1}, "", "", false, "less than one block of 32"},
		// Channel scales on a [256, 1] weight cost more bits than BF16.
		{"w.weight", safetensors.BF16, []int{256, 1}, "", "", false, "no fewer than the source's 16"},
	}
	for _, tc := range tests {
		o := opts(t, "mxfp4", "tcast")
		if tc.name == "w.weight" {
			o = opts(t, "int8_channel", "tcast")
		}
		if tc.include != "" {
			o.Include = regexp.MustCompile(tc.include)
		}
		if tc.exclude != "" {
			o.Exclude = regexp.MustCompile(tc.exclude)
		}
		p := &plan{opts: &o, lay: o.Layout}
		d := &decision{info: load.Info{Name: tc.name, DType: tc.dtype, Shape: tc.shape, Float: true}}
		require.NoError(t, p.decide(d), tc.name)
		assert.Equal(t, tc.want, d.cast, "%s: %s", tc.name, d.result.Note)
		assert.Contains(t, d.result.Note, tc.why, tc.name)
	}
	// -include of a tensor that cannot be cast is an error, in every layout.
	for _, lay := range []string{"tcast", "compressed-tensors", "modelopt"} {
		o := opts(t, "nvfp4", lay)
		o.Include = regexp.MustCompile(`conv`)
		p := &plan{opts: &o, lay: o.Layout}
		d := &decision{info: load.Info{Name: "conv.weight", DType: safetensors.F32, Shape: []int{3, 3, 32, 1}, Float: true}}
		err := p.decide(d)
		if lay == "tcast" {
			assert.NoError(t, err) // tcast holds any shape; the block is padded
			continue
		}
		assert.ErrorContains(t, err, "which cannot be cast", lay)
	}
}

// TestConvertSharded splits the output into shards with an index, and reads it
// back through the index.
func TestConvertSharded(t *testing.T) {
	out := t.TempDir()
	o := opts(t, "nvfp4", "tcast")
	o.ShardSize = 150_000
	res, err := Convert(iris, out, o)
	require.NoError(t, err)
	assert.Equal(t, out, res.Output)
	assert.FileExists(t, filepath.Join(out, safetensors.IndexFileName))
	assert.NoFileExists(t, filepath.Join(out, "model.safetensors"))
	shards, _ := filepath.Glob(filepath.Join(out, "model-*-of-*.safetensors"))
	assert.Greater(t, len(shards), 1)
	assert.Contains(t, shards, filepath.Join(out, "model-00001-of-0000"+string(rune('0'+len(shards)))+".safetensors"))
	vr, err := verifyTensors(iris, out)
	require.NoError(t, err)
	assert.Len(t, vr, 189)
	_, err = Convert(iris, out, o)
	assert.ErrorIs(t, err, atomicfile.ErrExists)
	_, err = Convert(iris, filepath.Join(out, "x.safetensors"), o)
	assert.ErrorContains(t, err, "directory")
}

// TestVerifyCatchesLostValues corrupts a converted weight's scales to the E8M0
// NaN code: verify must report the values lost to NaN, not "exact" (review;
// the measure itself: measure.TestCompareLost).
func TestVerifyCatchesLostValues(t *testing.T) {
	out := t.TempDir()
	_, err := Convert(iris, out, opts(t, "mxfp4", "tcast"))
	require.NoError(t, err)
	path := filepath.Join(out, "model.safetensors")
	f, err := safetensors.Open(path)
	require.NoError(t, err)
	ti, ok := f.Tensor("conv2d/Conv2D_weights.scale")
	require.True(t, ok)
	f.Close()
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = fh.WriteAt(bytes.Repeat([]byte{0xff}, int(ti.Size)), ti.Offset)
	require.NoError(t, err)
	require.NoError(t, fh.Close())
	vr, err := verifyTensors(iris, out)
	require.NoError(t, err)
	for _, r := range vr {
		if r.Name == "conv2d/Conv2D_weights" {
			assert.Greater(t, r.Lost, 0)
			return
		}
	}
	t.Fatal("weight not verified")
}

// TestReportBitsCountStoredBytes checks that the report's bits per value is
// what the file stores: a 2:4-sparse MXFP4 weight costs 4·½ bits of kept
// codes, 1 bit of mask and 8 bits of scale per 32 kept values (64 elements),
// 3.125 bits, not the 5.125 of its dense codes plus the mask.
func TestReportBitsCountStoredBytes(t *testing.T) {
	o := opts(t, "mxfp4", "tcast")
	sdt, err := tcast.WithSparsity(o.DataType, sparsity.Pattern{N: 2, M: 4})
	require.NoError(t, err)
	o.DataType = sdt
	res, err := Convert(iris, filepath.Join(t.TempDir(), "out.safetensors"), o)
	require.NoError(t, err)
	found := false
	for _, r := range res.Tensors {
		if r.Name != "conv2d/Conv2D_weights" { // [3 3 3 64]: 27 tiles of 64
			continue
		}
		found = true
		assert.Equal(t, int64(1728/4+1728/8+27), r.BytesOut)
		assert.Equal(t, 3.125, r.Bits)
	}
	assert.True(t, found)
}
