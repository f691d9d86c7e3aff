package convert

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/scale"
)

// requireExact checks that every converted tensor of res is noted exact and
// that Verify finds no error between the two checkpoints.
func requireExact(t *testing.T, res *Result, orig, conv string) {
	t.Helper()
	cast := 0
	for _, r := range res.Tensors {
		if r.DataType == "" {
			continue
		}
		cast++
		assert.Contains(t, r.Note, "exact", r.Name)
	}
	require.Positive(t, cast)
	vr, err := verifyTensors(orig, conv)
	require.NoError(t, err)
	for _, r := range vr {
		assert.Nil(t, r.SQNR, r.Name)
		assert.Zero(t, r.MaxAbsErr, r.Name)
		assert.Zero(t, r.Lost, r.Name)
	}
}

// TestMXFP4ToNVFP4IsExact converts an MXFP4 checkpoint to NVFP4: every MXFP4
// value is an NVFP4 value under power-of-two scales, and the converter finds
// them.
func TestMXFP4ToNVFP4IsExact(t *testing.T) {
	a := filepath.Join(t.TempDir(), "mx")
	_, err := Convert(iris, a, opts(t, "mxfp4", "tcast"))
	require.NoError(t, err)
	b := filepath.Join(t.TempDir(), "nv")
	o := opts(t, "nvfp4", "tcast")
	o.Include = nil
	res, err := Convert(a, b, o)
	require.NoError(t, err)
	requireExact(t, res, a, b)
}

// TestFP8BlocksToMXFP8IsExact converts a DeepSeek-style FP8 checkpoint whose
// 128×128 block scales are powers of two to MXFP8, including blocks whose
// largest code has mantissa 1.875 (which overflows 448 under the floor rule).
func TestFP8BlocksToMXFP8IsExact(t *testing.T) {
	const out, in = 128, 256
	r := rand.New(rand.NewPCG(5, 6))
	codes := make([]byte, out*in)
	for i := range codes {
		codes[i] = byte(r.IntN(0x7f)) | byte(r.IntN(2))<<7 // any finite e4m3fn code
	}
	codes[0] = 0x77 // 1.875·2^7 = 240
	scales := make([]byte, 4*2)
	for i, k := range []int{-3, 5} {
		binary.LittleEndian.PutUint32(scales[4*i:], math.Float32bits(float32(math.Ldexp(1, k))))
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "model.safetensors")
	require.NoError(t, safetensors.WriteFile(src, []safetensors.Tensor{
		{Name: "model.layers.0.mlp.down_proj.weight", DType: safetensors.F8E4M3, Shape: []int{out, in}, Data: codes},
		{Name: "model.layers.0.mlp.down_proj.weight_scale_inv", DType: safetensors.F32, Shape: []int{1, 2}, Data: scales},
	}, nil))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"),
		[]byte(`{"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}`), 0o644))
	c, err := load.Open(dir)
	require.NoError(t, err)
	assert.Equal(t, "fp8-block", c.Layout())
	got, _, err := c.Float32("model.layers.0.mlp.down_proj.weight")
	require.NoError(t, err)
	e4m3 := dtype.MustParse("float8_e4m3fn")
	for _, i := range []int{0, 1, 200, 127*in + 130} {
		want := e4m3.Decode(uint32(codes[i])) * float32(math.Ldexp(1, []int{-3, 5}[(i%in)/128]))
		assert.Equal(t, want, got[i], "element %d = code × scale_inv", i)
	}
	c.Close()

	res, err := Convert(dir, filepath.Join(t.TempDir(), "mx"), opts(t, "mxfp8e4", "tcast"))
	require.NoError(t, err)
	requireExact(t, res, dir, res.Output)
}

// TestDecompressWritesPlainConfig decompresses a ModelOpt checkpoint into a
// directory: config.json comes along without its quantization_config.
func TestDecompressWritesPlainConfig(t *testing.T) {
	src := "../load/testdata/modelopt"
	out := filepath.Join(t.TempDir(), "plain")
	res, err := Decompress(src, out, DecompressOptions{})
	require.NoError(t, err)
	assert.Equal(t, "modelopt", res.Layout)
	b, err := os.ReadFile(filepath.Join(out, "config.json"))
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(b, &cfg))
	assert.NotContains(t, cfg, "quantization_config")
	assert.Equal(t, "llama", cfg["model_type"])
	assert.NoFileExists(t, filepath.Join(out, "hf_quant_config.json"))
	c, err := load.Open(out)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, load.Plain, c.Layout())
}

// TestEveryScaleModeInTheTcastLayout converts with every scale mode: the
// weight description records the mode used, whose name may be longer than
// the one declared before casting.
func TestEveryScaleModeInTheTcastLayout(t *testing.T) {
	for _, m := range scale.Modes() {
		for _, dt := range []string{"mxfp4", "mxfp8e4", "mx6"} {
			o := opts(t, dt, "tcast")
			o.Mode = m
			out := filepath.Join(t.TempDir(), "o.safetensors")
			_, err := Convert("../load/testdata/source", out, o)
			require.NoError(t, err, "%s %s", dt, m)
			c, err := load.Open(out)
			require.NoError(t, err)
			rep, err := load.Inspect(c, load.InspectOptions{})
			require.NoError(t, err)
			for _, w := range rep.Converted {
				assert.Equal(t, m.String(), w.ScaleMode, "%s %s", dt, w.Name)
			}
			c.Close()
		}
	}
}
