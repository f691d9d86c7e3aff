package verify_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
	"github.com/tensorcast-go/tensorcast/internal/shape"
	"github.com/tensorcast-go/tensorcast/tcast"
)

const iris = "../../testdata/iris.bf16.safetensors"

// convertIris converts the iris fixture to MXFP4 in the tcast layout.
func convertIris(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "conv")
	_, err := convert.Convert(iris, out, convert.Options{DataType: tcast.MustLookup("mxfp4")})
	require.NoError(t, err)
	return out
}

// TestObserve sees every float tensor verify compares, in the source's
// order, with both sets of values, whose measures are the results'.
func TestObserve(t *testing.T) {
	out := convertIris(t)
	var seen []string
	rep, err := verify.Checkpoints(iris, out, verify.Options{Observe: func(r *verify.Result, want, got []float32) {
		seen = append(seen, r.Name)
		n, _, _ := shape.Elements(r.Shape)
		require.Len(t, want, n, r.Name)
		require.Len(t, got, len(want), r.Name)
		e := tcast.Compare(want, got)
		require.Equal(t, r.SQNR == nil, e.SQNR == nil, r.Name)
		if e.SQNR != nil {
			assert.InDelta(t, *e.SQNR, *r.SQNR, 1e-9, r.Name)
		}
		assert.Equal(t, r.MaxAbsErr, e.MaxAbs, r.Name)
	}})
	require.NoError(t, err)
	var names []string
	for _, r := range rep.Tensors {
		names = append(names, r.Name)
	}
	assert.Equal(t, names, seen, "every tensor of iris is a float tensor")
	assert.False(t, rep.Swapped)
	assert.Nil(t, rep.Unmatched)
}
