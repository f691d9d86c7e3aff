//go:build amd64 && !purego

package kernels

import (
	"math/bits"

	"golang.org/x/sys/cpu"
)

// The dispatchers of the fused E2M1 scale-search kernels: the AVX-512 kernel
// over whole groups of 16 blocks, then the Go reference for the blocks whose
// choice the kernel's float32 estimates left open and for the rest (and for
// everything below the AVX-512 tier, or without AVX-512 DQ, whose VRANGEPS
// the kernels use). Their callers (the codec table's entry points) have
// checked the lengths.

// e2m1SearchGroup is the number of blocks the AVX-512 E2M1 search kernels take per
// step; e2m1SearchChunk the number of steps per call.
const (
	e2m1SearchGroup = 16
	e2m1SearchChunk = 256
)

// hasSearchAVX512 reports whether the CPU has what the search kernels use
// beyond the AVX-512 tier.
var hasSearchAVX512 = cpu.X86.HasAVX512DQ

func searchMXFP4Blocks(codes, scales []byte, src []float32) {
	n := 0
	if active >= tierAVX512 && hasSearchAVX512 {
		n = len(src) &^ (e2m1SearchGroup*mxBlock - 1)
	}
	var redo [e2m1SearchChunk]uint16
	for lo := 0; lo < n; lo += e2m1SearchChunk * e2m1SearchGroup * mxBlock {
		hi := min(n, lo+e2m1SearchChunk*e2m1SearchGroup*mxBlock)
		c, s, x := codes[lo/2:hi/2], scales[lo/mxBlock:hi/mxBlock], src[lo:hi]
		searchMXFP4AVX512(c, s, x, redo[:])
		forRedo(redo[:len(x)/(e2m1SearchGroup*mxBlock)], func(b int) {
			searchMXFP4Go(c[b*mxBlock/2:(b+1)*mxBlock/2], s[b:b+1], x[b*mxBlock:(b+1)*mxBlock])
		})
	}
	searchMXFP4Go(codes[n/2:], scales[n/mxBlock:], src[n:])
}

func searchNVFP4Blocks(codes, scales []byte, src []float32, tensorScale float32) {
	n := 0
	if active >= tierAVX512 && hasSearchAVX512 && nvfp4AsmScale(tensorScale) {
		n = len(src) &^ (e2m1SearchGroup*nvfp4Block - 1)
	}
	var redo [e2m1SearchChunk]uint16
	for lo := 0; lo < n; lo += e2m1SearchChunk * e2m1SearchGroup * nvfp4Block {
		hi := min(n, lo+e2m1SearchChunk*e2m1SearchGroup*nvfp4Block)
		c, s, x := codes[lo/2:hi/2], scales[lo/nvfp4Block:hi/nvfp4Block], src[lo:hi]
		searchNVFP4AVX512(c, s, x, tensorScale, 6*tensorScale, redo[:])
		forRedo(redo[:len(x)/(e2m1SearchGroup*nvfp4Block)], func(b int) {
			searchNVFP4Go(c[b*nvfp4Block/2:(b+1)*nvfp4Block/2], s[b:b+1], x[b*nvfp4Block:(b+1)*nvfp4Block], tensorScale)
		})
	}
	searchNVFP4Go(codes[n/2:], scales[n/nvfp4Block:], src[n:], tensorScale)
}

// forRedo calls f with the index of every block whose bit is set in redo
// (bit i of redo[g] is block 16g+i).
func forRedo(redo []uint16, f func(b int)) {
	for g, m := range redo {
		for ; m != 0; m &= m - 1 {
			f(e2m1SearchGroup*g + bits.TrailingZeros16(m))
		}
	}
}
