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

func moEncode(t *testing.T, name string, c *tcast.Tensor) []Tensor {
	t.Helper()
	l, err := Get("modelopt")
	require.NoError(t, err)
	meta := map[string]string{}
	ts, err := l.Encode(name, c, meta)
	require.NoError(t, err)
	assert.Empty(t, meta, "modelopt needs no metadata")
	return ts
}

func moDecode(t *testing.T, name string, ts []Tensor) *tcast.Tensor {
	t.Helper()
	l, _ := Get("modelopt")
	d, ok, err := l.Decode(name, newLdrSource(ts, nil))
	require.NoError(t, err)
	require.True(t, ok)
	return d
}

func TestModelOptHandBuilt(t *testing.T) {
	const w = "model.layers.0.self_attn.q_proj.weight"
	const p = "model.layers.0.self_attn.q_proj"
	tests := []struct {
		name string
		x    map[int]float32 // non-zero entries of a [2, 32] weight
		want []ldrExpect
	}{{
		// amax 2688 → weight_scale_2 = 2688/2688 = 1. Row 0 block 0 s_b = 448
		// (0x7E): 6 −6 1 .5 → 7 F 2 1 → F7 12; block 1 s_b = 1 (0x38): 6 3
		// −1.5 → 7 5 B → 57 0B. Row 1 all zero: s_b = 1.0 (0x38), codes 0.
		name: "unit tensor scale",
		x:    map[int]float32{0: 2688, 1: -2688, 2: 448, 3: 224, 16: 6, 17: 3, 18: -1.5},
		want: []ldrExpect{
			{p + ".weight", safetensors.U8, []int{2, 16}, append(
				[]byte{0xF7, 0x12, 0, 0, 0, 0, 0, 0, 0x57, 0x0B, 0, 0, 0, 0, 0, 0}, make([]byte, 16)...)},
			{p + ".weight_scale", safetensors.F8E4M3, []int{2, 2}, []byte{0x7E, 0x38, 0x38, 0x38}},
			{p + ".weight_scale_2", safetensors.F32, []int{}, lef32(1)},
		},
	}, {
		// amax 5 → weight_scale_2 = f32(5/2688) = 0x3AF3CF3D, stored as is
		// (no reciprocal). Block 0 (row 0): s_b = 5/(6·s_2) = 448 → 0x7E,
		// 5/(448·s_2) = 6.0000 → code 7. Row 1 block 1: −1.25 → s_b = 1.25/(6·s_2)
		// = 112 = 1.75·2^6 → E4M3 0x6E, −1.25/(112·s_2) = −6 → 0xF.
		name: "inexact reciprocal",
		x:    map[int]float32{0: 5, 48: -1.25},
		want: []ldrExpect{
			{p + ".weight", safetensors.U8, []int{2, 16}, append(append(append([]byte{0x07}, make([]byte, 15)...),
				make([]byte, 8)...), append([]byte{0x0F}, make([]byte, 7)...)...)},
			{p + ".weight_scale", safetensors.F8E4M3, []int{2, 2}, []byte{0x7E, 0x38, 0x38, 0x6E}},
			{p + ".weight_scale_2", safetensors.F32, []int{}, le32(0x3AF3CF3D)},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float32, 64)
			for i, v := range tc.x {
				x[i] = v
			}
			c := ldrCast(t, "nvfp4", x, []int{2, 32})
			ts := moEncode(t, w, c)
			ldrCheckTensors(t, ts, tc.want)
			d := moDecode(t, w, ts)
			assert.Same(t, tcast.MustLookup("nvfp4"), d.DataType)
			ldrSameValues(t, c, d)
		})
	}
}

func TestModelOptRoundTrip(t *testing.T) {
	for i, shape := range [][]int{{8, 64}, {3, 16}, {1, 160}} {
		n := shape[0] * shape[1]
		x := ldrRandom(uint64(100+i), n)
		if i == 2 {
			x[7] = float32(math.Inf(1)) // a NaN block scale (0x7F) and s_t = 1
		}
		c := ldrCast(t, "nvfp4", x, shape)
		ts := moEncode(t, "m.w.weight", c)
		ldrCheckTensors(t, ts, []ldrExpect{
			{"m.w.weight", safetensors.U8, []int{shape[0], shape[1] / 2}, pack4(c.Data.Bytes)},
			{"m.w.weight_scale", safetensors.F8E4M3, []int{shape[0], shape[1] / 16}, c.Scale.Bytes},
			{"m.w.weight_scale_2", safetensors.F32, []int{}, c.TensorScale.Bytes},
		})
		ldrSameValues(t, c, moDecode(t, "m.w.weight", ts))
	}
}

