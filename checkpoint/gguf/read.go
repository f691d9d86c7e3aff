package gguf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

const (
	// Magic is the 4-byte signature at the start of every GGUF file.
	Magic = "GGUF"
	// Version is the only GGUF version this package reads and writes.
	Version = 3
	// DefaultAlignment is the alignment of the data section and of every
	// tensor's data when general.alignment is absent.
	DefaultAlignment = 32
	// MaxNameLen is the longest tensor name, in bytes, that ggml accepts
	// (GGML_MAX_NAME − 1: ggml keeps names NUL-terminated in 64 bytes).
	MaxNameLen = 63
	// MaxDims is the largest number of dimensions of a tensor
	// (GGML_MAX_DIMS).
	MaxDims = 4
	// MaxTensors is the largest tensor_count, and the largest kv_count, a
	// file may declare: past it the file is refused before its tensor
	// infos are read, so the work spent on a header is bounded whatever it
	// declares (the largest published models have a few thousand tensors).
	MaxTensors = 1 << 18

	// KeyArchitecture names the model architecture; the writer requires it
	// in a model file.
	KeyArchitecture = "general.architecture"
	// KeyType names the kind of file: "model" (the default when absent),
	// "adapter", "imatrix", ...; a file of a type other than "model" may
	// lack general.architecture.
	KeyType = "general.type"
	// KeyName is the model's name.
	KeyName = "general.name"
	// KeyFileType is the llama_ftype of a model file: the mix (or the
	// type) most of its weights were quantized with.
	KeyFileType = "general.file_type"
	// KeyAlignment sets the data alignment (a uint32 power of two).
	KeyAlignment = "general.alignment"
	// KeyQuantizationVersion is the ggml quantization format version
	// (GGML_QNT_VERSION = 2), required when any tensor is quantized.
	KeyQuantizationVersion = "general.quantization_version"

	// minTensorInfo is the smallest tensor info: name length, n_dims,
	// type and offset, with an empty name and no dimensions.
	minTensorInfo = 8 + 4 + 4 + 8
	// minKV is the smallest key/value pair: key length, value type and a
	// one-byte value.
	minKV = 8 + 4 + 1
	// readBuffer is the buffer size used to read the header.
	readBuffer = 64 << 10
)

// TensorInfo describes one tensor of a GGUF file.
type TensorInfo struct {
	// Name is the tensor name (at most MaxNameLen bytes).
	Name string
	// Type is the ggml type of the elements.
	Type Type
	// Dims holds the dimensions in ggml ne order: innermost (contiguous)
	// first, the reverse of the row-major shape; see Shape. It has at most
	// MaxDims entries and may be empty for a scalar.
	Dims []int
	// Offset is the start of the tensor's data relative to the data
	// section; add File.DataOffset for the position in the file.
	Offset int64
	// Size is the size of the tensor's data in bytes.
	Size int64
}

// Shape returns the dimensions in row-major (C, PyTorch, safetensors)
// order: Dims reversed, outermost first. A torch tensor [out, in] is stored
// with Dims [in, out].
func (t TensorInfo) Shape() []int {
	s := slices.Clone(t.Dims)
	slices.Reverse(s)
	return s
}

// NumElements returns the number of elements, the product of Dims (1 for a
// tensor without dimensions).
func (t TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= int64(d)
	}
	return n
}

// File is a parsed GGUF file. The metadata and tensor infos are read by
// Open and Read; tensor data is read on demand with TensorBytes,
// TensorData and Float32s, which are safe for concurrent use (but not
// with Close).
type File struct {
	// Name is the file name given to Open or Read; it prefixes errors.
	Name string
	// Version is the GGUF version (always 3).
	Version uint32
	// KV holds the metadata key/value pairs in file order.
	KV []KV
	// Tensors holds the tensor infos in file order.
	Tensors []TensorInfo
	// Alignment is the data alignment: general.alignment, or
	// DefaultAlignment when the key is absent.
	Alignment int
	// DataOffset is the file position of the data section, the end of the
	// tensor infos rounded up to Alignment.
	DataOffset int64

	r      io.ReaderAt
	size   int64
	closer io.Closer
	data   []byte // the whole file when Open mapped it, else nil
	closed atomic.Bool
	kvIdx  map[string]int
	tIdx   map[string]int
	// parts are the splits of a model opened with OpenModel, and partOf
	// the split of each tensor; nil for one file.
	parts  []*File
	partOf map[string]int
}

