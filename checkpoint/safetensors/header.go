package safetensors

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/tensorcast-go/tensorcast/internal/fileerr"
)

const (
	// MaxHeaderSize is the largest header length accepted on read and
	// produced on write, in bytes. It is the limit of the reference reader.
	MaxHeaderSize = 100_000_000

	// MaxTensors is the largest number of tensors one file's header may
	// declare, and the largest number of __metadata__ keys; an index's
	// weight_map may name at most as many tensors. A header past it is
	// refused while it is parsed, so the work spent on a header is bounded
	// whatever it declares. The largest published checkpoints hold about
	// 150,000 tensors in all their shards together.
	MaxTensors = 1 << 18

	// MaxRank is the largest number of dimensions of a tensor's shape (the
	// limit of PyTorch and NumPy).
	MaxRank = 64

	// prefixSize is the size of the little-endian u64 header length that
	// starts every file.
	prefixSize = 8
	// headerAlign is the multiple to which the writer pads the header JSON
	// with spaces, so the data buffer starts 8-byte aligned.
	headerAlign = 8
	// metadataKey is the reserved header key holding string metadata.
	metadataKey = "__metadata__"
)

// TensorInfo describes one tensor stored in a file.
type TensorInfo struct {
	// Name is the tensor's key in the header.
	Name string
	// DType is the element type.
	DType DType
	// Shape holds the dimensions in row-major (C) order. It is empty for a
	// 0-d tensor. For sub-byte dtypes it counts logical elements, not
	// bytes.
	Shape []int
	// Offset is the absolute byte offset of the tensor's first byte in the
	// file (the header's data_offsets begin plus 8 plus the header length).
	Offset int64
	// Size is the tensor's size in bytes.
	Size int64
}

