package imatrix

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

func parse(t *testing.T, b []byte) (*Imatrix, error) {
	t.Helper()
	return Parse(bytes.NewReader(b), int64(len(b)), "im")
}

// handGGUF is a GGUF imatrix with a dense entry (with its optional
// in_sum) and a two-expert entry whose second expert was never reached.
func handGGUF() []byte {
	return ggufFile(imatrixKVs(), []ggufTensor{
		// llama-imatrix writes entries sorted by name, in_sum2 then counts then in_sum.
		f32t("blk.0.attn_q.weight.in_sum2", []uint64{4}, 2, 8, 0, 6),
		f32t("blk.0.attn_q.weight.counts", []uint64{1}, 2),
		f32t("blk.0.attn_q.weight.in_sum", []uint64{4}, -1, 2, 0, 3),
		f32t("blk.0.ffn_down_exps.weight.in_sum2", []uint64{3, 2}, 3, 6, 9, 5, 5, 5),
		f32t("blk.0.ffn_down_exps.weight.counts", []uint64{1, 2}, 3, 0),
	})
}

func TestGGUFHand(t *testing.T) {
	m, err := parse(t, handGGUF())
	require.NoError(t, err)
	assert.Equal(t, FormatGGUF, m.Format)
	assert.Equal(t, []string{"wiki.train.raw"}, m.Datasets)
	assert.Equal(t, int64(10), m.ChunkCount)
	assert.Equal(t, int64(512), m.ChunkSize)
	assert.Equal(t, []string{"blk.0.attn_q.weight", "blk.0.ffn_down_exps.weight"}, m.Names())

	// Dense: sums of squares {2, 8, 0, 6} over 2 rows → means {1, 4, 0, 3}.
	q, err := m.Importance("blk.0.attn_q.weight", 4, 1)
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 4, 0, 3}}, q)
	e, err := m.Entry("blk.0.attn_q.weight")
	require.NoError(t, err)
	assert.Equal(t, []int64{2}, e.Counts)
	assert.Equal(t, 1, e.Matrices)

	// Experts: {3, 6, 9} over 3 rows → {1, 2, 3}; expert 1 has count 0 → all 1.
	x, err := m.Importance("blk.0.ffn_down_exps.weight", 3, 2)
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 2, 3}, {1, 1, 1}}, x)
	e, err = m.Entry("blk.0.ffn_down_exps.weight")
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 0}, e.Counts)
	assert.Equal(t, 2, e.Matrices)
}

func TestGGUFCountsRound(t *testing.T) {
	// Counts are floats rounded half away from zero (2.5 → 3, 1.4 → 1),
	// as llama.cpp's lround; untyped extra tensors are ignored; the
	// general.type key may be absent.
	b := ggufFile(imatrixKVs()[1:], []ggufTensor{
		f32t("a.weight.counts", []uint64{1}, 2.5),
		f32t("a.weight.in_sum2", []uint64{2}, 3, 6),
		f32t("b.weight.in_sum2", []uint64{1}, 7),
		f32t("b.weight.counts", []uint64{1}, 1.4),
		f32t("unrelated", []uint64{1}, 1),
	})
	m, err := parse(t, b)
	require.NoError(t, err)
	a, err := m.Importance("a.weight", 2, 1)
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 2}}, a)
	bb, err := m.Importance("b.weight", 1, 1)
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{7}}, bb)
}