// mmapHook memory-maps a file; a variable so tests can force reading.
var mmapHook = inputfile.Map

// Open opens and parses the GGUF file at path. The file is memory-mapped
// read-only where the platform allows it, so that TensorData gives views
// of the mapping; otherwise (or if mapping fails) it is read through
// ReadAt, as Read does. It stays open until Close. The file must not be
// truncated while it is open: touching the mapping of a truncated file
// crashes the program. Errors in the file are *FormatError values with
// Path set to path.
func Open(path string) (*File, error) {
	fh, fi, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if data, err := mmapHook(fh, fi.Size()); err == nil {
		fh.Close() // the mapping stays valid
		f, err := Read(bytes.NewReader(data), fi.Size(), path)
		if err != nil {
			inputfile.Unmap(data)
			return nil, err
		}
		f.data = data
		return f, nil
	}
	f, err := Read(fh, fi.Size(), path)
	if err != nil {
		fh.Close()
		return nil, err
	}
	f.closer = fh
	return f, nil
}

// Read parses a GGUF file of size bytes read through r. name is used in
// error messages (it may be ""). Every count, length and byte range in the
// header is checked against size before anything is allocated for it, so a
// corrupt or hostile header cannot cause a large allocation. The returned
// File reads tensor data through r, which must stay valid while it is used.
// Errors in the file are *FormatError values.
//
// Read accepts every file ggml's gguf reader accepts, and two kinds of
// files it does not: metadata arrays of arrays (nested at most 4 deep, as
// @huggingface/gguf allows), and tensor data not laid out contiguously in
// info order (ggml requires each offset to be the padded end of the
// previous tensor); here each tensor only has to be aligned, inside the
// file and disjoint from the others. Files written by Writer satisfy
// ggml's stricter rule.
func Read(r io.ReaderAt, size int64, name string) (*File, error) {
	if size < 0 {
		return nil, &FormatError{Format: format, Path: name, Offset: -1, Reason: fmt.Sprintf("invalid file size %d", size)}
	}
	d := &decoder{
		r:    bufio.NewReaderSize(io.NewSectionReader(r, 0, size), readBuffer),
		size: size,
		path: name,
	}
	f, err := d.file()
	if err != nil {
		return nil, err
	}
	f.Name = name
	f.r = r
	f.size = size
	return f, nil
}

// Close closes the underlying file, or ends its mapping, if the File was
// made by Open; for a File made by Read it does nothing. The views that
// TensorData and TensorRange gave must not be used after Close, and Close
// must not run while another method does (the other methods are safe for
// concurrent use with each other).
func (f *File) Close() error {
	if f.parts != nil {
		var err error
		for _, p := range f.parts {
			err = errors.Join(err, p.Close())
		}
		return err
	}
	if f.data == nil && f.closer == nil || f.closed.Swap(true) {
		return nil
	}
	var err error
	if f.data != nil {
		err = inputfile.Unmap(f.data)
		f.data = nil
	}
	if f.closer != nil {
		err = f.closer.Close()
		f.closer = nil
	}
	return err
}

