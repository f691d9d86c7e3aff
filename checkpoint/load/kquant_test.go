package load_test

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// TestOpenGGUFBlockTypes opens a GGUF file holding a tensor of every block
// type the gguf layout writes with the gguf package's quantizers and checks
// that each is a converted weight of the layout's datatype, whose Float32
// and tcast.Tensor give exactly the floats of ggml's decoders.
func TestOpenGGUFBlockTypes(t *testing.T) {
	types := map[gguf.Type]string{
		gguf.TypeQ4_1: "q4_1", gguf.TypeQ5_0: "q5_0", gguf.TypeQ5_1: "q5_1", gguf.TypeIQ4_NL: "iq4_nl",
		gguf.TypeQ2_K: "q2_k", gguf.TypeQ3_K: "q3_k", gguf.TypeQ4_K: "q4_k", gguf.TypeQ5_K: "q5_k",
		gguf.TypeQ6_K: "q6_k", gguf.TypeQ8_K: "q8_k", gguf.TypeIQ4_XS: "iq4_xs",
	}
	rng := rand.New(rand.NewPCG(41, 42))
	var w gguf.Writer
	require.NoError(t, w.AddKV(gguf.KeyArchitecture, gguf.String("tcast")))
	want := map[string][]float32{}
	for typ, name := range types {
		shape := []int{2, 512}
		x := make([]float32, 1024)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		size, _ := typ.Size(1024)
		b := make([]byte, size)
		require.NoError(t, gguf.Quantize(typ, b, x, nil))
		v := make([]float32, 1024)
		require.NoError(t, gguf.Dequantize(typ, v, b))
		want[name+".weight"] = v
		require.NoError(t, w.AddTensor(name+".weight", typ, shape, b))
	}
	path := filepath.Join(t.TempDir(), "k.gguf")
	require.NoError(t, w.WriteFile(path))

	c, err := load.Open(path)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, "gguf", c.Layout())
	for name, v := range want {
		info, err := c.Info(name)
		require.NoError(t, err, name)
		require.NotNil(t, info.DataType, name)
		assert.Equal(t, name[:len(name)-len(".weight")], info.DataType.Name())
		got, shape, err := c.Float32(name)
		require.NoError(t, err, name)
		assert.Equal(t, []int{2, 512}, shape)
		assert.Equal(t, bitsOf32(v), bitsOf32(got), name)
		ct, err := c.Tensor(name)
		require.NoError(t, err, name)
		d, err := tcast.Decompress(ct)
		require.NoError(t, err, name)
		assert.Equal(t, bitsOf32(v), bitsOf32(d), name)
	}
}

func bitsOf32(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}
