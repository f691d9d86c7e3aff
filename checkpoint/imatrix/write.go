package imatrix

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

// Stats holds the statistics an importance matrix is made of, as
// llama-imatrix accumulates them before saving: per weight, the sums of
// squared activations per input column and how many activation rows they
// add up. Write stores them in either format.
type Stats struct {
	// Datasets lists the calibration files (imatrix.datasets; the .dat
	// trailer keeps only the last one). It may be empty.
	Datasets []string
	// ChunkCount is the number of chunks the statistics cover.
	ChunkCount int64
	// ChunkSize is the number of tokens per chunk. The .dat format needs
	// it (> 0) to turn counts into its ncall.
	ChunkSize int64
	// Entries holds one entry per weight tensor, in any order: Write sorts
	// them by name, as llama-imatrix does.
	Entries []Stat
}

// Stat is the statistics of one weight tensor.
type Stat struct {
	// Name is the weight's GGUF tensor name ("blk.0.attn_q.weight").
	Name string
	// Sum2 holds Σx² per input column, matrix after matrix: cols values
	// for each of the len(Counts) matrices (one for a dense weight, one
	// per expert for a 3-D expert weight).
	Sum2 []float32
	// Counts holds, per matrix, the number of activation rows summed.
	Counts []int64
	// Sum optionally holds Σx per input column, laid out as Sum2; nil
	// leaves it out. Only the GGUF format stores it (as W.in_sum).
	Sum []float32
}

// Limits of what Write accepts.
const (
	// maxGGUFName is the longest entry name in a GGUF imatrix: the tensor
	// name with its longest suffix must fit ggml's 63 bytes.
	maxGGUFName = gguf.MaxNameLen - len(suffixSum2)
)

// StatsError reports statistics that Write cannot store.
type StatsError struct {
	// Entry is the tensor name of the entry at fault, or "" for the
	// Stats as a whole.
	Entry string
	// Reason describes the problem.
	Reason string
}

// Error returns a message such as `entry "blk.0.attn_q.weight": 10 sums
// do not divide into 3 matrices`.
func (e *StatsError) Error() string {
	if e.Entry == "" {
		return e.Reason
	}
	return fmt.Sprintf("entry %q: %s", e.Entry, e.Reason)
}

// Write writes s to w in format f (FormatGGUF or FormatDat) and returns
// the number of bytes written.
//
// The GGUF file is laid out as llama-imatrix saves one through ggml's
// writer: general.type = "imatrix", imatrix.datasets, imatrix.chunk_count
// and imatrix.chunk_size (uint32), then for each entry in name order the
// F32 tensors W.in_sum2 [cols, matrices], W.counts [1, matrices] (with
// trailing dimensions of 1 left out, as ggml records them; counts
// stored as float32, exact up to 2^24, rounded above as llama-imatrix
// rounds them) and, when Sum is set, W.in_sum.
//
// The .dat file is the legacy layout llama-imatrix writes with
// --output-format dat: entries with every count zero are left out (it
// keeps nothing for them); each other entry stores ncall = ⌈max count /
// ChunkSize⌉ and, per value, (sum / count) × ncall computed in float32
// (1 × ncall for a matrix whose count is 0); the trailer holds ChunkCount
// and the last dataset name.
//
// Statistics a file cannot hold are a *StatsError: names empty, holding
// NUL, longer than 55 bytes in GGUF (63 in .dat) or given twice; no
// matrices, sums that do not divide into them, negative counts or counts
// of 2^53 and more, non-finite or
// negative sums of squares, non-finite plain sums, a Sum of another length,
// chunk figures outside uint32 (int32 in .dat); for .dat, ChunkSize ≤ 0 or
// no entry with data.
func Write(w io.Writer, s *Stats, f Format) (int64, error) {
	b, err := encode(s, f)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(b)
	if err != nil {
		return int64(n), fmt.Errorf("writing the importance matrix: %w", err)
	}
	return int64(n), nil
}

// WriteFile writes s to path in format f atomically: the file appears
// complete under path or not at all (an existing file is replaced).
func WriteFile(path string, s *Stats, f Format) error {
	b, err := encode(s, f)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, b); err != nil {
		return fmt.Errorf("writing the importance matrix %s: %w", path, err)
	}
	return nil
}

