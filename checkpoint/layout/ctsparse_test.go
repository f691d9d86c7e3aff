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
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/sparsity"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// ctPruned returns the compressed-tensors layout pruning to pattern in
// format.
func ctPruned(t *testing.T, p sparsity.Pattern, f SparseFormat) Layout {
	t.Helper()
	base, err := Get("compressed-tensors")
	require.NoError(t, err)
	l, err := base.(Pruner).WithPruning(Pruning{Pattern: p, Format: f})
	require.NoError(t, err)
	return l
}

// pruneCast prunes x to p along its last axis by magnitude and casts it to
// datatype name with that mask as Keep: what a converter does for a layout
// with pruning.
func pruneCast(t *testing.T, name string, x []float32, shape []int, p sparsity.Pattern) *tcast.Tensor {
	t.Helper()
	m, err := sparsity.Magnitude(x, shape, -1, p)
	require.NoError(t, err)
	c, err := tcast.Cast(x, shape, tcast.MustLookup(name), &tcast.Options{Form: tcast.Actual, Keep: m})
	require.NoError(t, err)
	return c
}

// ctSparseRoundTrip encodes c with l, checks the declared specs, decodes it
// back through the registered layout and checks codes, mask and values.
func ctSparseRoundTrip(t *testing.T, l Layout, name string, c *tcast.Tensor) ([]Tensor, map[string]string, *tcast.Tensor) {
	t.Helper()
	specs, declared, err := l.Specs(name, c.Shape, c.DataType, 1)
	require.NoError(t, err)
	meta := map[string]string{}
	ts, err := l.Encode(name, c, meta)
	require.NoError(t, err)
	require.Len(t, ts, len(specs))
	for i := range ts {
		assert.Equal(t, specs[i], ts[i].Spec, "tensor %d as declared", i)
	}
	for k := range meta {
		assert.Contains(t, declared, k)
	}
	base, _ := Get("compressed-tensors")
	src := newLdrSource(ts, meta)
	got, ok, err := base.Decode(name, src)
	require.NoError(t, err)
	require.True(t, ok)
	ldrSameValues(t, c, got)
	if c.Mask != nil {
		if p, _ := PruningOf(l); p.Resolved() != SparseDense {
			require.NotNil(t, got.Mask)
			assert.True(t, c.Mask.Equal(got.Mask), "mask")
		}
	}
	return ts, meta, got
}

// The documented example: keep row 1,1,0,0,0,1,1,0 → bitmask byte 0x63, as
// a 1×8 BF16 weight in sparse-24-bitmask, every byte derived by hand.
func TestCTSparse24HandBF16(t *testing.T) {
	// 2:4 by magnitude: |3|, |−2| > 1, 0.5 in the first group; |4|, |−5| >
	// 0.25, 1 in the second.
	x := []float32{3, -2, 1, 0.5, 0.25, 4, -5, 1}
	c := pruneCast(t, "bfloat16", x, []int{1, 8}, sparsity.P24)
	l := ctPruned(t, sparsity.P24, SparseNatural)
	ts, meta, got := ctSparseRoundTrip(t, l, "m.fc.weight", c)
	ldrCheckTensors(t, ts, []ldrExpect{
		{"m.fc.shape", safetensors.I64, []int{2, 1}, lei64(1, 8)},
		// BF16: 3 = 0x4040, −2 = 0xc000, 4 = 0x4080, −5 = 0xc0a0.
		{"m.fc.compressed", safetensors.BF16, []int{1, 4}, le16(0x4040, 0xc000, 0x4080, 0xc0a0)},
		{"m.fc.bitmask", safetensors.U8, []int{1, 1}, []byte{0x63}},
	})
	assert.Equal(t, []string{"m.fc.shape", "m.fc.compressed", "m.fc.bitmask"}, []string{ts[0].Name, ts[1].Name, ts[2].Name},
		"compressed-tensors' order: shape, compressed, bitmask")
	assert.Equal(t, map[string]string{KeyCTDataTypePrefix + "m.fc": "bfloat16"}, meta)
	v, err := tcast.Decompress(got)
	require.NoError(t, err)
	assert.Equal(t, []float32{3, -2, 0, 0, 0, 4, -5, 0}, v)
	// Without our metadata the datatype comes from the tensors.
	src := newLdrSource(ts, nil)
	got2, ok, err := l.Decode("m.fc.weight", src)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "bfloat16", got2.DataType.Name())
	assert.Equal(t, map[string][]string{"m.fc.weight": {"m.fc.shape", "m.fc.compressed", "m.fc.bitmask"}}, l.Find(src))
}