// NumElements returns the number of elements: the product of Shape, 1 for
// a 0-d tensor.
func (t TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// clone returns a copy of t that shares no memory with it.
func (t TensorInfo) clone() TensorInfo {
	t.Shape = slices.Clone(t.Shape)
	if t.Shape == nil {
		t.Shape = []int{}
	}
	return t
}

// header is a parsed and validated file header.
type header struct {
	metadata  map[string]string
	tensors   []TensorInfo // sorted by offset
	dataStart int64        // offset of the data buffer: 8 + header length
}

// readHeader reads, parses and validates the header of a file of size bytes
// read through ra. The header length is checked against MaxHeaderSize and
// against the file size before the header buffer is allocated. Errors are
// *FormatError values without Path.
func readHeader(ra io.ReaderAt, size int64) (*header, error) {
	if size < prefixSize {
		return nil, fileerr.New(formatName, 0, io.ErrUnexpectedEOF,
			fmt.Sprintf("file is %d bytes, too short for the 8-byte header length", max(size, 0)))
	}
	var p [prefixSize]byte
	if err := readFullAt(ra, p[:], 0); err != nil {
		return nil, fileerr.New(formatName, 0, err, "reading header length")
	}
	n := binary.LittleEndian.Uint64(p[:])
	if n > MaxHeaderSize {
		// No safetensors writer makes such a header: the first 8 bytes of
		// another kind of file read as a huge length.
		return nil, &FormatError{Format: formatName, Offset: 0, Kind: fileerr.NotFormat,
			Reason: fmt.Sprintf("header length %d exceeds the limit of %d bytes", n, MaxHeaderSize)}
	}
	if n > uint64(size-prefixSize) {
		return nil, fileerr.New(formatName, 0, io.ErrUnexpectedEOF,
			fmt.Sprintf("header length %d exceeds the %d bytes after the length prefix", n, size-prefixSize))
	}
	hdr := make([]byte, n)
	if err := readFullAt(ra, hdr, prefixSize); err != nil {
		return nil, fileerr.New(formatName, prefixSize, err, "reading header")
	}
	return parseHeader(hdr, size)
}

// readFullAt fills b from ra at off. A short read is io.ErrUnexpectedEOF.
func readFullAt(ra io.ReaderAt, b []byte, off int64) error {
	n, err := ra.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// rawTensor is a header entry before validation.
type rawTensor struct {
	name       string
	dtype      DType
	shape      []uint64
	begin, end uint64
}

// headerParser walks the header JSON token by token, so that duplicate keys,
// which encoding/json would silently merge, are detected.
type headerParser struct {
	dec *json.Decoder
	hdr []byte
}

// parseHeader parses and validates hdr, the JSON header of a file of
// fileSize bytes, with every rule of the reference reader.
func parseHeader(hdr []byte, fileSize int64) (*header, error) {
	if len(hdr) == 0 || hdr[0] != '{' {
		return nil, &FormatError{Format: formatName, Offset: prefixSize, Kind: fileerr.NotFormat,
			Reason: "header JSON does not start with '{'"}
	}
	if !utf8.Valid(hdr) {
		return nil, &FormatError{Format: formatName, Offset: prefixSize + int64(invalidUTF8(hdr)),
			Reason: "header is not valid UTF-8"}
	}

	p := &headerParser{dec: json.NewDecoder(bytes.NewReader(hdr)), hdr: hdr}
	p.dec.UseNumber()
	if _, err := p.token(); err != nil {
		return nil, err
	}
	metadata, raw, err := p.entries()
	if err != nil {
		return nil, err
	}
	if _, err := p.token(); err != nil { // the closing '}'
		return nil, err
	}
	if tok, err := p.dec.Token(); err != io.EOF {
		reason := "unexpected data after the header JSON object"
		if err == nil {
			reason += fmt.Sprintf(" (%s)", describe(tok))
		}
		return nil, &FormatError{Format: formatName, Offset: p.offset(), Reason: reason}
	}
	return validate(metadata, raw, len(hdr), fileSize)
}

// invalidUTF8 returns the offset of the first byte of b that is not valid
// UTF-8 (len(b) if there is none).
func invalidUTF8(b []byte) int {
	i := 0
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	return i
}

// entries parses the header object's entries, after its opening '{': the
// __metadata__ and at most MaxTensors tensors, no key twice.
func (p *headerParser) entries() (map[string]string, []rawTensor, error) {
	var (
		metadata map[string]string
		raw      []rawTensor
		seen     = make(map[string]struct{})
	)
	for p.dec.More() {
		off := p.offset()
		key, err := p.key()
		if err != nil {
			return nil, nil, err
		}
		if _, dup := seen[key]; dup {
			e := &FormatError{Format: formatName, Offset: off, Reason: "duplicate key in header"}
			if key == metadataKey {
				e.Reason = "duplicate __metadata__ key in header"
			} else {
				e.Tensor = key
			}
			return nil, nil, e
		}
		seen[key] = struct{}{}
		if key == metadataKey {
			if metadata, err = p.metadata(); err != nil {
				return nil, nil, err
			}
			continue
		}
		if len(raw) == MaxTensors {
			return nil, nil, &FormatError{Format: formatName, Offset: off, Kind: fileerr.TooLarge, Reason: fmt.Sprintf(
				"header declares more than %d tensors, the limit of one file", MaxTensors)}
		}
		t, err := p.tensor(key)
		if err != nil {
			return nil, nil, err
		}
		raw = append(raw, t)
	}
	return metadata, raw, nil
}

// validate checks that the tensors tile the data buffer of a file of
// fileSize bytes whose header is n bytes long, and converts them to
// TensorInfo values sorted by offset.
func validate(metadata map[string]string, raw []rawTensor, n int, fileSize int64) (*header, error) {
	dataStart := int64(prefixSize + n)
	bufLen := uint64(fileSize - dataStart)
	slices.SortFunc(raw, func(a, b rawTensor) int {
		return cmp.Or(cmp.Compare(a.begin, b.begin), cmp.Compare(a.end, b.end), cmp.Compare(a.name, b.name))
	})
	h := &header{metadata: metadata, dataStart: dataStart, tensors: make([]TensorInfo, 0, len(raw))}
	var start uint64
	prev := ""
	for _, t := range raw {
		fail := func(format string, args ...any) error {
			return &FormatError{Format: formatName, Tensor: t.name, Offset: dataStart + int64(start), Reason: fmt.Sprintf(format, args...)}
		}
		// The checks of one tensor's own offsets come first, so a reversed
		// or out-of-file pair is reported as such, not as a hole or overlap
		// it causes among the sorted tensors.
		switch {
		case t.end < t.begin:
			return nil, fail("data_offsets [%d, %d] end before they begin (the pair is [begin, end) in the data buffer)", t.begin, t.end)
		case t.end > bufLen:
			e := fail("data_offsets [%d, %d] extend past the end of the file (the data buffer is %d bytes)",
				t.begin, t.end, bufLen).(*FormatError)
			e.Err, e.Kind = io.ErrUnexpectedEOF, fileerr.Truncated
			return nil, e
		case t.begin > start:
			return nil, fail("data_offsets [%d, %d] leave a hole of %d bytes after offset %d of the data buffer",
				t.begin, t.end, t.begin-start, start)
		case t.begin < start:
			return nil, fail("data_offsets [%d, %d] overlap tensor %s, which ends at offset %d of the data buffer",
				t.begin, t.end, strconv.Quote(clip(prev)), start)
		}
		_, nbytes, err := byteSize(t.dtype, t.shape)
		if err != nil {
			return nil, fail("%v", err)
		}
		if nbytes != t.end-t.begin {
			return nil, fail("shape %s of %v needs %d bytes, but data_offsets [%d, %d] hold %d",
				clip(formatShape(t.shape)), t.dtype, nbytes, t.begin, t.end, t.end-t.begin)
		}
		shape := make([]int, len(t.shape))
		for i, d := range t.shape {
			if d > math.MaxInt {
				return nil, fail("dimension %d of shape %s is too large", i, clip(formatShape(t.shape)))
			}
			shape[i] = int(d)
		}
		h.tensors = append(h.tensors, TensorInfo{
			Name:   t.name,
			DType:  t.dtype,
			Shape:  shape,
			Offset: dataStart + int64(t.begin),
			Size:   int64(nbytes),
		})
		start, prev = t.end, t.name
	}
	if start != bufLen {
		return nil, &FormatError{Format: formatName, Offset: dataStart + int64(start),
			Reason: fmt.Sprintf("the tensors cover %d bytes of the data buffer, but the file holds %d", start, bufLen)}
	}
	return h, nil
}

// offset returns the absolute file offset of the next token: the decoder's
// position moved past whitespace and separators.
func (p *headerParser) offset() int64 {
	i := p.dec.InputOffset()
	for i < int64(len(p.hdr)) {
		switch p.hdr[i] {
		case ' ', '\t', '\r', '\n', ':', ',':
			i++
			continue
		}
		break
	}
	return prefixSize + i
}

// wrap turns a JSON decoding error into a *FormatError.
func (p *headerParser) wrap(tensor string, err error) error {
	off := p.offset()
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		off = prefixSize + se.Offset
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		off, err = prefixSize+int64(len(p.hdr)), io.ErrUnexpectedEOF
	}
	e := fileerr.New(formatName, off, err, "malformed header JSON")
	e.Tensor = tensor
	return e
}

// token returns the next JSON token.
func (p *headerParser) token() (json.Token, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.wrap("", err)
	}
	return tok, nil
}

