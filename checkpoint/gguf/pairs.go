package gguf

import "fmt"

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
		// elements j and j+16.
		for k := range 8 {
			lo, hi := p[k], p[8+k]
			y[1+2*k] = lo&0x0F | hi<<4
			y[2+2*k] = lo>>4 | hi&0xF0
		}
	}
}
