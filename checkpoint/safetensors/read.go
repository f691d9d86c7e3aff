package safetensors

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/kernels"
)

// File is an open safetensors file whose header has been parsed and
// validated.
//
// A File is safe for concurrent use by multiple goroutines, except that
// Close must not run concurrently with other methods.
type File struct {
	path      string
	size      int64
	dataStart int64
	metadata  map[string]string
	tensors   []TensorInfo // sorted by offset
	index     map[string]int

	data   []byte      // the whole file when memory-mapped, else nil
	ra     io.ReaderAt // the file when not memory-mapped
	closer io.Closer   // the open file in the ReadAt fallback of Open
	closed atomic.Bool
}

// mmapHook memory-maps f; a variable so tests can force the ReadAt
// fallback.
var mmapHook = inputfile.Map

// Open opens the safetensors file at path and validates its header. The
// file is memory-mapped read-only where the platform allows it, so Bytes
// returns views of the mapping without copying; otherwise (or if mapping
// fails) Open falls back to reading through ReadAt, as OpenReader does.
//
// The file must not be truncated while it is open: touching the mapping of
// a truncated file crashes the program. Format errors are *FormatError
// values with Path set.
func Open(path string) (*File, error) {
	f, fi, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	size := fi.Size()
	if size >= prefixSize {
		if data, err := mmapHook(f, size); err == nil {
			f.Close() // the mapping stays valid
			st, err := newFile(bytes.NewReader(data), size, path)
			if err != nil {
				inputfile.Unmap(data)
				return nil, err
			}
			st.data, st.ra = data, nil
			return st, nil
		}
	}
	st, err := newFile(f, size, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	st.closer = f
	return st, nil
}

// OpenReader reads and validates the header of a safetensors file of size
// bytes read through r; name is used in error messages and may be empty.
// Tensor bytes are read with r.ReadAt when requested, so r must stay
// readable until the File is no longer used; closing the File does not
// close r. Format errors are *FormatError values with Path set to name.
func OpenReader(r io.ReaderAt, size int64, name string) (*File, error) {
	return newFile(r, size, name)
}

func newFile(r io.ReaderAt, size int64, name string) (*File, error) {
	h, err := readHeader(r, size)
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Path = name
		}
		return nil, err
	}
	f := &File{
		path:      name,
		size:      size,
		dataStart: h.dataStart,
		metadata:  h.metadata,
		tensors:   h.tensors,
		index:     make(map[string]int, len(h.tensors)),
		ra:        r,
	}
	for i, t := range h.tensors {
		f.index[t.Name] = i
	}
	return f, nil
}

// Close releases the memory mapping or the open file. Byte slices returned
// by Bytes from a memory-mapped file must not be used after Close. Closing
// a closed File returns an error wrapping os.ErrClosed.
func (f *File) Close() error {
	if f.closed.Swap(true) {
		return f.errClosed()
	}
	var err error
	if f.data != nil {
		err = inputfile.Unmap(f.data)
		f.data = nil
	}
	if f.closer != nil {
		if cerr := f.closer.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("safetensors: %s: %w", f.path, err)
	}
	return nil
}

func (f *File) errClosed() error {
	return fmt.Errorf("safetensors: %s: %w", f.path, os.ErrClosed)
}

// Name returns the path or name the File was opened with.
func (f *File) Name() string { return f.path }

// Size returns the file size in bytes.
func (f *File) Size() int64 { return f.size }

// DataOffset returns the offset of the data buffer in the file: 8 plus the
// header length. A tensor's data_offsets in the header are relative to it.
func (f *File) DataOffset() int64 { return f.dataStart }

// Mapped reports whether the file is memory-mapped, that is whether Bytes
// returns views rather than copies.
func (f *File) Mapped() bool { return f.data != nil }

// Metadata returns a copy of the header's __metadata__ map, or nil if the
// header has none.
func (f *File) Metadata() map[string]string { return maps.Clone(f.metadata) }