// key returns the next object key.
func (p *headerParser) key() (string, error) {
	tok, err := p.token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok { // not reachable: the decoder rejects non-string keys
		return "", &FormatError{Format: formatName, Offset: p.offset(), Reason: "object key is " + describe(tok)}
	}
	return s, nil
}

// metadata parses the value of __metadata__: null or an object whose values
// are all strings.
func (p *headerParser) metadata() (map[string]string, error) {
	off := p.offset()
	tok, err := p.token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case nil:
		return nil, nil
	case json.Delim('{'):
	default:
		return nil, &FormatError{Format: formatName, Offset: off, Reason: "__metadata__ is " + describe(tok) + ", not an object of strings"}
	}
	m := make(map[string]string)
	for p.dec.More() {
		off := p.offset()
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, &FormatError{Format: formatName, Offset: off, Reason: fmt.Sprintf("duplicate key %s in __metadata__", strconv.Quote(clip(k)))}
		}
		if len(m) == MaxTensors {
			return nil, &FormatError{Format: formatName, Offset: off, Kind: fileerr.TooLarge, Reason: fmt.Sprintf(
				"__metadata__ has more than %d keys, the limit: the file is damaged or hostile", MaxTensors)}
		}
		off = p.offset()
		tok, err := p.token()
		if err != nil {
			return nil, err
		}
		v, ok := tok.(string)
		if !ok {
			return nil, &FormatError{Format: formatName, Offset: off,
				Reason: fmt.Sprintf("__metadata__ value for key %s is %s, not a string", strconv.Quote(clip(k)), describe(tok))}
		}
		m[k] = v
	}
	if _, err := p.token(); err != nil {
		return nil, err
	}
	return m, nil
}