// encode checks s and returns the file's bytes.
func encode(s *Stats, f Format) ([]byte, error) {
	if s == nil {
		return nil, &StatsError{Reason: "no statistics (nil *Stats)"}
	}
	maxName, maxChunk := maxGGUFName, int64(math.MaxUint32)
	switch f {
	case FormatGGUF:
	case FormatDat:
		maxName, maxChunk = gguf.MaxNameLen, math.MaxInt32
	default:
		return nil, &StatsError{Reason: fmt.Sprintf("unknown format %v", f)}
	}
	for _, c := range []struct {
		what string
		v    int64
	}{{"chunk count", s.ChunkCount}, {"chunk size", s.ChunkSize}} {
		if c.v < 0 || c.v > maxChunk {
			return nil, &StatsError{Reason: fmt.Sprintf("%s %d outside 0..%d (the %v format)", c.what, c.v, maxChunk, f)}
		}
	}
	order, err := checkEntries(s.Entries, maxName)
	if err != nil {
		return nil, err
	}
	if f == FormatGGUF {
		return encodeGGUF(s, order)
	}
	return encodeDat(s, order)
}

// checkEntries checks every entry and returns their indices in name order.
func checkEntries(es []Stat, maxName int) ([]int, error) {
	order := make([]int, len(es))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return es[order[a]].Name < es[order[b]].Name })
	for k, i := range order {
		e := &es[i]
		fail := func(format string, args ...any) error {
			return &StatsError{Entry: e.Name, Reason: fmt.Sprintf(format, args...)}
		}
		switch {
		case e.Name == "":
			return nil, &StatsError{Reason: fmt.Sprintf("entry %d has an empty name", i)}
		case len(e.Name) > maxName:
			return nil, fail("name of %d bytes: want at most %d", len(e.Name), maxName)
		case strings.IndexByte(e.Name, 0) >= 0:
			return nil, fail("name holds a NUL byte")
		case k > 0 && es[order[k-1]].Name == e.Name:
			return nil, fail("given twice")
		case len(e.Counts) == 0:
			return nil, fail("no counts (want one per matrix)")
		case len(e.Sum2) == 0 || len(e.Sum2)%len(e.Counts) != 0:
			return nil, fail("%d sums do not divide into %d matrices", len(e.Sum2), len(e.Counts))
		case e.Sum != nil && len(e.Sum) != len(e.Sum2):
			return nil, fail("%d plain sums, %d sums of squares", len(e.Sum), len(e.Sum2))
		}
		for j, c := range e.Counts {
			if c < 0 || c >= maxCount {
				return nil, fail("count %d of matrix %d outside 0..2^53", c, j)
			}
		}
		// column names element j of a matrix-after-matrix array of sums.
		cols := len(e.Sum2) / len(e.Counts)
		column := func(j int) string {
			if len(e.Counts) == 1 {
				return fmt.Sprintf("column %d", j)
			}
			return fmt.Sprintf("column %d of matrix %d", j%cols, j/cols)
		}
		for j, v := range e.Sum2 {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || v < 0 {
				return nil, fail("%s's sum of squares is %v (want finite and ≥ 0)", column(j), v)
			}
		}
		for j, v := range e.Sum {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fail("%s's plain sum is %v (want finite)", column(j), v)
			}
		}
	}
	return order, nil
}

