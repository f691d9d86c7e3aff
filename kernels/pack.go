package kernels

import (
	"encoding/binary"
	"fmt"
)

// PackedLen returns the number of bytes that n codes of width bits occupy in an
// LSB-first bit stream: ceil(n·width/8).
func PackedLen(n int, width uint) int {
	return (n*int(width) + 7) / 8
}

func checkWidth(width uint) {
	if width < 1 || width > 8 {
		panic(fmt.Sprintf("kernels: code width %d out of range 1..8", width))
	}
}

// PackBits writes the low width bits of every code of src into dst as an LSB-first
// bit stream: code i occupies stream bits i·width … i·width+width−1, and stream bit
// 8k+j is bit j of dst[k]. For width 4 this is the usual nibble order (element 2k
// in bits 3:0 of byte k, element 2k+1 in bits 7:4); for width 6 it is the AMD FP6
// layout (4 codes in 3 bytes); for width 1 the bit-mask layout. Unused high bits of
// the last byte are zero. dst must hold PackedLen(len(src), width) bytes; width
// must be 1..8.
func PackBits(dst []byte, src []uint8, width uint) {
	checkWidth(width)
	n := PackedLen(len(src), width)
	dst = dst[:n]
	if width == 1 {
		packMask(dst, src) // the bit-mask kernels
		return
	}
	if width == 4 {
		packNibbles(dst, src) // the nibble kernels
		return
	}
	packBitsGo(dst, src, width)
}

// packBitsGo is the reference of PackBits for widths 2 to 8 (len(dst) =
// PackedLen(len(src), width)).
func packBitsGo(dst []byte, src []uint8, width uint) {
	mask := uint64(1)<<width - 1
	// Eight codes fill exactly width bytes, so whole groups of eight go through
	// one 64-bit word; the tail takes the bit-by-bit loop below.
	j, i := 0, 0
	for ; i+8 <= len(src) && j+8 <= len(dst); i += 8 {
		g := src[i : i+8 : i+8]
		v := uint64(g[0])&mask | (uint64(g[1])&mask)<<width | (uint64(g[2])&mask)<<(2*width) |
			(uint64(g[3])&mask)<<(3*width) | (uint64(g[4])&mask)<<(4*width) | (uint64(g[5])&mask)<<(5*width) |
			(uint64(g[6])&mask)<<(6*width) | (uint64(g[7])&mask)<<(7*width)
		binary.LittleEndian.PutUint64(dst[j:], v)
		j += int(width)
	}
	var acc uint64
	var nbits uint
	for _, c := range src[i:] {
		acc |= (uint64(c) & mask) << nbits
		nbits += width
		for nbits >= 8 {
			dst[j] = byte(acc)
			j++
			acc >>= 8
			nbits -= 8
		}
	}
	if nbits > 0 {
		dst[j] = byte(acc)
	}
}

// UnpackBits reads len(dst) codes of width bits from the LSB-first bit stream src
// (the inverse of PackBits). src must hold PackedLen(len(dst), width) bytes; width
// must be 1..8.
func UnpackBits(dst []uint8, src []byte, width uint) {
	checkWidth(width)
	src = src[:PackedLen(len(dst), width)]
	if width == 1 {
		unpackMask(dst, src) // the bit-mask kernels
		return
	}
	if width == 4 {
		unpackNibbles(dst, src) // the nibble kernels
		return
	}
	unpackBitsGo(dst, src, width)
}

// unpackBitsGo is the reference of UnpackBits for widths 2 to 8 (len(src) =
// PackedLen(len(dst), width)).
func unpackBitsGo(dst []uint8, src []byte, width uint) {
	mask := uint64(1)<<width - 1
	j, i := 0, 0
	for ; i+8 <= len(dst) && j+8 <= len(src); i += 8 {
		v := binary.LittleEndian.Uint64(src[j:])
		g := dst[i : i+8 : i+8]
		for k := range g {
			g[k] = uint8(v >> (uint(k) * width) & mask)
		}
		j += int(width)
	}
	var acc uint64
	var nbits uint
	for ; i < len(dst); i++ {
		for nbits < width {
			acc |= uint64(src[j]) << nbits
			j++
			nbits += 8
		}
		dst[i] = uint8(acc & mask)
		acc >>= width
		nbits -= width
	}
}
