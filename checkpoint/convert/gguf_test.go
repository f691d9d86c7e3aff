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
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// toGGUF converts to GGUF with the gguf layout and datatype typ.
func toGGUF(t *testing.T, out, typ string, o Options) (*Result, error) {
	t.Helper()
	l, err := layout.Get("gguf")
	require.NoError(t, err)
	o.Layout = l
	if o.DataType, err = layout.DataType(l, typ); err != nil {
		return nil, err
	}
	return Convert(iris, out, o)
}

// TestToGGUF converts the fixture to GGUF MXFP4 and Q8_0, reads it back with our
// reader (MXFP4 tensors must decode to the virtual cast, kept tensors to their
// source) and, when TCAST_GGUF_JS names an install of @huggingface/gguf, lists
// it with that independent parser.
func TestToGGUF(t *testing.T) {
	src, err := load.Open(iris)
	require.NoError(t, err)
	defer src.Close()
	types := map[string]gguf.Type{"mxfp4": gguf.TypeMXFP4, "q8_0": gguf.TypeQ8_0, "q4_0": gguf.TypeQ4_0}
	for _, typ := range []string{"mxfp4", "q8_0", "q4_0"} {
		out := filepath.Join(t.TempDir(), "m.gguf")
		o := Options{Workers: 2}
		res, err := toGGUF(t, out, typ, o)
		require.NoError(t, err, typ)
		assert.Len(t, res.Tensors, 189)
		_, err = toGGUF(t, out, typ, o)
		require.ErrorContains(t, err, "exists")

		// verify and decompress read GGUF output like any other layout.
		vr, err := verifyTensors(iris, out)
		require.NoError(t, err, typ)
		converted := 0
		for _, r := range vr {
			if r.Converted {
				converted++
				require.NotNil(t, r.SQNR, r.Name)
				assert.Greater(t, *r.SQNR, 8.0, r.Name)
			}
		}
		assert.Greater(t, converted, 50, typ)
		plain := filepath.Join(t.TempDir(), "plain.safetensors")
		dr, err := Decompress(out, plain, DecompressOptions{})
		require.NoError(t, err, typ)
		assert.Equal(t, 189, dr.Tensors)
		assert.Positive(t, dr.Dequantized)
		assert.Equal(t, "gguf", dr.Layout)

		f, err := gguf.Open(out)
		require.NoError(t, err)
		assert.Equal(t, "tcast", f.Architecture())
		cast := 0
		for _, ti := range src.Tensors() {
			g, ok := f.Tensor(ti.Name)
			require.True(t, ok, ti.Name)
			assert.Equal(t, ti.Shape, g.Shape(), ti.Name)
			x, _, err := src.Float32(ti.Name)
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
				assert.Equal(t, types[typ], g.Type)
			}
		}
		f.Close()
		assert.Greater(t, cast, 50, typ)
		if typ == "mxfp4" {
			checkWithJS(t, out, src)
		}
	}
	_, err = toGGUF(t, t.TempDir(), "nvfp4", Options{})
	assert.ErrorContains(t, err, "q8_0")
}

// checkWithJS lists path with @huggingface/gguf and compares names and shapes.
func checkWithJS(t *testing.T, path string, src *load.Checkpoint) {
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
	g := filepath.Join(t.TempDir(), "m.gguf")
	_, err := toGGUF(t, g, "q8_0", Options{})
	require.NoError(t, err)
	out := t.TempDir()
	_, err = Convert(g, out, opts(t, "mxfp4", "tcast"))
	require.NoError(t, err)
	f, err := gguf.Open(g)
	require.NoError(t, err)
	defer f.Close()
	c, err := load.Open(out)
	require.NoError(t, err)
	defer c.Close()
	for _, gt := range f.Tensors {
		want, err := f.Float32s(gt.Name)
		require.NoError(t, err)
		got, shape, err := c.Float32(gt.Name)
		require.NoError(t, err)
		assert.Equal(t, gt.Shape(), shape)
		if ci, _ := c.Info(gt.Name); ci.Quantized() {
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
	dir := t.TempDir()
	_, err := toGGUF(t, filepath.Join(dir, "a.gguf"), "q8_0", Options{Mode: scale.RCeil})
	assert.ErrorIs(t, err, ErrModeUnused)
	assert.ErrorContains(t, err, "Options.Mode: rceil chooses power-of-two scales, and q8_0 has none")
	_, err = toGGUF(t, filepath.Join(dir, "a.gguf"), "mxfp4", Options{ShardSize: 1000})
	assert.ErrorContains(t, err, "Options.ShardSize")
	_, err = toGGUF(t, filepath.Join(dir, "b.gguf"), "Q8_0", Options{})
	assert.NoError(t, err, "GGUF type names in any case")
	_, err = toGGUF(t, filepath.Join(dir, "c.gguf"), "mxfp4e2", Options{})
	assert.NoError(t, err, "any name of OCP MXFP4")
	// rceil changes some MXFP4 scales, and reading the directory finds the file.
	g := filepath.Join(dir, "m")
	_, err = toGGUF(t, g, "mxfp4", Options{Mode: scale.RCeil})
	require.NoError(t, err)
	in, err := load.Open(g)
	require.NoError(t, err)
	defer in.Close()
	assert.Equal(t, "gguf", in.Layout())
	assert.Len(t, in.Tensors(), 189)
	x, err := load.Open(iris)
	require.NoError(t, err)
	defer x.Close()
	w, shape, err := x.Float32("conv2d/Conv2D_weights")
	require.NoError(t, err)
	got, _, err := in.Float32("conv2d/Conv2D_weights")
	require.NoError(t, err)
	v, err := tcast.Cast(w, shape, tcast.MustLookup("mxfp4"), &tcast.Options{Mode: scale.RCeil})
	require.NoError(t, err)
	sameBits(t, v.Values, got, "rceil cast")
	// The cast tensor is MXFP4 in the gguf layout.
	ct, err := in.Tensor("conv2d/Conv2D_weights")
	require.NoError(t, err)
	assert.Equal(t, "mxfp4e2", ct.DataType.Name())
}

// TestGGUFNameAndMetadata checks that a GGUF output is named after its file
// (not the temporary it was written under), and that GGUF key/values do not
// leak into safetensors output.
func TestGGUFNameAndMetadata(t *testing.T) {
	g := filepath.Join(t.TempDir(), "my-model.gguf")
	_, err := toGGUF(t, g, "q8_0", Options{})
	require.NoError(t, err)
	f, err := gguf.Open(g)
	require.NoError(t, err)
	v, _ := f.Get("general.name")
	name, _ := v.Str()
	assert.Equal(t, "my-model", name)
	f.Close()
	out := filepath.Join(t.TempDir(), "st")
	_, err = Convert(g, out, opts(t, "mxfp4", "tcast"))
	require.NoError(t, err)
	c, err := load.Open(out)
	require.NoError(t, err)
	defer c.Close()
	for k := range c.Metadata() {
		assert.True(t, layout.IsMetaKey(k), "only our keys, not %s", k)
	}
	plain := filepath.Join(t.TempDir(), "plain.safetensors")
	_, err = Decompress(g, plain, DecompressOptions{})
	require.NoError(t, err)
	p, err := safetensors.Open(plain)
	require.NoError(t, err)
	defer p.Close()
	assert.Empty(t, p.Metadata())
}