// exRows is the 2×8 example of docs/SPARSITY.md §4: row 0 keeps columns
// 1, 2 | 4, 5 (mask byte 0x36), row 1 keeps 0, 3 | 5, 6 (0x69).
var exRows = []float32{0.1, -0.9, 0.5, 0.2, 3, -4, 0, 1, 1, 0, 0, 2, 0, 5, 6, 0}

func TestCTSparseHandFloat32(t *testing.T) {
	c := pruneCast(t, "float32", exRows, []int{2, 8}, sparsity.P24)
	// The kept values, row-major: −0.9, 0.5, 3, −4 | 1, 2, 5, 6; float32
	// −0.9 is 0xbf666666.
	vals := le32(0xbf666666, 0x3f000000, 0x40400000, 0xc0800000, 0x3f800000, 0x40000000, 0x40a00000, 0x40c00000)
	ts, _, _ := ctSparseRoundTrip(t, ctPruned(t, sparsity.P24, SparseNatural), "m.fc.weight", c)
	ldrCheckTensors(t, ts, []ldrExpect{
		{"m.fc.shape", safetensors.I64, []int{2, 1}, lei64(2, 8)},
		{"m.fc.compressed", safetensors.F32, []int{2, 4}, vals},
		{"m.fc.bitmask", safetensors.U8, []int{2, 1}, []byte{0x36, 0x69}},
	})
	// The same pruning as sparse-bitmask: 1-D values, row offsets 0 and 4,
	// a [2] shape tensor.
	ts, _, _ = ctSparseRoundTrip(t, ctPruned(t, sparsity.P24, SparseBitmask), "m.fc.weight", c)
	ldrCheckTensors(t, ts, []ldrExpect{
		{"m.fc.shape", safetensors.I64, []int{2}, lei64(2, 8)},
		{"m.fc.compressed", safetensors.F32, []int{8}, vals},
		{"m.fc.bitmask", safetensors.U8, []int{2, 1}, []byte{0x36, 0x69}},
		{"m.fc.row_offsets", safetensors.I64, []int{2}, lei64(0, 4)},
	})
	// Dense: the pruned weight as it is.
	ts, _, _ = ctSparseRoundTrip(t, ctPruned(t, sparsity.P24, SparseDense), "m.fc.weight", c)
	ldrCheckTensors(t, ts, []ldrExpect{
		{"m.fc.weight", safetensors.F32, []int{2, 8}, lef32(0, -0.9, 0.5, 0, 3, -4, 0, 0, 1, 0, 0, 2, 0, 5, 6, 0)},
	})
}

// int8 with a float32 scale per row, int-quantized: each row's largest kept
// value is 127, so its scale is exactly 1 and the codes are the values.
func TestCTSparseHandInt8(t *testing.T) {
	x := []float32{1, -90, 50, 2, 127, -40, 0, 10, 10, 0, 0, 20, 0, 50, 127, 0}
	c := pruneCast(t, "int8_Fc", x, []int{2, 8}, sparsity.P24)
	l := ctPruned(t, sparsity.P24, SparseNatural)
	ts, _, _ := ctSparseRoundTrip(t, l, "m.fc.weight", c)
	ldrCheckTensors(t, ts, []ldrExpect{
		{"m.fc.shape", safetensors.I64, []int{2, 1}, lei64(2, 8)},
		// −90 = 0xa6, 50 = 0x32, 127 = 0x7f, −40 = 0xd8 | 10, 20, 50, 127.
		{"m.fc.compressed", safetensors.I8, []int{2, 4}, []byte{0xa6, 0x32, 0x7f, 0xd8, 0x0a, 0x14, 0x32, 0x7f}},
		{"m.fc.bitmask", safetensors.U8, []int{2, 1}, []byte{0x36, 0x69}},
		{"m.fc.weight_scale", safetensors.F32, []int{2, 1}, lef32(1, 1)},
	})
	// Without metadata, int8 with a float32 channel scale.
	got, ok, err := l.Decode("m.fc.weight", newLdrSource(ts, nil))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, c.DataType.Code(), got.DataType.Code())
	assert.ElementsMatch(t, []string{"m.fc.shape", "m.fc.compressed", "m.fc.bitmask", "m.fc.weight_scale"}, l.Find(newLdrSource(ts, nil))["m.fc.weight"])
}

