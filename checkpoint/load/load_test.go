package load_test

import (
	"encoding/binary"
	"errors"
	"flag"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/tcast"
)

var update = flag.Bool("update", false, "rewrite the layout fixtures in testdata/")

// fixtures are the checkpoints under testdata/, one per layout, converted
// from testdata/source by TestFixtures -update.
var fixtures = []struct{ layout, dtype, dir string }{
	{"tcast", "mxfp4", "testdata/tcast"},
	{"compressed-tensors", "nvfp4", "testdata/compressed-tensors"},
	{"gpt-oss", "mxfp4", "testdata/gpt-oss"},
	{"modelopt", "nvfp4", "testdata/modelopt"},
	{"fp8-block", "fp8e4_block128", "testdata/fp8-block"},
	{"gguf", "q8_0", "testdata/gguf/model.gguf"},
}

const weight = "model.layers.0.mlp.down_proj.weight"

// writeSource writes a small float32 checkpoint: two weights, a norm, an
// expert tensor held as [E, in, out], and a config.json.
func writeSource(t *testing.T, dir string) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	f32 := func(n int) []byte {
		b := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(r.NormFloat64()*math.Exp2(float64(r.IntN(6)-3)))))
		}
		return b
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), []safetensors.Tensor{
		{Name: weight, DType: safetensors.F32, Shape: []int{32, 128}, Data: f32(32 * 128)},
		{Name: "model.layers.0.mlp.up_proj.weight", DType: safetensors.F32, Shape: []int{128, 32}, Data: f32(128 * 32)},
		{Name: "model.layers.0.input_layernorm.weight", DType: safetensors.F32, Shape: []int{32}, Data: f32(32)},
	}, map[string]string{"format": "pt"}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type": "llama", "hidden_size": 32}`+"\n"), 0o644))
}

// TestFixtures converts testdata/source to every layout and checks the
// stored fixtures match; with -update it rewrites them.
func TestFixtures(t *testing.T) {
	src := "testdata/source"
	if *update {
		require.NoError(t, os.RemoveAll(src))
		writeSource(t, src)
	}
	for _, f := range fixtures {
		l, err := layout.Get(f.layout)
		require.NoError(t, err)
		dt, err := layout.DataType(l, f.dtype)
		require.NoError(t, err)
		out := filepath.Join(t.TempDir(), "out")
		if strings.HasSuffix(f.dir, ".gguf") {
			out += ".gguf"
		}
		// The source's config.json is not a complete Llama configuration:
		// its GGUF is the generic one.
		_, err = convert.Convert(src, out, convert.Options{DataType: dt, Layout: l, Workers: 1,
			GGUF: convert.GGUFOptions{Generic: l.Container() == layout.GGUF}})
		require.NoError(t, err, f.layout)
		if *update {
			target := f.dir
			if strings.HasSuffix(f.dir, ".gguf") {
				target = filepath.Dir(f.dir)
				require.NoError(t, os.RemoveAll(target))
				require.NoError(t, os.MkdirAll(target, 0o755))
				target = f.dir
			} else {
				require.NoError(t, os.RemoveAll(target))
			}
			require.NoError(t, os.Rename(out, target))
			continue
		}
		vr, err := verify.Checkpoints(out, f.dir, verify.Options{})
		require.NoError(t, err, f.layout)
		for _, r := range vr.Tensors {
			assert.Nil(t, r.SQNR, "%s %s: today's conversion equals the fixture", f.layout, r.Name)
			assert.Zero(t, r.MaxAbsErr, "%s %s", f.layout, r.Name)
		}
	}
}

// TestOpenEveryLayout opens each fixture, with and without our metadata, and
// checks that every weight dequantizes to the cast of its source, computed
// here with tcast.Cast (the virtual form, another code path than decoding
// stored parts).
func TestOpenEveryLayout(t *testing.T) {
	src, err := load.Open("testdata/source")
	require.NoError(t, err)
	defer src.Close()
	for _, f := range fixtures {
		for _, stripped := range []bool{false, true} {
			path := f.dir
			if stripped {
				if strings.HasSuffix(path, ".gguf") || f.layout == "tcast" {
					continue // GGUF has no safetensors metadata; tcast's is its format
				}
				path = stripMetadata(t, f.dir)
			}
			c, err := load.Open(path)
			require.NoError(t, err, path)
			assert.Equal(t, f.layout, c.Layout(), path)
			cast := 0
			for _, info := range src.Tensors() {
				x, shape, err := src.Float32(info.Name)
				require.NoError(t, err)
				ci, err := c.Info(info.Name)
				require.NoError(t, err, "%s: %s", path, info.Name)
				got, gshape, err := c.Float32(info.Name)
				require.NoError(t, err, "%s: %s", path, info.Name)
				assert.Equal(t, shape, gshape, "%s: %s", path, info.Name)
				if !ci.Quantized() {
					assert.Equal(t, x, got, "%s: %s kept", path, info.Name)
					continue
				}
				cast++
				if f.layout == "gguf" {
					// ggml's own quantizer: compare with the gguf package's
					// dequantizer of the stored blocks.
					g, err := gguf.Open(path)
					require.NoError(t, err)
					ref, err := g.Float32s(info.Name)
					require.NoError(t, err)
					g.Close()
					assert.Equal(t, bits(ref), bits(got), info.Name)
					continue
				}
				want := x
				if ci.Transposed {
					want, _ = layout.TransposeLast2(x, shape)
				}
				cshape := shape
				if ci.Transposed {
					cshape = layout.SwapLast2(shape)
				}
				v, err := tcast.Cast(want, cshape, tcast.MustLookup(f.dtype), nil)
				require.NoError(t, err)
				if ci.Transposed {
					v.Values, _ = layout.TransposeLast2(v.Values, cshape)
				}
				assert.Equal(t, bits(v.Values), bits(got), "%s: %s", path, info.Name)
				ct, err := c.Tensor(info.Name)
				require.NoError(t, err)
				assert.Equal(t, ci.DataType.Code(), ct.DataType.Code())
			}
			assert.Positive(t, cast, path)
			c.Close()
		}
	}
}

