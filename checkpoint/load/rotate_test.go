package load_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// withMetadata copies checkpoint directory dir with __metadata__ key k set
// to v.
func withMetadata(t *testing.T, dir, k, v string) string {
	t.Helper()
	out := t.TempDir()
	ts, meta := readSafetensors(t, filepath.Join(dir, "model.safetensors"))
	meta[k] = v
	require.NoError(t, safetensors.WriteFile(filepath.Join(out, "model.safetensors"), ts, meta))
	return out
}

// TestRotatedWeights: a weight converted with a rotation is listed with it,
// Tensor gives the cast as stored (rotated), Float32 the weight in its own
// orientation; a broken record is an error naming the key.
func TestRotatedWeights(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	writeSource(t, src)
	out := t.TempDir()
	l, err := layout.Get("tcast")
	require.NoError(t, err)
	_, err = convert.Convert(src, out, convert.Options{DataType: tcast.MustLookup("mxfp4"), Layout: l, Force: true,
		Rotate: rotate.Rotation{Kind: rotate.Hadamard}})
	require.NoError(t, err)

	s, err := load.Open(src)
	require.NoError(t, err)
	defer s.Close()
	c, err := load.Open(out)
	require.NoError(t, err)
	defer c.Close()
	info, err := c.Info(weight)
	require.NoError(t, err)
	assert.Equal(t, "hadamard:32", info.Rotation)
	x, _, err := s.Float32(weight)
	require.NoError(t, err)
	got, _, err := c.Float32(weight)
	require.NoError(t, err)
	e := tcast.Compare(x, got)
	require.NotNil(t, e.SQNR)
	assert.Greater(t, *e.SQNR, 10.0, "the weight in its own orientation")
	ct, err := c.Tensor(weight)
	require.NoError(t, err)
	stored, err := tcast.Decompress(ct)
	require.NoError(t, err)
	e = tcast.Compare(x, stored)
	assert.Less(t, *e.SQNR, 3.0, "the stored cast is of the rotated weight")

	for _, bad := range []struct{ value, msg string }{
		{`[1]`, "metadata tcast.rotated"},
		{`{"` + weight + `": {"rotation": "hadamard", "axis": 1}}`, "names no block"},
		{`{"` + weight + `": {"rotation": "givens:4", "axis": 1}}`, "invalid rotation"},
	} {
		_, err := load.Open(withMetadata(t, out, layout.KeyRotated, bad.value))
		require.Error(t, err, bad.value)
		assert.ErrorContains(t, err, bad.msg)
	}
	broken, err := load.Open(withMetadata(t, out, layout.KeyRotated, `{"`+weight+`": {"rotation": "hadamard:256", "axis": 1}}`))
	require.NoError(t, err)
	defer broken.Close()
	_, _, err = broken.Float32(weight)
	var le *rotate.LengthError
	assert.ErrorAs(t, err, &le)
	assert.ErrorContains(t, err, weight)
}

// readSafetensors returns the tensors (their bytes copied) and the
// metadata of the safetensors file at path, for tests that write it again
// with changes.
func readSafetensors(t *testing.T, path string) ([]safetensors.Tensor, map[string]string) {
	t.Helper()
	f, err := safetensors.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var ts []safetensors.Tensor
	for _, ti := range f.Tensors() {
		b, err := f.Bytes(ti.Name)
		require.NoError(t, err)
		ts = append(ts, safetensors.Tensor{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, Data: append([]byte(nil), b...)})
	}
	return ts, f.Metadata()
}
