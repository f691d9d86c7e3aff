package imatrix

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
)

// Names of the metadata arrays of an .npz imatrix.
const (
	// npzDatasets holds the dataset names as uint8 UTF-8 text, each name
	// followed by a newline (an empty array: no datasets).
	npzDatasets = keyDatasets
	// npzChunkCount holds the chunk count: one integer (any shape of one
	// element).
	npzChunkCount = keyChunkCount
	// npzChunkSize holds the chunk size: one integer.
	npzChunkSize = keyChunkSize
)

// ReadNPZ reads importance statistics from a NumPy .npz archive laid out
// like the GGUF format, array for tensor, as a calibration script can
// write it with numpy.savez:
//
//	imatrix.datasets     uint8 [n]             names, each followed by "\n"
//	imatrix.chunk_count  integer, 1 element
//	imatrix.chunk_size   integer, 1 element
//	W.in_sum2            float32/float64 [matrices, cols] or [cols]
//	W.counts             integer or float [matrices] (or [matrices, 1])
//	W.in_sum             optional, like W.in_sum2
//
// where W is a GGUF weight name ("blk.0.attn_q.weight"). The three
// metadata arrays are required; other arrays are an error, so that a
// misspelt suffix is not silently dropped. Counts must be whole numbers.
// Errors are *FormatError values naming the archive and the array; an
// archive without any of these arrays gives a *NotImatrixError.
// The result is checked only as far as reading needs; Write checks the
// rest.
func ReadNPZ(path string) (*Stats, error) {
	arrays, err := npy.ReadNPZ(path)
	if err != nil {
		return nil, within(path, "reading the archive", err)
	}
	if !slices.ContainsFunc(arrays, isNPZImatrixArray) {
		return nil, &NotImatrixError{Path: path, Err: &FormatError{Format: formatName, Path: path, Offset: -1, Kind: fileerr.NotFormat,
			Reason: fmt.Sprintf("none of its %d arrays is %s, %s, %s, W%s or W%s", len(arrays), npzDatasets, npzChunkCount, npzChunkSize, suffixSum2, suffixCounts)}}
	}
	r := &npzReader{path: path, s: &Stats{}, groups: map[string]*npzGroup{},
		seen: map[string]bool{}}
	for _, a := range arrays {
		if err := r.add(a); err != nil {
			return nil, err
		}
	}
	for _, k := range []string{npzDatasets, npzChunkCount, npzChunkSize} {
		if !r.seen[k] {
			return nil, r.fail("", "array %s is missing", k)
		}
	}
	if len(r.groups) == 0 {
		return nil, r.fail("", "no W%s arrays", suffixSum2)
	}
	for _, n := range slices.Sorted(maps.Keys(r.groups)) {
		st, err := r.stat(n, r.groups[n])
		if err != nil {
			return nil, err
		}
		r.s.Entries = append(r.s.Entries, st)
	}
	return r.s, nil
}

// isNPZImatrixArray reports whether a is one of the arrays of an .npz
// imatrix: metadata, or the sums of squares or counts of a weight.
func isNPZImatrixArray(a npy.Named) bool {
	n := a.Name
	return n == npzDatasets || n == npzChunkCount || n == npzChunkSize ||
		strings.HasSuffix(n, suffixSum2) || strings.HasSuffix(n, suffixCounts)
}

// npzGroup holds the arrays of one weight of an .npz imatrix.
type npzGroup struct{ sum2, counts, sum *npy.Array }

// npzReader reads the arrays of the .npz imatrix at path into s: the
// metadata directly, the weights' arrays grouped by weight.
type npzReader struct {
	path   string
	s      *Stats
	groups map[string]*npzGroup
	seen   map[string]bool // the names of the arrays read
}

// fail is the *FormatError of the archive, about entry if it is not empty.
func (r *npzReader) fail(entry, format string, args ...any) error {
	return &FormatError{Format: formatName, Path: r.path, Tensor: entry, Offset: -1,
		Reason: fmt.Sprintf(format, args...)}
}

// group returns the group of weight name, new if there is none.
func (r *npzReader) group(name string) *npzGroup {
	g := r.groups[name]
	if g == nil {
		g = &npzGroup{}
		r.groups[name] = g
	}
	return g
}