// stripMetadata copies a converted checkpoint directory without our
// __metadata__ keys, as another tool would have written it.
func stripMetadata(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	ts, meta := readSafetensors(t, filepath.Join(dir, "model.safetensors"))
	meta = layout.WithoutMetaKeys(meta)
	for k := range meta {
		require.False(t, layout.IsMetaKey(k))
	}
	require.NoError(t, safetensors.WriteFile(filepath.Join(out, "model.safetensors"), ts, meta))
	for _, n := range []string{"config.json", "hf_quant_config.json"} {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err == nil {
			require.NoError(t, os.WriteFile(filepath.Join(out, n), b, 0o644))
		}
	}
	return out
}

func bits(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}

// TestErrors checks the typed errors: a missing tensor matches ErrNotFound
// (and the container packages' not-found errors) and suggests close names.
func TestErrors(t *testing.T) {
	for _, f := range fixtures {
		c, err := load.Open(f.dir)
		require.NoError(t, err)
		_, _, err = c.Float32("model.layers.0.mlp.down_proj.weigth")
		require.ErrorIs(t, err, load.ErrNotFound, f.layout)
		assert.ErrorIs(t, err, safetensors.ErrNotFound)
		var nf *load.NotFoundError
		require.ErrorAs(t, err, &nf)
		assert.Contains(t, nf.Closest, weight)
		_, err = c.Tensor("nothing")
		assert.ErrorIs(t, err, load.ErrNotFound)
		c.Close()
	}
	_, err := load.Open("testdata/missing")
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = load.Open("testdata/source/config.json")
	assert.Error(t, err)
	assert.ErrorIs(t, err, load.ErrNotCheckpoint, "a JSON file that is no index")
	npy := filepath.Join(t.TempDir(), "a.npy")
	require.NoError(t, os.WriteFile(npy, []byte("\x93NUMPY\x01\x00"), 0o644))
	_, err = load.Open(npy)
	assert.ErrorIs(t, err, load.ErrNotCheckpoint)
	assert.ErrorContains(t, err, "it is a NumPy .npy array", "what the file is")
	assert.NotContains(t, err.Error(), "tcast", "the library names no command")
	var fe *safetensors.FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, npy, fe.Path)
	assert.Equal(t, "load", fe.Format)
	_, err = load.Open(t.TempDir())
	assert.ErrorIs(t, err, load.ErrNotCheckpoint, "a directory that holds none")
}

// TestZeroCopy checks that the tcast layout's parts and plain tensors are
// views of the mapped file, not copies.
func TestZeroCopy(t *testing.T) {
	c, err := load.Open("testdata/tcast")
	require.NoError(t, err)
	defer c.Close()
	ct, err := c.Tensor(weight)
	require.NoError(t, err)
	stored, err := c.StoredBytes(weight)
	require.NoError(t, err)
	assert.Equal(t, unsafe.SliceData(stored), unsafe.SliceData(ct.Data.Bytes), "data part is a view")
	pt, err := c.Tensor("model.layers.0.input_layernorm.weight")
	require.NoError(t, err)
	b, err := c.Bytes("model.layers.0.input_layernorm.weight")
	require.NoError(t, err)
	assert.Equal(t, unsafe.SliceData(b), unsafe.SliceData(pt.Data.Bytes))
	assert.Equal(t, "float32", pt.DataType.Name())
	_, err = c.Bytes(weight)
	assert.Error(t, err, "a quantized weight has no plain bytes")
	assert.False(t, errors.Is(err, load.ErrNotFound))
}

