package layout

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

func goEncode(t *testing.T, name string, c *tcast.Tensor) []Tensor {
	t.Helper()
	l, err := Get("gpt-oss")
	require.NoError(t, err)
	meta := map[string]string{}
	ts, err := l.Encode(name, c, meta)
	require.NoError(t, err)
	assert.Empty(t, meta, "gpt-oss needs no metadata")
	return ts
}

func goDecode(t *testing.T, name string, ts []Tensor) *tcast.Tensor {
	t.Helper()
	l, _ := Get("gpt-oss")
	d, ok, err := l.Decode(name, newLdrSource(ts, nil))
	require.NoError(t, err)
	require.True(t, ok)
	return d
}

func TestGptOSSHandBuilt(t *testing.T) {
	// One expert-stacked weight [E=2, out=1, in=64] in the cast orientation.
	// Expert 0: block 0 amax 6 → E8M0 127, 6 −6 1 .5 → 7 F 2 1 → F7 12;
	// block 1 amax 12 → 128, (12 −3 2 1)/2 → 7 B 2 1 → B7 12.
	// Expert 1: block 0 amax 0.75 → 2^(−1−2) → 124, 0.75/0.125 = 6 → 07;
	// block 1 all zero → scale code 0, codes 0.
	x := make([]float32, 128)
	copy(x, []float32{6, -6, 1, 0.5})
	copy(x[32:], []float32{12, -3, 2, 1})
	x[64] = 0.75
	c := ldrCast(t, "mxfp4", x, []int{2, 1, 64})
	const name = "model.layers.0.mlp.experts.gate_up_proj"
	ts := goEncode(t, name, c)
	blocks := make([]byte, 64)
	copy(blocks, []byte{0xF7, 0x12})
	copy(blocks[16:], []byte{0xB7, 0x12})
	blocks[32] = 0x07
	ldrCheckTensors(t, ts, []ldrExpect{
		{name + "_blocks", safetensors.U8, []int{2, 1, 2, 16}, blocks},
		{name + "_scales", safetensors.U8, []int{2, 1, 2}, []byte{127, 128, 124, 0}},
	})
	d := goDecode(t, name, ts)
	assert.Same(t, tcast.MustLookup("mxfp4"), d.DataType)
	assert.Equal(t, []int{2, 1, 64}, d.Shape)
	ldrSameValues(t, c, d)
	v, err := tcast.Decompress(d)
	require.NoError(t, err)
	assert.Equal(t, x, v)
}

func TestGptOSSRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		shape  []int
		prefix string
	}{
		{"model.layers.1.mlp.experts.down_proj", []int{4, 6, 96}, "model.layers.1.mlp.experts.down_proj"},
		{"model.layers.1.self_attn.q_proj.weight", []int{5, 64}, "model.layers.1.self_attn.q_proj"},
	}
	for i, tc := range tests {
		n := ldrProduct(tc.shape)
		x := ldrRandom(uint64(200+i), n)
		x[3] = float32(math.NaN()) // a NaN block: scale 0xFF
		c := ldrCast(t, "mxfp4", x, tc.shape)
		ts := goEncode(t, tc.name, c)
		r := len(tc.shape)
		g := tc.shape[r-1] / 32
		lead := tc.shape[:r-1]
		ldrCheckTensors(t, ts, []ldrExpect{
			{tc.prefix + "_blocks", safetensors.U8, append(append([]int{}, lead...), g, 16), nil},
			{tc.prefix + "_scales", safetensors.U8, append(append([]int{}, lead...), g), c.Scale.Bytes},
		})
		blocks := ldrByName(t, ts)[tc.prefix+"_blocks"].Data
		for k, b := range blocks {
			require.Equal(t, c.Data.Bytes[2*k], b&0x0F, "low nibble = element 2k")
			require.Equal(t, c.Data.Bytes[2*k+1], b>>4, "high nibble = element 2k+1")
		}
		assert.Equal(t, byte(0xFF), c.Scale.Bytes[0])
		ldrSameValues(t, c, goDecode(t, tc.name, ts))
	}
}

func TestGptOSSCheckAndRejects(t *testing.T) {
	l, err := Get("gpt-oss")
	require.NoError(t, err)
	assert.NoError(t, l.Check(tcast.MustLookup("mxfp4"), 1, 2))
	assert.NoError(t, l.Check(tcast.MustLookup("mxfp4e2"), 2, 3))
	for _, tc := range []struct {
		dt         string
		axis, rank int
		msg        string
	}{
		{"nvfp4", 1, 2, "mxfp4 only"},
		{"mxfp8e4", 1, 2, "mxfp4 only"},
		{"mxfp4t16", 1, 2, "mxfp4 only"},
		{"mxfp4", 0, 1, "rank 1"},
		{"mxfp4", 3, 4, "rank 4"},
		{"mxfp4", 1, 3, "transpose"},
	} {
		err := l.Check(tcast.MustLookup(tc.dt), tc.axis, tc.rank)
		if assert.Error(t, err, tc.dt) {
			assert.Contains(t, err.Error(), tc.msg)
		}
	}
	c := ldrCast(t, "mxfp4", ldrRandom(1, 96), []int{2, 48})
	_, err = l.Encode("a.weight", c, map[string]string{})
	assert.ErrorContains(t, err, "not a multiple of the group size 32")

	_, ok, err := l.Decode("a.weight", newLdrSource(nil, nil))
	assert.NoError(t, err)
	assert.False(t, ok)
	ts := goEncode(t, "a", ldrCast(t, "mxfp4", ldrRandom(2, 64), []int{1, 64}))
	for i := range ts {
		if ts[i].Name == "a_scales" {
			ts[i].Shape = []int{1, 3}
		}
	}
	_, ok, err = l.Decode("a", newLdrSource(ts, nil))
	assert.True(t, ok)
	assert.Error(t, err)
}

func TestGptOSSFiles(t *testing.T) {
	l, _ := Get("gpt-oss")
	kept := []string{
		"model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.q_proj.bias",
		"model.layers.0.mlp.router.weight", "model.embed_tokens.weight", "lm_head.weight",
		"model.layers.1.mlp.experts.down_proj", "model.layers.1.mlp.experts.down_proj_bias",
	}
	files, err := l.Files(tcast.MustLookup("mxfp4"), []Converted{{Name: "model.layers.0.mlp.experts.gate_up_proj", Shape: []int{32, 2880, 5760}}},
		kept, []byte(`{"model_type": "gpt_oss", "quantization_config": {"quant_method": "other"}}`))
	require.NoError(t, err)
	require.Len(t, files, 1)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(files["config.json"], &cfg))
	assert.Equal(t, "gpt_oss", cfg["model_type"])
	assert.Equal(t, map[string]any{
		"quant_method": "mxfp4",
		"modules_to_not_convert": []any{"lm_head", "model.embed_tokens", "model.layers.0.mlp.router",
			"model.layers.0.self_attn.q_proj", "model.layers.1.mlp.experts"},
	}, cfg["quantization_config"])
	_, err = l.Files(tcast.MustLookup("nvfp4"), nil, nil, nil)
	assert.Error(t, err)
}
