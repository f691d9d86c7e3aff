package imatrix

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	llamaOut    = flag.String("llama-out", "", "write the importance matrices of TestLlamaCppLoadsOurs into `DIR` for testdata/llama_load.cpp")
	llamaLoaded = flag.String("llama-loaded", "", "check the JSON `FILE` that testdata/llama_load.cpp printed for -llama-out's files")
)

// mixedStats exercises what a real matrix holds beyond goldenStats: an
// expert weight with partial data, an entry with no data at all, a count
// that a float32 holds only rounded (2^24 + 1), long names, odd sizes and
// values that are not short binary fractions.
func mixedStats() *Stats {
	s := &Stats{Datasets: []string{"a.txt", "b/c.txt", "d.txt"}, ChunkCount: 17, ChunkSize: 96}
	v := float32(0.1)
	next := func() float32 { v = v*1.7 + 0.3; v -= float32(math.Floor(float64(v/50))) * 50; return v }
	add := func(name string, cols int, counts ...int64) {
		st := Stat{Name: name, Counts: counts}
		for range cols * len(counts) {
			st.Sum2 = append(st.Sum2, next()*float32(max(counts[0], 1)))
		}
		s.Entries = append(s.Entries, st)
	}
	add("blk.11.ffn_down_exps.weight", 48, 2000, 0, 1632, 96)
	add("blk.3.attn_q.weight", 96, 1632)
	add("blk.3.ffn_up.weight", 33, 1632)
	add("blk.4.never_reached.weight", 16, 0)
	add("blk.40.attn_output.weight", 64, 1<<24+1)
	add("blk.0.a_name_that_is_exactly_fifty_five_bytes_long.weight"[:55], 8, 1)
	return s
}

// llamaCases are the files written for llama.cpp's loader.
func llamaCases() map[string]struct {
	s *Stats
	f Format
} {
	return map[string]struct {
		s *Stats
		f Format
	}{
		"golden.gguf": {goldenStats(), FormatGGUF},
		"golden.dat":  {goldenStats(), FormatDat},
		"mixed.gguf":  {mixedStats(), FormatGGUF},
		"mixed.dat":   {mixedStats(), FormatDat},
	}
}

// llamaLoad is one file as testdata/llama_load.cpp prints what llama.cpp's
// loader read from it.
type llamaLoad struct {
	File        string   `json:"file"`
	OK          bool     `json:"ok"`
	IsLegacy    bool     `json:"is_legacy"`
	HasMetadata bool     `json:"has_metadata"`
	ChunkCount  int64    `json:"chunk_count"`
	ChunkSize   int64    `json:"chunk_size"`
	Datasets    []string `json:"datasets"`
	Entries     map[string]struct {
		Sums   []float64 `json:"sums"`
		Counts []int64   `json:"counts"`
	} `json:"entries"`
}

// quantizeImportance is the importance llama-quantize derives from what the
// loader read (its load_imatrix): GGUF sums divided by their matrix's count
// (1 where the count is 0); .dat values divided by ncall (as they are when
// ncall is 0).
func quantizeImportance(l *llamaLoad, name string) []float64 {
	e := l.Entries[name]
	out := make([]float64, len(e.Sums))
	if l.IsLegacy {
		for i, s := range e.Sums {
			out[i] = s
			if e.Counts[0] > 0 {
				out[i] = float64(float32(s) / float32(e.Counts[0]))
			}
		}
		return out
	}
	cols := len(e.Sums) / len(e.Counts)
	for i, s := range e.Sums {
		c := float32(e.Counts[i/cols])
		out[i] = 1
		if c > 0 {
			out[i] = float64(float32(s) / c)
		}
	}
	return out
}

// Files we write are read by llama.cpp's own loader (the function
// llama-quantize calls) as what was written: every entry with its sums of
// squares and counts (GGUF) or its mean squares × ncall (.dat), the
// datasets, chunk count and size, the metadata llama-quantize insists on;
// and the importance llama-quantize derives from them is the mean square
// sum / count, and what our reader gives.
//
// Without flags the files are only written and read back by our reader.
// .ci/run writes them with -llama-out DIR, runs testdata/llama_load.cpp
// (built against node-llama-cpp's libllama-common.so) on them, and checks
// its output with -llama-loaded FILE.
func TestLlamaCppLoadsOurs(t *testing.T) {
	dir := *llamaOut
	if dir == "" {
		dir = t.TempDir()
	}
	ours := map[string]*Imatrix{}
	for name, c := range llamaCases() {
		p := filepath.Join(dir, name)
		if *llamaLoaded == "" {
			require.NoError(t, WriteFile(p, c.s, c.f), name)
		}
		m, err := Read(p)
		require.NoError(t, err, name)
		ours[name] = m
	}
	if *llamaLoaded == "" {
		return
	}
	b, err := os.ReadFile(*llamaLoaded)
	require.NoError(t, err)
	var loaded struct {
		Files []llamaLoad `json:"files"`
	}
	require.NoError(t, json.Unmarshal(b, &loaded))
	require.Len(t, loaded.Files, len(ours))
	for i := range loaded.Files {
		l := &loaded.Files[i]
		name := filepath.Base(l.File)
		c, ok := llamaCases()[name]
		require.True(t, ok, "llama.cpp read an unknown file %s", l.File)
		t.Run(name, func(t *testing.T) {
			require.True(t, l.OK, "llama.cpp's loader failed")
			s := c.s
			if c.f == FormatGGUF {
				assert.False(t, l.IsLegacy)
				assert.True(t, l.HasMetadata, "llama-quantize refuses a GGUF imatrix without its metadata")
				assert.Equal(t, s.Datasets, l.Datasets)
				assert.Equal(t, s.ChunkCount, l.ChunkCount)
				assert.Equal(t, s.ChunkSize, l.ChunkSize)
				assert.Len(t, l.Entries, len(s.Entries))
			} else {
				assert.True(t, l.IsLegacy)
				assert.Equal(t, s.Datasets[len(s.Datasets)-1:], l.Datasets)
				assert.Equal(t, s.ChunkCount, l.ChunkCount)
			}
			for _, st := range s.Entries {
				e, present := l.Entries[st.Name]
				if c.f == FormatDat && slicesMax(st.Counts) == 0 {
					assert.False(t, present, "%s: a .dat file leaves out an entry without data", st.Name)
					continue
				}
				require.True(t, present, st.Name)
				cols := len(st.Sum2) / len(st.Counts)
				if c.f == FormatGGUF {
					for j, v := range st.Sum2 {
						require.Equal(t, v, float32(e.Sums[j]), "%s sum %d", st.Name, j)
					}
					for j, n := range st.Counts {
						assert.Equal(t, int64(float32(n)), e.Counts[j], "%s count %d (stored as float32)", st.Name, j)
					}
				} else {
					assert.Equal(t, []int64{(slicesMax(st.Counts) + s.ChunkSize - 1) / s.ChunkSize}, e.Counts, st.Name)
				}
				// llama-quantize's importance is the mean square (1 for a matrix
				// without data), within float32 rounding, and our reader's.
				imp := quantizeImportance(l, st.Name)
				mine, err := ours[name].Entry(st.Name)
				require.NoError(t, err)
				for j, v := range st.Sum2 {
					want := 1.0
					if n := st.Counts[j/cols]; n > 0 {
						want = float64(v) / float64(n)
					}
					assert.InDelta(t, want, imp[j], 1e-6*math.Abs(want), "%s importance %d", st.Name, j)
					assert.Equal(t, float32(imp[j]), mine.Importance[j], "%s: our reader, importance %d", st.Name, j)
				}
			}
		})
	}
}
