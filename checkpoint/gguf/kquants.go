package gguf

import (
	"errors"
	"fmt"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// The decoders of ggml's Q4_1, Q5_0, Q5_1 and IQ4_NL blocks (32 elements)
// and of the 256-element super-blocks of the K-quants (Q2_K..Q6_K, Q8_K) and
// IQ4_XS. Each gives exactly the floats ggml's dequantize_row_* function
// gives for the same bytes: the same float32 operations in the same order.
// The layouts are those of ggml's ggml-common.h; each decoder's comment
// states its own.

// Block geometry of the 256-element super-block types (QK_K in ggml).
const (
	// SuperBlockSize is the number of elements in a K-quant or IQ4_XS
	// super-block.
	SuperBlockSize = 256
)

// DequantizeQ4_1 decodes Q4_1 blocks (32 elements in 20 bytes: float16 d,
// float16 m, then 16 bytes, byte j holding element j in its low nibble and
// element j+16 in its high nibble): value = q·d + m, the product rounded to
// float32 before the sum. len(src) must be len(dst)/32·20; it panics
// otherwise.
func DequantizeQ4_1(dst []float32, src []byte) {
	checkBlocks("DequantizeQ4_1", len(dst), len(src), 32, TypeQ4_1.BlockBytes())
	kernels.DequantizeQ4_1(dst, src)
}

// DequantizeQ5_0 decodes Q5_0 blocks (32 elements in 22 bytes: float16 d, a
// little-endian uint32 whose bit j is the fifth (top) bit of element j, then
// 16 bytes of low nibbles in Q4_1's order): value = (q−16)·d. len(src) must
// be len(dst)/32·22; it panics otherwise.
func DequantizeQ5_0(dst []float32, src []byte) {
	checkBlocks("DequantizeQ5_0", len(dst), len(src), 32, TypeQ5_0.BlockBytes())
	kernels.DequantizeQ5_0(dst, src)
}

// DequantizeQ5_1 decodes Q5_1 blocks (32 elements in 24 bytes: float16 d,
// float16 m, the uint32 of fifth bits, 16 bytes of low nibbles): value = q·d
// + m, the product rounded to float32 before the sum. len(src) must be
// len(dst)/32·24; it panics otherwise.
func DequantizeQ5_1(dst []float32, src []byte) {
	checkBlocks("DequantizeQ5_1", len(dst), len(src), 32, TypeQ5_1.BlockBytes())
	kernels.DequantizeQ5_1(dst, src)
}

// DequantizeIQ4NL decodes IQ4_NL blocks (32 elements in 18 bytes: float16
// d, then 16 bytes of 4-bit indices in Q4_1's order): value =
// d·IQ4NLValues[q]. len(src) must be len(dst)/32·18; it panics otherwise.
func DequantizeIQ4NL(dst []float32, src []byte) {
	checkBlocks("DequantizeIQ4NL", len(dst), len(src), 32, TypeIQ4_NL.BlockBytes())
	kernels.DequantizeIQ4NL(dst, src)
}

// IQ4NLValues is the value of each 4-bit IQ4_NL and IQ4_XS index before the
// scale (ggml's kvalues_iq4nl): a non-uniform, asymmetric table without an
// exact zero.
var IQ4NLValues = kernels.IQ4NLValues

// DequantizeQ8_K decodes Q8_K super-blocks (256 elements in 292 bytes: a
// little-endian float32 d, 256 int8 codes q, then 16 little-endian int16
// sums of 16 codes each, which decoding does not read): value = d·q.
// len(src) must be len(dst)/256·292; it panics otherwise.
func DequantizeQ8_K(dst []float32, src []byte) {
	checkBlocks("DequantizeQ8_K", len(dst), len(src), SuperBlockSize, TypeQ8_K.BlockBytes())
	kernels.DequantizeQ8_K(dst, src)
}

// DequantizeQ2_K decodes Q2_K super-blocks (256 elements in 84 bytes). The
// super-block has 16 sub-blocks of 16 elements; byte s of the first 16
// holds sub-block s's 4-bit scale sc (low nibble) and 4-bit min m (high
// nibble); 64 bytes of 2-bit codes follow, then float16 d and float16 dmin.
// Element e = 128h + 32k + l (h < 2, k < 4, l < 32) has its code q in bits
// 2k..2k+1 of code byte 32h+l, and value (d·sc)·q − dmin·m, each product
// rounded to float32. len(src) must be len(dst)/256·84; it panics otherwise.
func DequantizeQ2_K(dst []float32, src []byte) {
	checkBlocks("DequantizeQ2_K", len(dst), len(src), SuperBlockSize, TypeQ2_K.BlockBytes())
	kernels.DequantizeQ2_K(dst, src)
}

// DequantizeQ3_K decodes Q3_K super-blocks (256 elements in 110 bytes: 32
// bytes of high bits, 64 bytes of low code bits, 12 bytes of 6-bit scales,
// float16 d). Element e = 128h + 32k + l has the low two bits of its code
// at bits 2k..2k+1 of code byte 32h+l and the third at bit 4h+k of byte l;
// the code minus 4 is q (−4..3). Sub-block s (elements 16s..16s+15) has a
// 6-bit scale whose low nibble is the low nibble of scale byte s (s < 8) or
// the high nibble of byte s−8, and whose top two bits are bits
// 2(s/4)..2(s/4)+1 of byte 8+s%4; value = (d·(sc−32))·q. len(src) must be
// len(dst)/256·110; it panics otherwise.
func DequantizeQ3_K(dst []float32, src []byte) {
	checkBlocks("DequantizeQ3_K", len(dst), len(src), SuperBlockSize, TypeQ3_K.BlockBytes())
	kernels.DequantizeQ3_K(dst, src)
}

// DequantizeQ4_K decodes Q4_K super-blocks (256 elements in 144 bytes:
// float16 d, float16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of
// 4-bit codes). Sub-block s (elements 32s..32s+31) has scale sc and min m:
// for s < 4 the low six bits of bytes s and s+4 of the 12; for s ≥ 4 the low
// and high nibble of byte s+4, topped by the top two bits of bytes s−4 and s.
// Element 64c + l has its code q in the low nibble of code byte 32c+l (l <
// 32) or the high nibble of byte 32c+l−32; value = (d·sc)·q − dmin·m, each
// product rounded to float32. len(src) must be len(dst)/256·144; it panics
// otherwise.
func DequantizeQ4_K(dst []float32, src []byte) {
	checkBlocks("DequantizeQ4_K", len(dst), len(src), SuperBlockSize, TypeQ4_K.BlockBytes())
	kernels.DequantizeQ4_K(dst, src)
}

// DequantizeQ5_K decodes Q5_K super-blocks (256 elements in 176 bytes:
// float16 d, float16 dmin, 12 bytes of scales and mins as in Q4_K, 32 bytes
// of fifth bits, 128 bytes of low nibbles as in Q4_K). Element 32s+l of
// sub-block s has its fifth bit at bit s of high-bit byte l; value =
// (d·sc)·q − dmin·m. len(src) must be len(dst)/256·176; it panics otherwise.
func DequantizeQ5_K(dst []float32, src []byte) {
	checkBlocks("DequantizeQ5_K", len(dst), len(src), SuperBlockSize, TypeQ5_K.BlockBytes())
	kernels.DequantizeQ5_K(dst, src)
}

// DequantizeQ6_K decodes Q6_K super-blocks (256 elements in 210 bytes: 128
// bytes of low nibbles, 64 bytes of high bit pairs, 16 int8 scales, float16
// d). Element e = 128h + 32k + l (h < 2, k < 4, l < 32) has its low nibble in
// byte 64h + 32(k%2) + l (the low nibble for k < 2, the high one for k ≥ 2)
// and its top two bits at bits 2k..2k+1 of byte 128+32h+l; q is the six bits
// minus 32, and value = (d·sc)·q with sc the scale of sub-block e/16. len(src)
// must be len(dst)/256·210; it panics otherwise.
func DequantizeQ6_K(dst []float32, src []byte) {
	checkBlocks("DequantizeQ6_K", len(dst), len(src), SuperBlockSize, TypeQ6_K.BlockBytes())
	kernels.DequantizeQ6_K(dst, src)
}

// DequantizeIQ4XS decodes IQ4_XS super-blocks (256 elements in 136 bytes:
// float16 d, a little-endian uint16 with the top two bits of sub-block s's
// 6-bit scale at bits 2s..2s+1, 4 bytes of low scale nibbles (sub-block s in
// byte s/2, even s in the low nibble), then 16 bytes of indices per
// sub-block of 32 in IQ4_NL's order): value = (d·(sc−32))·IQ4NLValues[q].
// len(src) must be len(dst)/256·136; it panics otherwise.
func DequantizeIQ4XS(dst []float32, src []byte) {
	checkBlocks("DequantizeIQ4XS", len(dst), len(src), SuperBlockSize, TypeIQ4_XS.BlockBytes())
	kernels.DequantizeIQ4XS(dst, src)
}

// Dequantize decodes the elements of type t in src into dst: len(dst)
// elements, which must be whole blocks of t, from exactly the bytes they
// occupy. It takes every type File.Float32s reads (see CanFloat32); other
// types give an error wrapping errors.ErrUnsupported, and mismatched
// lengths an error naming them.
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

// The quantizers. Each chooses its block's scales (and mins) to minimise
// the squared error of the decoded values, weighted by importance when it
// is not nil: a sub-block's scale and min are fitted by least squares over
// a set of candidate codings, the super-block's float16 scales are chosen
// for the fitted sub-block scales, and each sub-block takes the better of
// the integer scales next to its fit under them, with the nearest codes.
// This is a wider search than ggml's reference quantizers and reaches a
// lower error on the same input. The blocks are ggml's layouts, read by
// ggml's dequantizers as by ours.
//
// importance holds one weight per column: its length is the row length, a
// multiple of the block size (256 for the K-quants and IQ4_XS, 32 for the
// others) dividing len(src), and the error of an element weighs its
// column's weight; nil weighs every element equally. NaN, infinite and
// negative weights count as 0. NaN elements are stored as the code nearest
// 0 and infinities as the extreme code of their sign, neither affecting
// the scales. Each quantizer panics when dst is not exactly the blocks'
// size or importance does not fit; Quantize returns an error instead.

// QuantizeQ2_K quantizes src into Q2_K blocks (len(src)/256·84 bytes).
func QuantizeQ2_K(dst []byte, src, importance []float32) {
	checkQuant("QuantizeQ2_K", TypeQ2_K, dst, src)
	kernels.QuantizeQ2_K(dst, src, importance)
}

// QuantizeQ3_K quantizes src into Q3_K blocks (len(src)/256·110 bytes).
func QuantizeQ3_K(dst []byte, src, importance []float32) {
	checkQuant("QuantizeQ3_K", TypeQ3_K, dst, src)
	kernels.QuantizeQ3_K(dst, src, importance)
}

// QuantizeQ4_K quantizes src into Q4_K blocks (len(src)/256·144 bytes).
func QuantizeQ4_K(dst []byte, src, importance []float32) {
	checkQuant("QuantizeQ4_K", TypeQ4_K, dst, src)
	kernels.QuantizeQ4_K(dst, src, importance)
}

// QuantizeQ5_K quantizes src into Q5_K blocks (len(src)/256·176 bytes).
func QuantizeQ5_K(dst []byte, src, importance []float32) {
	checkQuant("QuantizeQ5_K", TypeQ5_K, dst, src)
	kernels.QuantizeQ5_K(dst, src, importance)
}

// QuantizeQ6_K quantizes src into Q6_K blocks (len(src)/256·210 bytes).
func QuantizeQ6_K(dst []byte, src, importance []float32) {
	checkQuant("QuantizeQ6_K", TypeQ6_K, dst, src)
	kernels.QuantizeQ6_K(dst, src, importance)
}

// QuantizeQ8_K quantizes src into Q8_K blocks (len(src)/256·292 bytes),
// including the sums of each 16 codes that ggml's dot products read.
func QuantizeQ8_K(dst []byte, src, importance []float32) {
	checkQuant("QuantizeQ8_K", TypeQ8_K, dst, src)
	kernels.QuantizeQ8_K(dst, src, importance)
}

// QuantizeIQ4XS quantizes src into IQ4_XS blocks (len(src)/256·136 bytes).
func QuantizeIQ4XS(dst []byte, src, importance []float32) {
	checkQuant("QuantizeIQ4XS", TypeIQ4_XS, dst, src)
	kernels.QuantizeIQ4XS(dst, src, importance)
}

// QuantizeIQ4NL quantizes src into IQ4_NL blocks (len(src)/32·18 bytes).
func QuantizeIQ4NL(dst []byte, src, importance []float32) {
	checkQuant("QuantizeIQ4NL", TypeIQ4_NL, dst, src)
	kernels.QuantizeIQ4NL(dst, src, importance)
}

// QuantizeQ4_1 quantizes src into Q4_1 blocks (len(src)/32·20 bytes).
func QuantizeQ4_1(dst []byte, src, importance []float32) {
	checkQuant("QuantizeQ4_1", TypeQ4_1, dst, src)
	kernels.QuantizeQ4_1(dst, src, importance)
}

// QuantizeQ5_0 quantizes src into Q5_0 blocks (len(src)/32·22 bytes).
func QuantizeQ5_0(dst []byte, src, importance []float32) {
	checkQuant("QuantizeQ5_0", TypeQ5_0, dst, src)
	kernels.QuantizeQ5_0(dst, src, importance)
}

// QuantizeQ5_1 quantizes src into Q5_1 blocks (len(src)/32·24 bytes).
func QuantizeQ5_1(dst []byte, src, importance []float32) {
	checkQuant("QuantizeQ5_1", TypeQ5_1, dst, src)
	kernels.QuantizeQ5_1(dst, src, importance)
}

// checkQuant panics unless src is whole blocks of t and dst their size.
func checkQuant(fn string, t Type, dst []byte, src []float32) {
	checkBlocks(fn, len(src), len(dst), t.BlockSize(), t.BlockBytes())
}

// quantizers maps each type Quantize writes to its quantizer, and whether
// that quantizer searches (Searches).
var quantizers = map[Type]struct {
	q        func(dst []byte, src, importance []float32)
	searches bool
}{
	TypeQ2_K:   {QuantizeQ2_K, true},
	TypeQ3_K:   {QuantizeQ3_K, true},
	TypeQ4_K:   {QuantizeQ4_K, true},
	TypeQ5_K:   {QuantizeQ5_K, true},
	TypeQ6_K:   {QuantizeQ6_K, true},
	TypeQ8_K:   {QuantizeQ8_K, true},
	TypeIQ4_XS: {QuantizeIQ4XS, true},
	TypeIQ4_NL: {QuantizeIQ4NL, true},
	TypeQ4_1:   {QuantizeQ4_1, true},
	TypeQ5_0:   {QuantizeQ5_0, true},
	TypeQ5_1:   {QuantizeQ5_1, true},
	TypeQ4_0:   {quantizeQ4_0, true},
	TypeQ8_0:   {func(dst []byte, src, _ []float32) { QuantizeQ8_0(dst, src) }, false},
	TypeMXFP4:  {func(dst []byte, src, _ []float32) { QuantizeMXFP4(dst, src) }, false},
}

// QuantizeQ4_0Weighted quantizes src into Q4_0 blocks (len(src)/32·18
// bytes), choosing each block's scale by the least-squares search of
// Q5_0 weighted by importance (nil weighs every element equally). It is
// the Q4_0 quantizer that takes an importance matrix, as llama-quantize's
// does; QuantizeQ4_0 is ggml's rule without a search.
func QuantizeQ4_0Weighted(dst []byte, src, importance []float32) {
	checkQuant("QuantizeQ4_0Weighted", TypeQ4_0, dst, src)
	kernels.QuantizeQ4_0Weighted(dst, src, importance)
}

// quantizeQ4_0 is Quantize's Q4_0: ggml's rule (QuantizeQ4_0) without an
// importance vector, as ggml_quantize_chunk does, and the weighted search
// (QuantizeQ4_0Weighted) with one.
func quantizeQ4_0(dst []byte, src, importance []float32) {
	if importance == nil {
		QuantizeQ4_0(dst, src)
		return
	}
	QuantizeQ4_0Weighted(dst, src, importance)
}

// Quantize quantizes src into blocks of type t in dst, which must be
// exactly t.Size(len(src)) bytes. importance, when not nil, holds one
// non-negative weight per column: its length is the row length, a multiple
// of t's block size that divides len(src), and each element's squared
// error weighs its column's weight in the quantizer's search. Types
// without a quantizer give an error wrapping errors.ErrUnsupported;
// lengths that do not fit give an error naming them.
func Quantize(t Type, dst []byte, src, importance []float32) error {
	q, ok := quantizers[t]
	if !ok || q.q == nil {
		return fmt.Errorf("gguf: quantizing to %v: %w", t, errors.ErrUnsupported)
	}
	bs := t.BlockSize()
	if len(src)%bs != 0 {
		return fmt.Errorf("gguf: quantizing to %v: %d elements are not whole blocks of %d", t, len(src), bs)
	}
	if want, _ := t.Size(int64(len(src))); int64(len(dst)) != want {
		return fmt.Errorf("gguf: quantizing %d elements to %v: want %d bytes, got %d", len(src), t, want, len(dst))
	}
	if importance != nil && (len(importance) == 0 || len(importance)%bs != 0 || len(src)%len(importance) != 0) {
		return fmt.Errorf("gguf: quantizing %d elements to %v: an importance vector of %d: want a row length, a multiple of %d dividing the elements",
			len(src), t, len(importance), bs)
	}
	q.q(dst, src, importance)
	return nil
}
