package convert

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// TestVerifyObserve sees every float tensor verify compares, in the
// source's order, with both sets of values, whose measures are the
// results'.
func TestVerifyObserve(t *testing.T) {
	out := filepath.Join(t.TempDir(), "conv")
	_, err := Convert(iris, out, Options{DataType: tcast.MustLookup("mxfp4")})
	require.NoError(t, err)
	var seen []string
	res, err := VerifyWith(iris, out, VerifyOptions{Observe: func(r *VerifyResult, want, got []float32) {
		seen = append(seen, r.Name)
		require.Len(t, want, int(measure.Elements(r.Shape)), r.Name)
		require.Len(t, got, len(want), r.Name)
		e := measure.Compare(want, got)
		assert.Equal(t, r.SQNR, e.SQNR, r.Name)
		assert.Equal(t, r.MaxAbsErr, e.MaxAbs, r.Name)
	}})
	require.NoError(t, err)
	var names []string
	for _, r := range res {
		names = append(names, r.Name)
	}
	assert.Equal(t, names, seen, "every tensor of iris is a float tensor")
}