// Every datatype a sparse format composes with round-trips, in both sparse
// formats and dense, with 2:4 and 4:8; scales cover the dense groups.
func TestCTSparseRoundTrip(t *testing.T) {
	shape := []int{6, 64}
	x := ldrRandom(5, 6*64)
	for _, name := range []string{"bfloat16", "float16", "float32", "fp8e4_tensor", "fp8e4_channel", "fp8e4_block128", "int8_channel", "int8_g32", "int8_F", "int8_bc"} {
		for _, p := range []sparsity.Pattern{sparsity.P24, sparsity.P48, {N: 1, M: 4}} {
			for _, f := range []SparseFormat{SparseNatural, SparseBitmask, SparseDense} {
				if _, err := tcast.Lookup(name); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				t.Run(name+"/"+p.String()+"/"+string(f), func(t *testing.T) {
					l := ctPruned(t, p, f)
					c := pruneCast(t, name, x, shape, p)
					if name == "int8_F" && f == SparseDense {
						// Dense int8 is pack-quantized, which takes no tensor scale.
						require.ErrorContains(t, l.Check(c.DataType, 1, 2), "group or channel scale")
						return
					}
					require.NoError(t, l.Check(c.DataType, 1, 2))
					_, _, got := ctSparseRoundTrip(t, l, "a.b.weight", c)
					if f != SparseDense {
						assert.InDelta(t, p.Density(), float64(got.Mask.Count())/float64(got.Mask.Len()), 0)
					}
				})
			}
		}
	}
}

