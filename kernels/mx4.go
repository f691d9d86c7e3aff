package kernels

import (
	"encoding/binary"
	"fmt"
)

// MXFP4 in ggml's block layout (block_mxfp4, the GGUF type MXFP4): each
// block of 32 elements is 17 bytes, its E8M0 scale byte and then 16 bytes,
// byte j holding element j in its low nibble and element j+16 in its high
// nibble ("split halves", not the adjacent pairs of quantizeMXFP4). The codes
// and scales are those of quantizeMXFP4; only their places differ.

// mxfp4GGUFBlockBytes is the size of one ggml MXFP4 block of mxBlock
// elements: the scale byte and 16 code bytes.
const mxfp4GGUFBlockBytes = 1 + mxBlock/2

// checkGGUFBlocks panics unless n is a whole number of blocks of 32 and
// nbytes holds the ggml blocks of n elements.
func checkGGUFBlocks(kernel string, n, nbytes int) {
	switch {
	case n%mxBlock != 0:
		panic(fmt.Sprintf("kernels: %s: %d elements are not a multiple of the block of %d", kernel, n, mxBlock))
	case nbytes < n/mxBlock*mxfp4GGUFBlockBytes:
		panic(fmt.Sprintf("kernels: %s: %d block bytes for %d elements", kernel, nbytes, n))
	}
}

// quantizeMXFP4GGUF quantizes src, a whole number of blocks of 32, to OCP
// MXFP4 written straight into ggml MXFP4 blocks in dst (17 bytes per block:
// the E8M0 scale, then element j in the low nibble and element j+16 in the
// high nibble of byte j). Scales and codes follow quantizeMXFP4's rules, so
// the blocks are quantizeMXFP4's output rearranged.
func quantizeMXFP4GGUF(dst []byte, src []float32) {
	checkGGUFBlocks("quantizeMXFP4GGUF", len(src), len(dst))
	quantMXFP4GGUF(dst, src)
}

// dequantizeMXFP4GGUF decodes ggml MXFP4 blocks (as quantizeMXFP4GGUF writes
// them) into dst, whose length must be a multiple of 32, with
// dequantizeMXFP4's rules: each value is the float32 product of the E2M1
// element and 2^(scale−127), and a block with scale byte 0xFF is NaN.
func dequantizeMXFP4GGUF(dst []float32, src []byte) {
	checkGGUFBlocks("dequantizeMXFP4GGUF", len(dst), len(src))
	dequantMXFP4GGUF(dst, src)
}

// quantizeMXFP4GGUFGo is the reference of quantizeMXFP4GGUF: quantizeMXFP4
// of each block, its adjacent pairs rearranged into split halves.
func quantizeMXFP4GGUFGo(dst []byte, src []float32) {
	var pairs [mxBlock / 2]byte
	for b := range len(src) / mxBlock {
		y := (*[mxfp4GGUFBlockBytes]byte)(dst[b*mxfp4GGUFBlockBytes:])
		quantizeMXFP4Go(pairs[:], y[:1], src[b*mxBlock:(b+1)*mxBlock])
		// Element i is nibble i%2 of pairs[i/2]; elements j and j+16 go
		// to byte j.
		for j := range mxBlock / 4 {
			lo, hi := pairs[j], pairs[j+mxBlock/4]
			y[1+2*j] = lo&0x0f | hi<<4
			y[2+2*j] = lo>>4 | hi&0xf0
		}
	}
}

// dequantizeMXFP4GGUFGo is the reference of dequantizeMXFP4GGUF.
func dequantizeMXFP4GGUFGo(dst []float32, src []byte) {
	t := mx
	for b := range len(dst) / mxBlock {
		x := (*[mxfp4GGUFBlockBytes]byte)(src[b*mxfp4GGUFBlockBytes:])
		y := (*[mxBlock]float32)(dst[b*mxBlock:])
		m := t.e8m0[x[0]]
		for j, c := range x[1:] {
			y[j], y[j+mxBlock/2] = t.e2m1[c&0x0f]*m, t.e2m1[c>>4]*m
		}
	}
}

// packMXFP4GGUF lays out MXFP4 codes and scales as ggml MXFP4 blocks: codes
// holds one E2M1 code per element (len(codes) a multiple of 32) and scales
// one E8M0 byte per 32 elements; block b of dst (17 bytes) is scales[b] and
// then byte j = codes[32b+j] | codes[32b+j+16]<<4. It reports whether every
// code is below 16; bits above the low four are dropped otherwise.
func packMXFP4GGUF(dst []byte, codes, scales []uint8) (ok bool) {
	checkGGUFBlocks("packMXFP4GGUF", len(codes), len(dst))
	checkBlocks("packMXFP4GGUF", len(codes), mxBlock, len(codes), 1, len(scales))
	const lowNibbles = 0x0f0f0f0f0f0f0f0f
	var high uint64
	for b := range len(codes) / mxBlock {
		c := (*[mxBlock]byte)(codes[b*mxBlock:])
		y := (*[mxfp4GGUFBlockBytes]byte)(dst[b*mxfp4GGUFBlockBytes:])
		y[0] = scales[b]
		for j := 0; j < mxBlock/2; j += 8 {
			lo := binary.LittleEndian.Uint64(c[j:])
			hi := binary.LittleEndian.Uint64(c[j+mxBlock/2:])
			high |= lo | hi
			binary.LittleEndian.PutUint64(y[1+j:], lo&lowNibbles|(hi&lowNibbles)<<4)
		}
	}
	return high&^lowNibbles == 0
}

// unpackMXFP4GGUF is the inverse of packMXFP4GGUF: it splits ggml MXFP4
// blocks into one E2M1 code per element (len(codes) a multiple of 32) and
// one E8M0 byte per block.
func unpackMXFP4GGUF(codes, scales []uint8, src []byte) {
	checkGGUFBlocks("unpackMXFP4GGUF", len(codes), len(src))
	checkBlocks("unpackMXFP4GGUF", len(codes), mxBlock, len(codes), 1, len(scales))
	const lowNibbles = 0x0f0f0f0f0f0f0f0f
	for b := range len(codes) / mxBlock {
		x := (*[mxfp4GGUFBlockBytes]byte)(src[b*mxfp4GGUFBlockBytes:])
		c := (*[mxBlock]byte)(codes[b*mxBlock:])
		scales[b] = x[0]
		for j := 0; j < mxBlock/2; j += 8 {
			w := binary.LittleEndian.Uint64(x[1+j:])
			binary.LittleEndian.PutUint64(c[j:], w&lowNibbles)
			binary.LittleEndian.PutUint64(c[j+mxBlock/2:], w>>4&lowNibbles)
		}
	}
}
