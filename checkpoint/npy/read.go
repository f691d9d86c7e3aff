package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/kernels"
)

// readChunk is the initial payload buffer size used when the input size is
// unknown; the buffer then at most doubles per step, so memory use stays
// proportional to the bytes actually received.
const readChunk = 64 << 10

// Array is a decoded .npy array.
type Array struct {
	Header
	// Data holds the payload converted to little-endian byte order. The
	// elements are in the order stored in the file: row-major unless
	// Header.Fortran is set, in which case they are column-major and are
	// not transposed.
	Data []byte
}

// Read decodes a complete .npy file from r. The payload must be exactly as
// long as the header says: a short payload is an error wrapping
// io.ErrUnexpectedEOF, and any bytes after the payload are an error too.
// The payload buffer grows only as data arrives, so a header claiming a huge
// array cannot force a huge allocation. All decoding errors are
// *FormatError values.
func Read(r io.Reader) (*Array, error) {
	return decode(r, -1)
}

// ReadFile decodes the .npy file at path, which must be a regular file
// (anything else is refused with an error matching ErrNotRegular). The payload
// size claimed by the header is checked against the file size before any
// payload buffer is allocated. Decoding errors are *FormatError values with
// Path set.
func ReadFile(path string) (*Array, error) {
	f, fi, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	a, err := decode(f, fi.Size())
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Path = path
		}
		return nil, err
	}
	return a, nil
}

// decode reads a complete .npy file from r. size is the total input size if
// known, or -1.
func decode(r io.Reader, size int64) (*Array, error) {
	h, off, err := ReadHeader(r)
	if err != nil {
		return nil, err
	}
	_, nbytes, err := shapeSize(h.Shape, h.DType.Size())
	if err != nil { // already validated by ReadHeader
		return nil, errAt(off, nil, "%v", err)
	}
	want := int64(nbytes)

	var data []byte
	if size >= 0 {
		switch rest := size - off; {
		case rest < want:
			return nil, payloadError(off, want, rest, io.ErrUnexpectedEOF)
		case rest > want:
			return nil, errAt(off+want, nil, "%d unexpected trailing bytes after payload", rest-want)
		}
		data = make([]byte, nbytes)
		if n, err := io.ReadFull(r, data); err != nil {
			return nil, payloadError(off, want, int64(n), err)
		}
	} else {
		data, err = readPayload(r, off, nbytes)
		if err != nil {
			return nil, err
		}
	}

	var extra [1]byte
	switch n, err := io.ReadFull(r, extra[:]); {
	case n > 0:
		return nil, errAt(off+want, nil, "unexpected trailing bytes after payload")
	case err != io.EOF:
		return nil, errAt(off+want, err, "reading after payload")
	}

	if h.BigEndian {
		swapToLittle(data, h.DType.Size())
	}
	return &Array{Header: h, Data: data}, nil
}

// readPayload reads exactly n bytes from r, growing the buffer as data
// arrives rather than trusting n up front.
func readPayload(r io.Reader, off int64, n int) ([]byte, error) {
	data := make([]byte, 0, min(n, readChunk))
	for len(data) < n {
		if len(data) == cap(data) {
			data = slices.Grow(data, min(len(data), n-len(data)))
		}
		k, err := io.ReadFull(r, data[len(data):min(cap(data), n)])
		data = data[:len(data)+k]
		if err != nil {
			return nil, payloadError(off, int64(n), int64(len(data)), err)
		}
	}
	return data, nil
}

func payloadError(off, want, got int64, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errAt(off+got, io.ErrUnexpectedEOF, "truncated payload: header needs %d bytes, input has %d", want, got)
	}
	return errAt(off+got, err, "reading payload")
}

// swapToLittle reverses the byte order of each size-byte element of b.
func swapToLittle(b []byte, size int) {
	switch size {
	case 2:
		for i := 0; i+2 <= len(b); i += 2 {
			b[i], b[i+1] = b[i+1], b[i]
		}
	case 4:
		for i := 0; i+4 <= len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], binary.BigEndian.Uint32(b[i:]))
		}
	case 8:
		for i := 0; i+8 <= len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], binary.BigEndian.Uint64(b[i:]))
		}
	}
}

// Len returns the number of elements: the product of Shape, which is 1 for
// a 0-d array. It returns 0 if Shape is invalid, which cannot happen for an
// Array returned by Read or ReadFile.
func (a *Array) Len() int {
	n, _, err := shapeSize(a.Shape, 1)
	if err != nil {
		return 0
	}
	return n
}

// Float32s returns the elements converted to float32. It supports float16
// (converted exactly), float32, and float64 (rounded to nearest even, as Go
// conversions do); other dtypes are an error naming the dtype.
func (a *Array) Float32s() ([]float32, error) {
	switch a.DType {
	case Float16, Float32, Float64:
	default:
		return nil, fmt.Errorf("npy: cannot convert %v array to float32 (want float16, float32 or float64)", a.DType)
	}
	n, nbytes, err := shapeSize(a.Shape, a.DType.Size())
	if err != nil {
		return nil, fmt.Errorf("npy: invalid array: %w", err)
	}
	if len(a.Data) != nbytes {
		return nil, fmt.Errorf("npy: invalid array: data has %d bytes, shape %s of %v needs %d",
			len(a.Data), clip(formatShape(a.Shape)), a.DType, nbytes)
	}
	out := make([]float32, n)
	b := a.Data
	switch a.DType {
	case Float16:
		kernels.Float16BytesToFloat32(out, b)
	case Float32:
		kernels.Float32BytesToFloat32(out, b)
	case Float64:
		kernels.Float64BytesToFloat32(out, b)
	}
	return out, nil
}
