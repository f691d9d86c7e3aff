package layout

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

func fbEncode(t *testing.T, name string, c *tcast.Tensor) ([]Tensor, map[string]string) {
	t.Helper()
	l, err := Get("fp8-block")
	require.NoError(t, err)
	meta := map[string]string{}
	ts, err := l.Encode(name, c, meta)
	require.NoError(t, err)
	return ts, meta
}

func fbDecode(t *testing.T, name string, ts []Tensor, meta map[string]string) *tcast.Tensor {
	t.Helper()
	l, _ := Get("fp8-block")
	d, ok, err := l.Decode(name, newLdrSource(ts, meta))
	require.NoError(t, err)
	require.True(t, ok)
	return d
}

// A 130×130 weight cast to fp8e4_block128 has four blocks: 128×128, 128×2
// (right edge), 2×128 (bottom edge) and 2×2 (corner). tcast's float scale is
// amax/448 rounded to float32 (a decode multiplier), 1.0 for an all-zero
// block; each element is x/scale rounded to nearest even in e4m3fn
// (value 2^(e−7)·(1+m/8), bias 7, 3 mantissa bits, 448 = code 0x7E).
func TestFP8BlockHandDerived(t *testing.T) {
	const n = 130
	x := make([]float32, n*n)
	at := func(r, c int) int { return r*n + c }
	// Block (0,0): amax 896, scale 2.
	x[at(0, 0)] = 896     // 448 → 0x7E
	x[at(5, 7)] = -1      // −0.5 = −2^−1: e 6 → 0xB0
	x[at(2, 3)] = 5.3     // 2.65 → 2.75 = 2·1.375: e 8, m 3 → 0x43
	x[at(127, 127)] = 3   // 1.5: e 7, m 4 → 0x3C
	x[at(0, 128)] = 7     // block (0,1): amax 7, scale 1/64; 448 → 0x7E
	x[at(1, 129)] = -0.5  // −32 = −2^5: e 12 → 0xE0
	x[at(128, 128)] = 3   // block (1,1): amax 3, scale float32(3/448); ≈448 → 0x7E
	x[at(129, 129)] = 1.5 // ≈224 = 2^7·1.75: e 14, m 6 → 0x76
	// Block (1,0) stays all zero: scale 1.0, codes 0.
	c := ldrCast(t, "fp8e4_block128", x, []int{n, n})
	const w = "model.layers.3.mlp.down_proj.weight"
	ts, meta := fbEncode(t, w, c)
	assert.Empty(t, meta, "128×128 blocks need no metadata")

	codes := make([]byte, n*n)
	codes[at(0, 0)], codes[at(5, 7)], codes[at(2, 3)], codes[at(127, 127)] = 0x7E, 0xB0, 0x43, 0x3C
	codes[at(0, 128)], codes[at(1, 129)] = 0x7E, 0xE0
	codes[at(128, 128)], codes[at(129, 129)] = 0x7E, 0x76
	s11 := float32(3) / float32(448)
	ldrCheckTensors(t, ts, []ldrExpect{
		{"model.layers.3.mlp.down_proj.weight", safetensors.F8E4M3, []int{n, n}, codes},
		{"model.layers.3.mlp.down_proj.weight_scale_inv", safetensors.F32, []int{2, 2}, lef32(2, 1.0/64, 1, s11)},
	})

	d := fbDecode(t, w, ts, meta)
	assert.Same(t, tcast.MustLookup("fp8e4_block128"), d.DataType)
	ldrSameValues(t, c, d)
	v, err := tcast.Decompress(d)
	require.NoError(t, err)
	assert.Equal(t, float32(896), v[at(0, 0)])
	assert.Equal(t, float32(-1), v[at(5, 7)])
	assert.Equal(t, float32(5.5), v[at(2, 3)])
	assert.Equal(t, float32(3), v[at(127, 127)])
	assert.Equal(t, float32(7), v[at(0, 128)])
	assert.Equal(t, float32(-0.5), v[at(1, 129)])
	assert.Equal(t, 448*s11, v[at(128, 128)])
	assert.Equal(t, 224*s11, v[at(129, 129)])
	assert.Zero(t, v[at(129, 0)])
}

