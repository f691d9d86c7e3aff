package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tensorcast-go/tensorcast/internal/fileerr"
)

const (
	// magic is the 6-byte signature at the start of every .npy file.
	magic = "\x93NUMPY"
	// maxHeaderLen bounds the header dictionary length accepted on read.
	// NumPy itself refuses headers over 10000 bytes by default.
	maxHeaderLen = 1 << 20
	// maxDims bounds the number of dimensions accepted on read and write.
	// It keeps every canonical header well below maxHeaderLen, so anything
	// Read accepts can be written back and read again.
	maxDims = 1 << 15
	// arrayAlign is the payload alignment NumPy uses when writing.
	arrayAlign = 64
	// growthAxisMaxDigits mirrors NumPy's GROWTH_AXIS_MAX_DIGITS: NumPy
	// reserves room in the header for the growth axis to be rewritten in
	// place.
	growthAxisMaxDigits = 21
)

// Header describes the array stored in a .npy file.
type Header struct {
	// DType is the element type.
	DType DType
	// BigEndian reports whether the payload is stored big-endian in the
	// file. It is always false for one-byte types. Array.Data is converted
	// to little-endian regardless.
	BigEndian bool
	// Fortran reports whether the payload is stored in Fortran
	// (column-major) order rather than C (row-major) order.
	Fortran bool
	// Shape holds the dimensions; it is empty (not nil) for a 0-d array.
	Shape []int
}

// shapeSize validates shape for elements of itemSize bytes and returns the
// element count and payload size in bytes. Like NumPy, it requires the
// product of the non-zero dimensions times itemSize to fit in an int even
// when the array is empty.
func shapeSize(shape []int, itemSize int) (count, nbytes int, err error) {
	if itemSize <= 0 {
		return 0, 0, errors.New("invalid element size")
	}
	if len(shape) > maxDims {
		return 0, 0, fmt.Errorf("%d dimensions exceed the limit of %d", len(shape), maxDims)
	}
	size := itemSize
	empty := false
	for i, d := range shape {
		switch {
		case d < 0:
			return 0, 0, fmt.Errorf("negative dimension %d at axis %d", d, i)
		case d == 0:
			empty = true
		case size > math.MaxInt/d:
			return 0, 0, fmt.Errorf("shape %s is too large: %d-byte elements overflow int",
				clip(formatShape(shape)), itemSize)
		default:
			size *= d
		}
	}
	if empty {
		return 0, 0, nil
	}
	return size / itemSize, size, nil
}

// formatShape renders shape as a Python tuple literal, as NumPy does:
// "()", "(5,)", "(2, 3)".
func formatShape(shape []int) string {
	return string(appendShape(nil, shape))
}

func appendShape(b []byte, shape []int) []byte {
	b = append(b, '(')
	for i, d := range shape {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(d), 10)
	}
	if len(shape) == 1 {
		b = append(b, ',')
	}
	return append(b, ')')
}

