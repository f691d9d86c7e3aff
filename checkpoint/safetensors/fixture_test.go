package safetensors

import (
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// irisFixture is a real BF16 checkpoint (see testdata/README.md at the
// repository root): 189 tensors, 649,764 values,
// __metadata__ {"format": "pt", "source": "tfjs"}.
const irisFixture = "../../testdata/iris.bf16.safetensors"

func TestIrisFixture(t *testing.T) {
	for _, mapped := range []bool{true, false} {
		old := mmapHook
		if !mapped {
			mmapHook = func(*os.File, int64) ([]byte, error) { return nil, os.ErrInvalid }
		}
		f, err := Open(irisFixture)
		mmapHook = old
		require.NoError(t, err)
		assert.Equal(t, mapped, f.Mapped())
		assert.Equal(t, map[string]string{"format": "pt", "source": "tfjs"}, f.Metadata())

		ts := f.Tensors()
		require.Len(t, ts, 189)
		var values int64
		for _, ti := range ts {
			assert.Equal(t, BF16, ti.DType, ti.Name)
			assert.NotEmpty(t, ti.Name)
			require.NotEmpty(t, ti.Shape, ti.Name)
			assert.LessOrEqual(t, len(ti.Shape), 4, ti.Name)
			for _, d := range ti.Shape {
				assert.Positive(t, d, ti.Name)
			}
			assert.Equal(t, 2*ti.NumElements(), ti.Size)
			values += ti.NumElements()
		}
		assert.Equal(t, int64(649_764), values)

		// The first tensor in file order, a batch-norm offset of 64
		// channels, and the 3×3 convolution kernel after it (HWIO).
		assert.Equal(t, "conv2d/Conv2D_bn_offset", ts[0].Name)
		assert.Equal(t, []int{64}, ts[0].Shape)
		k, ok := f.Tensor("conv2d/Conv2D_weights")
		require.True(t, ok)
		assert.Equal(t, []int{3, 3, 3, 64}, k.Shape)

		// Trained weights decode to finite, non-constant, moderate values.
		v, err := f.Float32s(k.Name)
		require.NoError(t, err)
		require.Len(t, v, 3*3*3*64)
		lo, hi := v[0], v[0]
		for _, x := range v {
			require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0))
			lo, hi = min(lo, x), max(hi, x)
		}
		assert.Less(t, lo, hi)
		assert.Less(t, max(-lo, hi), float32(100))
		require.NoError(t, f.Close())
	}
}
