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
//   - Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 (as ggml's dequantize_row_* functions);
//   - MXFP4 and NVFP4 (see DequantizeMXFP4 and DequantizeNVFP4).
//
// Other types (the K-quants, IQ*, TQ*, Q8_1, Q1_0, Q2_0) give an error
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
	b, err := f.readData(t)
	if err != nil {
		return nil, err
	}
	out := make([]float32, t.NumElements())
	dequant(out, b)
	return out, nil
}

// dequantizers maps each type Float32s supports to a function decoding
// len(dst) elements from src (whose size the reader has validated).
var dequantizers = map[Type]func(dst []float32, src []byte){
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
	TypeQ8_0:  DequantizeQ8_0,
	TypeQ4_0:  DequantizeQ4_0,
	TypeQ4_1:  dequantizeQ4_1,
	TypeQ5_0:  dequantizeQ5_0,
	TypeQ5_1:  dequantizeQ5_1,
	TypeMXFP4: DequantizeMXFP4,
	TypeNVFP4: DequantizeNVFP4,
}

// dequantizeQ4_1 decodes Q4_1 blocks (f16 d, f16 m, 16 nibble bytes in
// split-half order): value = q·d + m.
func dequantizeQ4_1(dst []float32, src []byte) {
	nb := checkBlocks("dequantizeQ4_1", len(dst), len(src), 32, 20)
	for i := range nb {
		x := src[i*20 : (i+1)*20]
		y := dst[i*32 : (i+1)*32]
		d := fmtF16.Decode(uint32(binary.LittleEndian.Uint16(x)))
		m := fmtF16.Decode(uint32(binary.LittleEndian.Uint16(x[2:])))
		for j := range 16 {
			b := x[4+j]
			y[j] = float32(float32(b&0x0F)*d) + m
			y[j+16] = float32(float32(b>>4)*d) + m
		}
	}
}

// dequantizeQ5_0 decodes Q5_0 blocks (f16 d, u32 qh of fifth bits, 16
// nibble bytes in split-half order): value = (q − 16)·d, where bit j of qh
// is the fifth bit of element j.
func dequantizeQ5_0(dst []float32, src []byte) {
	nb := checkBlocks("dequantizeQ5_0", len(dst), len(src), 32, 22)
	for i := range nb {
		x := src[i*22 : (i+1)*22]
		y := dst[i*32 : (i+1)*32]
		d := fmtF16.Decode(uint32(binary.LittleEndian.Uint16(x)))
		qh := binary.LittleEndian.Uint32(x[2:])
		for j := range 16 {
			b := x[6+j]
			lo := int(b&0x0F) | int(qh>>j&1)<<4
			hi := int(b>>4) | int(qh>>(j+16)&1)<<4
			y[j] = float32(lo-16) * d
			y[j+16] = float32(hi-16) * d
		}
	}
}

// dequantizeQ5_1 decodes Q5_1 blocks (f16 d, f16 m, u32 qh, 16 nibble
// bytes): value = q·d + m.
func dequantizeQ5_1(dst []float32, src []byte) {
	nb := checkBlocks("dequantizeQ5_1", len(dst), len(src), 32, 24)
	for i := range nb {
		x := src[i*24 : (i+1)*24]
		y := dst[i*32 : (i+1)*32]
		d := fmtF16.Decode(uint32(binary.LittleEndian.Uint16(x)))
		m := fmtF16.Decode(uint32(binary.LittleEndian.Uint16(x[2:])))
		qh := binary.LittleEndian.Uint32(x[4:])
		for j := range 16 {
			b := x[8+j]
			lo := uint32(b&0x0F) | (qh>>j&1)<<4
			hi := uint32(b>>4) | (qh>>(j+16)&1)<<4
			y[j] = float32(float32(lo)*d) + m
			y[j+16] = float32(float32(hi)*d) + m
		}
	}
}

// CanFloat32 reports whether Float32s reads tensors of type t.
func CanFloat32(t Type) bool {
	_, ok := dequantizers[t]
	return ok
}