// ReadHeader reads the magic string, format version, header length and
// header dictionary from r, leaving r positioned at the first payload byte.
// It returns the header and the number of bytes consumed. It reads exactly
// the header bytes and nothing more. Format versions 1.0, 2.0 and 3.0 are
// supported. On failure the error is a *FormatError and the count is the
// number of bytes consumed so far.
func ReadHeader(r io.Reader) (Header, int64, error) {
	var pre [12]byte

	n, err := io.ReadFull(r, pre[:6])
	if string(pre[:n]) != magic[:n] {
		return Header{}, int64(n), kindAt(fileerr.NotFormat, 0, "bad magic (not an .npy file)")
	}
	if err != nil {
		if n == 0 && err == io.EOF {
			return Header{}, 0, errAt(0, io.ErrUnexpectedEOF, "empty input (not an .npy file)")
		}
		return Header{}, int64(n), readError(int64(n), "magic", err)
	}

	if n, err := io.ReadFull(r, pre[6:8]); err != nil {
		return Header{}, int64(6 + n), readError(int64(6+n), "format version", err)
	}
	major, minor := pre[6], pre[7]
	if major < 1 || major > 3 || minor != 0 {
		return Header{}, 8, kindAt(fileerr.Unsupported, 6,
			"unsupported format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}

	var hlen int64
	base := int64(10)
	if major == 1 {
		if n, err := io.ReadFull(r, pre[8:10]); err != nil {
			return Header{}, int64(8 + n), readError(int64(8+n), "header length", err)
		}
		hlen = int64(binary.LittleEndian.Uint16(pre[8:10]))
	} else {
		base = 12
		if n, err := io.ReadFull(r, pre[8:12]); err != nil {
			return Header{}, int64(8 + n), readError(int64(8+n), "header length", err)
		}
		hlen = int64(binary.LittleEndian.Uint32(pre[8:12]))
	}
	if hlen > maxHeaderLen {
		return Header{}, base, kindAt(fileerr.TooLarge, 8, "header length %d exceeds the limit of %d bytes", hlen, maxHeaderLen)
	}

	// hlen is bounded above, so reading it in one go is safe; ReadAll
	// still grows the buffer only as bytes arrive.
	buf, err := io.ReadAll(io.LimitReader(r, hlen))
	if err != nil {
		return Header{}, base + int64(len(buf)), readError(base+int64(len(buf)), "header", err)
	}
	if int64(len(buf)) < hlen {
		return Header{}, base + int64(len(buf)), errAt(base+int64(len(buf)), io.ErrUnexpectedEOF,
			"truncated header: length field claims %d bytes, input has %d", hlen, len(buf))
	}
	if major == 3 && !utf8.Valid(buf) {
		return Header{}, base + hlen, errAt(base, nil, "invalid header: not valid UTF-8")
	}

	p := dictParser{s: buf, allowLong: major < 3}
	h, err := p.parse()
	if err != nil {
		var pe *parseError
		if errors.As(err, &pe) {
			e := errAt(base+int64(pe.pos), nil, "invalid header: %s", pe.msg)
			e.Kind = pe.kind
			return Header{}, base + hlen, e
		}
		return Header{}, base + hlen, errAt(base, nil, "invalid header: %v", err)
	}
	return h, base + hlen, nil
}

// readError converts an error from reading the named part of the input at
// offset off into a *FormatError.
func readError(off int64, what string, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errAt(off, io.ErrUnexpectedEOF, "truncated %s", what)
	}
	return errAt(off, err, "reading %s", what)
}

// parseError is a syntax or validation error at a byte position within the
// header dictionary.
type parseError struct {
	pos  int
	msg  string
	kind fileerr.Kind // Unsupported for a valid dtype this package does not read
}

func (e *parseError) Error() string { return e.msg }

// Header dictionary keys, in the order NumPy writes them.
const (
	keyDescr = iota
	keyFortran
	keyShape
	numKeys
)

var keyNames = [numKeys]string{"descr", "fortran_order", "shape"}

// dictParser parses the restricted Python literal used for .npy headers:
//
//	dict  = "{" [ entry { "," entry } [ "," ] ] "}"
//	entry = string ":" value
//	value = string | "True" | "False" | tuple
//	tuple = "(" [ int "," { int "," } [ int ] ] ")"
//
// Strings use single or double quotes without escapes; whitespace may
// appear between tokens and around the dict.
type dictParser struct {
	s   []byte
	pos int
	// allowLong accepts Python 2 long literals ("3L") in the shape, as
	// NumPy does for format versions 1.0 and 2.0.
	allowLong bool
}

func (p *dictParser) errAt(pos int, format string, args ...any) *parseError {
	return &parseError{pos: pos, msg: fmt.Sprintf(format, args...)}
}

func (p *dictParser) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.pos++
		default:
			return
		}
	}
}

