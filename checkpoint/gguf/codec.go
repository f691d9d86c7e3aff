package gguf

import (
	"errors"
	"fmt"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// codecs maps each block type with kernels to its entry of the kernels'
// codec table (found by ggml's name of the type).
var codecs = func() map[Type]kernels.BlockCodec {
	m := map[Type]kernels.BlockCodec{}
	for t, ti := range typeTable {
		if c, ok := kernels.LookupBlock(ti.name); ok {
			m[t] = c
		}
	}
	return m
}()

// IQ4NLValues is the value of each 4-bit IQ4_NL and IQ4_XS index before the
// scale (ggml's kvalues_iq4nl): a non-uniform, asymmetric table without an
// exact zero.
var IQ4NLValues = kernels.IQ4NLValues

// Dequantize decodes the elements of type t in src into dst: len(dst)
// elements, which must be whole blocks of t, from exactly the bytes they
// occupy. It takes every type File.Float32s reads (see CanFloat32), and
// gives exactly the floats of ggml's dequantize_row_* functions (see the
// package documentation for MXFP4 and NVFP4); other types give an error
// wrapping errors.ErrUnsupported, and mismatched lengths an error naming
// them.
func Dequantize(t Type, dst []float32, src []byte) error {
	dequant, ok := dequantizers[t]
	if !ok {
		return fmt.Errorf("gguf: dequantizing %v: %w", t, errors.ErrUnsupported)
	}
	bs := t.BlockSize()
	if len(dst)%bs != 0 {
		return fmt.Errorf("gguf: dequantizing %v: %d elements are not whole blocks of %d", t, len(dst), bs)
	}
	if want, _ := t.Size(int64(len(dst))); int64(len(src)) != want {
		return fmt.Errorf("gguf: dequantizing %d elements of %v: want %d bytes, got %d", len(dst), t, want, len(src))
	}
	dequant(dst, src)
	return nil
}

// Quantize quantizes src into blocks of type t in dst, which must be
// exactly t.Size(len(src)) bytes. importance, when not nil, holds one
// non-negative weight per column: its length is the row length, a multiple
// of t's block size that divides len(src). The quantizers that search (see
// Searches; the others ignore importance) minimise the squared error with
// each element weighted as Weigh gives: its column's importance, times
// sqrt(σ² + x²) for some types. Types without a quantizer give an error
// wrapping errors.ErrUnsupported; lengths that do not fit give an error
// naming them.
//
// Q8_0, and Q4_0 without an importance vector, are ggml's reference
// quantizers bit for bit; MXFP4 is the toolkit's MXFP4 cast (see the
// package documentation); the other types search their scales and mins.
func Quantize(t Type, dst []byte, src, importance []float32) error {
	return QuantizeWeighed(t, dst, src, importance, nil)
}

// QuantizeWeighed is Quantize that also writes to weights, when not nil,
// the weight of each element of src in the error the quantizer minimised,
// as Weigh gives them: a weighted error measured after quantizing needs no
// second pass over src. weights must then be len(src) long.
func QuantizeWeighed(t Type, dst []byte, src, importance, weights []float32) error {
	c, ok := codecs[t]
	if !ok || c.Quantize == nil {
		return fmt.Errorf("gguf: quantizing to %v: %w", t, errors.ErrUnsupported)
	}
	bs := t.BlockSize()
	if len(src)%bs != 0 {
		return fmt.Errorf("gguf: quantizing to %v: %d elements are not whole blocks of %d", t, len(src), bs)
	}
	if want, _ := t.Size(int64(len(src))); int64(len(dst)) != want {
		return fmt.Errorf("gguf: quantizing %d elements to %v: want %d bytes, got %d", len(src), t, want, len(dst))
	}
	if err := checkImportance(t, len(src), importance); err != nil {
		return fmt.Errorf("gguf: quantizing %d elements to %v: %w", len(src), t, err)
	}
	if weights != nil && len(weights) != len(src) {
		return fmt.Errorf("gguf: quantizing %d elements to %v: %d weights", len(src), t, len(weights))
	}
	c.Quantize(dst, src, importance, weights)
	return nil
}

// Weigh writes to w, len(src) long, the weight of each element of src in
// the squared error Quantize minimises for type t with the same importance
// vector, in the units of the importance times the element (so that the
// error summed over blocks is the one the quantizer minimised): with an
// importance vector, its column's importance times sqrt(σ² + x²) for Q2_K,
// Q3_K, Q4_K and Q5_K (σ² from the mean square of the super-block: ggml's
// rule), the importance alone for Q6_K, IQ4_NL, IQ4_XS and Q4_0 … Q5_1;
// without one, |x| for Q2_K and 1 for the
// others. For the types that do not search (Q8_0, MXFP4) it gives the
// importance, or 1: the error they are judged by. The error so weighted
// is the figure to judge a quantizer by beside the SQNR (docs/QUALITY.md
// has the measurements that chose the rules). Types without a quantizer
// and lengths that do not fit give errors as Quantize does.
func Weigh(t Type, w, src, importance []float32) error {
	c, ok := codecs[t]
	if !ok || c.Quantize == nil {
		return fmt.Errorf("gguf: weighing %v: %w", t, errors.ErrUnsupported)
	}
	bs := t.BlockSize()
	if len(src)%bs != 0 {
		return fmt.Errorf("gguf: weighing %v: %d elements are not whole blocks of %d", t, len(src), bs)
	}
	if len(w) != len(src) {
		return fmt.Errorf("gguf: weighing %d elements of %v: %d weights", len(src), t, len(w))
	}
	if err := checkImportance(t, len(src), importance); err != nil {
		return fmt.Errorf("gguf: weighing %d elements of %v: %w", len(src), t, err)
	}
	c.Weigh(w, src, importance)
	return nil
}

// checkImportance checks that importance is nil or a row length of n
// elements of type t: a multiple of its block size dividing n.
func checkImportance(t Type, n int, importance []float32) error {
	bs := t.BlockSize()
	if importance != nil && (len(importance) == 0 || len(importance)%bs != 0 || n%len(importance) != 0) {
		return fmt.Errorf("an importance vector of %d: want a row length, a multiple of %d dividing the elements",
			len(importance), bs)
	}
	return nil
}
