package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"unicode/utf8"

	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

// QuantizationVersion is the value of general.quantization_version the
// Writer adds when a tensor is quantized (ggml's GGML_QNT_VERSION).
const QuantizationVersion = 2

// maxKeyLen is the longest metadata key the Writer accepts (GGUF keys are
// "at most 65535 bytes").
const maxKeyLen = 1<<16 - 1

// Writer builds a GGUF v3 file from metadata and tensors. Add the metadata
// with AddKV and the tensors with AddTensor, then call WriteTo or
// WriteFile. The zero Writer is ready to use.
//
// The file is laid out as ggml writes it: header, metadata in the order
// added, tensor infos in the order added, zero padding to the alignment,
// then each tensor's data followed by zero padding to the alignment, so
// tensor i's offset is the sum of the padded sizes of the tensors before
// it. The alignment is general.alignment if it was added, else 32.
type Writer struct {
	kv      []KV
	keys    map[string]bool
	tensors []writerTensor
	names   map[string]bool
}

// writerTensor is a tensor added to a Writer.
type writerTensor struct {
	name string
	typ  Type
	ne   []int  // ggml order
	size int64  // bytes of data
	data []byte // nil for a tensor declared for a Stream
}

// AddKV adds a metadata pair. Keys must be non-empty, at most 65535 bytes
// and unique; the value must be valid (made by a constructor, with arrays
// nested at most 4 deep). general.alignment must be a uint32 power of two
// that is a multiple of 8, and general.quantization_version a uint32.
func (w *Writer) AddKV(key string, v Value) error {
	if key == "" || len(key) > maxKeyLen {
		return fmt.Errorf("gguf: key of %d bytes: want 1 to %d bytes", len(key), maxKeyLen)
	}
	if w.keys[key] {
		return fmt.Errorf("gguf: duplicate key %q", key)
	}
	if err := checkValue(v, 0); err != nil {
		return fmt.Errorf("gguf: key %q: %w", key, err)
	}
	switch key {
	case KeyAlignment:
		a, ok := v.v.(uint32)
		if !ok {
			return fmt.Errorf("gguf: key %q: a %v, want uint32", key, v.typ)
		}
		if a == 0 || a&(a-1) != 0 || a%8 != 0 {
			return fmt.Errorf("gguf: key %q: %d is not a power of two multiple of 8", key, a)
		}
	case KeyQuantizationVersion:
		if _, ok := v.v.(uint32); !ok {
			return fmt.Errorf("gguf: key %q: a %v, want uint32", key, v.typ)
		}
	}
	if w.keys == nil {
		w.keys = make(map[string]bool)
	}
	w.keys[key] = true
	w.kv = append(w.kv, KV{Key: key, Value: v})
	return nil
}