// TestCraftedMetadata feeds descriptions that lie: a mask shape that is
// negative, a 1-D weight listed as transposed. Open, Inspect and Float32
// return errors, never panic.
func TestCraftedMetadata(t *testing.T) {
	ts, meta := readSafetensors(t, "testdata/tcast/model.safetensors")
	key := layout.KeyWeightPrefix + weight
	for name, edit := range map[string]func(m map[string]string){
		"negative mask shape": func(m map[string]string) {
			m[key] = strings.Replace(m[key], `"parts":{`, `"parts":{"mask":{"tensor":"model.layers.0.input_layernorm.weight","bits":1,"shape":[-16],"packed":true},`, 1)
		},
		"1-D weight transposed": func(m map[string]string) {
			m[layout.KeyTransposed] = `["model.layers.0.input_layernorm.weight", "` + weight + `"]`
			m[layout.KeyWeights] = strings.Replace(m[layout.KeyWeights], "{", `{"model.layers.0.input_layernorm.weight":["model.layers.0.input_layernorm.weight"],`, 1)
		},
	} {
		m := map[string]string{}
		for k, v := range meta {
			m[k] = v
		}
		edit(m)
		path := filepath.Join(t.TempDir(), "m.safetensors")
		require.NoError(t, safetensors.WriteFile(path, ts, m))
		c, err := load.Open(path)
		if err != nil {
			continue // refused at open: fine
		}
		_, _ = load.Inspect(c, load.InspectOptions{Stats: true})
		for _, info := range c.Tensors() {
			_, _, _ = c.Float32(info.Name)
			_, _ = c.Tensor(info.Name)
		}
		c.Close()
		t.Log(name, "handled")
	}
}

// TestErrorsUnwrap checks that a damaged weight's error is a
// *layout.FormatError naming the layout and weight, reachable with
// errors.As through load, and that the cause underneath is kept.
func TestErrorsUnwrap(t *testing.T) {
	f, err := safetensors.Open("testdata/modelopt/model.safetensors")
	require.NoError(t, err)
	var ts []safetensors.Tensor
	for _, ti := range f.Tensors() {
		b, err := f.Bytes(ti.Name)
		require.NoError(t, err)
		b = append([]byte(nil), b...)
		if ti.Name == "model.layers.0.mlp.down_proj.weight_scale" {
			b[0] |= 0x80 // a negative block scale
		}
		ts = append(ts, safetensors.Tensor{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, Data: b})
	}
	meta := f.Metadata()
	f.Close()
	dir := t.TempDir()
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, meta))
	for _, n := range []string{"config.json", "hf_quant_config.json"} {
		b, err := os.ReadFile(filepath.Join("testdata/modelopt", n))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), b, 0o644))
	}
	c, err := load.Open(dir)
	require.NoError(t, err)
	defer c.Close()
	_, _, err = c.Float32(weight)
	var fe *layout.FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "modelopt", fe.Layout)
	assert.Equal(t, weight, fe.Weight)
	assert.NotNil(t, errors.Unwrap(fe), "the cause is wrapped, not flattened")
	assert.Contains(t, err.Error(), "negative")
}

// TestFormatVersion: a file written by a later tcast (an unknown
// tcast.format) is refused with a *layout.VersionError naming the file and
// the version, not decoded by the rules of the versions this build knows.
func TestFormatVersion(t *testing.T) {
	ts, meta := readSafetensors(t, "testdata/tcast/model.safetensors")
	for _, tc := range []struct {
		version string
		ok      bool
	}{{"2", true}, {"3", false}, {"2.0", false}, {"", false}, {"99999999999999999999", false}} {
		m := maps.Clone(meta)
		m[layout.KeyFormat] = tc.version
		path := filepath.Join(t.TempDir(), "m.safetensors")
		require.NoError(t, safetensors.WriteFile(path, ts, m))
		c, err := load.Open(path)
		if tc.ok {
			require.NoError(t, err, tc.version)
			c.Close()
			continue
		}
		require.ErrorIs(t, err, layout.ErrFormatVersion, tc.version)
		var ve *layout.VersionError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, tc.version, ve.Version)
		assert.Contains(t, err.Error(), path)
		assert.Contains(t, err.Error(), layout.KeyFormat)
	}
}

// TestOpenConfigTooLarge: a config.json past inputfile.MaxReadFile beside
// the checkpoint (a sparse file here) is refused, naming it, instead of
// being read whole or passed over as if it were absent.
func TestOpenConfigTooLarge(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/tcast/model.safetensors")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), b, 0o644))
	cfg := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(cfg, nil, 0o644))
	require.NoError(t, os.Truncate(cfg, inputfile.MaxReadFile+1))
	c, err := load.Open(filepath.Join(dir, "model.safetensors"))
	if err == nil {
		c.Close()
	}
	require.ErrorIs(t, err, inputfile.ErrTooLarge)
	assert.Contains(t, err.Error(), cfg)
}
