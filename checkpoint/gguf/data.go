package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// Float32s returns the elements of the named tensor converted to float32
// in row-major order (the order of Shape, which is also ggml's storage
// order). Supported types:
//
//   - F32; F16 and BF16 (exact); F64 and I8, I16, I32, I64 (rounded to
//     nearest even, as Go conversions do);
//   - Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, the K-quants Q2_K..Q6_K and Q8_K,
//     IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, Q1_0 and Q2_0 (as ggml's
//     dequantize_row_* functions, bit for bit);
//   - MXFP4 and NVFP4 (see the package documentation).
//
// Other types (the other IQ* and Q8_1) give an error
// wrapping errors.ErrUnsupported; a missing tensor gives one wrapping
// ErrNoTensor.
func (f *File) Float32s(name string) ([]float32, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("gguf: %s: tensor %q: %w", f.Name, name, ErrNoTensor)
	}
	dequant, ok := dequantizers[t.Type]
	if !ok {
		return nil, fmt.Errorf("gguf: %s: tensor %q: converting %v to float32: %w",
			f.Name, name, t.Type, errors.ErrUnsupported)
	}
	b, err := f.dataOf(t)
	if err != nil {
		return nil, err
	}
	out := make([]float32, t.NumElements())
	dequant(out, b)
	return out, nil
}

// dequantizers maps each type Float32s supports to a function decoding
// len(dst) elements from src (whose size the reader has validated): the
// plain types here, the block types through the kernels' codec table.
var dequantizers = func() map[Type]func(dst []float32, src []byte) {
	m := map[Type]func(dst []float32, src []byte){
		TypeF32:  kernels.Float32BytesToFloat32,
		TypeF16:  kernels.Float16BytesToFloat32,
		TypeBF16: kernels.BFloat16BytesToFloat32,
		TypeF64:  kernels.Float64BytesToFloat32,
		TypeI8: func(dst []float32, src []byte) {
			for i := range dst {
				dst[i] = float32(int8(src[i]))
			}
		},
		TypeI16: func(dst []float32, src []byte) {
			for i := range dst {
				dst[i] = float32(int16(binary.LittleEndian.Uint16(src[2*i:])))
			}
		},
		TypeI32: func(dst []float32, src []byte) {
			for i := range dst {
				dst[i] = float32(int32(binary.LittleEndian.Uint32(src[4*i:])))
			}
		},
		TypeI64: func(dst []float32, src []byte) {
			for i := range dst {
				dst[i] = float32(int64(binary.LittleEndian.Uint64(src[8*i:])))
			}
		},
	}
	for t, c := range codecs {
		m[t] = c.Dequantize
	}
	return m
}()

// CanFloat32 reports whether Float32s reads tensors of type t.
func CanFloat32(t Type) bool {
	_, ok := dequantizers[t]
	return ok
}
