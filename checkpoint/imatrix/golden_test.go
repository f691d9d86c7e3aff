package imatrix

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The golden files are written by testdata/gen_golden.py: the GGUF one by
// ggml's own GGUF writer as llama-imatrix saves a matrix, the .dat one in
// the legacy layout, both from the same statistics (chunk size 512):
//
//	blk.0.attn_k.weight         count 1024,          sums 1024 × {0.25 0.5 1 2 4 8 0 1.5}
//	blk.0.ffn_down_exps.weight  counts {1536 0 512}, sums 1536 × {1 2 3 4}, {0 0 0 0}, 512 × {0.5 0.25 0.125 0}
//	output.weight               count 1536,          sums 1536 × {10 20 30 40}
//
// The importance is sum / count, and 1 for the expert with count 0. The
// .dat file stores (sum / count) × ncall with ncall = ⌈max count / 512⌉
// (2, 3 and 3), which the reader divides back out.
var goldenImportance = []struct {
	name          string
	cols, experts int
	want          [][]float32
}{
	{"blk.0.attn_k.weight", 8, 1, [][]float32{{0.25, 0.5, 1, 2, 4, 8, 0, 1.5}}},
	{"blk.0.ffn_down_exps.weight", 4, 3, [][]float32{{1, 2, 3, 4}, {1, 1, 1, 1}, {0.5, 0.25, 0.125, 0}}},
	{"output.weight", 4, 1, [][]float32{{10, 20, 30, 40}}},
}

func TestGoldenGGUF(t *testing.T) {
	m, err := Read("testdata/golden.imatrix.gguf")
	require.NoError(t, err)
	assert.Equal(t, FormatGGUF, m.Format)
	assert.Equal(t, []string{"calib-a.txt", "calib-b.txt"}, m.Datasets)
	assert.Equal(t, int64(3), m.ChunkCount)
	assert.Equal(t, int64(512), m.ChunkSize)
	assert.Len(t, m.Entries, 3)
	for _, g := range goldenImportance {
		got, err := m.Importance(g.name, g.cols, g.experts)
		require.NoError(t, err, g.name)
		assert.Equal(t, g.want, got, g.name)
	}
	e, err := m.Entry("blk.0.ffn_down_exps.weight")
	require.NoError(t, err)
	assert.Equal(t, 3, e.Matrices)
	assert.Equal(t, []int64{1536, 0, 512}, e.Counts)
}

func TestGoldenDat(t *testing.T) {
	m, err := Read("testdata/golden.imatrix.dat")
	require.NoError(t, err)
	assert.Equal(t, FormatDat, m.Format)
	assert.Equal(t, []string{"calib-b.txt"}, m.Datasets)
	assert.Equal(t, int64(3), m.ChunkCount)
	assert.Zero(t, m.ChunkSize)
	assert.Len(t, m.Entries, 3)
	for _, g := range goldenImportance {
		got, err := m.Importance(g.name, g.cols, g.experts)
		require.NoError(t, err, g.name)
		assert.Equal(t, g.want, got, g.name)
	}
	ncall := map[string]int64{"blk.0.attn_k.weight": 2, "blk.0.ffn_down_exps.weight": 3, "output.weight": 3}
	for name, n := range ncall {
		e, err := m.Entry(name)
		require.NoError(t, err)
		assert.Equal(t, []int64{n}, e.Counts, name)
		assert.Equal(t, 1, e.Matrices, name)
	}
}

func TestMetadata(t *testing.T) {
	m, err := Read("testdata/golden.imatrix.gguf")
	require.NoError(t, err)
	kvs := m.Metadata()
	require.Len(t, kvs, 4)
	got := map[string]string{}
	for _, kv := range kvs {
		got[kv.Key] = kv.Value.String()
	}
	assert.Equal(t, map[string]string{
		"quantize.imatrix.file":          `string("golden.imatrix.gguf")`,
		"quantize.imatrix.dataset":       `string("calib-a.txt")`,
		"quantize.imatrix.entries_count": `uint32(3)`,
		"quantize.imatrix.chunks_count":  `uint32(3)`,
	}, got)

	// Without datasets or chunk count those keys are left out.
	d, err := parse(t, handDat())
	require.NoError(t, err)
	assert.Len(t, d.Metadata(), 2)
}
