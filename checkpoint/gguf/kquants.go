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
