package imatrix

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenStats are the statistics testdata/gen_golden.py writes into both
// golden files, stated here by hand from its table: per matrix the count
// and the mean squares, whose products are the sums of squares; the plain
// sums are i%5 − 2 for value i.
func goldenStats() *Stats {
	entry := func(name string, cols int, counts []int64, means [][]float32) Stat {
		st := Stat{Name: name, Counts: counts}
		for j, row := range means {
			for _, m := range row {
				st.Sum2 = append(st.Sum2, float32(counts[j])*m)
			}
		}
		for i := range cols * len(counts) {
			st.Sum = append(st.Sum, float32(i%5-2))
		}
		return st
	}
	return &Stats{
		Datasets:   []string{"calib-a.txt", "calib-b.txt"},
		ChunkCount: 3,
		ChunkSize:  512,
		// Deliberately not in name order: Write sorts.
		Entries: []Stat{
			entry("output.weight", 4, []int64{1536}, [][]float32{{10, 20, 30, 40}}),
			entry("blk.0.attn_k.weight", 8, []int64{1024}, [][]float32{{0.25, 0.5, 1, 2, 4, 8, 0, 1.5}}),
			entry("blk.0.ffn_down_exps.weight", 4, []int64{1536, 0, 512},
				[][]float32{{1, 2, 3, 4}, {0, 0, 0, 0}, {0.5, 0.25, 0.125, 0}}),
		},
	}
}

// The GGUF golden was written by ggml's own gguf_write_to_file: our bytes
// must be the same, byte for byte (same key order, tensor order, offsets,
// padding).
func TestWriteGoldenGGUF(t *testing.T) {
	want, err := os.ReadFile("testdata/golden.imatrix.gguf")
	require.NoError(t, err)
	var buf bytes.Buffer
	n, err := Write(&buf, goldenStats(), FormatGGUF)
	require.NoError(t, err)
	assert.Equal(t, int64(buf.Len()), n)
	assert.Equal(t, want, buf.Bytes())
}

// The .dat golden was written by the generator's own encoder of the
// legacy layout (ncall 2, 3, 3; values mean × ncall; trailer with the last
// dataset).
func TestWriteGoldenDat(t *testing.T) {
	want, err := os.ReadFile("testdata/golden.imatrix.dat")
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = Write(&buf, goldenStats(), FormatDat)
	require.NoError(t, err)
	assert.Equal(t, want, buf.Bytes())
}

// Reading a written file gives back what was written: the metadata, the
// counts, and importance = sum / count.
func TestWriteRoundTrip(t *testing.T) {
	s := &Stats{
		Datasets:   []string{"a.txt"},
		ChunkCount: 7,
		ChunkSize:  64,
		Entries: []Stat{
			{Name: "blk.1.ffn_up.weight", Sum2: []float32{3, 6, 9}, Counts: []int64{3}},
			{Name: "blk.1.ffn_up_exps.weight", Sum2: []float32{2, 4, 0, 0, 5, 10}, Counts: []int64{2, 0, 5}},
		},
	}
	want := map[string][][]float32{
		"blk.1.ffn_up.weight":      {{1, 2, 3}},
		"blk.1.ffn_up_exps.weight": {{1, 2}, {1, 1}, {1, 2}},
	}
	for _, f := range []Format{FormatGGUF, FormatDat} {
		t.Run(f.String(), func(t *testing.T) {
			var buf bytes.Buffer
			_, err := Write(&buf, s, f)
			require.NoError(t, err)
			m, err := Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "rt."+f.String())
			require.NoError(t, err)
			assert.Equal(t, f, m.Format)
			assert.Equal(t, []string{"a.txt"}, m.Datasets)
			assert.Equal(t, int64(7), m.ChunkCount)
			for name, w := range want {
				experts := len(w)
				if f == FormatDat {
					experts = 1 // .dat keeps one vector; split by the caller
				}
				got, err := m.Importance(name, len(w[0])*len(w)/experts, experts)
				require.NoError(t, err, name)
				var flat []float32
				for _, g := range got {
					flat = append(flat, g...)
				}
				var wantFlat []float32
				for _, r := range w {
					wantFlat = append(wantFlat, r...)
				}
				assert.Equal(t, wantFlat, flat, name)
			}
			if f == FormatGGUF {
				assert.Equal(t, int64(64), m.ChunkSize)
				e, err := m.Entry("blk.1.ffn_up_exps.weight")
				require.NoError(t, err)
				assert.Equal(t, []int64{2, 0, 5}, e.Counts)
			} else {
				// ncall = ⌈max count / 64⌉ = 1.
				e, err := m.Entry("blk.1.ffn_up_exps.weight")
				require.NoError(t, err)
				assert.Equal(t, []int64{1}, e.Counts)
			}
		})
	}
}