// tensorFields are the fields of a tensor's header entry, all required.
var tensorFields = [...]string{"dtype", "shape", "data_offsets"}

// tensor parses the header entry of tensor name.
func (p *headerParser) tensor(name string) (rawTensor, error) {
	t := rawTensor{name: name}
	off := p.offset()
	tok, err := p.dec.Token()
	if err != nil {
		return t, p.wrap(name, err)
	}
	if tok != json.Delim('{') {
		return t, tensorError(name, off, "header entry is %s, not an object", describe(tok))
	}
	var have [len(tensorFields)]bool
	for p.dec.More() {
		if err := p.field(&t, &have); err != nil {
			return t, err
		}
	}
	if _, err := p.dec.Token(); err != nil {
		return t, p.wrap(name, err)
	}
	for i, f := range tensorFields {
		if !have[i] {
			return t, tensorError(name, off, "missing field %q", f)
		}
	}
	return t, nil
}

// tensorError is the *FormatError of tensor name's header entry at off.
func tensorError(name string, off int64, format string, args ...any) *FormatError {
	return &FormatError{Format: formatName, Tensor: name, Offset: off,
		Reason: fmt.Sprintf(format, args...)}
}

// field parses one field of t's header entry into t; have records which
// of tensorFields were seen, each at most once. Unknown fields are
// skipped, as by the reference reader.
func (p *headerParser) field(t *rawTensor, have *[len(tensorFields)]bool) error {
	off := p.offset()
	tok, err := p.dec.Token()
	if err != nil {
		return p.wrap(t.name, err)
	}
	field, _ := tok.(string)
	i := slices.Index(tensorFields[:], field)
	if i < 0 {
		var skip json.RawMessage
		if err := p.dec.Decode(&skip); err != nil {
			return p.wrap(t.name, err)
		}
		return nil
	}
	if have[i] {
		return tensorError(t.name, off, "duplicate field %q", field)
	}
	have[i] = true
	switch field {
	case "dtype":
		t.dtype, err = p.dtype(t.name)
	case "shape":
		t.shape, err = p.uints(t.name, "shape", -1)
	default:
		var o []uint64
		if o, err = p.uints(t.name, "data_offsets", 2); err == nil {
			t.begin, t.end = o[0], o[1]
		}
	}
	return err
}

// dtype parses the dtype of tensor name: a string naming a DType.
func (p *headerParser) dtype(name string) (DType, error) {
	off := p.offset()
	tok, err := p.dec.Token()
	if err != nil {
		return 0, p.wrap(name, err)
	}
	s, ok := tok.(string)
	if !ok {
		return 0, tensorError(name, off, "dtype is %s, not a string", describe(tok))
	}
	d, ok := dtypeByName[s]
	if !ok {
		return 0, tensorError(name, off, "unknown dtype %s", strconv.Quote(clip(s)))
	}
	return d, nil
}

