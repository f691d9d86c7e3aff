package report

import (
	"bytes"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// TestWeightedSQNR checks the importance-weighted SQNR of a report against
// sums done by hand on two tiny MXFP4 weights. Every row of 32 has the
// maximum 6, so its E8M0 scale is 2^(⌊log2 6⌋ − 2) = 1 and the values round
// to the E2M1 grid 0, 0.5, 1, 1.5, 2, 3, 4, 6: 1.2 → 1, 2.4 → 2, 5.5 → 6.
func TestWeightedSQNR(t *testing.T) {
	dir := t.TempDir()
	const up, down = "model.layers.0.mlp.up_proj.weight", "model.layers.0.mlp.down_proj.weight"
	row := func(vs ...float32) []float32 { r := make([]float32, 32); copy(r, vs); return r }
	upV := append(row(6, 1.2, 2.4), row(6, 5.5)...)
	downV := append(row(6, 1.2), row(6, 1.2)...)
	enc := func(vs []float32) []byte {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return b
	}
	src := filepath.Join(dir, "src.safetensors")
	require.NoError(t, safetensors.WriteFile(src, []safetensors.Tensor{
		{Name: up, DType: safetensors.F32, Shape: []int{2, 32}, Data: enc(upV)},
		{Name: down, DType: safetensors.F32, Shape: []int{2, 32}, Data: enc(downV)},
	}, nil))
	conv := filepath.Join(dir, "mxfp4.safetensors")
	_, err := convert.Convert(src, conv, convert.Options{DataType: tcast.MustLookup("mxfp4"), Workers: 1})
	require.NoError(t, err)
	// Importance (Σx² / count, count 1) 1 for every column of up_proj but
	// 4 for column 1 and 9 for column 2; no entry for down_proj.
	imp := row(1, 4, 9)
	for i := 3; i < 32; i++ {
		imp[i] = 1
	}
	imPath := filepath.Join(dir, "imp.gguf")
	require.NoError(t, imatrix.WriteFile(imPath, &imatrix.Stats{ChunkCount: 1, ChunkSize: 1,
		Entries: []imatrix.Stat{{Name: up, Sum2: imp, Counts: []int64{1}}}}, imatrix.FormatGGUF))
	im, err := imatrix.Read(imPath)
	require.NoError(t, err)

	r, err := Build(src, []string{conv}, Options{Imatrix: im})
	require.NoError(t, err)
	rec := r.Recipes[0]
	require.Len(t, rec.Tensors, 2)

	f := func(v float32) float64 { return float64(v) }
	e1, e2, e3 := f(1.2)-1, f(2.4)-2, 0.5
	upSignal := 36 + f(1.2)*f(1.2) + f(2.4)*f(2.4) + 36 + 5.5*5.5
	upNoise := e1*e1 + e2*e2 + e3*e3
	upW := 10 * math.Log10((36+4*f(1.2)*f(1.2)+9*f(2.4)*f(2.4)+36+4*5.5*5.5)/(4*e1*e1+9*e2*e2+4*e3*e3))
	upDB := 10 * math.Log10(upSignal/upNoise)
	downDB := 10 * math.Log10((36+f(1.2)*f(1.2))/(e1*e1))

	byName := map[string]Tensor{}
	for _, tt := range rec.Tensors {
		byName[tt.Name] = tt
	}
	u, d := byName[up], byName[down]
	require.NotNil(t, u.SQNR)
	assert.InDelta(t, upDB, *u.SQNR, 1e-9)
	require.NotNil(t, u.WeightedSQNR)
	assert.InDelta(t, upW, *u.WeightedSQNR, 1e-9)
	require.NotNil(t, d.SQNR)
	assert.InDelta(t, downDB, *d.SQNR, 1e-9)
	assert.Nil(t, d.WeightedSQNR, "no entry for down_proj")
	// Means by elements: the two weights have as many; only up_proj is
	// weighted.
	require.NotNil(t, rec.SQNR)
	assert.InDelta(t, (upDB+downDB)/2, *rec.SQNR, 1e-9)
	require.NotNil(t, rec.WeightedSQNR)
	assert.InDelta(t, upW, *rec.WeightedSQNR, 1e-9)

	var page bytes.Buffer
	require.NoError(t, r.WriteHTML(&page))
	assert.Contains(t, page.String(), "<th>weighted SQNR dB</th>")
	assert.Contains(t, page.String(), "<td>"+num(upW, 2)+"</td>")
	assert.Contains(t, page.String(), "importance in imp.gguf")
	c := r.Compare()
	assert.Equal(t, imPath, c.Imatrix)
	for _, tt := range c.Tensors {
		if tt.Name == up {
			assert.InDelta(t, upW, *tt.Recipes[0].WeightedSQNR, 1e-9)
		} else {
			assert.Nil(t, tt.Recipes[0].WeightedSQNR)
		}
	}
}
