package kernels

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"
)

// Bit masks: one bit per element, element 8k+i in bit i of byte k (LSB
// first), a set bit meaning keep (true), as everywhere in the toolkit. These
// are PackBits and UnpackBits of width 1 (which use the same kernels), their
// []bool forms, a popcount, and the compaction of a float32 slice by a mask
// and its inverse.

// PackMask packs keep into dst as a bit mask: bit i of dst[k] is
// keep[8k+i]. dst must hold PackedLen(len(keep), 1) bytes; the unused high
// bits of the last byte are zero.
func PackMask(dst []byte, keep []bool) {
	packMask(dst[:PackedLen(len(keep), 1)], boolBytes(keep))
}

// UnpackMask is the inverse of PackMask: keep[8k+i] is bit i of src[k]. src
// must hold PackedLen(len(keep), 1) bytes.
func UnpackMask(keep []bool, src []byte) {
	unpackMask(boolBytes(keep), src[:PackedLen(len(keep), 1)])
}

// boolBytes views a []bool as its bytes (0 or 1 each).
func boolBytes(b []bool) []byte {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), len(b))
}

// CountMask returns the number of set bits among the first n bits of the
// bit mask src (element 8k+i in bit i of src[k]), which must hold
// PackedLen(n, 1) bytes.
func CountMask(src []byte, n int) int {
	src = src[:PackedLen(n, 1)]
	if n%8 == 0 {
		return popCount(src)
	}
	last := len(src) - 1
	return popCount(src[:last]) + bits.OnesCount8(src[last]&(1<<(n%8)-1))
}

// SelectMasked copies the elements of src whose mask bit is set, in order,
// to the front of dst and returns how many there are (CountMask(mask,
// len(src))). mask must hold PackedLen(len(src), 1) bytes and dst at least
// that many floats.
func SelectMasked(dst, src []float32, mask []byte) int {
	mask = mask[:PackedLen(len(src), 1)]
	if c := CountMask(mask, len(src)); len(dst) < c {
		panic(fmt.Sprintf("kernels: SelectMasked: %d floats for %d selected elements", len(dst), c))
	}
	return selectMasked(dst, src, mask)
}

// ExpandMasked is the inverse of SelectMasked: dst[i] is the next element of
// src, in order, where bit i of mask is set, and 0 where it is clear. It
// returns how many elements of src it used. mask must hold
// PackedLen(len(dst), 1) bytes and src at least CountMask(mask, len(dst))
// floats.
func ExpandMasked(dst, src []float32, mask []byte) int {
	mask = mask[:PackedLen(len(dst), 1)]
	if c := CountMask(mask, len(dst)); len(src) < c {
		panic(fmt.Sprintf("kernels: ExpandMasked: %d floats for %d selected elements", len(src), c))
	}
	return expandMasked(dst, src, mask)
}

// packMaskGo is the reference of the mask packing: the low bit of every
// byte of src, eight to a byte of dst (len(dst) = ceil(len(src)/8)).
func packMaskGo(dst, src []byte) {
	for k := range dst {
		var b byte
		for i, s := range src[8*k : min(8*k+8, len(src))] {
			b |= (s & 1) << i
		}
		dst[k] = b
	}
}

// unpackMaskGo is the reference of the mask unpacking: byte i of dst is bit
// i%8 of src[i/8].
func unpackMaskGo(dst, src []byte) {
	for i := range dst {
		dst[i] = src[i>>3] >> (i & 7) & 1
	}
}

// popCountGo is the reference of the popcount of whole bytes.
func popCountGo(src []byte) int {
	n := 0
	for len(src) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(src))
		src = src[8:]
	}
	for _, b := range src {
		n += bits.OnesCount8(b)
	}
	return n
}

// selectMaskedGo is the reference of SelectMasked.
func selectMaskedGo(dst, src []float32, mask []byte) int {
	j := 0
	for i, x := range src {
		if mask[i>>3]>>(i&7)&1 != 0 {
			dst[j] = x
			j++
		}
	}
	return j
}

// expandMaskedGo is the reference of ExpandMasked.
func expandMaskedGo(dst, src []float32, mask []byte) int {
	j := 0
	for i := range dst {
		if mask[i>>3]>>(i&7)&1 != 0 {
			dst[i] = src[j]
			j++
		} else {
			dst[i] = 0
		}
	}
	return j
}