// checkValue checks that v is a well-formed value; depth counts the
// enclosing arrays.
func checkValue(v Value, depth int) error {
	if v.v == nil {
		return errors.New("invalid (zero) Value")
	}
	xs, ok := v.v.([]Value)
	if !ok {
		return nil
	}
	if depth+1 >= maxArrayDepth {
		return fmt.Errorf("arrays nested deeper than %d", maxArrayDepth)
	}
	for _, x := range xs {
		if err := checkValue(x, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// AddTensor adds a tensor. shape is the row-major (PyTorch, safetensors)
// shape, outermost first, with at most 4 dimensions; it is reversed into
// ggml's ne order in the file, and a 0-d shape is stored as [1] (as ollama
// and ggml do). data holds the raw little-endian data in ggml's storage
// layout (for block types, whole blocks along the innermost dimension, made
// for example by Quantize or JoinBlocks) and must be exactly
// typ.Size(elements) bytes long; it is retained, not copied, until the
// file is written. The name must be non-empty, unique and at most 63
// bytes, the type known, and the innermost dimension a multiple of the
// type's block size.
func (w *Writer) AddTensor(name string, typ Type, shape []int, data []byte) error {
	return w.add(name, typ, shape, data, false)
}

// DeclareTensor adds a tensor whose data will be written later through the
// Stream that Create returns; the checks are those of AddTensor.
func (w *Writer) DeclareTensor(name string, typ Type, shape []int) error {
	return w.add(name, typ, shape, nil, true)
}

func (w *Writer) add(name string, typ Type, shape []int, data []byte, declared bool) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("gguf: tensor name %q of %d bytes: want 1 to %d bytes", name, len(name), MaxNameLen)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("gguf: tensor name %q is not valid UTF-8: GGUF names are UTF-8 text", name)
	}
	if w.names[name] {
		return fmt.Errorf("gguf: duplicate tensor %q", name)
	}
	if !typ.Known() {
		return fmt.Errorf("gguf: tensor %q: unknown type %v", name, typ)
	}
	if len(shape) > MaxDims {
		return fmt.Errorf("gguf: tensor %q: shape %v has more than %d dimensions", name, shape, MaxDims)
	}
	ne := slices.Clone(shape)
	slices.Reverse(ne)
	if len(ne) == 0 {
		ne = []int{1}
	}
	n := int64(1)
	for _, d := range ne {
		if d < 0 {
			return fmt.Errorf("gguf: tensor %q: negative dimension in shape %v", name, shape)
		}
		if d != 0 && n > math.MaxInt64/int64(d) {
			return fmt.Errorf("gguf: tensor %q: shape %v has too many elements", name, shape)
		}
		n *= int64(d)
	}
	if bs := typ.BlockSize(); ne[0]%bs != 0 {
		return fmt.Errorf("gguf: tensor %q: innermost dimension %d is not a multiple of the %v block size %d",
			name, ne[0], typ, bs)
	}
	size, ok := typ.Size(n)
	if !ok {
		return fmt.Errorf("gguf: tensor %q: shape %v of %v is too large", name, shape, typ)
	}
	if !declared && int64(len(data)) != size {
		return fmt.Errorf("gguf: tensor %q: %d bytes of data, shape %v of %v needs %d", name, len(data), shape, typ, size)
	}
	if w.names == nil {
		w.names = make(map[string]bool)
	}
	w.names[name] = true
	w.tensors = append(w.tensors, writerTensor{name: name, typ: typ, ne: ne, size: size, data: data})
	return nil
}

// header encodes everything before the data section, including the
// padding, and returns it with the alignment.
func (w *Writer) header() ([]byte, int64, error) {
	arch, ok := w.find(KeyArchitecture)
	if !ok && !w.notModel() {
		return nil, 0, fmt.Errorf("gguf: missing required key %s", KeyArchitecture)
	}
	if ok && arch.typ != ValueString {
		return nil, 0, fmt.Errorf("gguf: key %s is a %v, want string", KeyArchitecture, arch.typ)
	}
	kv := w.kv
	if _, ok := w.find(KeyQuantizationVersion); !ok && slices.ContainsFunc(w.tensors, func(t writerTensor) bool {
		return t.typ.Quantized()
	}) {
		kv = append(slices.Clip(kv), KV{Key: KeyQuantizationVersion, Value: Uint32(QuantizationVersion)})
	}
	align := w.Alignment()

	b := []byte(Magic)
	b = binary.LittleEndian.AppendUint32(b, Version)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(w.tensors)))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(kv)))
	for _, p := range kv {
		b = appendString(b, p.Key)
		b = binary.LittleEndian.AppendUint32(b, uint32(p.Value.typ))
		b = appendValue(b, p.Value)
	}
	var off int64
	for _, t := range w.tensors {
		b = appendString(b, t.name)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(t.ne)))
		for _, d := range t.ne {
			b = binary.LittleEndian.AppendUint64(b, uint64(d))
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(t.typ))
		b = binary.LittleEndian.AppendUint64(b, uint64(off))
		off += padded(t.size, align)
	}
	b = append(b, make([]byte, padded(int64(len(b)), align)-int64(len(b)))...)
	return b, align, nil
}

// notModel reports whether general.type was added as a string other than
// "model" (an importance matrix is "imatrix"): such a file needs no
// general.architecture, as ggml writes it.
func (w *Writer) notModel() bool {
	if v, ok := w.find(KeySplitNo); ok {
		if n, ok := v.Uint(); ok && n > 0 {
			return true // a later split: the first holds the model's keys
		}
	}
	v, ok := w.find(KeyType)
	s, isStr := v.Str()
	return ok && isStr && s != "model"
}

// find returns the value of a key added with AddKV.
func (w *Writer) find(key string) (Value, bool) {
	for _, p := range w.kv {
		if p.Key == key {
			return p.Value, true
		}
	}
	return Value{}, false
}