// add reads array a: metadata into s, a weight's array into its group.
func (r *npzReader) add(a npy.Named) error {
	name := a.Name
	switch {
	case name == npzDatasets:
		if err := r.datasets(a); err != nil {
			return err
		}
	case name == npzChunkCount || name == npzChunkSize:
		vs, err := npzInts(a.Array)
		if err != nil || len(vs) != 1 {
			return r.fail("", "array %s: want one integer (%d values, %v)", name, len(vs), err)
		}
		if name == npzChunkCount {
			r.s.ChunkCount = vs[0]
		} else {
			r.s.ChunkSize = vs[0]
		}
	case strings.HasSuffix(name, suffixSum2):
		r.group(strings.TrimSuffix(name, suffixSum2)).sum2 = a.Array
	case strings.HasSuffix(name, suffixCounts):
		r.group(strings.TrimSuffix(name, suffixCounts)).counts = a.Array
	case strings.HasSuffix(name, suffixSum):
		r.group(strings.TrimSuffix(name, suffixSum)).sum = a.Array
	default:
		return r.fail("", "array %q is neither metadata (%s, %s, %s) nor W%s, W%s or W%s",
			name, npzDatasets, npzChunkCount, npzChunkSize, suffixSum2, suffixCounts, suffixSum)
	}
	r.seen[name] = true
	return nil
}

// datasets reads the dataset names of array a, each ending with a newline.
func (r *npzReader) datasets(a npy.Named) error {
	if a.DType != npy.Uint8 || len(a.Shape) != 1 {
		return r.fail("", "array %s is %v %v, want uint8 [n]", a.Name, a.DType, a.Shape)
	}
	text := string(a.Data)
	if text != "" && !strings.HasSuffix(text, "\n") {
		return r.fail("", "array %s: the last name does not end with a newline", a.Name)
	}
	if text != "" {
		r.s.Datasets = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	}
	return nil
}

// stat checks the arrays of weight n and returns its Stat.
func (r *npzReader) stat(n string, g *npzGroup) (Stat, error) {
	switch {
	case g.sum2 == nil:
		return Stat{}, r.fail(n, "array %s is missing", n+suffixSum2)
	case g.counts == nil:
		return Stat{}, r.fail(n, "array %s is missing", n+suffixCounts)
	}
	st := Stat{Name: n}
	counts, err := npzInts(g.counts)
	if err != nil {
		return Stat{}, r.fail(n, "array %s: %v", n+suffixCounts, err)
	}
	if len(g.counts.Shape) > 2 || len(g.counts.Shape) == 2 && g.counts.Shape[1] != 1 {
		return Stat{}, r.fail(n, "array %s has shape %v, want [matrices]", n+suffixCounts, g.counts.Shape)
	}
	st.Counts = counts
	if st.Sum2, err = npzSums(g.sum2, len(counts)); err != nil {
		return Stat{}, r.fail(n, "array %s: %v", n+suffixSum2, err)
	}
	if g.sum != nil {
		if st.Sum, err = npzSums(g.sum, len(counts)); err != nil {
			return Stat{}, r.fail(n, "array %s: %v", n+suffixSum, err)
		}
	}
	return st, nil
}

// npzSums returns a float array of shape [matrices, cols] (or [cols] for
// one matrix) as float32.
func npzSums(a *npy.Array, matrices int) ([]float32, error) {
	if a.Fortran && len(a.Shape) > 1 {
		return nil, fmt.Errorf("stored in Fortran order; save a C-ordered array")
	}
	switch {
	case len(a.Shape) == 1 && matrices == 1:
	case len(a.Shape) == 2 && a.Shape[0] == matrices:
	default:
		return nil, fmt.Errorf("shape %v, want [%d, cols]", a.Shape, matrices)
	}
	return a.Float32s()
}

// npzInts returns the elements of an integer array, or of a float array
// holding whole numbers, as int64.
func npzInts(a *npy.Array) ([]int64, error) {
	n := a.Len()
	size := a.DType.Size()
	if len(a.Data) != n*size {
		return nil, fmt.Errorf("%d bytes of data for %d %v values", len(a.Data), n, a.DType)
	}
	le := binary.LittleEndian
	out := make([]int64, n)
	for i := range out {
		b := a.Data[i*size:]
		var f float64
		switch a.DType {
		case npy.Uint8:
			out[i] = int64(b[0])
		case npy.Int8:
			out[i] = int64(int8(b[0]))
		case npy.Uint16:
			out[i] = int64(le.Uint16(b))
		case npy.Int16:
			out[i] = int64(int16(le.Uint16(b)))
		case npy.Uint32:
			out[i] = int64(le.Uint32(b))
		case npy.Int32:
			out[i] = int64(int32(le.Uint32(b)))
		case npy.Int64:
			out[i] = int64(le.Uint64(b))
		case npy.Uint64:
			u := le.Uint64(b)
			if u > math.MaxInt64 {
				return nil, fmt.Errorf("value %d does not fit an int64", u)
			}
			out[i] = int64(u)
		case npy.Float32:
			f = float64(math.Float32frombits(le.Uint32(b)))
		case npy.Float64:
			f = math.Float64frombits(le.Uint64(b))
		default:
			return nil, fmt.Errorf("%v values, want integers", a.DType)
		}
		if a.DType == npy.Float32 || a.DType == npy.Float64 {
			if f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
				return nil, fmt.Errorf("value %d is %v, not a whole number", i, f)
			}
			out[i] = int64(f)
		}
	}
	return out, nil
}