// f32Bytes returns the little-endian bytes of xs.
func f32Bytes(xs []float32) []byte {
	b := make([]byte, 0, 4*len(xs))
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// encodeGGUF lays out the GGUF imatrix.
func encodeGGUF(s *Stats, order []int) ([]byte, error) {
	var w gguf.Writer
	datasets := append([]string{}, s.Datasets...)
	for _, kv := range []gguf.KV{
		{Key: gguf.KeyType, Value: gguf.String("imatrix")},
		{Key: keyDatasets, Value: gguf.Array(datasets)},
		{Key: keyChunkCount, Value: gguf.Uint32(uint32(s.ChunkCount))},
		{Key: keyChunkSize, Value: gguf.Uint32(uint32(s.ChunkSize))},
	} {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			return nil, &StatsError{Reason: err.Error()}
		}
	}
	for _, i := range order {
		e := &s.Entries[i]
		nmat := len(e.Counts)
		cols := len(e.Sum2) / nmat
		counts := make([]float32, nmat)
		for j, c := range e.Counts {
			counts[j] = float32(c)
		}
		ts := []struct {
			suffix string
			shape  []int
			vals   []float32
		}{
			{suffixSum2, []int{nmat, cols}, e.Sum2},
			{suffixCounts, []int{nmat, 1}, counts},
			{suffixSum, []int{nmat, cols}, e.Sum},
		}
		for _, t := range ts {
			if t.vals == nil {
				continue
			}
			if err := w.AddTensor(e.Name+t.suffix, gguf.TypeF32, trimOnes(t.shape), f32Bytes(t.vals)); err != nil {
				return nil, &StatsError{Entry: e.Name, Reason: err.Error()}
			}
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, &StatsError{Reason: err.Error()}
	}
	return buf.Bytes(), nil
}

// trimOnes drops the leading dimensions of 1 of a row-major shape,
// keeping at least one: ggml records a tensor with as many dimensions as
// it has up to its last ne above 1 (ggml_n_dims), so its writer stores a
// single matrix's [1, cols] sums with the dimensions [cols].
func trimOnes(shape []int) []int {
	for len(shape) > 1 && shape[0] == 1 {
		shape = shape[1:]
	}
	return shape
}

// encodeDat lays out the legacy .dat imatrix.
func encodeDat(s *Stats, order []int) ([]byte, error) {
	if s.ChunkSize <= 0 {
		return nil, &StatsError{Reason: "the .dat format needs a chunk size > 0 (its ncall counts chunks)"}
	}
	var keep []int
	for _, i := range order {
		if slicesMax(s.Entries[i].Counts) > 0 {
			keep = append(keep, i)
		}
	}
	if len(keep) == 0 {
		return nil, &StatsError{Reason: fmt.Sprintf("none of the %d entries has data (a .dat file needs one)", len(order))}
	}
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(len(keep)))
	for _, i := range keep {
		e := &s.Entries[i]
		ncall := (slicesMax(e.Counts) + s.ChunkSize - 1) / s.ChunkSize
		if ncall > math.MaxInt32 {
			return nil, &StatsError{Entry: e.Name, Reason: fmt.Sprintf("ncall %d (chunks of %d) does not fit an int32",
				ncall, s.ChunkSize)}
		}
		b = le.AppendUint32(b, uint32(len(e.Name)))
		b = append(b, e.Name...)
		b = le.AppendUint32(b, uint32(ncall))
		b = le.AppendUint32(b, uint32(len(e.Sum2)))
		cols := len(e.Sum2) / len(e.Counts)
		for j, v := range e.Sum2 {
			count := float32(e.Counts[j/cols])
			if count == 0 {
				v, count = 1, 1 // a matrix without data: every column counts the same
			}
			b = le.AppendUint32(b, math.Float32bits(v/count*float32(ncall)))
		}
	}
	b = le.AppendUint32(b, uint32(s.ChunkCount))
	var last string
	if len(s.Datasets) > 0 {
		last = s.Datasets[len(s.Datasets)-1]
	}
	if len(last) > math.MaxInt32 || strings.IndexByte(last, 0) >= 0 {
		return nil, &StatsError{Reason: fmt.Sprintf("dataset name %.40q cannot be stored in a .dat trailer", last)}
	}
	b = le.AppendUint32(b, uint32(len(last)))
	return append(b, last...), nil
}

// slicesMax returns the largest of xs (xs is not empty).
func slicesMax(xs []int64) int64 {
	m := xs[0]
	for _, x := range xs[1:] {
		m = max(m, x)
	}
	return m
}

// Stats returns the statistics of a parsed matrix, ready for Write: the
// sums of squares are importance × count per matrix (0 for a matrix whose
// count is 0), so that reading the written file gives the same importance
// up to float32 rounding. A .dat entry's count is its ncall (1 when ncall
// is 0, whose values are the importance itself). Plain sums are not kept
// by the reader and are left out.
func (m *Imatrix) Stats() *Stats {
	s := &Stats{
		Datasets:   append([]string(nil), m.Datasets...),
		ChunkCount: m.ChunkCount,
		ChunkSize:  m.ChunkSize,
		Entries:    make([]Stat, len(m.Entries)),
	}
	for i, e := range m.Entries {
		nmat := len(e.Counts)
		cols := len(e.Importance) / nmat
		st := Stat{Name: e.Name, Counts: append([]int64(nil), e.Counts...), Sum2: make([]float32, len(e.Importance))}
		if m.Format == FormatDat && st.Counts[0] == 0 {
			st.Counts[0] = 1
		}
		for j, v := range e.Importance {
			if c := st.Counts[j/cols]; c > 0 {
				st.Sum2[j] = v * float32(c)
			}
		}
		s.Entries[i] = st
	}
	return s
}