// padded rounds n up to a multiple of align.
func padded(n, align int64) int64 { return (n + align - 1) / align * align }

// Alignment returns the alignment of the file's tensor data: the
// general.alignment added, else DefaultAlignment.
func (w *Writer) Alignment() int64 {
	if a, ok := w.find(KeyAlignment); ok {
		return int64(a.v.(uint32))
	}
	return DefaultAlignment
}

// Size returns the size of the file WriteTo would write: the header
// with its padding, and each tensor's data (declared or added) padded to
// the alignment.
func (w *Writer) Size() (int64, error) {
	hdr, align, err := w.header()
	if err != nil {
		return 0, err
	}
	n := int64(len(hdr))
	for _, t := range w.tensors {
		n += padded(t.size, align)
	}
	return n, nil
}

// WriteTo writes the GGUF file to out and returns the number of bytes
// written. It fails without writing anything if general.architecture is
// not a string, or is missing from a model file (one without
// general.type, or with general.type "model"). When a tensor is quantized and
// general.quantization_version was not added, it is written (as uint32 2)
// after the other metadata.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if i := slices.IndexFunc(w.tensors, func(t writerTensor) bool { return t.data == nil && t.size > 0 }); i >= 0 {
		return 0, fmt.Errorf("gguf: tensor %q was declared for a Stream; WriteTo needs its data", w.tensors[i].name)
	}
	hdr, align, err := w.header()
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	n, err := bw.Write(hdr)
	total := int64(n)
	zeros := make([]byte, align)
	for _, t := range w.tensors {
		if err != nil {
			break
		}
		n, err = bw.Write(t.data)
		total += int64(n)
		if err == nil {
			n, err = bw.Write(zeros[:padded(int64(len(t.data)), align)-int64(len(t.data))])
			total += int64(n)
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return total - int64(bw.Buffered()), fmt.Errorf("gguf: write: %w", err)
	}
	return total, nil
}

// WriteFile writes the GGUF file to path atomically: it writes a temporary
// file in the same directory, syncs it to disk and renames it to path, so
// path holds either its old content or the complete new file. On error the
// temporary file is removed and path is untouched. The file gets mode 0666
// less the umask (0644 under the usual umask 022). An existing file at path
// is replaced.
func (w *Writer) WriteFile(path string) (err error) {
	if _, _, err := w.header(); err != nil {
		return err
	}
	out, err := atomicfile.Begin(path, atomicfile.Options{Force: true})
	if err != nil {
		return err // names the output
	}
	defer out.Abort() // does nothing after Commit
	f, err := os.OpenFile(out.Path(), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if _, err = w.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("gguf: %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if err = out.Commit(); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	return nil
}

// appendString appends a GGUF string: u64 length, then the bytes.
func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// appendValue appends the encoding of v (without its type id).
func appendValue(b []byte, v Value) []byte {
	le := binary.LittleEndian
	switch x := v.v.(type) {
	case uint8:
		return append(b, x)
	case int8:
		return append(b, byte(x))
	case bool:
		if x {
			return append(b, 1)
		}
		return append(b, 0)
	case uint16:
		return le.AppendUint16(b, x)
	case int16:
		return le.AppendUint16(b, uint16(x))
	case uint32:
		return le.AppendUint32(b, x)
	case int32:
		return le.AppendUint32(b, uint32(x))
	case float32:
		return le.AppendUint32(b, math.Float32bits(x))
	case uint64:
		return le.AppendUint64(b, x)
	case int64:
		return le.AppendUint64(b, uint64(x))
	case float64:
		return le.AppendUint64(b, math.Float64bits(x))
	case string:
		return appendString(b, x)
	}
	// An array: element type, count, elements.
	b = le.AppendUint32(b, uint32(v.elem))
	b = le.AppendUint64(b, uint64(v.Len()))
	switch x := v.v.(type) {
	case []string:
		for _, s := range x {
			b = appendString(b, s)
		}
	case []bool:
		for _, t := range x {
			b = appendValue(b, Bool(t))
		}
	case []Value:
		for _, e := range x {
			b = appendValue(b, e)
		}
	default: // fixed-size numbers
		var err error
		b, err = binary.Append(b, le, x)
		if err != nil {
			panic("gguf: encoding array: " + err.Error()) // unreachable: every slice type is fixed-size
		}
	}
	return b
}