func TestFP8BlockRoundTrip(t *testing.T) {
	tests := []struct {
		dt    string
		shape []int
		block [2]int
	}{
		{"fp8e4_block128", []int{256, 384}, [2]int{128, 128}},
		{"fp8e4_block128", []int{130, 200}, [2]int{128, 128}}, // partial blocks on both edges
		{"fp8e4_block128", []int{1, 1}, [2]int{128, 128}},
		{"fp8F32s", []int{64, 96}, [2]int{32, 32}},
		{"float8_e4m3fn_float32_t32_t64", []int{100, 130}, [2]int{32, 64}},
	}
	for i, tc := range tests {
		n := ldrProduct(tc.shape)
		x := ldrRandom(uint64(300+i), n)
		c := ldrCast(t, tc.dt, x, tc.shape)
		ts, meta := fbEncode(t, "m.proj.weight", c)
		grid := []int{(tc.shape[0] + tc.block[0] - 1) / tc.block[0], (tc.shape[1] + tc.block[1] - 1) / tc.block[1]}
		ldrCheckTensors(t, ts, []ldrExpect{
			{"m.proj.weight", safetensors.F8E4M3, tc.shape, c.Data.Bytes},
			{"m.proj.weight_scale_inv", safetensors.F32, grid, c.Scale.Bytes},
		})
		assert.Empty(t, meta, "no metadata")
		d := fbDecode(t, "m.proj.weight", ts, meta)
		ldrSameValues(t, c, d)
		// Decode views the stored bytes.
		assert.Same(t, &ldrByName(t, ts)["m.proj.weight"].Data[0], &d.Data.Bytes[0])
	}
}

// Decode takes 128 where it gives the scale grid, and otherwise the power
// of two that does; a dimension in one block reads back as 128 (or the
// smallest power of two holding it), with the same values.
func TestFP8BlockDecodeInfersBlock(t *testing.T) {
	for _, tc := range []struct {
		shape, grid []int
		want        string
	}{
		{[]int{64, 128}, []int{2, 2}, "float8_e4m3fn_float32_t32_t64"},
		{[]int{300, 100}, []int{3, 1}, "float8_e4m3fn_float32_t128_t128"},
		{[]int{100, 130}, []int{4, 3}, "float8_e4m3fn_float32_t32_t64"},
		{[]int{500, 300}, []int{1, 3}, "float8_e4m3fn_float32_t512_t128"},
		{[]int{0, 2}, []int{0, 1}, "float8_e4m3fn_float32_t128_t128"},
	} {
		ts := []Tensor{
			{Spec: specOf("a.weight", safetensors.F8E4M3, tc.shape), Data: make([]byte, ldrProduct(tc.shape))},
			{Spec: specOf("a.weight_scale_inv", safetensors.F32, tc.grid), Data: make([]byte, 4*ldrProduct(tc.grid))},
		}
		d := fbDecode(t, "a.weight", ts, nil)
		assert.Equal(t, tc.want, d.DataType.Code(), "%v", tc.shape)
	}
}

// A dimension held in a single block reads back with block size 128: the
// same values under another datatype name.
func TestFP8BlockSingleBlockDimension(t *testing.T) {
	c := ldrCast(t, "fp8F32s", ldrRandom(12, 20*64), []int{20, 64})
	ts, _ := fbEncode(t, "a.weight", c)
	d := fbDecode(t, "a.weight", ts, nil)
	assert.Equal(t, "float8_e4m3fn_float32_t128_t32", d.DataType.Code())
	want, err := tcast.Decompress(c)
	require.NoError(t, err)
	got, err := tcast.Decompress(d)
	require.NoError(t, err)
	assert.Equal(t, bitsOf(want), bitsOf(got))
}

