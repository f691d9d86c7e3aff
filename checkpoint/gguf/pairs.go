package gguf

import (
	"encoding/binary"
	"fmt"
)

// PackMXFP4Pairs is PackMXFP4 for codes already packed two to a byte in
// adjacent-pair order (element 2k in the low nibble of byte k, element 2k+1
// in the high nibble: the toolkit's packed MXFP4 data, PyTorch fp4x2 and
// Hugging Face's order), as a streaming converter holds them: it reorders
// each block's 16 bytes into ggml's split-half order behind the block's
// scale byte, without unpacking to one code per byte.
//
// len(packed) must be 16·len(scales) and len(dst) 17·len(scales); it panics
// otherwise.
func PackMXFP4Pairs(dst []byte, packed, scales []uint8) {
	nb := len(scales)
	if len(packed) != nb*MXFP4BlockSize/2 || len(dst) != nb*MXFP4BlockBytes {
		panic(fmt.Sprintf("gguf: PackMXFP4Pairs: %d scales need %d packed and %d block bytes, got %d and %d",
			nb, nb*MXFP4BlockSize/2, nb*MXFP4BlockBytes, len(packed), len(dst)))
	}
	for i := range nb {
		p := packed[16*i : 16*i+16 : 16*i+16]
		y := dst[MXFP4BlockBytes*i : MXFP4BlockBytes*(i+1) : MXFP4BlockBytes*(i+1)]
		y[0] = scales[i]
		// Byte k of the first half holds elements 2k and 2k+1, byte 8+k of
		// the second half elements 16+2k and 17+2k; split byte j holds
		// elements j and j+16. So split byte 2k is the low nibbles of bytes
		// k and 8+k, split byte 2k+1 their high nibbles: two words of eight
		// such bytes, interleaved byte by byte.
		a, b := binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:])
		even := a&0x0F0F0F0F0F0F0F0F | (b&0x0F0F0F0F0F0F0F0F)<<4
		odd := (a>>4)&0x0F0F0F0F0F0F0F0F | b&0xF0F0F0F0F0F0F0F0
		binary.LittleEndian.PutUint64(y[1:], spreadBytes(uint32(even))|spreadBytes(uint32(odd))<<8)
		binary.LittleEndian.PutUint64(y[9:], spreadBytes(uint32(even>>32))|spreadBytes(uint32(odd>>32))<<8)
	}
}

// spreadBytes moves byte k of x to byte 2k of the result, leaving the odd
// bytes zero.
func spreadBytes(x uint32) uint64 {
	v := uint64(x)
	v = (v | v<<16) & 0x0000FFFF0000FFFF
	return (v | v<<8) & 0x00FF00FF00FF00FF
}
