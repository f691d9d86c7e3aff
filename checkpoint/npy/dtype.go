package npy

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/tensorcast-go/tensorcast/internal/fileerr"
)

// DType identifies the element type of an array. The zero value is not a
// valid DType.
type DType uint8

// Supported element types. The comment after each constant gives the
// little-endian NumPy descr written for it.
const (
	Bool    DType = iota + 1 // "|b1"
	Uint8                    // "|u1"
	Uint16                   // "<u2"
	Uint32                   // "<u4"
	Uint64                   // "<u8"
	Int8                     // "|i1"
	Int16                    // "<i2"
	Int32                    // "<i4"
	Int64                    // "<i8"
	Float16                  // "<f2"
	Float32                  // "<f4"
	Float64                  // "<f8"
)

type dtypeInfo struct {
	name string // NumPy name
	code string // kind character followed by the size, e.g. "f4"
	size int    // bytes per element
}

var dtypeInfos = [...]dtypeInfo{
	Bool:    {"bool", "b1", 1},
	Uint8:   {"uint8", "u1", 1},
	Uint16:  {"uint16", "u2", 2},
	Uint32:  {"uint32", "u4", 4},
	Uint64:  {"uint64", "u8", 8},
	Int8:    {"int8", "i1", 1},
	Int16:   {"int16", "i2", 2},
	Int32:   {"int32", "i4", 4},
	Int64:   {"int64", "i8", 8},
	Float16: {"float16", "f2", 2},
	Float32: {"float32", "f4", 4},
	Float64: {"float64", "f8", 8},
}

// nativeBigEndian reports whether the host is big-endian; NumPy's '=' (and
// '|' on multi-byte types) byte-order marks mean the host order.
var nativeBigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// Valid reports whether d is one of the supported element types.
func (d DType) Valid() bool { return d >= Bool && d <= Float64 }

// String returns the NumPy name of d, such as "float32", or "DType(n)" if d
// is not valid.
func (d DType) String() string {
	if !d.Valid() {
		return "DType(" + strconv.Itoa(int(d)) + ")"
	}
	return dtypeInfos[d].name
}

// Size returns the number of bytes per element, or 0 if d is not valid.
func (d DType) Size() int {
	if !d.Valid() {
		return 0
	}
	return dtypeInfos[d].size
}

// Descr returns the little-endian NumPy descr of d as written in .npy
// headers, such as "<f4" or "|u1", or "" if d is not valid.
func (d DType) Descr() string {
	if !d.Valid() {
		return ""
	}
	info := dtypeInfos[d]
	if info.size == 1 {
		return "|" + info.code
	}
	return "<" + info.code
}

// ParseDescr parses a NumPy descr string such as "<f4", ">u2", "|b1" or
// "=i8". The byte-order mark may be '<' (little-endian), '>' (big-endian),
// '=' or '|' (host order), or absent (host order). bigEndian is always false
// for one-byte types. Structured, object and other unsupported dtypes are
// rejected.
func ParseDescr(descr string) (dt DType, bigEndian bool, err error) {
	dt, bigEndian, err = parseDescr(descr)
	if err != nil {
		return 0, false, fmt.Errorf("npy: %w", err)
	}
	return dt, bigEndian, nil
}

func parseDescr(descr string) (DType, bool, error) {
	s := descr
	big := nativeBigEndian
	if s != "" {
		switch s[0] {
		case '<':
			big, s = false, s[1:]
		case '>':
			big, s = true, s[1:]
		case '=', '|':
			s = s[1:]
		}
	}
	if s == "" {
		return 0, false, fmt.Errorf("invalid dtype descr %q", clip(descr))
	}
	switch s[0] {
	case 'O':
		return 0, false, unsupportedf("object dtype %q is not supported", clip(descr))
	case 'V':
		return 0, false, unsupportedf("structured (void) dtype %q is not supported", clip(descr))
	case 'c':
		return 0, false, unsupportedf("complex dtype %q is not supported", clip(descr))
	case 'S', 'a', 'U':
		return 0, false, unsupportedf("string dtype %q is not supported", clip(descr))
	case 'M', 'm':
		return 0, false, unsupportedf("datetime dtype %q is not supported", clip(descr))
	}
	for d := Bool; d <= Float64; d++ {
		if dtypeInfos[d].code == s {
			return d, big && dtypeInfos[d].size > 1, nil
		}
	}
	return 0, false, fmt.Errorf("unsupported dtype descr %q", clip(descr)) // no dtype NumPy has
}

// unsupported is the error of parseDescr for a valid dtype this package
// does not read.
type unsupported string

func (u unsupported) Error() string { return string(u) }

func unsupportedf(format string, args ...any) error {
	return unsupported(fmt.Sprintf(format, args...))
}

// clip shortens s for inclusion in error messages.
func clip(s string) string { return fileerr.Clip(s) }
