package tcast

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/shape"
)

// CastFormat returns the Actual tensor of x, of the given shape, cast to
// the number format f element by element, without a scale: what a
// datatype of no scale stores, and the one cast of the formats that are no
// datatype (integer and exponent formats). Unlike Cast it honours every
// element option of o: IEEE overflow, and one stochastic stream over the
// whole tensor. The tensor's DataType is nil (set it to the unscaled
// datatype of f when there is one), its Axis the last axis, its Mode floor.
func CastFormat(x []float32, dims []int, f *dtype.Format, o dtype.Options) (*Tensor, error) {
	if f == nil {
		return nil, errors.New("tcast: cast to a nil format")
	}
	n, neg, ok := shape.Elements(dims)
	switch {
	case neg >= 0:
		return nil, fmt.Errorf("tcast: cast to %s: negative dimension in %v", f.Name(), dims)
	case !ok:
		return nil, fmt.Errorf("tcast: cast to %s: %v has too many elements", f.Name(), dims)
	case len(x) != n:
		return nil, fmt.Errorf("tcast: cast to %s: %d values for shape %v", f.Name(), len(x), dims)
	}
	var codes []byte
	switch f.CodeBytes() {
	case 1:
		codes = encodeCodes[uint8](f, x, o)
	case 2:
		codes = encodeCodes[uint16](f, x, o)
	default:
		codes = encodeCodes[uint32](f, x, o)
	}
	partDims := []int{1} // a 0-d tensor's one element
	if len(dims) > 0 {
		partDims = slices.Clone(dims)
	}
	return &Tensor{Form: Actual, Shape: slices.Clone(dims), Axis: max(len(dims)-1, 0),
		Data: &Part{Format: f, Bits: f.Bits(), Shape: partDims, Bytes: codes}}, nil
}

// encodeCodes encodes x with codes of type C and returns their
// little-endian bytes.
func encodeCodes[C uint8 | uint16 | uint32](f *dtype.Format, x []float32, o dtype.Options) []byte {
	c := make([]C, len(x))
	dtype.EncodeSlice(f, c, x, o)
	out := make([]byte, len(c)*f.CodeBytes())
	for i, v := range c {
		switch f.CodeBytes() {
		case 1:
			out[i] = byte(v)
		case 2:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
		default:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
		}
	}
	return out
}
