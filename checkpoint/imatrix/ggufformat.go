package imatrix

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// The GGUF imatrix keys and tensor name suffixes.
const (
	// keyDatasets is the array of calibration file names.
	keyDatasets = "imatrix.datasets"
	// keyChunkCount is the number of chunks the matrix was computed on.
	keyChunkCount = "imatrix.chunk_count"
	// keyChunkSize is the number of tokens per chunk.
	keyChunkSize = "imatrix.chunk_size"

	// suffixSum2 ends the name of the sums of squared activations.
	suffixSum2 = ".in_sum2"
	// suffixCounts ends the name of the per-matrix activation counts.
	suffixCounts = ".counts"
	// suffixSum ends the name of the optional plain activation sums.
	suffixSum = ".in_sum"

	// maxCount bounds a count: larger floats cannot be exact integers.
	maxCount = 1 << 53
)

// ggufGroup collects the tensors of one entry.
type ggufGroup struct {
	sum2, counts, sum *gguf.TensorInfo
}

// parseGGUF decodes a GGUF importance matrix.
func parseGGUF(r io.ReaderAt, size int64, path string) (*Imatrix, error) {
	f, err := gguf.Read(r, size, path)
	if err != nil {
		return nil, within(path, "not a valid GGUF file", err)
	}
	m := &Imatrix{Format: FormatGGUF}
	if err := ggufMeta(f, m, path); err != nil {
		return nil, notGGUFImatrix(f, path, err)
	}

	groups := map[string]*ggufGroup{}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		var base string
		var slot **gguf.TensorInfo
		group := func(b string) *ggufGroup {
			g := groups[b]
			if g == nil {
				g = &ggufGroup{}
				groups[b] = g
			}
			return g
		}
		switch {
		case strings.HasSuffix(t.Name, suffixSum2):
			base = strings.TrimSuffix(t.Name, suffixSum2)
			slot = &group(base).sum2
		case strings.HasSuffix(t.Name, suffixCounts):
			base = strings.TrimSuffix(t.Name, suffixCounts)
			slot = &group(base).counts
		case strings.HasSuffix(t.Name, suffixSum):
			base = strings.TrimSuffix(t.Name, suffixSum)
			slot = &group(base).sum
		default:
			continue // other tensors are ignored, as llama.cpp ignores them
		}
		if base == "" {
			return nil, &FormatError{Format: formatName, Path: path, Offset: f.DataOffset + t.Offset,
				Reason: fmt.Sprintf("tensor %q has an empty entry name", t.Name)}
		}
		*slot = t
	}
	if len(groups) == 0 {
		return nil, &FormatError{Format: formatName, Path: path, Offset: -1,
			Reason: fmt.Sprintf("no importance entries (no %s/%s tensors among %d)", suffixSum2, suffixCounts, len(f.Tensors))}
	}
	bases := make([]string, 0, len(groups))
	for b := range groups {
		bases = append(bases, b)
	}
	sort.Strings(bases)
	m.Entries = make([]Entry, 0, len(bases))
	for _, b := range bases {
		e, err := ggufEntry(f, b, groups[b], path)
		if err != nil {
			return nil, err
		}
		m.Entries = append(m.Entries, e)
	}
	return m, nil
}

// notGGUFImatrix returns err, the error of reading the metadata of GGUF
// file f as an imatrix's, as a *NotImatrixError when f is not plausibly an
// importance matrix: a model file (general.architecture, general.type
// "model"), a file of another general.type, or one with neither imatrix.*
// keys nor importance tensors.
func notGGUFImatrix(f *gguf.File, path string, err error) error {
	str := func(key string) string {
		if v, ok := f.Get(key); ok {
			s, _ := v.Str()
			return s
		}
		return ""
	}
	typ, arch := str(gguf.KeyType), str(gguf.KeyArchitecture)
	switch {
	case typ == "imatrix":
		return err
	case arch != "" && (typ == "" || typ == "model"):
		return notImatrix(&NotImatrixError{Path: path, Architecture: arch, Err: err})
	case typ != "":
		return notImatrix(&NotImatrixError{Path: path, Type: typ, Err: err})
	}
	for _, kv := range f.KV {
		if strings.HasPrefix(kv.Key, "imatrix.") {
			return err
		}
	}
	for _, t := range f.Tensors {
		if strings.HasSuffix(t.Name, suffixSum2) || strings.HasSuffix(t.Name, suffixCounts) {
			return err
		}
	}
	return notImatrix(&NotImatrixError{Path: path, Err: err})
}

