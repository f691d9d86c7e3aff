package load_test

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
)

// TestInspectGGUFBitsPerValue checks the bits per value Inspect and the
// tensors' datatypes report for every ggml block type against the format's
// definition: bytes per block × 8 / elements per block, with the block
// sizes of ggml's block structs (Q4_K: d, dmin, 12 bytes of 6-bit scales
// and mins, 128 bytes of nibbles = 144 bytes per 256; Q8_K: float32 d, 256
// int8, 16 int16 sums = 292 bytes per 256; ...).
func TestInspectGGUFBitsPerValue(t *testing.T) {
	cases := []struct {
		typ         gguf.Type
		name        string
		bytes, size int
	}{
		{gguf.TypeQ8_0, "q8_0", 2 + 32, 32},
		{gguf.TypeQ4_0, "q4_0", 2 + 16, 32},
		{gguf.TypeQ4_1, "q4_1", 2 + 2 + 16, 32},
		{gguf.TypeQ5_0, "q5_0", 2 + 4 + 16, 32},
		{gguf.TypeQ5_1, "q5_1", 2 + 2 + 4 + 16, 32},
		{gguf.TypeIQ4_NL, "iq4_nl", 2 + 16, 32},
		{gguf.TypeMXFP4, "mxfp4", 1 + 16, 32},
		{gguf.TypeQ2_K, "q2_k", 16 + 64 + 2 + 2, 256},
		{gguf.TypeQ3_K, "q3_k", 32 + 64 + 12 + 2, 256},
		{gguf.TypeQ4_K, "q4_k", 2 + 2 + 12 + 128, 256},
		{gguf.TypeQ5_K, "q5_k", 2 + 2 + 12 + 32 + 128, 256},
		{gguf.TypeQ6_K, "q6_k", 128 + 64 + 16 + 2, 256},
		{gguf.TypeQ8_K, "q8_k", 4 + 256 + 2*16, 256},
		{gguf.TypeIQ4_XS, "iq4_xs", 2 + 2 + 4 + 128, 256},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var w gguf.Writer
	require.NoError(t, w.AddKV(gguf.KeyArchitecture, gguf.String("tcast")))
	for _, c := range cases {
		x := make([]float32, 512)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		size, ok := c.typ.Size(int64(len(x)))
		require.True(t, ok, c.name)
		require.Equal(t, int64(len(x)/c.size*c.bytes), size, "%s: block bytes", c.name)
		b := make([]byte, size)
		require.NoError(t, gguf.Quantize(c.typ, b, x, nil), c.name)
		require.NoError(t, w.AddTensor(c.name+".weight", c.typ, []int{2, 256}, b), c.name)
	}
	path := filepath.Join(t.TempDir(), "bits.gguf")
	require.NoError(t, w.WriteFile(path))
	ck, err := load.Open(path)
	require.NoError(t, err)
	defer ck.Close()
	rep, err := load.Inspect(ck, load.InspectOptions{})
	require.NoError(t, err)
	got := map[string]float64{}
	for _, cw := range rep.Converted {
		got[cw.Name] = cw.BitsPerValue
	}
	for _, c := range cases {
		want := float64(8*c.bytes) / float64(c.size)
		assert.Equal(t, want, got[c.name+".weight"], "%s: Inspect's bits per value", c.name)
		info, err := ck.Info(c.name + ".weight")
		require.NoError(t, err, c.name)
		require.NotNil(t, info.DataType, c.name)
		assert.Equal(t, want, info.DataType.BitsPerValue(), "%s: the datatype's bits per value", c.name)
	}
}
