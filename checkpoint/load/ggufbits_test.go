package load_test

import (
	"math/rand/v2"
	"path/filepath"
	"strconv"
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

// TestInspectGGUFMetadata checks that Inspect reports every GGUF key, not
// only the strings: scalars as their number or bool, arrays as [N]type with
// their first elements when they fit, each with its GGUF type.
func TestInspectGGUFMetadata(t *testing.T) {
	tokens := make([]string, 392)
	for i := range tokens {
		tokens[i] = "token-number-" + strconv.Itoa(i)
	}
	var w gguf.Writer
	for _, kv := range []gguf.KV{
		{Key: gguf.KeyArchitecture, Value: gguf.String("llama")},
		{Key: "general.file_type", Value: gguf.Uint32(15)},
		{Key: "llama.block_count", Value: gguf.Uint32(2)},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-5)},
		{Key: "llama.rope.freq_base", Value: gguf.Float32(10000)},
		{Key: "tokenizer.ggml.add_bos_token", Value: gguf.Bool(true)},
		{Key: "tokenizer.ggml.token_type", Value: gguf.Array([]int32{1, 3, 6})},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Array(tokens)},
	} {
		require.NoError(t, w.AddKV(kv.Key, kv.Value))
	}
	require.NoError(t, w.AddTensor("w", gguf.TypeF32, []int{2}, make([]byte, 8)))
	path := filepath.Join(t.TempDir(), "meta.gguf")
	require.NoError(t, w.WriteFile(path))
	ck, err := load.Open(path)
	require.NoError(t, err)
	defer ck.Close()
	rep, err := load.Inspect(ck, load.InspectOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"general.architecture":                   "llama",
		"general.file_type":                      "15",
		"llama.block_count":                      "2",
		"llama.attention.layer_norm_rms_epsilon": "1e-05",
		"llama.rope.freq_base":                   "10000",
		"tokenizer.ggml.add_bos_token":           "true",
		"tokenizer.ggml.token_type":              "[3]int32{1 3 6}",
		// 60 characters hold "[392]string{", two quoted tokens of 16
		// and their separators (47), not a third (64).
		"tokenizer.ggml.tokens": `[392]string{"token-number-0" "token-number-1" ...}`,
	}, withoutAlignment(rep.Metadata))
	assert.Equal(t, map[string]string{
		"general.architecture":                   "string",
		"general.file_type":                      "uint32",
		"llama.block_count":                      "uint32",
		"llama.attention.layer_norm_rms_epsilon": "float32",
		"llama.rope.freq_base":                   "float32",
		"tokenizer.ggml.add_bos_token":           "bool",
		"tokenizer.ggml.token_type":              "[3]int32",
		"tokenizer.ggml.tokens":                  "[392]string",
	}, withoutAlignment(rep.MetadataTypes))
}

// withoutAlignment drops general.alignment, which a GGUF writer may add.
func withoutAlignment(m map[string]string) map[string]string {
	delete(m, "general.alignment")
	return m
}