// ggufMeta reads and checks the imatrix metadata keys.
func ggufMeta(f *gguf.File, m *Imatrix, path string) error {
	keyErr := func(key, format string, args ...any) error {
		return &FormatError{Format: formatName, Path: path, Key: key, Offset: -1, Reason: fmt.Sprintf(format, args...)}
	}
	if v, ok := f.Get(gguf.KeyType); ok {
		s, isStr := v.Str()
		if !isStr {
			return keyErr(gguf.KeyType, "is %v, want the string \"imatrix\"", v.Type())
		}
		if s != "imatrix" {
			return keyErr(gguf.KeyType, "is %q, not \"imatrix\": not an importance matrix", s)
		}
	}
	v, ok := f.Get(keyDatasets)
	if !ok {
		return keyErr(keyDatasets, "missing (llama-imatrix always writes it)")
	}
	ds, isStrs := v.Any().([]string)
	if !isStrs {
		return keyErr(keyDatasets, "is %v, want an array of strings", v)
	}
	m.Datasets = append([]string(nil), ds...)
	for _, k := range []struct {
		key string
		dst *int64
	}{{keyChunkCount, &m.ChunkCount}, {keyChunkSize, &m.ChunkSize}} {
		v, ok := f.Get(k.key)
		if !ok {
			return keyErr(k.key, "missing (llama-imatrix always writes it)")
		}
		if v.Type() != gguf.ValueUint32 {
			return keyErr(k.key, "is %v, want a uint32", v)
		}
		u, _ := v.Uint()
		*k.dst = int64(u)
	}
	return nil
}

// ggufEntry checks one entry's tensors and computes its importance.
func ggufEntry(f *gguf.File, name string, g *ggufGroup, path string) (Entry, error) {
	r := &ggufEntryReader{f: f, path: path, name: name, g: g}
	nval, nmat, err := r.check()
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Name: name, Matrices: int(nmat)}
	if e.Counts, err = r.counts(nmat); err != nil {
		return Entry{}, err
	}
	if e.Importance, err = r.importance(e.Counts, int(nval/nmat)); err != nil {
		return Entry{}, err
	}
	if err := r.checkSum(); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// ggufEntryReader reads entry name from its tensors g in GGUF file f at
// path.
type ggufEntryReader struct {
	f    *gguf.File
	path string
	name string
	g    *ggufGroup
}

// fail is the *FormatError of the entry, at the data of tensor t if t is
// not nil.
func (r *ggufEntryReader) fail(t *gguf.TensorInfo, err error, format string, args ...any) error {
	off := int64(-1)
	if t != nil {
		off = r.f.DataOffset + t.Offset
	}
	return &FormatError{Format: formatName, Path: r.path, Tensor: r.name, Offset: off,
		Reason: fmt.Sprintf(format, args...), Err: err}
}