func TestGGUFErrors(t *testing.T) {
	sum2 := f32t("w.in_sum2", []uint64{2}, 1, 2)
	counts := f32t("w.counts", []uint64{1}, 1)
	kvs := imatrixKVs()
	without := func(key string) []ggufKV {
		var out []ggufKV
		for _, kv := range kvs {
			if kv.key != key {
				out = append(out, kv)
			}
		}
		return out
	}
	f16 := ggufTensor{name: "w.in_sum2", dims: []uint64{2}, typ: 1, raw: []byte{0, 0x3c, 0, 0x40}}
	cases := []struct {
		name   string
		in     []byte
		entry  string
		key    string
		reason string
	}{
		{"missing counts", ggufFile(kvs, []ggufTensor{sum2}), "w", "", "w.counts is missing"},
		{"missing in_sum2", ggufFile(kvs, []ggufTensor{counts}), "w", "", "w.in_sum2 is missing"},
		{"F16 sums", ggufFile(kvs, []ggufTensor{f16, counts}), "w", "", "is F16, want F32"},
		{"sums do not divide", ggufFile(kvs, []ggufTensor{f32t("w.in_sum2", []uint64{3}, 1, 2, 3),
			f32t("w.counts", []uint64{1, 2}, 1, 1)}), "w", "", "3 sums do not divide into 2 matrices"},
		{"dims disagree", ggufFile(kvs, []ggufTensor{f32t("w.in_sum2", []uint64{2, 2}, 1, 2, 3, 4),
			f32t("w.counts", []uint64{1, 4}, 1, 1, 1, 1)}), "w", "", "want [1 4]"},
		{"counts not a column", ggufFile(kvs, []ggufTensor{sum2, f32t("w.counts", []uint64{2}, 1, 1)}),
			"w", "", "want [1 2]"},
		{"negative sum", ggufFile(kvs, []ggufTensor{f32t("w.in_sum2", []uint64{2}, 1, -2), counts}),
			"w", "", "sum 1 of matrix 0 is -2"},
		{"NaN sum", ggufFile(kvs, []ggufTensor{f32t("w.in_sum2", []uint64{2}, float32(math.NaN()), 1), counts}),
			"w", "", "sum 0 of matrix 0 is NaN"},
		{"Inf count", ggufFile(kvs, []ggufTensor{sum2, f32t("w.counts", []uint64{1}, float32(math.Inf(1)))}),
			"w", "", "count 0 is +Inf"},
		{"negative count", ggufFile(kvs, []ggufTensor{sum2, f32t("w.counts", []uint64{1}, -1)}),
			"w", "", "count 0 is -1"},
		{"in_sum size", ggufFile(kvs, []ggufTensor{sum2, counts, f32t("w.in_sum", []uint64{1}, 1)}),
			"w", "", "w.in_sum has 1 elements, w.in_sum2 has 2"},
		{"in_sum NaN", ggufFile(kvs, []ggufTensor{sum2, counts, f32t("w.in_sum", []uint64{2}, 1, float32(math.NaN()))}),
			"w", "", "sum 1 is NaN"},
		{"empty entry name", ggufFile(kvs, []ggufTensor{f32t(".in_sum2", []uint64{1}, 1)}), "", "", "empty entry name"},
		{"no entries", ggufFile(kvs, []ggufTensor{f32t("x", []uint64{1}, 1)}), "", "", "no importance entries"},
		{"a model", ggufFile(append(without("general.type"), kvStr("general.type", "model")), []ggufTensor{sum2, counts}),
			"", "general.type", "not an importance matrix"},
		{"no datasets", ggufFile(without("imatrix.datasets"), []ggufTensor{sum2, counts}), "", "imatrix.datasets", "missing"},
		{"datasets not strings", ggufFile(append(without("imatrix.datasets"), kvU32("imatrix.datasets", 1)),
			[]ggufTensor{sum2, counts}), "", "imatrix.datasets", "want an array of strings"},
		{"no chunk count", ggufFile(without("imatrix.chunk_count"), []ggufTensor{sum2, counts}), "", "imatrix.chunk_count", "missing"},
		{"chunk size int32", ggufFile(append(without("imatrix.chunk_size"), kvI32("imatrix.chunk_size", 512)),
			[]ggufTensor{sum2, counts}), "", "imatrix.chunk_size", "want a uint32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.in)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "im", fe.Path)
			assert.Equal(t, c.entry, fe.Tensor)
			assert.Equal(t, c.key, fe.Key)
			assert.Contains(t, fe.Error(), c.reason)
		})
	}
}

func TestGGUFBrokenContainer(t *testing.T) {
	full := handGGUF()
	_, err := parse(t, full[:len(full)-30])
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	var ge *gguf.FormatError
	require.ErrorAs(t, err, &ge, "the GGUF reader's error is kept")
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.ErrorIs(t, err, ErrTruncated, "the container's kind")
	assert.NotErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "not a valid GGUF file")
	assert.True(t, strings.HasPrefix(err.Error(), "imatrix: im: "), err.Error())
}

// handDat is a .dat imatrix: entry "blk.0.attn_k.weight" with ncall 4 and
// values {4, 8, 2} (importance {1, 2, 0.5}), entry "blk.0.attn_q.weight"
// with ncall 0 (values kept: {3, 5}), then the trailer: chunk count 7 and
// dataset "calib.txt".
func handDat() le {
	return le(nil).i32(2).
		datEntry("blk.0.attn_q.weight", 0, 3, 5).
		datEntry("blk.0.attn_k.weight", 4, 4, 8, 2)
}