// Imatrix.Stats turns a parsed file back into statistics that write a file
// with the same importance, in either format (llama-imatrix's conversion
// between them).
func TestStatsFromParsed(t *testing.T) {
	for _, src := range []string{"testdata/golden.imatrix.gguf", "testdata/golden.imatrix.dat"} {
		m, err := Read(src)
		require.NoError(t, err)
		for _, f := range []Format{FormatGGUF, FormatDat} {
			s := m.Stats()
			if s.ChunkSize == 0 {
				s.ChunkSize = 512 // a .dat file does not record it
			}
			var buf bytes.Buffer
			_, err := Write(&buf, s, f)
			require.NoError(t, err, "%s → %v", src, f)
			back, err := Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "back")
			require.NoError(t, err)
			assert.Equal(t, m.Datasets[len(m.Datasets)-1], back.Datasets[len(back.Datasets)-1])
			assert.Equal(t, m.ChunkCount, back.ChunkCount)
			for _, g := range goldenImportance {
				experts := g.experts
				if m.Format == FormatDat || f == FormatDat {
					experts = 1
				}
				got, err := back.Importance(g.name, g.cols*g.experts/experts, experts)
				require.NoError(t, err, "%s → %v: %s", src, f, g.name)
				var flat, want []float32
				for _, r := range got {
					flat = append(flat, r...)
				}
				for _, r := range g.want {
					want = append(want, r...)
				}
				assert.InDeltaSlice(t, want, flat, 1e-6, "%s → %v: %s", src, f, g.name)
			}
		}
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "im.gguf")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
	require.NoError(t, WriteFile(p, goldenStats(), FormatGGUF))
	m, err := Read(p)
	require.NoError(t, err)
	assert.Len(t, m.Entries, 3)

	// A failed write leaves the old file.
	bad := goldenStats()
	bad.Entries[0].Counts[0] = -1
	err = WriteFile(p, bad, FormatGGUF)
	require.Error(t, err)
	_, err = Read(p)
	require.NoError(t, err)

	err = WriteFile(filepath.Join(dir, "missing", "im.gguf"), goldenStats(), FormatGGUF)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "im.gguf")
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrors(t *testing.T) {
	var out bytes.Buffer
	_, err := Write(failWriter{}, goldenStats(), FormatGGUF)
	require.ErrorContains(t, err, "disk full")

	one := func(mod func(*Stat)) func(*Stats) {
		return func(s *Stats) { mod(&s.Entries[0]) }
	}
	tests := []struct {
		name  string
		f     Format
		mod   func(*Stats)
		entry string
		want  string
	}{
		{"nil", FormatGGUF, nil, "", "nil *Stats"},
		{"format", Format(9), func(*Stats) {}, "", "unknown format Format(9)"},
		{"negative chunk count", FormatGGUF, func(s *Stats) { s.ChunkCount = -1 }, "", "chunk count -1 outside 0..4294967295"},
		{"chunk size beyond int32 in dat", FormatDat, func(s *Stats) { s.ChunkSize = 1 << 31 }, "", "chunk size 2147483648 outside 0..2147483647"},
		{"empty name", FormatGGUF, one(func(e *Stat) { e.Name = "" }), "", "entry 0 has an empty name"},
		{"long gguf name", FormatGGUF, one(func(e *Stat) { e.Name = strings.Repeat("n", 56) }), strings.Repeat("n", 56), "name of 56 bytes: want at most 55"},
		{"long dat name", FormatDat, one(func(e *Stat) { e.Name = strings.Repeat("n", 64) }), strings.Repeat("n", 64), "want at most 63"},
		{"NUL", FormatGGUF, one(func(e *Stat) { e.Name = "a\x00b" }), "a\x00b", "NUL"},
		{"duplicate", FormatGGUF, func(s *Stats) { s.Entries[2].Name = s.Entries[0].Name }, "output.weight", "given twice"},
		{"no counts", FormatGGUF, one(func(e *Stat) { e.Counts = nil }), "output.weight", "no counts"},
		{"no sums", FormatGGUF, one(func(e *Stat) { e.Sum2 = nil }), "output.weight", "0 sums do not divide into 1 matrices"},
		{"sums do not divide", FormatGGUF, func(s *Stats) { s.Entries[2].Sum2 = s.Entries[2].Sum2[:11] }, "blk.0.ffn_down_exps.weight", "11 sums do not divide into 3 matrices"},
		{"plain sums length", FormatGGUF, one(func(e *Stat) { e.Sum = e.Sum[:3] }), "output.weight", "3 plain sums, 4 sums of squares"},
		{"negative count", FormatGGUF, one(func(e *Stat) { e.Counts[0] = -2 }), "output.weight", "count -2 of matrix 0"},
		{"huge count", FormatGGUF, one(func(e *Stat) { e.Counts[0] = 1 << 53 }), "output.weight", "outside 0..2^53"},
		{"NaN sum2", FormatGGUF, one(func(e *Stat) { e.Sum2[1] = float32(math.NaN()) }), "output.weight", "column 1's sum of squares is NaN"},
		// Entries[2] is blk.0.ffn_down_exps.weight: 3
		// matrices of 4 columns; its sum 9 is column 1 of matrix 2.
		{"NaN expert sum2", FormatGGUF, func(s *Stats) { s.Entries[2].Sum2[9] = float32(math.NaN()) }, "blk.0.ffn_down_exps.weight",
			"column 1 of matrix 2's sum of squares is NaN"},
		{"negative sum2", FormatDat, one(func(e *Stat) { e.Sum2[2] = -1 }), "output.weight", "column 2's sum of squares is -1"},
		{"Inf sum", FormatGGUF, one(func(e *Stat) { e.Sum[0] = float32(math.Inf(1)) }), "output.weight", "column 0's plain sum is +Inf"},
		{"dat without chunk size", FormatDat, func(s *Stats) { s.ChunkSize = 0 }, "", "needs a chunk size > 0"},
		{"dat without data", FormatDat, func(s *Stats) {
			for i := range s.Entries {
				for j := range s.Entries[i].Counts {
					s.Entries[i].Counts[j] = 0
				}
			}
		}, "", "none of the 3 entries has data"},
		{"dat ncall beyond int32", FormatDat, func(s *Stats) { s.ChunkSize = 1; s.Entries[0].Counts[0] = 1 << 40 }, "output.weight", "does not fit an int32"},
		{"dat dataset with NUL", FormatDat, func(s *Stats) { s.Datasets = []string{"a\x00"} }, "", "cannot be stored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *Stats
			if tt.mod != nil {
				s = goldenStats()
				tt.mod(s)
			}
			out.Reset()
			n, err := Write(&out, s, tt.f)
			var se *StatsError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.entry, se.Entry)
			assert.Contains(t, err.Error(), tt.want)
			assert.False(t, strings.HasPrefix(err.Error(), "imatrix: "), "no package name: %v", err)
			assert.Zero(t, n)
			assert.Zero(t, out.Len(), "nothing written on error")
		})
	}
}

// A .dat file leaves out entries without data, as llama-imatrix does; the
// GGUF file keeps them (its reader gives them importance 1).
func TestWriteDatSkipsEmpty(t *testing.T) {
	s := goldenStats()
	s.Entries[0].Counts[0] = 0 // output.weight
	var buf bytes.Buffer
	_, err := Write(&buf, s, FormatDat)
	require.NoError(t, err)
	m, err := Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "x.dat")
	require.NoError(t, err)
	assert.Equal(t, []string{"blk.0.attn_k.weight", "blk.0.ffn_down_exps.weight"}, m.Names())

	buf.Reset()
	_, err = Write(&buf, s, FormatGGUF)
	require.NoError(t, err)
	m, err = Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "x.gguf")
	require.NoError(t, err)
	got, err := m.Importance("output.weight", 4, 1)
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 1, 1, 1}}, got)
}
