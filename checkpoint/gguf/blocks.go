package gguf

import (
	"fmt"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
)

var fmtF16 = dtype.MustParse("float16")

// checkBlocks panics unless nelem elements and nbytes bytes are the same
// whole number of blocks.
func checkBlocks(fn string, nelem, nbytes, blockSize, blockBytes int) int {
	if nelem%blockSize != 0 {
		panic(fmt.Sprintf("gguf: %s: %d elements is not a multiple of the block size %d", fn, nelem, blockSize))
	}
	nb := nelem / blockSize
	if nbytes != nb*blockBytes {
		panic(fmt.Sprintf("gguf: %s: %d elements need %d bytes, got %d", fn, nelem, nb*blockBytes, nbytes))
	}
	return nb
}

// SplitBlocks splits blocks of a type that stores one scale per sub-block
// as a value of a scale format: Q8_0 and Q4_0 (a float16 d per 32
// elements), TQ1_0 and TQ2_0 (a float16 d per 256), Q1_0 (per 128), Q2_0
// (per 64), MXFP4 (an E8M0 byte per 32) and NVFP4 (four UE4M3 bytes per
// 64, one per 16). It writes one code per element to codes, in row order
// (the int8 code of Q8_0, the 4-bit two's complement of q−8 for Q4_0 so
// that an element is int4(code)·d, the E2M1 code of MXFP4 and NVFP4, the
// stored code c of TQ1_0 (0..2), TQ2_0 and Q2_0 (0..3), whose value is
// (c − 1)·d, and the sign bit c of Q1_0, whose value is (2c − 1)·d), and
// the scale bytes as the blocks store them to scales, in block order (the
// little-endian float16 of d, two bytes a block). An element's value is
// its code's value times its sub-block's scale (times 2^(e−127) for
// E8M0).
//
// len(codes) must be whole blocks, src exactly their bytes and scales
// their scale bytes (SubBlockSize gives the elements per scale); it panics
// otherwise, or for another type (see CanSplit).
func SplitBlocks(t Type, codes, scales, src []byte) {
	c := checkSplit("SplitBlocks", t, len(codes), len(scales), len(src))
	c.Split(codes, scales, src)
}

// JoinBlocks is the inverse of SplitBlocks: it lays codes and scales out
// as blocks of type t in dst. A code the type cannot store (above 15 for
// Q4_0, MXFP4 and NVFP4, 3 for TQ2_0 and Q2_0, 2 for TQ1_0, 1 for Q1_0)
// gives a *PackError; lengths that do not fit panic.
func JoinBlocks(t Type, dst, codes, scales []byte) error {
	c := checkSplit("JoinBlocks", t, len(codes), len(scales), len(dst))
	if c.Join(dst, codes, scales) {
		return nil
	}
	for i, q := range codes {
		if q > c.MaxCode {
			bs := t.BlockSize()
			msg := fmt.Sprintf("code %#x of element %d is above the largest, %d", q, i%bs, c.MaxCode)
			return &PackError{t, i / bs, msg}
		}
	}
	panic("gguf: JoinBlocks: the codec refused codes that fit") // unreachable
}

// CanSplit reports whether SplitBlocks and JoinBlocks take type t.
func CanSplit(t Type) bool {
	c, ok := codecs[t]
	return ok && c.Split != nil
}

// checkSplit returns the codec of t for SplitBlocks and JoinBlocks, and
// panics unless t has a split and the lengths fit.
func checkSplit(fn string, t Type, ncodes, nscales, nbytes int) kernels.BlockCodec {
	c, ok := codecs[t]
	if !ok || c.Split == nil {
		panic(fmt.Sprintf("gguf: %s: %v has no split", fn, t))
	}
	nb := checkBlocks(fn, ncodes, nbytes, c.BlockLen, c.BlockBytes)
	if want := nb * c.ScaleBytes; nscales != want {
		panic(fmt.Sprintf("gguf: %s: %d elements of %v need %d scale bytes, got %d",
			fn, ncodes, t, want, nscales))
	}
	return c
}