func TestDatHand(t *testing.T) {
	b := handDat().i32(7).i32(9).raw("calib.txt")
	// 4 + (4+19+4+4+8) + (4+19+4+4+12) + 4 + 4 + 9 bytes.
	require.Len(t, b, 4+39+43+17)
	m, err := parse(t, b)
	require.NoError(t, err)
	assert.Equal(t, FormatDat, m.Format)
	assert.Equal(t, []string{"calib.txt"}, m.Datasets)
	assert.Equal(t, int64(7), m.ChunkCount)
	assert.Equal(t, int64(0), m.ChunkSize)
	assert.Equal(t, []string{"blk.0.attn_k.weight", "blk.0.attn_q.weight"}, m.Names(), "sorted by name")
	k, err := m.Importance("blk.0.attn_k.weight", 3, 1)
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 2, 0.5}}, k)
	q, err := m.Importance("blk.0.attn_q.weight", 2, 1)
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{3, 5}}, q)
	e, _ := m.Entry("blk.0.attn_k.weight")
	assert.Equal(t, []int64{4}, e.Counts)

	// The trailer is optional, and so is its dataset part.
	m, err = parse(t, handDat())
	require.NoError(t, err)
	assert.Empty(t, m.Datasets)
	assert.Zero(t, m.ChunkCount)
	m, err = parse(t, handDat().i32(5))
	require.NoError(t, err)
	assert.Equal(t, int64(5), m.ChunkCount)
	m, err = parse(t, handDat().i32(5).i32(0))
	require.NoError(t, err)
	assert.Empty(t, m.Datasets)
}

func TestDatExperts(t *testing.T) {
	// A .dat entry of a 3-D weight is one vector of cols × experts values,
	// split by the caller: 2 experts of 2 columns, ncall 2.
	m, err := parse(t, le(nil).i32(1).datEntry("blk.1.ffn_up_exps.weight", 2, 2, 4, 6, 8))
	require.NoError(t, err)
	x, err := m.Importance("blk.1.ffn_up_exps.weight", 2, 2)
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 2}, {3, 4}}, x)
	_, err = m.Importance("blk.1.ffn_up_exps.weight", 4, 2)
	var se *SizeError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, SizeError{Path: "im", Name: "blk.1.ffn_up_exps.weight", Values: 4, Matrices: 1, Cols: 4, Experts: 2}, *se)
}

func TestDatErrors(t *testing.T) {
	one := le(nil).i32(1)
	long := "blk.0.attn_q.weight.0123456789012345678901234567890123456789wxyz" // 64 bytes
	require.Len(t, long, 64)
	cases := []struct {
		name   string
		in     []byte
		offset int64
		entry  string
		reason string
		eof    bool
	}{
		{"short", []byte{1, 0}, 0, "", "too short", true},
		{"zero entries", le(nil).i32(0).i32(0).i32(0).i32(0).i32(0), 0, "", "entry count 0 < 1", false},
		{"too many entries", le(nil).i32(2).datEntry("a", 1, 1), 0, "", "entry count 2 cannot fit", false},
		{"empty name", one.i32(0).i32(1).i32(1).f32(1).i32(0), 4, "", "name length 0 outside 1..63", false},
		{"long name", one.datEntry(long, 1, 1), 4, "", "name length 64 outside", false},
		{"name beyond end", one.i32(40).raw("abc").i32(1).i32(1).f32(1), 4, "", "name of 40 bytes, 15 left", true},
		{"NUL in name", one.datEntry("a\x00b", 1, 1), 9, "", "holds a NUL byte", false},
		{"negative ncall", one.datEntry("w", -1, 1), 9, "w", "ncall -1 < 0", false},
		{"zero nval", one.i32(1).raw("w").i32(1).i32(0).i32(0), 13, "w", "nval 0 < 1", false},
		{"nval beyond end", one.i32(1).raw("w").i32(1).i32(3).f32s(1, 2), 13, "w", "nval 3 needs 12 bytes, 8 left", true},
		{"NaN value", one.datEntry("w", 1, 1, float32(math.NaN())), 21, "w", "value 1 is NaN", false},
		{"negative value", one.datEntry("w", 1, -1), 17, "w", "value 0 is -1", false},
		{"Inf value", one.datEntry("w", 1, float32(math.Inf(1))), 17, "w", "value 0 is +Inf", false},
		{"duplicate", le(nil).i32(2).datEntry("w", 1, 1).datEntry("w", 1, 1), 21, "w", "duplicate entry (first at offset 4)", false},
		{"trailer cut", one.datEntry("w", 1, 1).raw("xy"), 21, "", "trailing chunk count: need 4 bytes, 2 left", true},
		{"negative chunk count", one.datEntry("w", 1, 1).i32(-3), 21, "", "trailing chunk count -3 < 0", false},
		{"dataset length cut", one.datEntry("w", 1, 1).i32(1).raw("ab"), 25, "", "dataset name length: need 4 bytes", true},
		{"negative dataset length", one.datEntry("w", 1, 1).i32(1).i32(-1), 25, "", "dataset name length -1 < 0", false},
		{"dataset beyond end", one.datEntry("w", 1, 1).i32(1).i32(5).raw("abc"), 25, "", "dataset name of 5 bytes, 3 left", true},
		{"bytes after dataset", one.datEntry("w", 1, 1).i32(1).i32(1).raw("abc"), 25, "", "2 bytes follow the dataset name", false},
		{"NUL in dataset", one.datEntry("w", 1, 1).i32(1).i32(2).raw("a\x00"), 30, "", "dataset name holds a NUL byte", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.in)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "im", fe.Path)
			assert.Equal(t, c.offset, fe.Offset)
			assert.Equal(t, c.entry, fe.Tensor)
			assert.Contains(t, fe.Reason, c.reason)
			assert.Equal(t, c.eof, errors.Is(err, io.ErrUnexpectedEOF), "%v", err)
			var ne *NotImatrixError
			if !errors.As(err, &ne) {
				assert.Equal(t, c.eof, errors.Is(err, ErrTruncated), "%v", err)
				assert.Equal(t, !c.eof, errors.Is(err, ErrInvalid), "%v", err)
			}
			assert.Equal(t, "imatrix", fe.Format)
		})
	}
}

