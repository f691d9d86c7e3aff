package report

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// TestRotationByHand converts rows of 32 fives (layer 0) and a weight of
// zeros (layer 1) to MXFP4 with hadamard:32. Without rotation each
// block's E8M0 scale is 2^(⌊log2 5⌋ − 2) = 1 and 5, halfway between E2M1's
// 4 and 6, rounds to even, 4: SQNR 10·log10(5²/1²) = 13.98 dB. Rotated, a
// row is (5√32, 0, …, 0), whose scale is 2^(⌊log2 28.28⌋ − 2) = 4; 28.28/4
// saturates to 6, 24 is stored, and the matrix being orthonormal, the
// row's squared error is (5√32 − 24)² against a signal of 32·5²: 16.39 dB,
// a gain of 2.41 dB. The zeros have no SQNR either way. A copy of the
// checkpoint whose record lacks the SQNRs (as checkpoints written before
// they were recorded) reads, and says so.
func TestRotationByHand(t *testing.T) {
	dir := t.TempDir()
	five := make([]byte, 4*2*32)
	for i := 0; i < len(five); i += 4 {
		binary.LittleEndian.PutUint32(five[i:], math.Float32bits(5))
	}
	src := filepath.Join(dir, "src.safetensors")
	require.NoError(t, safetensors.WriteFile(src, []safetensors.Tensor{
		{Name: "model.layers.0.a.weight", DType: safetensors.F32, Shape: []int{2, 32}, Data: five},
		{Name: "model.layers.1.z.weight", DType: safetensors.F32, Shape: []int{2, 32}, Data: make([]byte, len(five))},
	}, nil))
	conv := filepath.Join(dir, "rot.safetensors")
	_, err := convert.Convert(src, conv, convert.Options{DataType: tcast.MustLookup("mxfp4"), Workers: 1,
		Rotate: rotate.Rotation{Kind: rotate.Hadamard}})
	require.NoError(t, err)
	old := filepath.Join(dir, "old.safetensors")
	writeWithoutUnrotated(t, conv, old)

	without := 10 * math.Log10(25)
	with := 10 * math.Log10(32*25/math.Pow(5*math.Sqrt(32)-24, 2))
	r, err := Build(src, []string{conv, old}, Options{})
	require.NoError(t, err)
	rec := r.Recipes[0]
	require.Len(t, rec.Tensors, 2)
	a, z := rec.Tensors[0], rec.Tensors[1]
	assert.Equal(t, "hadamard:32", a.Rotation)
	assert.True(t, a.HasUnrotated)
	require.NotNil(t, a.SQNR)
	require.NotNil(t, a.SQNRUnrotated)
	assert.InDelta(t, with, *a.SQNR, 1e-4) // float32 roundings of the transforms
	assert.InDelta(t, without, *a.SQNRUnrotated, 1e-12)
	g, ok := a.Gain()
	assert.True(t, ok)
	assert.InDelta(t, with-without, g, 1e-4)
	assert.Equal(t, "hadamard:32", z.Rotation)
	assert.True(t, z.HasUnrotated)
	assert.Nil(t, z.SQNR)
	assert.Nil(t, z.SQNRUnrotated)
	_, ok = z.Gain()
	assert.False(t, ok)
	// The recipe's means: only a has an SQNR.
	assert.True(t, rec.HasUnrotated)
	assert.InDelta(t, with, *rec.SQNR, 1e-4)
	assert.InDelta(t, without, *rec.SQNRUnrotated, 1e-12)

	// The old checkpoint: the same cast, no SQNR without rotation.
	ro := r.Recipes[1]
	assert.Equal(t, "hadamard:32", ro.Rotation)
	assert.False(t, ro.HasUnrotated)
	assert.Nil(t, ro.SQNRUnrotated)
	assert.Equal(t, a.SQNR, ro.Tensors[0].SQNR)
	assert.False(t, ro.Tensors[0].HasUnrotated)
	assert.Nil(t, ro.Tensors[0].SQNRUnrotated)
	_, ok = ro.Tensors[0].Unrotated()
	assert.False(t, ok)

	// The page: the recipes table, the worst tensors, the rotation table,
	// the per-layer chart (a dashed line without rotation: a point in
	// layer 0 only).
	var b bytes.Buffer
	require.NoError(t, r.WriteHTML(&b))
	page := b.String()
	assert.Contains(t, page, "<td>16.39</td><td>13.98</td><td>+2.41</td></tr>")                               // recipes
	assert.Contains(t, page, "<td>16.39</td><td>not recorded</td><td>-</td></tr>")                            // recipes, old
	assert.Contains(t, page, "<td class=\"l\">[2×32]</td><td>4.25</td><td>16.39</td><td>13.98 (+2.41)</td>")  // worst
	assert.Contains(t, page, "<td class=\"l\">[2×32]</td><td>13.98</td><td>16.39</td><td>+2.41</td></tr>")    // rotation
	assert.Contains(t, page, "<td class=\"l\">[2×32]</td><td>exact</td><td>exact</td><td>-</td></tr>")        // zeros
	assert.Contains(t, page, "<td class=\"l\">[2×32]</td><td>not recorded</td><td>16.39</td><td>-</td></tr>") // old
	assert.Contains(t, page, "rot without rotation")
	assert.NotContains(t, page, "old without rotation")
	assert.Contains(t, page, "<title>layer 0: 13.979 without rotation</title>")
	assert.Contains(t, page, "shows “not recorded”")

	// verify -compare's table: a column without rotation per rotated recipe.
	var text bytes.Buffer
	require.NoError(t, r.Compare().WriteText(&text))
	lines := bytes.Split(bytes.TrimSuffix(text.Bytes(), []byte("\n")), []byte("\n"))
	require.Len(t, lines, 3+2+1)
	cells := func(line []byte) []string {
		var out []string
		for _, c := range bytes.Split(line, []byte("|")) {
			out = append(out, string(bytes.TrimSpace(c)))
		}
		return out
	}
	assert.Equal(t, []string{"tensor", "datatype", "bits/value", "SQNR dB", "unrotated dB", "datatype", "bits/value", "SQNR dB", "unrotated dB", ""}, cells(lines[2]))
	assert.Equal(t, []string{"model.layers.0.a.weight", "mxfp4e2 hadamard:32", "4.250", "16.39", "13.98", "mxfp4e2 hadamard:32", "4.250", "16.39", "?", ""}, cells(lines[3]))
	assert.Equal(t, []string{"model.layers.1.z.weight", "mxfp4e2 hadamard:32", "4.250", "exact", "exact", "mxfp4e2 hadamard:32", "4.250", "exact", "?", ""}, cells(lines[4]))
	assert.Equal(t, []string{"mean by elements, converted tensors", "mxfp4e2", "4.250", "16.39", "13.98", "mxfp4e2", "4.250", "16.39", "?", ""}, cells(lines[5]))
}

// writeWithoutUnrotated copies the checkpoint at from to to, its rotation
// record written as before the SQNRs without rotation were recorded.
func writeWithoutUnrotated(t *testing.T, from, to string) {
	t.Helper()
	f, err := safetensors.Open(from)
	require.NoError(t, err)
	defer f.Close()
	meta := f.Metadata()
	var infos map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(meta[layout.KeyRotated]), &infos))
	for _, info := range infos {
		require.Contains(t, info, "sqnr_unrotated_db")
		delete(info, "sqnr_unrotated_db")
	}
	b, err := json.Marshal(infos)
	require.NoError(t, err)
	meta[layout.KeyRotated] = string(b)
	var ts []safetensors.Tensor
	for _, ti := range f.Tensors() {
		data, err := f.Bytes(ti.Name)
		require.NoError(t, err)
		ts = append(ts, safetensors.Tensor{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, Data: data})
	}
	require.NoError(t, safetensors.WriteFile(to, ts, meta))
}