func (p *dictParser) consume(c byte) bool {
	if p.pos < len(p.s) && p.s[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *dictParser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

// found describes the token at the current position for error messages.
func (p *dictParser) found() string {
	if p.pos >= len(p.s) {
		return "end of header"
	}
	return strconv.Quote(string(p.s[p.pos : p.pos+1]))
}

func (p *dictParser) parse() (Header, error) {
	var (
		h    Header
		seen [numKeys]bool
	)
	p.skipSpace()
	if !p.consume('{') {
		return h, p.errAt(p.pos, "expected '{' starting the header dict, found %s", p.found())
	}
	for {
		p.skipSpace()
		if p.consume('}') {
			break
		}
		key, err := p.entry(&h, &seen)
		if err != nil {
			return h, err
		}
		p.skipSpace()
		if p.consume(',') {
			continue
		}
		if p.consume('}') {
			break
		}
		return h, p.errAt(p.pos, "expected ',' or '}' after value of %q, found %s", key, p.found())
	}
	p.skipSpace()
	if p.pos != len(p.s) {
		return h, p.errAt(p.pos, "unexpected %s after header dict", p.found())
	}
	for k, ok := range seen {
		if !ok {
			return h, p.errAt(p.pos, "missing key %q", keyNames[k])
		}
	}
	if _, _, err := shapeSize(h.Shape, h.DType.Size()); err != nil {
		return h, p.errAt(p.pos, "%v", err)
	}
	return h, nil
}

// entry parses one key: value entry of the header dict into h and returns
// the key; seen records the keys met, each at most once.
func (p *dictParser) entry(h *Header, seen *[numKeys]bool) (string, error) {
	keyPos := p.pos
	key, err := p.parseString("dict key")
	if err != nil {
		return "", err
	}
	k := -1
	for i, name := range keyNames {
		if key == name {
			k = i
		}
	}
	if k < 0 {
		return "", p.errAt(keyPos, "unknown key %q", clip(key))
	}
	if seen[k] {
		return "", p.errAt(keyPos, "duplicate key %q", key)
	}
	seen[k] = true
	p.skipSpace()
	if !p.consume(':') {
		return "", p.errAt(p.pos, "expected ':' after key %q, found %s", key, p.found())
	}
	p.skipSpace()
	switch k {
	case keyDescr:
		err = p.parseDescrValue(h)
	case keyFortran:
		h.Fortran, err = p.parseBool()
	case keyShape:
		h.Shape, err = p.parseShape()
	}
	return key, err
}

func (p *dictParser) parseString(what string) (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.errAt(p.pos, "expected %s string, found %s", what, p.found())
	}
	start := p.pos + 1
	for i := start; i < len(p.s); i++ {
		switch p.s[i] {
		case q:
			p.pos = i + 1
			return string(p.s[start:i]), nil
		case '\\':
			return "", p.errAt(i, "escape sequences are not supported in %s strings", what)
		case '\n', '\r':
			return "", p.errAt(i, "unterminated %s string", what)
		}
	}
	return "", p.errAt(len(p.s), "unterminated %s string", what)
}

func (p *dictParser) parseDescrValue(h *Header) error {
	switch p.peek() {
	case '[', '{':
		e := p.errAt(p.pos, "structured dtypes are not supported (descr is not a string)")
		e.kind = fileerr.Unsupported
		return e
	}
	pos := p.pos
	s, err := p.parseString("descr")
	if err != nil {
		return err
	}
	dt, big, err := parseDescr(s)
	if err != nil {
		e := p.errAt(pos, "descr: %v", err)
		if _, ok := err.(unsupported); ok {
			e.kind = fileerr.Unsupported
		}
		return e
	}
	h.DType, h.BigEndian = dt, big
	return nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func (p *dictParser) parseBool() (bool, error) {
	start := p.pos
	for p.pos < len(p.s) && isIdentByte(p.s[p.pos]) {
		p.pos++
	}
	switch string(p.s[start:p.pos]) {
	case "True":
		return true, nil
	case "False":
		return false, nil
	}
	p.pos = start
	return false, p.errAt(start, "fortran_order must be True or False, found %s", p.found())
}

func (p *dictParser) parseShape() ([]int, error) {
	open := p.pos
	if p.peek() == '[' {
		return nil, p.errAt(p.pos, "shape must be a tuple, found a list")
	}
	if !p.consume('(') {
		return nil, p.errAt(p.pos, "shape must be a tuple, found %s", p.found())
	}
	shape := []int{}
	for {
		p.skipSpace()
		if p.consume(')') {
			return shape, nil
		}
		if len(shape) == maxDims {
			return nil, p.errAt(p.pos, "shape has more than %d dimensions", maxDims)
		}
		d, err := p.parseDim()
		if err != nil {
			return nil, err
		}
		shape = append(shape, d)
		p.skipSpace()
		if p.consume(',') {
			continue
		}
		if p.consume(')') {
			if len(shape) == 1 {
				return nil, p.errAt(open, "shape (%d) is an integer, not a tuple (a 1-d shape needs a trailing comma)", d)
			}
			return shape, nil
		}
		return nil, p.errAt(p.pos, "expected ',' or ')' in shape, found %s", p.found())
	}
}

func (p *dictParser) parseDim() (int, error) {
	start := p.pos
	neg := false
	switch p.peek() {
	case '-':
		neg = true
		p.pos++
	case '+':
		p.pos++
	}
	digits := p.pos
	v, overflow := 0, false
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		d := int(p.s[p.pos] - '0')
		if v > (math.MaxInt-d)/10 {
			overflow = true
		} else {
			v = v*10 + d
		}
		p.pos++
	}
	if p.pos == digits {
		p.pos = start
		return 0, p.errAt(start, "expected an integer dimension, found %s", p.found())
	}
	text := string(p.s[start:p.pos])
	if p.allowLong && (p.peek() == 'L' || p.peek() == 'l') {
		p.pos++
	}
	if c := p.peek(); c == '.' || isIdentByte(c) {
		return 0, p.errAt(start, "invalid integer dimension starting %q", clip(text+string(c)))
	}
	switch {
	case neg && (v != 0 || overflow):
		return 0, p.errAt(start, "negative dimension %s", clip(text))
	case overflow:
		return 0, p.errAt(start, "dimension %s overflows int", clip(text))
	}
	return v, nil
}

// encodeHeader returns the complete header (magic through the terminating
// newline) NumPy would write for a C-ordered array, together with the
// element count and payload size.
func encodeHeader(dt DType, shape []int) (hdr []byte, count, nbytes int, err error) {
	if !dt.Valid() {
		return nil, 0, 0, fmt.Errorf("npy: invalid dtype %v", dt)
	}
	count, nbytes, err = shapeSize(shape, dt.Size())
	if err != nil {
		return nil, 0, 0, fmt.Errorf("npy: %w", err)
	}

	dict := make([]byte, 0, 80+4*len(shape))
	dict = append(dict, "{'descr': '"...)
	dict = append(dict, dt.Descr()...)
	dict = append(dict, "', 'fortran_order': False, 'shape': "...)
	dict = appendShape(dict, shape)
	dict = append(dict, ", }"...)
	if len(shape) > 0 {
		grow := growthAxisMaxDigits - len(strconv.Itoa(shape[0]))
		dict = append(dict, strings.Repeat(" ", grow)...)
	}

	hlen := len(dict) + 1 // including the terminating newline
	prefix := 10
	pad := arrayAlign - (prefix+hlen)%arrayAlign
	if hlen+pad > math.MaxUint16 {
		prefix = 12
		pad = arrayAlign - (prefix+hlen)%arrayAlign
	}

	hdr = make([]byte, 0, prefix+hlen+pad)
	hdr = append(hdr, magic...)
	if prefix == 10 {
		hdr = append(hdr, 1, 0)
		hdr = binary.LittleEndian.AppendUint16(hdr, uint16(hlen+pad))
	} else {
		hdr = append(hdr, 2, 0)
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(hlen+pad))
	}
	hdr = append(hdr, dict...)
	hdr = append(hdr, strings.Repeat(" ", pad)...)
	hdr = append(hdr, '\n')
	return hdr, count, nbytes, nil
}
