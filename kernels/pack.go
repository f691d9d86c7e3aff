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
	if width == 8 {
		copy(dst, src)
		return
	}
	mask := uint64(1)<<width - 1
	// Eight codes fill exactly width bytes: eight bytes are narrowed in one
	// 64-bit word, pairs of fields merged in three steps (each 16-bit lane
	// c0 | c1<<w, each 32-bit lane of those, then the word); the tail takes
	// the bit-by-bit loop below.
	const lo8, lo16, lo32 = 0x00ff00ff00ff00ff, 0x0000ffff0000ffff, 0x00000000ffffffff
	keep := mask * 0x0101010101010101
	j, i := 0, 0
	for ; i+8 <= len(src) && j+8 <= len(dst); i += 8 {
		v := binary.LittleEndian.Uint64(src[i:]) & keep
		v = v&lo8 | (v>>8&lo8)<<width
		v = v&lo16 | (v>>16&lo16)<<(2*width)
		v = v&lo32 | v>>32<<(4*width)
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
	if width == 8 {
		copy(dst, src)
		return
	}
	mask := uint64(1)<<width - 1
	// The inverse of packBitsGo's steps: the word split into 32-bit lanes of
	// four fields, 16-bit lanes of two, then bytes.
	lane := func(bits, every uint) uint64 { // the low bits of every lane of every bits
		var m uint64
		for k := uint(0); k < 64; k += every {
			m |= (uint64(1)<<bits - 1) << k
		}
		return m
	}
	m32, m16, m8 := lane(4*width, 64), lane(2*width, 32), lane(width, 16)
	j, i := 0, 0
	for ; i+8 <= len(dst) && j+8 <= len(src); i += 8 {
		v := binary.LittleEndian.Uint64(src[j:])
		v = v&m32 | (v>>(4*width)&m32)<<32
		v = v&m16 | (v>>(2*width)&m16)<<16
		v = v&m8 | (v>>width&m8)<<8
		binary.LittleEndian.PutUint64(dst[i:], v)
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
