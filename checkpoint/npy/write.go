package npy

import (
	"encoding/binary"
	"fmt"
	"io"
)

// writeChunk is the size of the buffers handed to the underlying writer.
const writeChunk = 1 << 20

// Element is the set of Go types WriteSlice can encode, one per supported
// DType except Float16 (see WriteFloat16).
type Element interface {
	bool | uint8 | uint16 | uint32 | uint64 | int8 | int16 | int32 | int64 | float32 | float64
}

// dtypeOf returns the DType corresponding to T.
func dtypeOf[T Element]() DType {
	var z T
	switch any(z).(type) {
	case bool:
		return Bool
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	case uint64:
		return Uint64
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case float32:
		return Float32
	case float64:
		return Float64
	}
	return 0
}

// Write writes a C-ordered array of type dt and the given shape to w. data
// holds the payload in little-endian byte order and must be exactly
// product(shape)×dt.Size() bytes long. The header is exactly what NumPy
// writes: format 1.0 (2.0 if the header does not fit), padded with spaces
// and a newline so the payload starts at a multiple of 64 bytes.
func Write(w io.Writer, dt DType, shape []int, data []byte) error {
	hdr, _, nbytes, err := encodeHeader(dt, shape)
	if err != nil {
		return err
	}
	if len(data) != nbytes {
		return fmt.Errorf("npy: data has %d bytes, shape %s of %v needs %d",
			len(data), clip(formatShape(shape)), dt, nbytes)
	}
	if len(data) <= writeChunk {
		return writeFull(w, append(hdr, data...))
	}
	if err := writeFull(w, hdr); err != nil {
		return err
	}
	return writeFull(w, data)
}

// WriteSlice writes data as a C-ordered array of the given shape to w, with
// the DType matching T. len(data) must equal product(shape), which is 1 for
// a 0-d array. Elements are encoded in large chunks.
func WriteSlice[T Element](w io.Writer, shape []int, data []T) error {
	return writeElems(w, dtypeOf[T](), shape, data)
}

// WriteFloat16 writes a C-ordered float16 array of the given shape to w.
// bits holds raw IEEE 754 half-precision bit patterns, one per element.
func WriteFloat16(w io.Writer, shape []int, bits []uint16) error {
	return writeElems(w, Float16, shape, bits)
}

func writeElems[T Element](w io.Writer, dt DType, shape []int, data []T) error {
	hdr, count, nbytes, err := encodeHeader(dt, shape)
	if err != nil {
		return err
	}
	if len(data) != count {
		return fmt.Errorf("npy: got %d elements, shape %s needs %d",
			len(data), clip(formatShape(shape)), count)
	}
	size := dt.Size()
	buf := make([]byte, 0, len(hdr)+min(nbytes, writeChunk))
	buf = append(buf, hdr...)
	for len(data) > 0 {
		room := (cap(buf) - len(buf)) / size
		if room == 0 {
			if err := writeFull(w, buf); err != nil {
				return err
			}
			buf = buf[:0]
			continue
		}
		k := min(room, len(data))
		buf, err = binary.Append(buf, binary.LittleEndian, data[:k])
		if err != nil {
			return fmt.Errorf("npy: encoding %v data: %w", dt, err)
		}
		data = data[k:]
	}
	return writeFull(w, buf)
}

// writeFull writes all of b to w.
func writeFull(w io.Writer, b []byte) error {
	n, err := w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("npy: write: %w", err)
	}
	return nil
}