func TestModelOptCheckAndRejects(t *testing.T) {
	l, err := Get("modelopt")
	require.NoError(t, err)
	assert.NoError(t, l.Check(tcast.MustLookup("nvfp4"), 1, 2))
	for _, tc := range []struct {
		dt         string
		axis, rank int
		msg        string
	}{
		{"mxfp4", 1, 2, "nvfp4 only"},
		{"nvf4", 1, 2, "nvfp4 only"}, // TensorCast's NV-style type: no tensor scale
		{"int4_g32", 1, 2, "nvfp4 only"},
		{"nvfp4", 0, 2, "last (input) axis"},
		{"nvfp4", 2, 3, "rank 3"},
	} {
		err := l.Check(tcast.MustLookup(tc.dt), tc.axis, tc.rank)
		if assert.Error(t, err, tc.dt) {
			assert.Contains(t, err.Error(), tc.msg)
		}
	}
	c := ldrCast(t, "nvfp4", ldrRandom(1, 48), []int{2, 24})
	_, err = l.Encode("a.weight", c, map[string]string{})
	assert.ErrorContains(t, err, "not a multiple of the group size 16")

	// Absent, unconverted, and damaged weights.
	src := newLdrSource([]Tensor{{Spec: Spec{Name: "a.weight", DType: safetensors.BF16, Shape: []int{1, 2}}, Data: make([]byte, 4)}}, nil)
	_, ok, err := l.Decode("a.weight", src)
	assert.NoError(t, err)
	assert.False(t, ok)
	ts := moEncode(t, "a.weight", ldrCast(t, "nvfp4", ldrRandom(2, 32), []int{1, 32}))
	for i := range ts {
		if ts[i].Name == "a.weight_scale" {
			ts[i].Data = []byte{0x38, 0xB8} // a negative block scale
		}
	}
	_, ok, err = l.Decode("a.weight", newLdrSource(ts, nil))
	assert.True(t, ok)
	assert.ErrorContains(t, err, "negative")
}

func TestModelOptFiles(t *testing.T) {
	l, _ := Get("modelopt")
	kept := []string{"lm_head.weight", "model.layers.0.mlp.gate.weight", "model.norm.bias"}
	files, err := l.Files(tcast.MustLookup("nvfp4"), []Converted{{Name: "model.layers.0.mlp.down_proj.weight", Shape: []int{8, 64}}},
		kept, []byte(`{"model_type": "llama", "torch_dtype": "bfloat16"}`))
	require.NoError(t, err)
	require.Len(t, files, 2)

	var hf map[string]any
	require.NoError(t, json.Unmarshal(files["hf_quant_config.json"], &hf))
	assert.Equal(t, map[string]any{"name": "modelopt", "version": "tensorcast-go"}, hf["producer"])
	q := hf["quantization"].(map[string]any)
	assert.Equal(t, "W4A16_NVFP4", q["quant_algo"])
	assert.Contains(t, q, "kv_cache_quant_algo")
	assert.Nil(t, q["kv_cache_quant_algo"])
	assert.Equal(t, 16.0, q["group_size"])
	assert.Equal(t, []any{"lm_head", "model.layers.0.mlp.gate"}, q["exclude_modules"])

	var cfg map[string]any
	require.NoError(t, json.Unmarshal(files["config.json"], &cfg))
	assert.Equal(t, "llama", cfg["model_type"])
	assert.Equal(t, "bfloat16", cfg["torch_dtype"])
	qc := cfg["quantization_config"].(map[string]any)
	assert.Equal(t, "modelopt", qc["quant_method"])
	assert.Equal(t, "W4A16_NVFP4", qc["quant_algo"])
	assert.Equal(t, 16.0, qc["group_size"])
	assert.Equal(t, []any{"lm_head", "model.layers.0.mlp.gate"}, qc["ignore"])
	assert.Equal(t, hf["producer"], qc["producer"])
	g := qc["config_groups"].(map[string]any)["group_0"].(map[string]any)
	assert.Equal(t, []any{"Linear"}, g["targets"])
	assert.Equal(t, map[string]any{"dynamic": false, "num_bits": 4.0, "type": "float", "group_size": 16.0}, g["weights"])

	_, err = l.Files(tcast.MustLookup("mxfp4"), nil, nil, nil)
	assert.Error(t, err)
}