func TestFP8BlockCheck(t *testing.T) {
	l, err := Get("fp8-block")
	require.NoError(t, err)
	for _, dt := range []string{"fp8e4_block128", "fp8F32s", "e4m3fn_float32_t32_t64"} {
		assert.NoError(t, l.Check(tcast.MustLookup(dt), 1, 2), dt)
	}
	for _, tc := range []struct {
		dt         string
		axis, rank int
		msg        string
	}{
		{"fp8e4_channel", 1, 2, "float32 scale per 2-D block"},
		{"fp8e4_tensor", 1, 2, "float32 scale per 2-D block"},
		{"fp8e5_block128", 1, 2, "float32 scale per 2-D block"},
		{"fp8f32s", 1, 2, "float32 scale per 2-D block"}, // float16 scale
		{"mxfp8e4", 1, 2, "float32 scale per 2-D block"},
		{"nvfp4", 1, 2, "float32 scale per 2-D block"},
		{"fp8e4_block128", 2, 3, "rank 3"},
		{"fp8e4_block128", 0, 2, "last (input) axis"},
	} {
		err := l.Check(tcast.MustLookup(tc.dt), tc.axis, tc.rank)
		if assert.Error(t, err, tc.dt) {
			assert.Contains(t, err.Error(), tc.msg)
		}
	}
	_, _, err = l.Specs("a.weight", []int{2, 32, 128}, tcast.MustLookup("fp8e4_block128"), 2)
	assert.Error(t, err)
	_, err = l.Encode("a.weight", ldrCast(t, "fp8e4_channel", ldrRandom(1, 64), []int{2, 32}), map[string]string{})
	assert.Error(t, err)
}

func TestFP8BlockFiles(t *testing.T) {
	l, _ := Get("fp8-block")
	src := []byte(`{"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 7168, "quantization_config": {"quant_method": "bitsandbytes"}, "vocab_size": 129280}`)
	kept := []string{"lm_head.weight", "model.embed_tokens.weight", "model.layers.0.mlp.gate.weight", "model.norm.weight", "model.layers.0.mlp.gate.e_score_correction_bias"}
	for _, tc := range []struct {
		dt    string
		block []any
	}{
		{"fp8e4_block128", []any{128.0, 128.0}},
		{"e4m3fn_float32_t32_t64", []any{32.0, 64.0}},
	} {
		files, err := l.Files(tcast.MustLookup(tc.dt), []Converted{{Name: "model.layers.0.mlp.down_proj.weight", Shape: []int{7168, 18432}}}, kept, src)
		require.NoError(t, err)
		require.Len(t, files, 1)
		var cfg map[string]any
		require.NoError(t, json.Unmarshal(files["config.json"], &cfg))
		assert.Equal(t, []any{"DeepseekV3ForCausalLM"}, cfg["architectures"])
		assert.Equal(t, 7168.0, cfg["hidden_size"])
		assert.Equal(t, map[string]any{
			"quant_method":           "fp8",
			"fmt":                    "e4m3",
			"activation_scheme":      "dynamic",
			"weight_block_size":      tc.block,
			"modules_to_not_convert": []any{"lm_head", "model.embed_tokens", "model.layers.0.mlp.gate", "model.norm"},
		}, cfg["quantization_config"])
	}
	// Nothing kept: an empty list, not null.
	files, err := l.Files(tcast.MustLookup("fp8e4_block128"), nil, nil, nil)
	require.NoError(t, err)
	assert.Contains(t, string(files["config.json"]), `"modules_to_not_convert": []`)
	_, err = l.Files(tcast.MustLookup("fp8e4_channel"), nil, nil, nil)
	assert.Error(t, err)
	_, err = l.Files(tcast.MustLookup("fp8e4_block128"), nil, nil, []byte("[1]"))
	assert.Error(t, err)
}

