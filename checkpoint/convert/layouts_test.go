package convert

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// smallModel writes a two-layer HF-style checkpoint (BF16 weights, a norm, an
// embedding) and its config.json into dir.
func smallModel(t *testing.T, dir string) string {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	bf16 := func(n int, s float64) []byte {
		b := make([]byte, 2*n)
		for i := 0; i < n; i++ {
			u := math.Float32bits(float32(r.NormFloat64() * s))
			binary.LittleEndian.PutUint16(b[2*i:], uint16((u+0x7fff+(u>>16&1))>>16))
		}
		return b
	}
	var ts []safetensors.Tensor
	add := func(name string, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		ts = append(ts, safetensors.Tensor{Name: name, DType: safetensors.BF16, Shape: shape, Data: bf16(n, 0.05)})
	}
	add("model.embed_tokens.weight", 100, 128)
	for _, l := range []string{"0", "1"} {
		p := "model.layers." + l
		add(p+".self_attn.q_proj.weight", 128, 128)
		add(p+".mlp.down_proj.weight", 128, 256)
		add(p+".mlp.up_proj.weight", 256, 128)
		add(p+".input_layernorm.weight", 128)
	}
	path := filepath.Join(dir, "model.safetensors")
	require.NoError(t, safetensors.WriteFile(path, ts, map[string]string{"format": "pt"}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type": "llama", "hidden_size": 128}`), 0o644))
	return path
}

// TestLayoutRoundTrips converts a small model in every safetensors layout and
// datatype the layout takes, then checks that every converted weight decodes to
// the virtual cast of its source bit for bit and kept tensors are unchanged.
func TestLayoutRoundTrips(t *testing.T) {
	src := smallModel(t, t.TempDir())
	cases := []struct {
		layout string
		dts    []string
		files  []string
	}{
		{"tcast", []string{"mxfp4", "nvfp4", "mxint8", "int4_g128", "uint4_g32", "fp8e4_block128", "mx6"}, nil},
		{"compressed-tensors", []string{"int4_g128", "int8_channel", "uint4_g32", "fp8e4_tensor", "fp8e4_channel", "fp8e4_block128", "nvfp4", "mxfp4", "mxfp8e4"}, []string{"config.json"}},
		{"modelopt", []string{"nvfp4"}, []string{"config.json", "hf_quant_config.json"}},
		{"gpt-oss", []string{"mxfp4"}, []string{"config.json"}},
	}
	in, err := load.Open(src)
	require.NoError(t, err)
	defer in.Close()
	for _, c := range cases {
		for _, dt := range c.dts {
			t.Run(c.layout+"/"+dt, func(t *testing.T) {
				out := t.TempDir()
				o := opts(t, dt, c.layout)
				_, err := Convert(src, out, o)
				require.NoError(t, err)
				for _, f := range c.files {
					b, err := os.ReadFile(filepath.Join(out, f))
					require.NoError(t, err, f)
					var m map[string]any
					require.NoError(t, json.Unmarshal(b, &m), f)
				}
				conv, err := load.Open(out)
				require.NoError(t, err)
				defer conv.Close()
				converted := 0
				for _, ti := range in.Tensors() {
					x, _, err := in.Float32(ti.Name)
					require.NoError(t, err)
					got, shape, err := conv.Float32(ti.Name)
					require.NoError(t, err, ti.Name)
					assert.Equal(t, ti.Shape, shape)
					if ci, _ := conv.Info(ti.Name); !ci.Quantized() {
						sameBits(t, x, got, ti.Name+" kept")
						continue
					}
					converted++
					v, err := tcast.Cast(x, ti.Shape, o.DataType, nil)
					require.NoError(t, err)
					sameBits(t, v.Values, got, ti.Name)
				}
				assert.Equal(t, 6, converted, "q/down/up of two layers")
			})
		}
	}
}

// TestKeepsWhatTheLayoutCannotHold checks that a weight the default rule picks
// but the layout cannot represent (input 320 with groups of 128) is kept with a
// note, while an explicitly included one is an error.
func TestKeepsWhatTheLayoutCannotHold(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "m.safetensors")
	data := make([]byte, 4*64*320)
	require.NoError(t, safetensors.WriteFile(src, []safetensors.Tensor{
		{Name: "model.layers.0.mlp.down_proj.weight", DType: safetensors.F32, Shape: []int{64, 320}, Data: data},
		{Name: "model.layers.0.mlp.up_proj.weight", DType: safetensors.F32, Shape: []int{64, 256}, Data: data[:4*64*256]},
	}, nil))
	o := opts(t, "int4_g128", "compressed-tensors")
	res, err := Convert(src, t.TempDir(), o)
	require.NoError(t, err)
	require.Len(t, res.Tensors, 2)
	assert.Empty(t, res.Tensors[0].DataType)
	assert.Contains(t, res.Tensors[0].Note, "not a multiple of the group size")
	o.Include = regexp.MustCompile("down_proj")
	_, err = Convert(src, t.TempDir(), o)
	assert.ErrorContains(t, err, "down_proj")
}
