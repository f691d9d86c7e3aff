package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmodel"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// imatrixSynth are the synth flags of the checkpoint that
// testdata/llama_imatrix.npz was computed for (by testdata/llama_imatrix.py,
// torch, on testdata/calibration.txt in chunks of 128 tokens). The hidden
// size 768 makes every matrix's row length (768, and 2048 for ffn_down) a
// multiple of 256, so that each takes the K-quants.
var imatrixSynth = []string{"-arch", "llama", "-layers", "2", "-hidden", "768", "-vocab", "512", "-dtype", "f32", "-seed", "13"}

// Figures of the committed importance matrix, from the script's run: 4448
// tokens of calibration text make 34 whole chunks of 128.
const (
	imatrixChunks    = 34
	imatrixChunkSize = 128
)

// llamaImatrix reads testdata/llama_imatrix.npz and turns it into a GGUF
// importance matrix with imatrix.Write, as a user of the script would, and
// reads that back.
func llamaImatrix(t *testing.T) *imatrix.Imatrix {
	t.Helper()
	s, err := imatrix.ReadNPZ("testdata/llama_imatrix.npz")
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "llama.imatrix.gguf")
	require.NoError(t, imatrix.WriteFile(p, s, imatrix.FormatGGUF))
	m, err := imatrix.Read(p)
	require.NoError(t, err)
	return m
}

// synthMatrices returns the GGUF name and row-major shape of every weight
// matrix inside the layers of the synth checkpoint at src.
func synthMatrices(t testing.TB, src string) (map[string][]int, map[string]string) {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(filepath.Dir(src), "config.json"))
	require.NoError(t, err)
	model, err := ggufmodel.Detect(cfg)
	require.NoError(t, err)
	f, err := safetensors.Open(src)
	require.NoError(t, err)
	defer f.Close()
	shapes, hf := map[string][]int{}, map[string]string{}
	for _, ti := range f.Tensors() {
		m, err := model.Tensor(ti.Name)
		require.NoError(t, err)
		if strings.HasPrefix(m.Name, "blk.") && len(ti.Shape) == 2 {
			shapes[m.Name] = ti.Shape
			hf[m.Name] = ti.Name
		}
	}
	return shapes, hf
}

// imatrixCase is the synth llama of imatrixSynth and its importance matrix,
// opened for the tests that convert it with and without -imatrix.
type imatrixCase struct {
	m      *imatrix.Imatrix
	dir    string
	src    string
	in     *load.Checkpoint
	names  []string          // the GGUF names of the layers' matrices, sorted
	shapes map[string][]int  // by GGUF name
	hf     map[string]string // the Hugging Face name of each
}

// newImatrixCase writes the synth llama into a temporary directory and
// opens it.
func newImatrixCase(t *testing.T) *imatrixCase {
	t.Helper()
	c := &imatrixCase{m: llamaImatrix(t), dir: t.TempDir()}
	c.src, _ = synthTo(t, c.dir, imatrixSynth...)
	c.shapes, c.hf = synthMatrices(t, c.src)
	var err error
	c.in, err = load.Open(c.src)
	require.NoError(t, err)
	t.Cleanup(func() { c.in.Close() })
	for n := range c.shapes {
		c.names = append(c.names, n)
	}
	sort.Strings(c.names)
	return c
}

// convert converts the synth to dt in the tcast layout (one worker, JSON
// report) into the case's directory under name, with the extra flags, and
// opens the output.
func (c *imatrixCase) convert(t *testing.T, name, dt string, extra ...string) (*load.Checkpoint, *convert.Result) {
	t.Helper()
	out := filepath.Join(c.dir, name)
	args := append([]string{"convert", c.src, "-layout", "tcast", "-dtype", dt, "-o", out, "-json", "-workers", "1"}, extra...)
	code, stdout, stderr := tcast(args...)
	require.Equal(t, 0, code, stderr)
	var res convert.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	conv, err := load.Open(out)
	require.NoError(t, err)
	t.Cleanup(func() { conv.Close() })
	return conv, &res
}

// The importance matrix has an entry for every matrix of the layers (and
// only those: llama-imatrix leaves out the output head by default and
// token_embd is a row lookup), of the matrix's row length, with the counts
// and metadata of the calibration run; weights that read the same input
// have the same sums.
func TestLlamaImatrixGolden(t *testing.T) {
	m := llamaImatrix(t)
	assert.Equal(t, []string{"calibration.txt"}, m.Datasets)
	assert.Equal(t, int64(imatrixChunks), m.ChunkCount)
	assert.Equal(t, int64(imatrixChunkSize), m.ChunkSize)

	src, _ := synthTo(t, t.TempDir(), imatrixSynth...)
	shapes, _ := synthMatrices(t, src)
	require.Len(t, shapes, 2*7)
	assert.Len(t, m.Entries, len(shapes))
	for name, shape := range shapes {
		imp, err := m.Importance(name, shape[1], 1)
		require.NoError(t, err, name)
		e, err := m.Entry(name)
		require.NoError(t, err)
		assert.Equal(t, []int64{imatrixChunks * imatrixChunkSize}, e.Counts, name)
		for c, v := range imp[0] {
			require.Greater(t, v, float32(0), "%s column %d", name, c)
		}
	}
	for l := range 2 {
		p := "blk." + strconv.Itoa(l) + "."
		q, _ := m.Entry(p + "attn_q.weight")
		for _, same := range []string{"attn_k.weight", "attn_v.weight"} {
			e, _ := m.Entry(p + same)
			assert.Equal(t, q.Importance, e.Importance, p+same+" reads attn_q's input")
		}
		g, _ := m.Entry(p + "ffn_gate.weight")
		u, _ := m.Entry(p + "ffn_up.weight")
		assert.Equal(t, g.Importance, u.Importance, p+"ffn_up reads ffn_gate's input")
	}
}
