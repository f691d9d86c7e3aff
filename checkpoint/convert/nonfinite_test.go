package convert

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/sparsity"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// poisoned is the weight nonFiniteModel injects NaN and Inf values into.
const poisoned = "model.layers.0.mlp.down_proj.weight"

// nonFiniteModel writes a one-layer BF16 checkpoint with config.json whose
// weight poisoned (128×256) holds 3 NaN (one negative), 1 +Inf and 1 −Inf,
// and whose norm (kept) holds a NaN and an Inf.
func nonFiniteModel(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(15, 16))
	const (
		nan    = 0x7fc0 // BF16 codes, by the IEEE layout: sign, 8 exponent bits, 7 mantissa bits
		negNaN = 0xffc1
		posInf = 0x7f80
		negInf = 0xff80
	)
	bf16 := func(n int, specials map[int]uint16) []byte {
		b := make([]byte, 2*n)
		for i := range n {
			u := math.Float32bits(float32(r.NormFloat64() * 0.05))
			binary.LittleEndian.PutUint16(b[2*i:], uint16(u>>16))
		}
		for i, c := range specials {
			binary.LittleEndian.PutUint16(b[2*i:], c)
		}
		return b
	}
	ts := []safetensors.Tensor{
		{Name: "model.layers.0.input_layernorm.weight", DType: safetensors.BF16, Shape: []int{128}, Data: bf16(128, map[int]uint16{3: nan, 9: posInf})},
		{Name: poisoned, DType: safetensors.BF16, Shape: []int{128, 256}, Data: bf16(128*256, map[int]uint16{5: posInf, 300: nan, 301: negNaN, 4000: nan, 20000: negInf})},
		{Name: "model.layers.0.mlp.up_proj.weight", DType: safetensors.BF16, Shape: []int{256, 128}, Data: bf16(256*128, nil)},
	}
	path := filepath.Join(dir, "model.safetensors")
	require.NoError(t, safetensors.WriteFile(path, ts, map[string]string{"format": "pt"}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type": "llama", "hidden_size": 128}`), 0o644))
	return path
}

// TestConvertRefusesNonFinite converts a checkpoint whose weight holds NaN
// and Inf values in every layout that casts, whole and streamed: by default
// Convert refuses with a *tcast.NonFiniteError naming the weight and its counts,
// and no output (nor any temporary file) appears; with AllowNonFinite the
// weight is cast per the block policy (its values are those of tcast.Cast,
// NaN blocks included) with a warning naming it, and the kept norm is
// copied, NaN and Inf included.
func TestConvertRefusesNonFinite(t *testing.T) {
	src := nonFiniteModel(t)
	cases := []struct {
		layout, dt string
		whole      bool
		rotate     string
		sparse     bool // an N:M datatype (tcast) or pruning (compressed-tensors; no dt: kept BF16)
	}{
		{layout: "tcast", dt: "mxfp4"},
		{layout: "tcast", dt: "mxfp4", whole: true},
		{layout: "tcast", dt: "nvfp4"},
		{layout: "tcast", dt: "fp8e4_tensor"},
		{layout: "tcast", dt: "int4_g128", whole: true},
		{layout: "tcast", dt: "mxfp4", rotate: "hadamard:32"},
		{layout: "tcast", dt: "mxfp4", rotate: "hadamard:32", whole: true},
		{layout: "tcast", dt: "mxfp4", sparse: true},
		{layout: "compressed-tensors", sparse: true},
		{layout: "compressed-tensors", dt: "fp8e4_block128", sparse: true},
		{layout: "compressed-tensors", dt: "fp8e4_tensor", sparse: true},
		{layout: "compressed-tensors", dt: "int4_g128"},
		{layout: "compressed-tensors", dt: "fp8e4_tensor"},
		{layout: "compressed-tensors", dt: "mxfp8e4"},
		{layout: "modelopt", dt: "nvfp4"},
		{layout: "gpt-oss", dt: "mxfp4"},
		{layout: "fp8-block", dt: "fp8e4_block128"},
		{layout: "gguf", dt: "q8_0"},
		{layout: "gguf", dt: "q8_0", whole: true},
		{layout: "gguf", dt: "q4_k"},
	}
	in, err := load.Open(src)
	require.NoError(t, err)
	defer in.Close()
	for _, c := range cases {
		name := c.layout + "/" + c.dt
		if c.whole {
			name += "/whole"
		}
		if c.rotate != "" {
			name += "/rotated"
		}
		if c.sparse {
			name += "/2:4"
		}
		t.Run(name, func(t *testing.T) {
			l, err := layout.Get(c.layout)
			require.NoError(t, err)
			var dt *tcast.DataType
			if c.dt != "" {
				dt, err = layout.DataType(l, c.dt)
				require.NoError(t, err)
			}
			if c.sparse && c.layout == "tcast" {
				dt, err = tcast.WithSparsity(dt, sparsity.Pattern{N: 2, M: 4})
				require.NoError(t, err)
			} else if c.sparse {
				l, err = l.(layout.Pruner).WithPruning(layout.Pruning{Pattern: sparsity.Pattern{N: 2, M: 4}})
				require.NoError(t, err)
			}
			o := Options{DataType: dt, Layout: l, Workers: 2, GGUF: GGUFOptions{Generic: l.Container() == layout.GGUF}}
			if c.rotate != "" {
				o.Rotate, err = rotate.Parse(c.rotate)
				require.NoError(t, err)
			}
			forceWhole = c.whole
			defer func() { forceWhole = false }()

			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			if c.layout == "tcast" {
				out += ".safetensors"
			} else if c.layout == "gguf" {
				out += ".gguf"
			} else {
				out += string(filepath.Separator)
			}
			_, err = Convert(src, out, o)
			require.Error(t, err)
			assert.ErrorIs(t, err, tcast.ErrNonFinite)
			var nf *tcast.NonFiniteError
			require.ErrorAs(t, err, &nf)
			assert.Equal(t, src, nf.Input)
			assert.Equal(t, []tcast.NonFiniteTensor{{Name: poisoned, NaN: 3, PosInf: 1, NegInf: 1}}, nf.Tensors)
			assert.Contains(t, err.Error(), poisoned+": 3 NaN, 1 +Inf, 1 -Inf")
			assert.True(t, strings.HasSuffix(err.Error(), "\nno output was written"), err.Error())
			left, err := os.ReadDir(parent)
			require.NoError(t, err)
			assert.Empty(t, left, "nothing published, no temporary file left")

			o.AllowNonFinite = true
			res, err := Convert(src, out, o)
			require.NoError(t, err)
			require.Len(t, res.Warnings, 1)
			assert.Contains(t, res.Warnings[0].String(), poisoned+" (3 NaN, 1 +Inf, 1 -Inf)")
			for _, r := range res.Tensors {
				if r.Name == poisoned {
					assert.Equal(t, [3]int{3, 1, 1}, [3]int{r.SourceNaN, r.SourcePosInf, r.SourceNegInf})
				} else {
					assert.Zero(t, r.SourceNaN+r.SourcePosInf+r.SourceNegInf, r.Name)
				}
			}

			conv, err := load.Open(out)
			require.NoError(t, err)
			defer conv.Close()
			x, shape, err := in.Float32(poisoned)
			require.NoError(t, err)
			got, _, err := conv.Float32(poisoned)
			require.NoError(t, err)
			nans := 0
			for _, g := range got {
				if g != g {
					nans++
				}
			}
			if c.dt != "q4_k" && !c.sparse { // a K-quant block has no NaN: llama.cpp's quantizer makes finite codes of it
				assert.GreaterOrEqual(t, nans, 5, "each NaN or Inf makes at least its own value NaN")
			}
			if c.dt == "fp8e4_tensor" {
				assert.Equal(t, len(got), nans, "one scale for the tensor: every value is NaN")
			}
			if c.rotate == "" && c.layout != "gguf" && !c.sparse {
				v, err := tcast.Cast(x, shape, dt, &tcast.Options{Axis: o.Axis, Mode: o.Mode})
				require.NoError(t, err)
				sameBits(t, v.Values, got, poisoned)
			}
			const norm = "model.layers.0.input_layernorm.weight"
			want, _, err := in.Float32(norm)
			require.NoError(t, err)
			kept, _, err := conv.Float32(norm)
			require.NoError(t, err)
			sameBits(t, want, kept, "kept norm")
			assert.True(t, math.IsNaN(float64(kept[3])) && math.IsInf(float64(kept[9]), 1), "kept as they are")
		})
	}
}

// TestNonFiniteErrorMessage checks the message on two weights.
func TestNonFiniteErrorMessage(t *testing.T) {
	err := error(&tcast.NonFiniteError{Input: "in.safetensors", Tensors: []tcast.NonFiniteTensor{{Name: "a.weight", NaN: 2}, {Name: "b.weight", PosInf: 1, NegInf: 4}}})
	assert.True(t, errors.Is(err, tcast.ErrNonFinite))
	assert.Equal(t, "in.safetensors: 2 weights to cast hold NaN or Inf values, which make every block holding one NaN in most datatypes:\n"+
		"  a.weight: 2 NaN, 0 +Inf, 0 -Inf\n"+
		"  b.weight: 0 NaN, 1 +Inf, 4 -Inf\n"+
		"no output was written", err.Error())
}