func TestLookup(t *testing.T) {
	m, err := parse(t, handDat())
	require.NoError(t, err)
	_, err = m.Importance("blk.0.attn_q.weigth", 2, 1)
	require.ErrorIs(t, err, ErrNoEntry)
	var lerr *LookupError
	require.ErrorAs(t, err, &lerr)
	assert.Equal(t, "blk.0.attn_q.weigth", lerr.Name)
	assert.Equal(t, []string{"blk.0.attn_q.weight", "blk.0.attn_k.weight"}, lerr.Closest)
	assert.Equal(t, `im: no importance entry for "blk.0.attn_q.weigth" `+
		`(closest: "blk.0.attn_q.weight", "blk.0.attn_k.weight")`, err.Error())

	_, err = m.Entry("model.layers.0.self_attn.q_proj.weight")
	require.ErrorAs(t, err, &lerr)
	assert.Empty(t, lerr.Closest)
	assert.Contains(t, err.Error(), "named as GGUF tensors")

	for _, c := range []struct{ cols, experts int }{{3, 1}, {2, 2}, {0, 1}, {-2, 1}} {
		_, err = m.Importance("blk.0.attn_q.weight", c.cols, c.experts)
		var se *SizeError
		require.ErrorAs(t, err, &se, "%+v", c)
		assert.Contains(t, se.Error(), `entry "blk.0.attn_q.weight" has 2 values in 1 matrices`)
	}
	// experts < 1 counts as 1
	q, err := m.Importance("blk.0.attn_q.weight", 2, 0)
	require.NoError(t, err)
	assert.Len(t, q, 1)

	// A GGUF entry with 2 matrices does not serve 1 expert of 6 columns.
	g, err := parse(t, handGGUF())
	require.NoError(t, err)
	_, err = g.Importance("blk.0.ffn_down_exps.weight", 6, 1)
	var se *SizeError
	require.ErrorAs(t, err, &se)
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "imatrix.dat")
	require.NoError(t, os.WriteFile(p, handDat(), 0o644))
	m, err := Read(p)
	require.NoError(t, err)
	assert.Equal(t, p, m.Path)
	assert.Len(t, m.Entries, 2)

	_, err = Read(filepath.Join(dir, "missing.gguf"))
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestFormatString(t *testing.T) {
	assert.Equal(t, "gguf", FormatGGUF.String())
	assert.Equal(t, "dat", FormatDat.String())
	assert.Equal(t, "Format(9)", Format(9).String())
}