func TestCTSparseRefused(t *testing.T) {
	base, _ := Get("compressed-tensors")
	// sparse-24-bitmask is 2:4 only.
	_, err := base.(Pruner).WithPruning(Pruning{Pattern: sparsity.P48, Format: Sparse24Bitmask})
	var se *SparsityError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "Pruning.Format", se.Option)
	assert.Equal(t, "Pruning.Pattern", se.Conflict, "the pattern it does not go with")
	assert.Contains(t, err.Error(), "holds 2:4 sparsity, not 4:8")
	_, err = base.(Pruner).WithPruning(Pruning{Pattern: sparsity.Pattern{N: 3, M: 6}})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "Pruning.Pattern", se.Option)
	_, err = ParseSparseFormat("sparse24")
	require.ErrorIs(t, err, ErrSparsity)
	require.ErrorAs(t, err, &se)
	assert.Equal(t, SparsityError{Layout: "compressed-tensors", Option: "Pruning.Format", Value: "sparse24",
		Reason: "unknown sparse format"}, *se)

	// Packed formats do not compose with a sparse format; dense takes them.
	for _, name := range []string{"mxfp4", "nvfp4", "int4_g128", "uint4_g32", "uint8_g32", "mxfp8e4"} {
		dt := tcast.MustLookup(name)
		for _, f := range []SparseFormat{SparseNatural, SparseBitmask} {
			err := ctPruned(t, sparsity.P24, f).Check(dt, 1, 2)
			require.ErrorIs(t, err, ErrSparsity, name)
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "Pruning.Format", se.Option)
			assert.Equal(t, "DataType", se.Conflict, "the datatype it does not go with")
			assert.Contains(t, err.Error(), name, "names the datatype")
		}
		assert.NoError(t, ctPruned(t, sparsity.P24, SparseDense).Check(dt, 1, 2), name)
	}
	// A sparse datatype is refused: the layout prunes dense datatypes.
	sp, err := tcast.WithSparsity(tcast.MustLookup("fp8e4_channel"), sparsity.P24)
	require.NoError(t, err)
	err = ctPruned(t, sparsity.P24, SparseNatural).Check(sp, 1, 2)
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "DataType", se.Option)
	assert.Empty(t, se.Conflict)
	// Unscaled float types only with pruning.
	assert.Error(t, base.Check(tcast.MustLookup("bfloat16"), 1, 2))
	// A row length that is no whole number of groups.
	_, _, err = ctPruned(t, sparsity.P48, SparseNatural).Specs("a.weight", []int{4, 12}, tcast.MustLookup("bfloat16"), 1)
	assert.ErrorContains(t, err, "not a multiple of 8")
	// Encode wants the keep mask, N:M, with zero codes where it drops.
	l := ctPruned(t, sparsity.P24, SparseNatural)
	plain := ldrCast(t, "bfloat16", exRows, []int{2, 8})
	_, err = l.Encode("a.weight", plain, map[string]string{})
	assert.ErrorContains(t, err, "no keep mask")
	bad := *plain
	bad.Mask, _ = sparsity.Magnitude(exRows, []int{2, 8}, -1, sparsity.P24)
	_, err = l.Encode("a.weight", &bad, map[string]string{})
	assert.ErrorContains(t, err, "pruned by the mask but holds code")
	var fe *FormatError
	assert.ErrorAs(t, err, &fe)
	bad.Mask, _ = sparsity.Magnitude(exRows, []int{2, 8}, -1, sparsity.Pattern{N: 1, M: 4})
	_, err = l.Encode("a.weight", &bad, map[string]string{})
	assert.ErrorIs(t, err, sparsity.ErrNotNM)
}

// ctSparseTensors encodes the 2×8 example pruned 2:4 as BF16 in format f.
func ctSparseTensors(t *testing.T, f SparseFormat) []Tensor {
	t.Helper()
	c := pruneCast(t, "bfloat16", exRows, []int{2, 8}, sparsity.P24)
	ts, err := ctPruned(t, sparsity.P24, f).Encode("m.fc.weight", c, map[string]string{})
	require.NoError(t, err)
	return ts
}

// with returns ts with tensor name's data (and, when shape is not nil, its
// shape and dtype) replaced; nil data removes it.
func with(ts []Tensor, name string, data []byte, dt safetensors.DType, shape []int) []Tensor {
	var out []Tensor
	for _, x := range ts {
		if x.Name == name {
			if data == nil {
				continue
			}
			x.Data = data
			if shape != nil {
				x.Shape, x.DType = shape, dt
			}
		}
		out = append(out, x)
	}
	return out
}

// cfgSource is an ldrSource with a config.json.
type cfgSource struct {
	*ldrSource
	cfg []byte
}

func (s cfgSource) Config() []byte { return s.cfg }