// check checks that the entry's tensors are there, F32 and of shapes that
// agree, and returns the number of sums and of matrices.
func (r *ggufEntryReader) check() (nval, nmat int64, err error) {
	g, name := r.g, r.name
	if g.sum2 == nil {
		return 0, 0, r.fail(firstOf(g.counts, g.sum), nil, "tensor %s is missing", name+suffixSum2)
	}
	if g.counts == nil {
		return 0, 0, r.fail(firstOf(g.sum2, g.sum), nil, "tensor %s is missing", name+suffixCounts)
	}
	for _, t := range []*gguf.TensorInfo{g.sum2, g.counts, g.sum} {
		if t != nil && t.Type != gguf.TypeF32 {
			return 0, 0, r.fail(t, nil, "tensor %s is %v, want F32", t.Name, t.Type)
		}
	}
	nval, nmat = g.sum2.NumElements(), g.counts.NumElements()
	if nmat < 1 || nval < 1 || nval%nmat != 0 {
		return 0, 0, r.fail(g.sum2, nil, "%d sums do not divide into %d matrices", nval, nmat)
	}
	if len(g.sum2.Dims) > 1 && int64(g.sum2.Dims[1]) != nmat {
		return 0, 0, r.fail(g.sum2, nil, "%s has dimensions %v, want [%d %d]", g.sum2.Name, g.sum2.Dims, nval/nmat, nmat)
	}
	if len(g.counts.Dims) > 0 && g.counts.Dims[0] != 1 {
		return 0, 0, r.fail(g.counts, nil, "%s has dimensions %v, want [1 %d]", g.counts.Name, g.counts.Dims, nmat)
	}
	if g.sum != nil && g.sum.NumElements() != nval {
		return 0, 0, r.fail(g.sum, nil, "%s has %d elements, %s has %d", g.sum.Name, g.sum.NumElements(),
			g.sum2.Name, nval)
	}
	return nval, nmat, nil
}

// counts reads the nmat counts, each a finite float ≥ 0, rounded.
func (r *ggufEntryReader) counts(nmat int64) ([]int64, error) {
	t := r.g.counts
	counts, err := r.f.Float32s(t.Name)
	if err != nil {
		return nil, r.fail(t, err, "reading %s", t.Name)
	}
	out := make([]int64, nmat)
	for j, c := range counts {
		if !(c >= 0 && c < maxCount) { // also rejects NaN
			return nil, r.fail(t, nil, "count %d is %v (want a finite count ≥ 0)", j, c)
		}
		out[j] = int64(math.Round(float64(c)))
	}
	return out, nil
}

// importance reads the sums of squares, rows of cols per matrix, each
// finite and ≥ 0, and divides each row by its matrix's count (a matrix
// without activations gets 1 for every column).
func (r *ggufEntryReader) importance(counts []int64, cols int) ([]float32, error) {
	t := r.g.sum2
	sums, err := r.f.Float32s(t.Name)
	if err != nil {
		return nil, r.fail(t, err, "reading %s", t.Name)
	}
	for j := range counts {
		row := sums[j*cols : (j+1)*cols]
		c := float32(counts[j])
		for i, s := range row {
			if math.IsNaN(float64(s)) || math.IsInf(float64(s), 0) || s < 0 {
				return nil, r.fail(t, nil, "sum %d of matrix %d is %v (a sum of squares must be finite and ≥ 0)",
					i, j, s)
			}
			if c > 0 {
				row[i] = s / c
			} else {
				row[i] = 1 // no activations reached this matrix: every column counts the same
			}
		}
	}
	return sums, nil
}

// checkSum checks that the optional plain sums, if there are any, are
// finite.
func (r *ggufEntryReader) checkSum() error {
	t := r.g.sum
	if t == nil {
		return nil
	}
	plain, err := r.f.Float32s(t.Name)
	if err != nil {
		return r.fail(t, err, "reading %s", t.Name)
	}
	for i, s := range plain {
		if math.IsNaN(float64(s)) || math.IsInf(float64(s), 0) {
			return r.fail(t, nil, "sum %d is %v (want a finite value)", i, s)
		}
	}
	return nil
}

// firstOf returns the first non-nil tensor, or nil.
func firstOf(ts ...*gguf.TensorInfo) *gguf.TensorInfo {
	for _, t := range ts {
		if t != nil {
			return t
		}
	}
	return nil
}
