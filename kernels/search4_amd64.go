//go:build amd64 && !purego

package kernels

// The dispatchers of the fused E2M1 scale-search kernels: the AVX-512 kernel
// over whole groups of 16 blocks, the Go reference for the rest (and for
// everything below the AVX-512 tier, or without AVX-512 DQ, whose VRANGEPS
// the kernels use). The exported callers have checked the lengths.

// searchGroup is the number of blocks the AVX-512 search kernels take per
// step.
const searchGroup = 16

func searchMXFP4(codes, scales []byte, src []float32) {
	n := 0
	if active >= tierAVX512 && hasMX4AVX512 {
		n = len(src) &^ (searchGroup*MXBlock - 1)
	}
	if n > 0 {
		searchMXFP4AVX512(codes[:n/2], scales[:n/MXBlock], src[:n])
	}
	searchMXFP4Go(codes[n/2:], scales[n/MXBlock:], src[n:])
}

func searchNVFP4(codes, scales []byte, src []float32, tensorScale float32) {
	n := 0
	if active >= tierAVX512 && hasMX4AVX512 && nvfp4AsmScale(tensorScale) {
		n = len(src) &^ (searchGroup*NVFP4Block - 1)
	}
	if n > 0 {
		searchNVFP4AVX512(codes[:n/2], scales[:n/NVFP4Block], src[:n], tensorScale, 6*tensorScale)
	}
	searchNVFP4Go(codes[n/2:], scales[n/NVFP4Block:], src[n:], tensorScale)
}