func TestCTSparseDecodeStrict(t *testing.T) {
	l, _ := Get("compressed-tensors")
	s24 := ctSparseTensors(t, Sparse24Bitmask)
	sbm := ctSparseTensors(t, SparseBitmask)
	decode := func(ts []Tensor) error {
		_, ok, err := l.Decode("m.fc.weight", newLdrSource(ts, nil))
		if err == nil && !ok {
			return errors.New("not found")
		}
		return err
	}
	require.NoError(t, decode(s24))
	require.NoError(t, decode(sbm))
	cases := []struct {
		name string
		ts   []Tensor
		want string
		off  int // offset of a *sparsity.DecodeError, -1 for none
	}{
		{"group keeps 3", with(s24, "m.fc.bitmask", []byte{0x37, 0x69}, 0, nil), "keeps 3 of 4", 0},
		{"second row's group keeps 1", with(s24, "m.fc.bitmask", []byte{0x36, 0x61}, 0, nil), "keeps 1 of 4", 1},
		{"padding bits", with(with(s24, "m.fc.shape", lei64(2, 4), 0, nil), "m.fc.compressed", make([]byte, 8), safetensors.BF16, []int{2, 2}),
			"padding bits", 0},
		{"missing compressed", with(s24, "m.fc.compressed", nil, 0, nil), "m.fc.compressed is missing", -1},
		{"missing shape", with(s24, "m.fc.shape", nil, 0, nil), "m.fc.shape is missing", -1},
		{"short values", with(s24, "m.fc.compressed", make([]byte, 14), safetensors.BF16, []int{7}), "has shape [7], want [2 4]", -1},
		{"huge shape", with(s24, "m.fc.shape", lei64(1<<40, 8), 0, nil), "cannot describe", -1},
		{"negative shape", with(s24, "m.fc.shape", lei64(-2, 8), 0, nil), "cannot describe", -1},
		{"bitmask shape", with(s24, "m.fc.bitmask", []byte{0x36, 0x69}, safetensors.U8, []int{1, 2}), "want [2, 1]", -1},
		{"shape of shape", with(s24, "m.fc.shape", lei64(2, 8, 1), safetensors.I64, []int{3}), "want [2] or [2, 1]", -1},
		{"value dtype", with(s24, "m.fc.compressed", make([]byte, 8), safetensors.U8, []int{2, 4}), "want BF16, F16, F32, F8_E4M3 or I8", -1},
		{"row offset", with(sbm, "m.fc.row_offsets", lei64(0, 3), 0, nil), "row 1 starts at value 3", 1},
		{"first row offset", with(sbm, "m.fc.row_offsets", lei64(1, 4), 0, nil), "row 0 starts at value 1", 0},
		{"offsets count", with(sbm, "m.fc.row_offsets", lei64(0), safetensors.I64, []int{1}), "has shape [1], want [2]", -1},
		{"values count", with(sbm, "m.fc.compressed", make([]byte, 14), safetensors.BF16, []int{7}), "7 compressed values for 8 set bits", -1},
		{"values rank", with(sbm, "m.fc.compressed", make([]byte, 16), safetensors.BF16, []int{2, 4}), "want one dimension", -1},
		{"scale beside floats", append(slices.Clone(s24), Tensor{Spec: specOf("m.fc.weight_scale", safetensors.F32, []int{2, 1}), Data: lef32(1, 1)}),
			"take no weight_scale", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := decode(tc.ts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "m.fc", "names the tensor")
			var fe *FormatError
			assert.ErrorAs(t, err, &fe)
			var de *sparsity.DecodeError
			if tc.off >= 0 {
				require.ErrorAs(t, err, &de)
				assert.Equal(t, tc.off, de.Offset)
			}
		})
	}
	// Quantized values need their scale.
	i8 := pruneCast(t, "int8_channel", ldrRandom(3, 16), []int{2, 8}, sparsity.P24)
	ts, err := ctPruned(t, sparsity.P24, SparseNatural).Encode("m.fc.weight", i8, map[string]string{})
	require.NoError(t, err)
	assert.ErrorContains(t, decode(with(ts, "m.fc.weight_scale", nil, 0, nil)), "weight_scale is missing")
	// The config's format must be the tensors'.
	for _, tc := range []struct {
		ts     []Tensor
		format string
		want   string
	}{
		{s24, "sparse-bitmask", "names format sparse-bitmask, but the tensors of m.fc are sparse-24-bitmask"},
		{sbm, "sparse-24-bitmask", "but the tensors of m.fc are sparse-bitmask"},
		{s24, "marlin-24", `names format "marlin-24"`},
	} {
		cfg := []byte(`{"quantization_config": {"quant_method": "compressed-tensors", "sparsity_config": {"format": "` + tc.format + `"}}}`)
		_, _, err := l.Decode("m.fc.weight", cfgSource{newLdrSource(tc.ts, nil), cfg})
		assert.ErrorContains(t, err, tc.want)
	}
	cfg := []byte(`{"quantization_config": {"quant_method": "compressed-tensors", "sparsity_config": {"format": "sparse-24-bitmask"}}}`)
	_, ok, err := l.Decode("m.fc.weight", cfgSource{newLdrSource(s24, nil), cfg})
	assert.NoError(t, err)
	assert.True(t, ok)
}

