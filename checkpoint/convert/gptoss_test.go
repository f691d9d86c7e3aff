package convert

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// TestGptOssExperts converts GptOss-style expert tensors, held as [E, in, out]
// like the transformers module, and checks that the blocks are in [E, out, in]
// orientation with 32-element blocks along in, and that reading back restores
// the source orientation.
func TestGptOssExperts(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	f32 := func(n int) ([]byte, []float32) {
		b, v := make([]byte, 4*n), make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v[i]))
		}
		return b, v
	}
	const e, h, i2 = 2, 64, 96
	gu, guv := f32(e * h * i2)
	bias, _ := f32(e * i2)
	src := filepath.Join(t.TempDir(), "model.safetensors")
	require.NoError(t, safetensors.WriteFile(src, []safetensors.Tensor{
		{Name: "model.layers.0.mlp.experts.gate_up_proj", DType: safetensors.F32, Shape: []int{e, h, i2}, Data: gu},
		{Name: "model.layers.0.mlp.experts.gate_up_proj_bias", DType: safetensors.F32, Shape: []int{e, i2}, Data: bias},
	}, nil))
	out := t.TempDir()
	_, err := Convert(src, out, opts(t, "mxfp4", "gpt-oss"))
	require.NoError(t, err)

	f, err := safetensors.Open(filepath.Join(out, "model.safetensors"))
	require.NoError(t, err)
	defer f.Close()
	blocks, ok := f.Tensor("model.layers.0.mlp.experts.gate_up_proj_blocks")
	require.True(t, ok)
	assert.Equal(t, []int{e, i2, h / 32, 16}, blocks.Shape, "[E, out, in/32, 16]")
	scales, ok := f.Tensor("model.layers.0.mlp.experts.gate_up_proj_scales")
	require.True(t, ok)
	assert.Equal(t, []int{e, i2, h / 32}, scales.Shape)

	// Row o of expert 1 holds column o of the source, cast along in.
	tr, ts := layout.TransposeLast2(guv, []int{e, h, i2})
	virt, err := tcast.Cast(tr, ts, tcast.MustLookup("mxfp4"), &tcast.Options{Form: tcast.Actual, Axis: -1})
	require.NoError(t, err)
	b, err := f.Bytes(blocks.Name)
	require.NoError(t, err)
	packed, err := tcast.Compress(virt)
	require.NoError(t, err)
	assert.Equal(t, packed.Data.Bytes, b, "blocks are the [E, out, in] cast, two codes per byte, low nibble first")
	sb, err := f.Bytes(scales.Name)
	require.NoError(t, err)
	assert.Equal(t, virt.Scale.Bytes, sb)

	c, err := load.Open(out)
	require.NoError(t, err)
	defer c.Close()
	got, shape, err := c.Float32("model.layers.0.mlp.experts.gate_up_proj")
	require.NoError(t, err)
	assert.Equal(t, []int{e, h, i2}, shape, "back in the module's orientation")
	v, err := tcast.Decompress(virt)
	require.NoError(t, err)
	back, _ := layout.TransposeLast2(v, ts)
	sameBits(t, back, got, "experts")
	vr, err := verifyTensors(src, out)
	require.NoError(t, err)
	require.Len(t, vr, 2)
	assert.True(t, vr[0].Converted || vr[1].Converted)
}