// uints parses an array of unsigned integers (each fitting in a u64) for
// field of tensor name; want is the required length, or -1 for any.
func (p *headerParser) uints(name, field string, want int) ([]uint64, error) {
	off := p.offset()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.wrap(name, err)
	}
	if tok != json.Delim('[') {
		return nil, &FormatError{Format: formatName, Tensor: name, Offset: off,
			Reason: fmt.Sprintf("%s is %s, not an array of integers", field, describe(tok))}
	}
	vals := []uint64{}
	for p.dec.More() {
		off := p.offset()
		switch {
		case want >= 0 && len(vals) == want:
			return nil, &FormatError{Format: formatName, Tensor: name, Offset: off,
				Reason: fmt.Sprintf("%s has more than %d elements, want %d", field, want, want)}
		case want < 0 && len(vals) == MaxRank:
			return nil, &FormatError{Format: formatName, Tensor: name, Offset: off,
				Reason: fmt.Sprintf("%s has more than %d dimensions, the limit (MaxRank)", field, MaxRank)}
		}
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.wrap(name, err)
		}
		num, ok := tok.(json.Number)
		if !ok {
			return nil, &FormatError{Format: formatName, Tensor: name, Offset: off,
				Reason: fmt.Sprintf("%s element is %s, not an integer", field, describe(tok))}
		}
		v, err := strconv.ParseUint(string(num), 10, 64)
		if err != nil {
			return nil, &FormatError{Format: formatName, Tensor: name, Offset: off,
				Reason: fmt.Sprintf("%s element %s is not an integer in [0, 2^64)", field, clip(string(num)))}
		}
		vals = append(vals, v)
	}
	if _, err := p.dec.Token(); err != nil {
		return nil, p.wrap(name, err)
	}
	if want >= 0 && len(vals) != want {
		return nil, &FormatError{Format: formatName, Tensor: name, Offset: off,
			Reason: fmt.Sprintf("%s has %d elements, want %d", field, len(vals), want)}
	}
	return vals, nil
}

// describe names the JSON type of tok for error messages.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return "'" + v.String() + "'"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

// TensorSpec declares a tensor to be written: its name, dtype and shape.
type TensorSpec struct {
	// Name is the tensor's key in the header. It must be valid UTF-8,
	// unique, and not "__metadata__".
	Name string
	// DType is the element type.
	DType DType
	// Shape holds the dimensions (none for a 0-d tensor). For sub-byte
	// dtypes it counts logical elements, and the total number of bits must
	// be a multiple of 8.
	Shape []int
}

// layout computes the on-disk layout of specs as the reference writer does:
// tensors sorted by descending dtype (alignment) order, then by name, placed
// back to back, with the header JSON padded with spaces to a multiple of 8.
// It returns the complete file prefix (length, JSON and padding) and the
// tensors in file order with absolute offsets.
func layout(specs []TensorSpec, metadata map[string]string) ([]byte, []TensorInfo, error) {
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, nil, fmt.Errorf("safetensors: metadata key %s: key or value is not valid UTF-8", strconv.Quote(clip(k)))
		}
	}
	infos, err := specInfos(specs)
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(infos, func(a, b TensorInfo) int {
		return cmp.Or(cmp.Compare(b.DType, a.DType), cmp.Compare(a.Name, b.Name))
	})

	b := make([]byte, prefixSize, 256)
	b = append(b, '{')
	b = appendMetadata(b, metadata)
	b, size, err := appendTensors(b, infos, len(metadata) > 0)
	if err != nil {
		return nil, nil, err
	}
	b = append(b, '}')
	for (len(b)-prefixSize)%headerAlign != 0 {
		b = append(b, ' ')
	}
	n := len(b) - prefixSize
	if n > MaxHeaderSize {
		return nil, nil, fmt.Errorf("safetensors: header of %d bytes exceeds the limit of %d", n, MaxHeaderSize)
	}
	if uint64(len(b))+size > math.MaxInt64 {
		return nil, nil, fmt.Errorf("safetensors: file size overflows int64")
	}
	binary.LittleEndian.PutUint64(b, uint64(n))
	pos := int64(len(b))
	for i := range infos {
		infos[i].Offset = pos
		pos += infos[i].Size
	}
	return b, infos, nil
}