// A weight pruned and written dense without quantization is ours only by
// its metadata.
func TestCTSparseDensePlain(t *testing.T) {
	l := ctPruned(t, sparsity.P24, SparseDense)
	c := pruneCast(t, "bfloat16", exRows, []int{2, 8}, sparsity.P24)
	meta := map[string]string{}
	ts, err := l.Encode("m.fc.weight", c, meta)
	require.NoError(t, err)
	base, _ := Get("compressed-tensors")
	_, ok, err := base.Decode("m.fc.weight", newLdrSource(ts, nil))
	assert.NoError(t, err)
	assert.False(t, ok, "a plain BF16 weight of another tool")
	assert.Empty(t, base.Find(newLdrSource(ts, nil)))
	got, ok, err := base.Decode("m.fc.weight", newLdrSource(ts, meta))
	require.NoError(t, err)
	require.True(t, ok)
	ldrSameValues(t, c, got)
	_, _, err = base.Decode("m.fc.weight", newLdrSource(ts, map[string]string{KeyCTDataTypePrefix + "m.fc": "float16"}))
	assert.ErrorContains(t, err, "names datatype float16, but m.fc.weight holds BF16 values")
}

func TestCTSparseFiles(t *testing.T) {
	src := []byte(`{"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "quantization_config": {"old": true}, "vocab_size": 10}`)
	conv := []Converted{{Name: "model.layers.1.mlp.up_proj.weight", Shape: []int{4, 8}}, {Name: "model.layers.0.mlp.up_proj.weight", Shape: []int{4, 8}}}
	kept := []string{"model.embed_tokens.weight", "model.norm.weight", "lm_head.bias"}
	qcOf := func(files map[string][]byte) map[string]any {
		var cfg map[string]any
		require.NoError(t, json.Unmarshal(files["config.json"], &cfg))
		assert.Equal(t, float64(64), cfg["hidden_size"], "the source's keys are kept")
		return cfg["quantization_config"].(map[string]any)
	}
	wantSparsity := func(format string, global float64) map[string]any {
		return map[string]any{"format": format, "global_sparsity": global, "sparsity_structure": "2:4",
			"targets": []any{"model.layers.0.mlp.up_proj", "model.layers.1.mlp.up_proj"},
			"ignore":  []any{"model.embed_tokens", "model.norm"}}
	}
	l := ctPruned(t, sparsity.P24, SparseNatural)

	// No quantization: what compressed-tensors writes for a sparse-only
	// model: version, quant_method, sparsity_config and an empty
	// transform_config, nothing else.
	files, err := l.Files(nil, conv, kept, src)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"quant_method": "compressed-tensors", "version": "0.14.0.1", "transform_config": map[string]any{},
		"sparsity_config": wantSparsity("sparse-24-bitmask", 0.5)}, qcOf(files), "before the weights are measured: 1 − N/M")
	// Measured: zeros over the elements of the pruned weights.
	conv[0].Zeros, conv[0].Measured, conv[1].Zeros, conv[1].Measured = 16, true, 17, true
	files, err = l.Files(tcast.MustLookup("bfloat16"), conv, kept, src)
	require.NoError(t, err)
	assert.Equal(t, wantSparsity("sparse-24-bitmask", 33.0/64), qcOf(files)["sparsity_config"])
	s := string(files["config.json"])
	for _, k := range []string{`"format"`, `"global_sparsity"`, `"ignore"`, `"sparsity_structure"`, `"targets"`} {
		i := len(s) - len(s[indexAfter(s, `"sparsity_config"`):])
		assert.Greater(t, indexAfter(s[i:], k), 0, k)
	}
	assert.True(t, sortedKeys(s, `"format"`, `"global_sparsity"`, `"ignore"`, `"sparsity_structure"`, `"targets"`), "sorted, as compressed-tensors writes them")

	// With fp8 and int8: the quantization config, its format, and the
	// sparsity config.
	for _, tc := range []struct{ dt, format, strategy string }{
		{"fp8e4_channel", "float-quantized", "channel"}, {"int8_channel", "int-quantized", "channel"}, {"int8_g32", "int-quantized", "group"},
	} {
		files, err = l.Files(tcast.MustLookup(tc.dt), conv, kept, src)
		require.NoError(t, err)
		qc := qcOf(files)
		assert.Equal(t, tc.format, qc["format"], tc.dt)
		assert.Equal(t, "compressed", qc["quantization_status"])
		assert.Equal(t, "0.14.0.1", qc["version"])
		assert.Equal(t, map[string]any{}, qc["transform_config"])
		assert.Equal(t, wantSparsity("sparse-24-bitmask", 33.0/64), qc["sparsity_config"])
		g := qc["config_groups"].(map[string]any)["group_0"].(map[string]any)
		assert.Equal(t, tc.format, g["format"])
		assert.Equal(t, tc.strategy, g["weights"].(map[string]any)["strategy"])
		assert.Equal(t, float64(8), g["weights"].(map[string]any)["num_bits"])
	}
	// sparse-bitmask with 4:8.
	files, err = ctPruned(t, sparsity.P48, SparseNatural).Files(nil, conv, kept, src)
	require.NoError(t, err)
	sc := qcOf(files)["sparsity_config"].(map[string]any)
	assert.Equal(t, "sparse-bitmask", sc["format"])
	assert.Equal(t, "4:8", sc["sparsity_structure"])

	// Dense: no sparsity_config at all (current vLLM refuses one with
	// targets, whatever its format); with quantization the usual config.
	dense := ctPruned(t, sparsity.P24, SparseDense)
	files, err = dense.Files(tcast.MustLookup("mxfp4"), conv, kept, src)
	require.NoError(t, err)
	qc := qcOf(files)
	assert.Equal(t, "mxfp4-pack-quantized", qc["format"])
	assert.NotContains(t, qc, "sparsity_config")
	assert.Equal(t, "0.18.0", qc["version"])
	files, err = dense.Files(nil, conv, kept, src)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(files["config.json"], &cfg))
	assert.NotContains(t, cfg, "quantization_config", "nothing to describe: the source's config without it")
	files, err = dense.Files(nil, conv, kept, nil)
	require.NoError(t, err)
	assert.Empty(t, files, "no source config: no files")
	// A refused combination is refused by Files too.
	_, err = l.Files(tcast.MustLookup("nvfp4"), conv, kept, src)
	assert.ErrorIs(t, err, ErrSparsity)
}

