package convert

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// TestToGGUF converts the fixture to GGUF MXFP4 and Q8_0, reads it back with our
// reader (MXFP4 tensors must decode to the virtual cast, kept tensors to their
// source) and, when TCAST_GGUF_JS names an install of @huggingface/gguf, lists
// it with that independent parser.
func TestToGGUF(t *testing.T) {
	needFixture(t)
	src, err := OpenInput(iris)
	require.NoError(t, err)
	defer src.Close()
	for _, typ := range []string{"mxfp4", "q8_0", "q4_0"} {
		out := filepath.Join(t.TempDir(), "m.gguf")
		o := Options{Axis: -1, Workers: 2}
		res, err := ToGGUF(iris, out, typ, o)
		require.NoError(t, err, typ)
		assert.Len(t, res.Tensors, 189)
		_, err = ToGGUF(iris, out, typ, o)
		require.ErrorContains(t, err, "exists")

		f, err := gguf.Open(out)
		require.NoError(t, err)
		assert.Equal(t, "tcast", f.Architecture())
		cast := 0
		for _, ti := range src.Tensors() {
			g, ok := f.Tensor(ti.Name)
			require.True(t, ok, ti.Name)
			assert.Equal(t, ti.Shape, g.Shape(), ti.Name)
			x, err := src.Float32s(ti.Name)
			require.NoError(t, err)
			got, err := f.Float32s(ti.Name)
			require.NoError(t, err)
			switch g.Type {
			case gguf.TypeBF16:
				sameBits(t, x, got, ti.Name+" kept")
			case gguf.TypeMXFP4:
				cast++
				v, err := tcast.Cast(x, ti.Shape, tcast.MustLookup("mxfp4"), nil)
				require.NoError(t, err)
				sameBits(t, v.Values, got, ti.Name)
			default:
				cast++
				assert.Equal(t, GGUFTypes[typ], g.Type)
			}
		}
		f.Close()
		assert.Greater(t, cast, 50, typ)
		if typ == "mxfp4" {
			checkWithJS(t, out, src)
		}
	}
	_, err = ToGGUF(iris, t.TempDir(), "nvfp4", Options{Axis: -1})
	assert.ErrorContains(t, err, "want mxfp4, q8_0 or q4_0")
}

// checkWithJS lists path with @huggingface/gguf and compares names and shapes.
func checkWithJS(t *testing.T, path string, src *Input) {
	mods := os.Getenv("TCAST_GGUF_JS")
	node, err := exec.LookPath("node")
	if mods == "" || err != nil {
		t.Log("TCAST_GGUF_JS or node missing: skipping the @huggingface/gguf listing")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "../gguf/testdata/gguf_list.mjs", path)
	cmd.Env = append(os.Environ(), "TCAST_GGUF_JS="+mods)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var l struct {
		Tensors []struct {
			Name string `json:"name"`
			Type int    `json:"type"`
			Dims []int  `json:"dims"`
		} `json:"tensors"`
	}
	require.NoError(t, json.Unmarshal(out, &l))
	require.Len(t, l.Tensors, len(src.Tensors()))
	byName := map[string][]int{}
	for _, ti := range src.Tensors() {
		byName[ti.Name] = ti.Shape
	}
	for _, jt := range l.Tensors {
		shape, ok := byName[jt.Name]
		require.True(t, ok, jt.Name)
		rev := make([]int, len(jt.Dims))
		for i, d := range jt.Dims {
			rev[len(rev)-1-i] = d
		}
		if len(shape) == 0 {
			shape = []int{1}
		}
		assert.Equal(t, shape, rev, jt.Name)
		assert.Contains(t, []int{int(gguf.TypeMXFP4), int(gguf.TypeBF16)}, jt.Type, jt.Name)
	}
}

// TestConvertFromGGUF reads a GGUF file as the input of a conversion: block
// types are dequantized, raw types kept byte for byte.
func TestConvertFromGGUF(t *testing.T) {
	needFixture(t)
	g := filepath.Join(t.TempDir(), "m.gguf")
	_, err := ToGGUF(iris, g, "q8_0", Options{Axis: -1})
	require.NoError(t, err)
	out := t.TempDir()
	_, err = Convert(g, out, opts(t, "mxfp4", "tcast"))
	require.NoError(t, err)
	f, err := gguf.Open(g)
	require.NoError(t, err)
	defer f.Close()
	c, err := OpenConverted(out)
	require.NoError(t, err)
	defer c.Close()
	for _, gt := range f.Tensors {
		want, err := f.Float32s(gt.Name)
		require.NoError(t, err)
		got, shape, err := c.Values(gt.Name)
		require.NoError(t, err)
		assert.Equal(t, gt.Shape(), shape)
		if _, ok := c.Weights[gt.Name]; ok {
			v, err := tcast.Cast(want, shape, tcast.MustLookup("mxfp4"), nil)
			require.NoError(t, err)
			want = v.Values
		}
		sameBits(t, want, got, gt.Name)
	}
}

// TestGGUFOptions covers the options the gguf layout takes or refuses, and a
// directory holding a .gguf as input (review).
func TestGGUFOptions(t *testing.T) {
	needFixture(t)
	dir := t.TempDir()
	_, err := ToGGUF(iris, filepath.Join(dir, "a.gguf"), "q8_0", Options{Axis: -1, Mode: scale.RCeil})
	assert.ErrorContains(t, err, "-scale-mode")
	_, err = ToGGUF(iris, filepath.Join(dir, "a.gguf"), "mxfp4", Options{Axis: -1, ShardSize: 1000})
	assert.ErrorContains(t, err, "-shard-size")
	// rceil changes some MXFP4 scales, and reading the directory finds the file.
	g := filepath.Join(dir, "m", "model.gguf")
	_, err = ToGGUF(iris, g, "mxfp4", Options{Axis: -1, Mode: scale.RCeil})
	require.NoError(t, err)
	in, err := OpenInput(filepath.Dir(g))
	require.NoError(t, err)
	defer in.Close()
	assert.Len(t, in.Tensors(), 189)
	x, err := OpenInput(iris)
	require.NoError(t, err)
	defer x.Close()
	w, err := x.Float32s("conv2d/Conv2D_weights")
	require.NoError(t, err)
	got, err := in.Float32s("conv2d/Conv2D_weights")
	require.NoError(t, err)
	ti, _, _ := x.Tensor("conv2d/Conv2D_weights")
	v, err := tcast.Cast(w, ti.Shape, tcast.MustLookup("mxfp4"), &tcast.Options{Axis: -1, Mode: scale.RCeil})
	require.NoError(t, err)
	sameBits(t, v.Values, got, "rceil cast")
	assert.ErrorContains(t, Decompress(filepath.Dir(g), filepath.Join(dir, "o.safetensors"), nil, false), "no target format")
}