// specInfos checks specs (names unique, valid UTF-8 and not __metadata__,
// dtypes valid, shapes not negative and not too large) and returns their
// TensorInfo values without offsets, in the order of specs.
func specInfos(specs []TensorSpec) ([]TensorInfo, error) {
	infos := make([]TensorInfo, len(specs))
	seen := make(map[string]struct{}, len(specs))
	for i, s := range specs {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("safetensors: tensor %s: %s", strconv.Quote(clip(s.Name)), fmt.Sprintf(format, args...))
		}
		switch _, dup := seen[s.Name]; {
		case dup:
			return nil, fail("duplicate tensor name")
		case s.Name == metadataKey:
			return nil, fail("the name is reserved for metadata")
		case !utf8.ValidString(s.Name):
			return nil, fail("the name is not valid UTF-8")
		case !s.DType.Valid():
			return nil, fail("invalid dtype %v", s.DType)
		}
		seen[s.Name] = struct{}{}
		dims := make([]uint64, len(s.Shape))
		for j, d := range s.Shape {
			if d < 0 {
				return nil, fail("negative dimension in shape %s", clip(formatShape(s.Shape)))
			}
			dims[j] = uint64(d)
		}
		_, nbytes, err := byteSize(s.DType, dims)
		if err != nil {
			return nil, fail("%v", err)
		}
		if nbytes > math.MaxInt64 {
			return nil, fail("shape %s of %v is too large", clip(formatShape(s.Shape)), s.DType)
		}
		infos[i] = TensorInfo{Name: s.Name, DType: s.DType, Shape: slices.Clone(s.Shape), Size: int64(nbytes)}
		if infos[i].Shape == nil {
			infos[i].Shape = []int{}
		}
	}
	return infos, nil
}

// appendMetadata appends the header's __metadata__ entry, its keys sorted,
// or nothing for empty metadata.
func appendMetadata(b []byte, metadata map[string]string) []byte {
	if len(metadata) == 0 {
		return b
	}
	b = appendString(b, metadataKey)
	b = append(b, ":{"...)
	for i, k := range slices.Sorted(maps.Keys(metadata)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, metadata[k])
	}
	return append(b, '}')
}

// appendTensors appends the header entries of infos, placed back to back
// from offset 0 of the data buffer (after a comma if comma is set), and
// returns the buffer and the size of the tensor data.
func appendTensors(b []byte, infos []TensorInfo, comma bool) ([]byte, uint64, error) {
	var off uint64
	for i, t := range infos {
		if i > 0 || comma {
			b = append(b, ',')
		}
		b = appendString(b, t.Name)
		b = append(b, `:{"dtype":"`...)
		b = append(b, t.DType.String()...)
		b = append(b, `","shape":[`...)
		for j, d := range t.Shape {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(d), 10)
		}
		b = append(b, `],"data_offsets":[`...)
		b = strconv.AppendUint(b, off, 10)
		b = append(b, ',')
		if off+uint64(t.Size) < off || off+uint64(t.Size) > math.MaxInt64 {
			return nil, 0, fmt.Errorf("safetensors: total tensor size overflows int64")
		}
		off += uint64(t.Size)
		b = strconv.AppendUint(b, off, 10)
		b = append(b, "]}"...)
	}
	return b, off, nil
}

// appendString appends s as a JSON string, escaped as serde_json does: '"',
// '\\' and control characters only, with the short forms \b \f \n \r \t.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c >= 0x20:
			b = append(b, c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
	}
	return append(b, '"')
}