// Tensors returns descriptions of all tensors in the order of their offsets
// in the file. The result is a copy that the caller may modify.
func (f *File) Tensors() []TensorInfo {
	out := make([]TensorInfo, len(f.tensors))
	for i, t := range f.tensors {
		out[i] = t.clone()
	}
	return out
}

// Tensor returns the description of the named tensor and whether it exists.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.index[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.tensors[i].clone(), true
}

// Bytes returns the raw little-endian bytes of the named tensor. For a
// memory-mapped file the result is a read-only view of the mapping, valid
// until Close, which must not be modified (writing to it crashes the
// program); otherwise it is a fresh copy read through ReadAt. An unknown
// name is an error wrapping ErrNotFound.
func (f *File) Bytes(name string) ([]byte, error) {
	i, ok := f.index[name]
	if !ok {
		return nil, fmt.Errorf("safetensors: %s: tensor %s: %w", f.path, strconv.Quote(clip(name)), ErrNotFound)
	}
	if f.closed.Load() {
		return nil, f.errClosed()
	}
	t := &f.tensors[i]
	if f.data != nil {
		end := t.Offset + t.Size
		return f.data[t.Offset:end:end], nil
	}
	b := make([]byte, t.Size)
	if err := readFullAt(f.ra, b, t.Offset); err != nil {
		e := fileerr.New(formatName, t.Offset, err, "reading tensor data")
		e.Path, e.Tensor = f.path, name
		return nil, e
	}
	return b, nil
}

// f8Formats maps the 8-bit float dtypes to the exact codecs of package
// dtype.
var f8Formats = map[DType]*dtype.Format{
	F8E4M3:     dtype.MustParse("float8_e4m3fn"),
	F8E5M2:     dtype.MustParse("float8_e5m2"),
	F8E4M3FNUZ: dtype.MustParse("float8_e4m3fnuz"),
	F8E5M2FNUZ: dtype.MustParse("float8_e5m2fnuz"),
	F8E8M0:     dtype.MustParse("float8_e8m0fnu"),
}

// Float32s returns the elements of the named tensor converted to float32.
// It supports F32, F64 (rounded to nearest even), F16 (exact), BF16
// (exact) and the 8-bit floats F8_E4M3, F8_E5M2, F8_E4M3FNUZ, F8_E5M2FNUZ
// and F8_E8M0 (exact, with the torch float8 meanings); other dtypes are an
// error naming the dtype.
func (f *File) Float32s(name string) ([]float32, error) {
	i, ok := f.index[name]
	if !ok {
		return nil, fmt.Errorf("safetensors: %s: tensor %s: %w", f.path, strconv.Quote(clip(name)), ErrNotFound)
	}
	d := f.tensors[i].DType
	if !canFloat32(d) {
		return nil, fmt.Errorf("safetensors: %s: tensor %s: cannot convert %v to float32",
			f.path, strconv.Quote(clip(name)), d)
	}
	b, err := f.Bytes(name)
	if err != nil {
		return nil, err
	}
	return toFloat32(d, b), nil
}

// canFloat32 reports whether toFloat32 supports d.
func canFloat32(d DType) bool {
	switch d {
	case F32, F64, F16, BF16:
		return true
	}
	return f8Formats[d] != nil
}

// toFloat32 converts the little-endian elements of dtype d in b.
func toFloat32(d DType, b []byte) []float32 {
	out := make([]float32, len(b)*8/d.BitSize())
	switch d {
	case F32:
		kernels.Float32BytesToFloat32(out, b)
	case F64:
		kernels.Float64BytesToFloat32(out, b)
	case F16:
		kernels.Float16BytesToFloat32(out, b)
	case BF16:
		kernels.BFloat16BytesToFloat32(out, b)
	default:
		dtype.DecodeSlice(f8Formats[d], out, b)
	}
	return out
}