// indexAfter returns the index of sub in s, -1 if absent.
func indexAfter(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// sortedKeys reports whether keys occur in s in the order given.
func sortedKeys(s string, keys ...string) bool {
	last := -1
	for _, k := range keys {
		i := indexAfter(s, k)
		if i <= last {
			return false
		}
		last = i
	}
	return true
}

// Masks of every density: the bitmask holds whatever mask the tensor has,
// and a sparse-bitmask weight with an unstructured mask reads back.
func TestCTSparseBitmaskUnstructured(t *testing.T) {
	keep := []bool{true, false, false, false, false, false, false, true, true, true, true, false}
	// x holds zeros where keep is false.
	m, err := mask.FromBools([]int{2, 6}, keep)
	require.NoError(t, err)
	x := []float32{1, 0, 0, 0, 0, 0, 0, 2, 3, 4, 5, 0}
	c, err := tcast.Cast(x, []int{2, 6}, tcast.MustLookup("float32"), &tcast.Options{Form: tcast.Actual, Keep: m})
	require.NoError(t, err)
	// Hand-made compressed-tensors tensors: row 0 keeps column 0 (bitmask
	// 0x01), row 1 columns 1..4 (0b011110 = 0x1e).
	ts := []Tensor{
		{Spec: specOf("u.shape", safetensors.I64, []int{2}), Data: lei64(2, 6)},
		{Spec: specOf("u.compressed", safetensors.F32, []int{5}), Data: lef32(1, 2, 3, 4, 5)},
		{Spec: specOf("u.bitmask", safetensors.U8, []int{2, 1}), Data: []byte{0x01, 0x1e}},
		{Spec: specOf("u.row_offsets", safetensors.I64, []int{2}), Data: lei64(0, 1)},
	}
	l, _ := Get("compressed-tensors")
	got, ok, err := l.Decode("u.weight", newLdrSource(ts, nil))
	require.NoError(t, err)
	require.True(t, ok)
	ldrSameValues(t, c, got)
	assert.True(t, m.Equal(got.Mask))
	v, err := tcast.Decompress(got)
	require.NoError(t, err)
	assert.Equal(t, x, v)
	assert.Equal(t, []float32{1, 2, 3, 4, 5}, []float32{v[0], v[7], v[8], v[9], v[10]})
	assert.False(t, math.Signbit(float64(v[1])))
}

// TestSparsityErrorNamesOptions: every refusal names the Pruning field or
// the datatype it refuses, as typed fields and in its message, and no
// command-line flag.
func TestSparsityErrorNamesOptions(t *testing.T) {
	base, _ := Get("compressed-tensors")
	withPruning := func(p Pruning) error {
		_, err := base.(Pruner).WithPruning(p)
		return err
	}
	sp, err := tcast.WithSparsity(tcast.MustLookup("fp8e4_channel"), sparsity.P24)
	require.NoError(t, err)
	for _, tc := range []struct {
		err                     error
		option, value, conflict string
		msg                     string
	}{
		{withPruning(Pruning{Pattern: sparsity.P48, Format: Sparse24Bitmask}),
			"Pruning.Format", "sparse-24-bitmask", "Pruning.Pattern",
			"layout compressed-tensors: Pruning.Format sparse-24-bitmask: the format holds 2:4 sparsity, not 4:8"},
		{withPruning(Pruning{Pattern: sparsity.P24, Format: "bitmask"}),
			"Pruning.Format", "bitmask", "",
			"layout compressed-tensors: Pruning.Format bitmask: unknown sparse format"},
		{withPruning(Pruning{Pattern: sparsity.Pattern{N: 3, M: 6}}),
			"Pruning.Pattern", "3:6", "", ""},
		{ctPruned(t, sparsity.P24, SparseNatural).Check(tcast.MustLookup("mxfp4"), 1, 2),
			"Pruning.Format", "sparse-24-bitmask (the default for 2:4)", "DataType", ""},
		{ctPruned(t, sparsity.P24, SparseBitmask).Check(tcast.MustLookup("uint8_g32"), 1, 2),
			"Pruning.Format", "sparse-bitmask", "DataType",
			"layout compressed-tensors: Pruning.Format sparse-bitmask: datatype uint8_g32 has a zero point, " +
				"which int-quantized weights do not take"},
		{ctPruned(t, sparsity.P24, SparseNatural).Check(sp, 1, 2),
			"DataType", sp.Name(), "", ""},
	} {
		var se *SparsityError
		require.ErrorAs(t, tc.err, &se)
		require.ErrorIs(t, tc.err, ErrSparsity)
		assert.Equal(t, "compressed-tensors", se.Layout)
		assert.Equal(t, tc.option, se.Option, tc.err)
		assert.Equal(t, tc.value, se.Value, tc.err)
		assert.Equal(t, tc.conflict, se.Conflict, tc.err)
		assert.NotEmpty(t, se.Reason)
		if tc.msg != "" {
			assert.EqualError(t, tc.err, tc.msg)
		}
		assert.Contains(t, tc.err.Error(), tc.option+" "+tc.value+": ")
		for _, flag := range []string{"-sparsity", "-dtype", "-layout"} {
			assert.NotContains(t, tc.err.Error(), flag)
		}
	}
}