// Get returns the value of a metadata key.
func (f *File) Get(key string) (Value, bool) {
	i, ok := f.kvIdx[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// Architecture returns the string value of general.architecture, or "" if
// the key is absent or not a string.
func (f *File) Architecture() string {
	v, _ := f.Get(KeyArchitecture)
	s, _ := v.Str()
	return s
}

// Tensor returns the info of the named tensor.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.tIdx[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// decoder reads the header sequentially, tracking the file offset.
type decoder struct {
	r       *bufio.Reader
	off     int64
	size    int64
	path    string
	tensor  string // tensor being decoded, for errors
	key     string // key being decoded, for errors
	scratch [8]byte
}

// fail returns a *FormatError at offset off for the current tensor or key:
// of kind Truncated when err is io.ErrUnexpectedEOF, else Invalid.
func (d *decoder) fail(off int64, err error, reason string, args ...any) *FormatError {
	e := &FormatError{Format: format, Path: d.path, Tensor: d.tensor, Key: d.key, Offset: off,
		Reason: fmt.Sprintf(reason, args...), Err: err}
	if err == io.ErrUnexpectedEOF {
		e.Kind = fileerr.Truncated
	}
	return e
}

// failKind is fail with no cause, of kind k.
func (d *decoder) failKind(k fileerr.Kind, off int64, reason string, args ...any) *FormatError {
	e := d.fail(off, nil, reason, args...)
	e.Kind = k
	return e
}

// need checks that n more bytes are left in the file.
func (d *decoder) need(n int64, what string) error {
	if n > d.size-d.off {
		return d.fail(d.off, io.ErrUnexpectedEOF, "%s needs %d bytes, %d left in the file", what, n, d.size-d.off)
	}
	return nil
}

// readFull reads len(b) bytes, which the caller has checked are in the
// file.
func (d *decoder) readFull(b []byte, what string) error {
	n, err := io.ReadFull(d.r, b)
	d.off += int64(n)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return d.fail(d.off, err, "reading %s", what)
	}
	return nil
}

// fixed reads n ≤ 8 bytes into the scratch buffer.
func (d *decoder) fixed(n int, what string) ([]byte, error) {
	if err := d.need(int64(n), what); err != nil {
		return nil, err
	}
	b := d.scratch[:n]
	return b, d.readFull(b, what)
}

func (d *decoder) u32(what string) (uint32, error) {
	b, err := d.fixed(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	b, err := d.fixed(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// str reads a GGUF string (u64 length, bytes) of at most maxLen bytes
// (maxLen < 0: no limit besides the file size).
func (d *decoder) str(what string, maxLen int) (string, error) {
	start := d.off
	n, err := d.u64(what + " length")
	if err != nil {
		return "", err
	}
	if maxLen >= 0 && n > uint64(maxLen) {
		return "", d.fail(start, nil, "%s of %d bytes is longer than %d bytes", what, n, maxLen)
	}
	if n > uint64(d.size-d.off) {
		return "", d.fail(start, io.ErrUnexpectedEOF, "%s of %d bytes extends beyond the end of the file (%d bytes left)",
			what, n, d.size-d.off)
	}
	b := make([]byte, n)
	if err := d.readFull(b, what); err != nil {
		return "", err
	}
	return string(b), nil
}

// file decodes the header: magic, version, counts, metadata and tensor
// infos, and validates the tensor data ranges.
func (d *decoder) file() (*File, error) {
	version, err := d.preamble()
	if err != nil {
		return nil, err
	}
	nTensors, nKV, err := d.counts()
	if err != nil {
		return nil, err
	}
	f := &File{
		Version:   version,
		KV:        make([]KV, 0, nKV),
		Tensors:   make([]TensorInfo, 0, nTensors),
		Alignment: DefaultAlignment,
		kvIdx:     make(map[string]int, nKV),
		tIdx:      make(map[string]int, nTensors),
	}
	for range nKV {
		if err := d.kv(f); err != nil {
			return nil, err
		}
	}
	d.key = ""

	infoOff := make([]int64, 0, nTensors) // file offset of each tensor's offset field
	for range nTensors {
		off, err := d.tensorInfo(f)
		if err != nil {
			return nil, err
		}
		infoOff = append(infoOff, off)
	}
	d.tensor = ""

	align := int64(f.Alignment)
	f.DataOffset = (d.off + align - 1) / align * align
	if nTensors > 0 && f.DataOffset > d.size {
		return nil, d.fail(d.off, io.ErrUnexpectedEOF, "data section at %d starts beyond the end of the file (%d bytes)",
			f.DataOffset, d.size)
	}
	if err := d.checkRanges(f, infoOff); err != nil {
		return nil, err
	}
	return f, nil
}

// preamble decodes the magic and the version, which must be Version.
func (d *decoder) preamble() (uint32, error) {
	if err := d.need(4, "magic"); err != nil {
		return 0, err
	}
	var magic [4]byte
	if err := d.readFull(magic[:], "magic"); err != nil {
		return 0, err
	}
	if string(magic[:]) != Magic {
		return 0, d.failKind(fileerr.NotFormat, 0, "bad magic %q, want %q", magic[:], Magic)
	}
	version, err := d.u32("version")
	if err != nil {
		return 0, err
	}
	if version != Version {
		if version&0xFFFF == 0 {
			return 0, d.failKind(fileerr.Unsupported, 4, "version %#x: a big-endian GGUF file, which is not supported", version)
		}
		return 0, d.failKind(fileerr.Unsupported, 4, "unsupported GGUF version %d (only version %d is supported)", version, Version)
	}
	return version, nil
}

// counts decodes the tensor and key/value counts, which must fit the rest
// of the file and MaxTensors.
func (d *decoder) counts() (nTensors, nKV uint64, err error) {
	if nTensors, err = d.u64("tensor_count"); err != nil {
		return 0, 0, err
	}
	if nKV, err = d.u64("kv_count"); err != nil {
		return 0, 0, err
	}
	rest := uint64(d.size - d.off)
	if nTensors > rest/minTensorInfo || nKV > rest/minKV || nTensors*minTensorInfo+nKV*minKV > rest {
		return 0, 0, d.fail(8, io.ErrUnexpectedEOF, "tensor_count %d and kv_count %d cannot fit in the %d bytes after the header",
			nTensors, nKV, rest)
	}
	for _, c := range []struct {
		what string
		n    uint64
	}{{"tensor_count", nTensors}, {"kv_count", nKV}} {
		if c.n > MaxTensors {
			return 0, 0, d.failKind(fileerr.TooLarge, 8, "%s %d is more than %d, the limit: the file is damaged or hostile",
				c.what, c.n, MaxTensors)
		}
	}
	return nTensors, nKV, nil
}

// kv decodes one key/value pair into f.
func (d *decoder) kv(f *File) error {
	d.key = ""
	keyOff := d.off
	key, err := d.str("key", -1)
	if err != nil {
		return err
	}
	d.key = key
	switch {
	case key == "":
		return d.fail(keyOff, nil, "empty key (GGUF keys are non-empty; Writer refuses one)")
	case !utf8.ValidString(key):
		return d.fail(keyOff, nil, "key is not valid UTF-8 (GGUF strings are UTF-8); the file is damaged or was not written by a GGUF writer")
	}
	if _, dup := f.kvIdx[key]; dup {
		return d.fail(keyOff, nil, "duplicate key")
	}
	typOff := d.off
	t, err := d.u32("value type")
	if err != nil {
		return err
	}
	if !ValueType(t).valid() {
		return d.fail(typOff, nil, "invalid value type %d", t)
	}
	v, err := d.value(ValueType(t), 0)
	if err != nil {
		return err
	}
	if key == KeyAlignment {
		a, ok := v.v.(uint32)
		if !ok {
			return d.fail(typOff, nil, "alignment is a %v, want uint32", v.typ)
		}
		if a == 0 || a&(a-1) != 0 {
			return d.fail(typOff+4, nil, "alignment %d is not a power of two", a)
		}
		f.Alignment = int(a)
	}
	f.kvIdx[key] = len(f.KV)
	f.KV = append(f.KV, KV{Key: key, Value: v})
	return nil
}

// value decodes a value of type t; depth counts the enclosing arrays.
func (d *decoder) value(t ValueType, depth int) (Value, error) {
	what := t.String() + " value"
	switch t {
	case ValueUint8, ValueInt8, ValueBool:
		b, err := d.fixed(1, what)
		if err != nil {
			return Value{}, err
		}
		switch t {
		case ValueUint8:
			return Uint8(b[0]), nil
		case ValueInt8:
			return Int8(int8(b[0])), nil
		}
		return Bool(b[0] != 0), nil
	case ValueUint16, ValueInt16:
		b, err := d.fixed(2, what)
		if err != nil {
			return Value{}, err
		}
		x := binary.LittleEndian.Uint16(b)
		if t == ValueInt16 {
			return Int16(int16(x)), nil
		}
		return Uint16(x), nil
	case ValueUint32, ValueInt32, ValueFloat32:
		x, err := d.u32(what)
		if err != nil {
			return Value{}, err
		}
		switch t {
		case ValueInt32:
			return Int32(int32(x)), nil
		case ValueFloat32:
			return Float32(math.Float32frombits(x)), nil
		}
		return Uint32(x), nil
	case ValueUint64, ValueInt64, ValueFloat64:
		x, err := d.u64(what)
		if err != nil {
			return Value{}, err
		}
		switch t {
		case ValueInt64:
			return Int64(int64(x)), nil
		case ValueFloat64:
			return Float64(math.Float64frombits(x)), nil
		}
		return Uint64(x), nil
	case ValueString:
		s, err := d.str("string value", -1)
		if err != nil {
			return Value{}, err
		}
		return String(s), nil
	}
	return d.array(depth)
}

// array decodes an array value (element type, count, elements).
func (d *decoder) array(depth int) (Value, error) {
	elem, n, err := d.arrayHead(depth)
	if err != nil {
		return Value{}, err
	}
	switch elem {
	case ValueUint8:
		return readScalars[uint8](d, n, elem)
	case ValueInt8:
		return readScalars[int8](d, n, elem)
	case ValueUint16:
		return readScalars[uint16](d, n, elem)
	case ValueInt16:
		return readScalars[int16](d, n, elem)
	case ValueUint32:
		return readScalars[uint32](d, n, elem)
	case ValueInt32:
		return readScalars[int32](d, n, elem)
	case ValueFloat32:
		return readScalars[float32](d, n, elem)
	case ValueUint64:
		return readScalars[uint64](d, n, elem)
	case ValueInt64:
		return readScalars[int64](d, n, elem)
	case ValueFloat64:
		return readScalars[float64](d, n, elem)
	case ValueBool:
		return d.boolArray(n)
	case ValueString:
		return d.stringArray(n)
	}
	xs := make([]Value, n)
	for i := range xs {
		v, err := d.array(depth + 1)
		if err != nil {
			return Value{}, err
		}
		xs[i] = v
	}
	return ArrayOfArrays(xs), nil
}

// arrayHead decodes an array's element type and length, which must fit
// the rest of the file.
func (d *decoder) arrayHead(depth int) (ValueType, uint64, error) {
	start := d.off
	et, err := d.u32("array element type")
	if err != nil {
		return 0, 0, err
	}
	elem := ValueType(et)
	if !elem.valid() {
		return 0, 0, d.fail(start, nil, "invalid array element type %d", et)
	}
	if elem == ValueArray && depth+1 >= maxArrayDepth {
		return 0, 0, d.fail(start, nil, "arrays nested deeper than %d", maxArrayDepth)
	}
	n, err := d.u64("array length")
	if err != nil {
		return 0, 0, err
	}
	if left := uint64(d.size - d.off); n > left/uint64(elem.minSize()) {
		return 0, 0, d.fail(start+4, io.ErrUnexpectedEOF,
			"array of %d %v elements needs at least %d bytes per element, %d bytes left in the file",
			n, elem, elem.minSize(), left)
	}
	return elem, n, nil
}

// boolArray decodes the n elements of a bool array.
func (d *decoder) boolArray(n uint64) (Value, error) {
	b := make([]byte, n)
	if err := d.readFull(b, "bool array"); err != nil {
		return Value{}, err
	}
	xs := make([]bool, n)
	for i, c := range b {
		xs[i] = c != 0
	}
	return Array(xs), nil
}

// stringArray decodes the n elements of a string array.
func (d *decoder) stringArray(n uint64) (Value, error) {
	xs := make([]string, n)
	for i := range xs {
		s, err := d.str("string array element", -1)
		if err != nil {
			return Value{}, err
		}
		xs[i] = s
	}
	return Array(xs), nil
}

// readScalars reads n fixed-size little-endian elements, whose size the
// caller has checked against the file size.
func readScalars[T uint8 | int8 | uint16 | int16 | uint32 | int32 | float32 | uint64 | int64 | float64](
	d *decoder, n uint64, elem ValueType) (Value, error) {
	xs := make([]T, n)
	start := d.off
	if err := binary.Read(d.r, binary.LittleEndian, xs); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Value{}, d.fail(start, err, "reading %v array", elem)
	}
	d.off += int64(n) * elem.minSize()
	return Array(xs), nil
}

// tensorInfo decodes one tensor info into f and returns the file offset of
// its offset field.
func (d *decoder) tensorInfo(f *File) (int64, error) {
	name, err := d.tensorName(f)
	if err != nil {
		return 0, err
	}
	dimsOff := d.off
	dims, nelem, err := d.dims()
	if err != nil {
		return 0, err
	}
	typ, err := d.tensorType()
	if err != nil {
		return 0, err
	}
	ne0 := 1
	if len(dims) > 0 {
		ne0 = dims[0]
	}
	if ne0%typ.BlockSize() != 0 {
		return 0, d.fail(dimsOff, nil, "ne[0] = %d is not a multiple of the %v block size %d", ne0, typ, typ.BlockSize())
	}
	size, ok := typ.Size(int64(nelem))
	if !ok {
		return 0, d.fail(dimsOff, nil, "size in bytes of %v dims %v overflows int64", typ, dims)
	}
	offOff := d.off
	offset, err := d.u64("offset")
	if err != nil {
		return 0, err
	}
	if offset > math.MaxInt64 {
		return 0, d.fail(offOff, nil, "offset %d is too large", offset)
	}
	f.tIdx[name] = len(f.Tensors)
	f.Tensors = append(f.Tensors, TensorInfo{Name: name, Type: typ, Dims: dims, Offset: int64(offset), Size: size})
	return offOff, nil
}

// tensorName decodes a tensor's name, which must be valid UTF-8, not empty
// and new in f, and makes it the tensor errors name.
func (d *decoder) tensorName(f *File) (string, error) {
	d.tensor = ""
	nameOff := d.off
	name, err := d.str("tensor name", MaxNameLen)
	if err != nil {
		return "", err
	}
	d.tensor = name
	if name == "" {
		return "", d.fail(nameOff, nil, "empty tensor name (GGUF tensor names are 1 to %d bytes)", MaxNameLen)
	}
	if !utf8.ValidString(name) {
		return "", d.fail(nameOff, nil, "tensor name is not valid UTF-8 (GGUF strings are UTF-8); the file is damaged or was not written by a GGUF writer")
	}
	if _, dup := f.tIdx[name]; dup {
		return "", d.fail(nameOff, nil, "duplicate tensor name")
	}
	return name, nil
}

// dims decodes a tensor's n_dims and dimensions and returns them with
// their product, which must fit an int64.
func (d *decoder) dims() ([]int, uint64, error) {
	dimsOff := d.off
	nDims, err := d.u32("n_dims")
	if err != nil {
		return nil, 0, err
	}
	if nDims > MaxDims {
		return nil, 0, d.fail(dimsOff, nil, "n_dims %d > %d", nDims, MaxDims)
	}
	dims := make([]int, nDims)
	nelem := uint64(1)
	overflow := false
	for i := range dims {
		off := d.off
		x, err := d.u64("dimension")
		if err != nil {
			return nil, 0, err
		}
		if x > math.MaxInt64 || x > uint64(math.MaxInt) {
			return nil, 0, d.fail(off, nil, "dimension %d is %d, too large", i, x)
		}
		dims[i] = int(x)
		hi, lo := bits.Mul64(nelem, x)
		nelem = lo
		overflow = overflow || hi != 0 || lo > math.MaxInt64
	}
	if overflow {
		return nil, 0, d.fail(dimsOff, nil, "number of elements of dims %v overflows int64", dims)
	}
	return dims, nelem, nil
}

// tensorType decodes a tensor's ggml type, which must be Known.
func (d *decoder) tensorType() (Type, error) {
	typOff := d.off
	tv, err := d.u32("type")
	if err != nil {
		return 0, err
	}
	typ := Type(tv)
	if !typ.Known() {
		return 0, d.failKind(fileerr.Unsupported, typOff, "unknown ggml type %d", tv)
	}
	return typ, nil
}

// checkRanges checks that every tensor's data is aligned, inside the file
// and disjoint from the others. infoOff[i] is the position of tensor i's
// offset field, reported in errors.
func (d *decoder) checkRanges(f *File, infoOff []int64) error {
	align := int64(f.Alignment)
	data := d.size - f.DataOffset // bytes available for tensor data
	for i, t := range f.Tensors {
		d.tensor = t.Name
		if t.Offset%align != 0 {
			return d.fail(infoOff[i], nil, "data offset %d is not a multiple of the alignment %d", t.Offset, align)
		}
		if t.Offset > data || t.Size > data-t.Offset {
			return d.fail(infoOff[i], io.ErrUnexpectedEOF, "data [%d, %d) extends beyond the end of the file (%d bytes)",
				f.DataOffset+t.Offset, uint64(f.DataOffset+t.Offset)+uint64(t.Size), d.size)
		}
	}
	order := make([]int, 0, len(f.Tensors))
	for i, t := range f.Tensors {
		if t.Size > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmpInt64(f.Tensors[a].Offset, f.Tensors[b].Offset)
	})
	for k := 1; k < len(order); k++ {
		prev, cur := f.Tensors[order[k-1]], f.Tensors[order[k]]
		if cur.Offset < prev.Offset+prev.Size {
			d.tensor = cur.Name
			return d.fail(infoOff[order[k]], nil, "data [%d, %d) overlaps tensor %s at [%d, %d)",
				cur.Offset, cur.Offset+cur.Size, strconv.Quote(prev.Name), prev.Offset, prev.Offset+prev.Size)
		}
	}
	d.tensor = ""
	return nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TensorBytes returns a copy of the raw data of the named tensor: Size
// bytes in ggml's storage layout (for block types, the blocks of each row
// in order). A missing tensor gives an error wrapping ErrNoTensor.
func (f *File) TensorBytes(name string) ([]byte, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("gguf: %s: tensor %q: %w", f.Name, name, ErrNoTensor)
	}
	return f.readData(t)
}

// TensorRange returns n bytes of the named tensor's data from byte off,
// for a reader that takes a large tensor piece by piece: as TensorData
// does, a view of the mapping when Open mapped the file, else a copy.
func (f *File) TensorRange(name string, off, n int64) ([]byte, error) {
	t, ok := f.Tensor(name)
	switch {
	case !ok:
		return nil, fmt.Errorf("gguf: %s: tensor %q: %w", f.Name, name, ErrNoTensor)
	case off < 0 || n < 0 || off > t.Size || n > t.Size-off:
		return nil, fmt.Errorf("gguf: %s: tensor %q: bytes [%d, %d+%d) outside its %d", f.Name, name, off, off, n, t.Size)
	}
	if v, ok := f.view(t); ok {
		return v[off : off+n : off+n], nil
	}
	return f.readRange(t, off, n)
}

// TensorData returns the raw data of the named tensor as TensorBytes
// does, but as a view of the mapping when Open mapped the file: no copy,
// valid until Close, and not to be written to. Otherwise it returns a
// copy. A missing tensor gives an error wrapping ErrNoTensor.
func (f *File) TensorData(name string) ([]byte, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("gguf: %s: tensor %q: %w", f.Name, name, ErrNoTensor)
	}
	return f.dataOf(t)
}

// dataOf returns the data of t: a view of the mapping, or a copy.
func (f *File) dataOf(t TensorInfo) ([]byte, error) {
	if v, ok := f.view(t); ok {
		return v, nil
	}
	return f.readData(t)
}

// ReleaseRange drops the pages of n bytes of the named tensor's data from
// byte off (clipped to the tensor) from the process's resident memory, when
// Open mapped the file: they stay in the page cache, and a later read maps
// them again. A converter streaming a large tensor calls it for each piece
// it is done with. It does nothing for a file read through ReadAt or an
// unknown name.
func (f *File) ReleaseRange(name string, off, n int64) {
	t, ok := f.Tensor(name)
	if !ok {
		return
	}
	if v, ok := f.view(t); ok {
		inputfile.ReleaseRange(v, off, n)
	}
}

// view returns the mapped data of t, and false when its file is not
// mapped or is closed.
func (f *File) view(t TensorInfo) ([]byte, bool) {
	if f.parts != nil {
		return f.parts[f.partOf[t.Name]].view(t)
	}
	if f.data == nil || f.closed.Load() {
		return nil, false
	}
	pos := f.DataOffset + t.Offset
	return f.data[pos : pos+t.Size : pos+t.Size], true
}

// readData reads the data of t.
func (f *File) readData(t TensorInfo) ([]byte, error) { return f.readRange(t, 0, t.Size) }

// readRange reads n bytes of t's data from byte off.
func (f *File) readRange(t TensorInfo, off, n int64) ([]byte, error) {
	if f.parts != nil {
		return f.parts[f.partOf[t.Name]].readRange(t, off, n)
	}
	if v, ok := f.view(t); ok {
		return bytes.Clone(v[off : off+n]), nil
	}
	if f.closed.Load() {
		return nil, fmt.Errorf("gguf: %s: tensor %q: %w", f.Name, t.Name, os.ErrClosed)
	}
	b := make([]byte, n)
	pos := f.DataOffset + t.Offset + off
	if n, err := f.r.ReadAt(b, pos); n < len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		e := &FormatError{Format: format, Path: f.Name, Tensor: t.Name, Offset: pos + int64(n),
			Reason: "reading tensor data", Err: err}
		if err == io.ErrUnexpectedEOF {
			e.Kind = fileerr.Truncated
		}
		return nil, e
	}
	return b, nil
}