func TestFP8BlockFind(t *testing.T) {
	l, _ := Get("fp8-block")
	c := ldrCast(t, "fp8e4_block128", ldrRandom(4, 64*32), []int{64, 32})
	ts, _ := fbEncode(t, "m.q_proj.weight", c)
	ts = append(ts,
		Tensor{Spec: specOf("m.norm.weight", safetensors.BF16, []int{4}), Data: make([]byte, 8)},
		// A BF16 weight beside a stray scale is not an fp8-block weight.
		Tensor{Spec: specOf("m.k_proj.weight", safetensors.BF16, []int{1, 1}), Data: make([]byte, 2)},
		Tensor{Spec: specOf("m.k_proj.weight_scale_inv", safetensors.F32, []int{1, 1}), Data: make([]byte, 4)},
	)
	src := newLdrSource(ts, nil)
	assert.Equal(t, map[string][]string{"m.q_proj.weight": {"m.q_proj.weight", "m.q_proj.weight_scale_inv"}}, l.Find(src))
	// compressed-tensors does not claim it.
	ct, _ := Get("compressed-tensors")
	assert.Empty(t, ct.Find(src))
}

func TestFP8BlockDecodeDamaged(t *testing.T) {
	l, _ := Get("fp8-block")
	const w = "a.weight"
	good := func() ([]Tensor, map[string]string) {
		return fbEncode(t, w, ldrCast(t, "fp8e4_block128", ldrRandom(6, 130*130), []int{130, 130}))
	}
	set := func(ts []Tensor, name string, f func(*Tensor)) []Tensor {
		i := slices.IndexFunc(ts, func(x Tensor) bool { return x.Name == name })
		require.GreaterOrEqual(t, i, 0)
		f(&ts[i])
		return ts
	}
	tests := []struct {
		name   string
		damage func([]Tensor, map[string]string) []Tensor
		msg    string
	}{
		{"scale rank 1", func(ts []Tensor, _ map[string]string) []Tensor {
			return set(ts, "a.weight_scale_inv", func(x *Tensor) { x.Shape = []int{4} })
		}, "2-D grid"},
		{"scale grid no block gives", func(ts []Tensor, _ map[string]string) []Tensor {
			return set(ts, "a.weight_scale_inv", func(x *Tensor) { x.Shape, x.Data = []int{200, 2}, make([]byte, 1600) })
		}, "no block size"},
		{"scale bytes short", func(ts []Tensor, _ map[string]string) []Tensor {
			return set(ts, "a.weight_scale_inv", func(x *Tensor) { x.Data = x.Data[:12] })
		}, "holds 12 bytes"},
		{"scale dtype F16", func(ts []Tensor, _ map[string]string) []Tensor {
			return set(ts, "a.weight_scale_inv", func(x *Tensor) { x.DType, x.Data = safetensors.F16, x.Data[:8] })
		}, "dtype F16"},
		{"scale dtype BF16", func(ts []Tensor, _ map[string]string) []Tensor {
			return set(ts, "a.weight_scale_inv", func(x *Tensor) { x.DType, x.Data = safetensors.BF16, x.Data[:8] })
		}, "dtype BF16"},
		{"weight rank 3", func(ts []Tensor, _ map[string]string) []Tensor {
			return set(ts, "a.weight", func(x *Tensor) { x.Shape = []int{1, 130, 130} })
		}, "want [out, in]"},
		{"weight bytes short", func(ts []Tensor, _ map[string]string) []Tensor {
			return set(ts, "a.weight", func(x *Tensor) { x.Data = x.Data[:100] })
		}, "holds 100 bytes"},
		{"scale grid empty", func(ts []Tensor, _ map[string]string) []Tensor {
			return set(ts, "a.weight_scale_inv", func(x *Tensor) { x.Shape, x.Data = []int{0, 2}, nil })
		}, "no block size"},
		{"one block beyond the largest tile", func(ts []Tensor, _ map[string]string) []Tensor {
			ts = set(ts, "a.weight", func(x *Tensor) { x.Shape, x.Data = []int{2000, 1}, make([]byte, 2000) })
			return set(ts, "a.weight_scale_inv", func(x *Tensor) { x.Shape, x.Data = []int{1, 1}, x.Data[:4] })
		}, "no block size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, meta := good()
			ts = tc.damage(ts, meta)
			var d *tcast.Tensor
			var ok bool
			var err error
			require.NotPanics(t, func() { d, ok, err = l.Decode(w, newLdrSource(ts, meta)) })
			assert.True(t, ok)
			assert.Nil(t, d)
			var fe *FormatError
			require.True(t, errors.As(err, &fe), "%T %v", err, err)
			assert.Equal(t, "fp8-block", fe.Layout)
			assert.Equal(t, w, fe.Weight)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	// Not an fp8-block weight: nothing to decode, no error.
	for _, ts := range [][]Tensor{
		{{Spec: specOf(w, safetensors.BF16, []int{1, 2}), Data: make([]byte, 4)}},
		{{Spec: specOf(w, safetensors.F8E4M3, []int{1, 2}), Data: make([]byte, 2)}},
		{{Spec: specOf("a.weight_scale_inv", safetensors.F32, []int{1, 1}), Data: make([]byte, 4)}},
	} {
		d, ok, err := l.Decode(w, newLdrSource(ts, nil))
		assert.NoError(t, err)
		assert.False(t, ok)
		assert.Nil(t, d)
	}
}

// FuzzFP8BlockDecode decodes arbitrary tensors: Decode never panics, its
// errors are *FormatError, and a weight it accepts decompresses and encodes
// back to the same tensors.
func FuzzFP8BlockDecode(f *testing.F) {
	// Small seeds: the fuzzer minimizes every new input it finds.
	c, err := tcast.Cast(ldrRandom(8, 130*2), []int{130, 2}, tcast.MustLookup("fp8e4_block128"), &tcast.Options{Form: tcast.Actual})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint16(130), uint16(2), uint16(2), uint16(1), uint8(0), uint8(0), c.Data.Bytes, c.Scale.Bytes)
	f.Add(uint16(6), uint16(5), uint16(3), uint16(3), uint8(0), uint8(0), make([]byte, 30), make([]byte, 36))
	f.Add(uint16(0), uint16(5), uint16(0), uint16(1), uint8(0), uint8(0), []byte{}, []byte{})
	f.Add(uint16(3), uint16(3), uint16(1), uint16(1), uint8(1), uint8(2), make([]byte, 9), make([]byte, 4))
	f.Add(uint16(2), uint16(2), uint16(1), uint16(1), uint8(0), uint8(0), []byte{0x7F, 0xFF, 0, 1}, lef32(float32(math.Inf(1))))
	scaleDTs := []safetensors.DType{safetensors.F32, safetensors.F16, safetensors.U8}
	f.Fuzz(func(t *testing.T, out, in, g0, g1 uint16, rankSel, dtSel uint8, wdata, sdata []byte) {
		wshape := []int{int(out), int(in)}
		if rankSel%3 == 1 {
			wshape = []int{int(out)}
		}
		gshape := []int{int(g0), int(g1)}
		if rankSel%3 == 2 {
			gshape = append(gshape, 1)
		}
		ts := []Tensor{
			{Spec: specOf("w.weight", safetensors.F8E4M3, wshape), Data: wdata},
			{Spec: specOf("w.weight_scale_inv", scaleDTs[int(dtSel)%len(scaleDTs)], gshape), Data: sdata},
		}
		l, _ := Get("fp8-block")
		src := newLdrSource(ts, nil)
		d, ok, err := l.Decode("w.weight", src)
		if !ok {
			t.Fatalf("Decode did not claim an F8_E4M3 weight beside a weight_scale_inv")
		}
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FormatError: %v", err, err)
			}
			return
		}
		if _, err := tcast.Decompress(d); err != nil {
			t.Fatalf("decoded weight does not decompress: %v", err)
		}
		back, err := l.Encode("w.weight", d, map[string]string{})
		if err != nil {
			t.Fatalf("decoded weight does not encode: %v", err)
		}
		for i, x := range back {
			if !slices.Equal(x.Shape, ts[i].Shape) || x.DType != ts[i].DType || string(x.Data) != string(ts[i].Data) {
				t.Fatalf("tensor %s changed in a decode/encode round trip", x.Name)
			}
		}
	})
}
