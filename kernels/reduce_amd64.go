//go:build amd64 && !purego

package kernels

// The dispatchers of the amax kernels: the assembly of the active tier, or the
// Go reference. Lengths are checked by the exported callers.

// Below one AVX2 vector the call into assembly costs more than the Go loop.
const absMaxMinAsm = 8

func absMaxBits(src []float32) uint32 {
	var m [1]uint32
	switch {
	case len(src) < absMaxMinAsm:
		return absMaxBitsGo(src)
	case active >= tierAVX512:
		absMaxBlocksAVX512(m[:], src, len(src))
	case active >= tierAVX2:
		absMaxBlocksAVX2(m[:], src, len(src))
	default:
		return absMaxBitsGo(src)
	}
	return m[0]
}

func absMaxBitsMasked(src []float32, keep []bool) uint32 {
	var m [1]uint32
	switch {
	case len(src) < absMaxMinAsm:
		return absMaxBitsMaskedGo(src, keep)
	case active >= tierAVX512:
		absMaxBlocksMaskedAVX512(m[:], src, keep, len(src))
	case active >= tierAVX2:
		absMaxBlocksMaskedAVX2(m[:], src, keep, len(src))
	default:
		return absMaxBitsMaskedGo(src, keep)
	}
	return m[0]
}

// absMaxBlocks runs whole groups of 16 (AVX-512) or 8 (AVX2) blocks of 16 or
// 32 through the transpose-tree kernels and everything else through the
// kernel for any block size.
func absMaxBlocks(dst []uint32, src []float32, block int) {
	var g int // blocks done by a tree kernel
	switch active {
	case tierAVX512:
		if block == 16 || block == 32 {
			g = len(src) / block &^ 15
		}
		switch {
		case g == 0:
		case block == 16:
			absMaxBlocks16AVX512(dst[:g], src[:g*block])
		default:
			absMaxBlocks32AVX512(dst[:g], src[:g*block])
		}
		if g < len(dst) {
			absMaxBlocksAVX512(dst[g:], src[g*block:], block)
		}
	case tierAVX2:
		if block == 16 || block == 32 {
			g = len(src) / block &^ 7
		}
		switch {
		case g == 0:
		case block == 16:
			absMaxBlocks16AVX2(dst[:g], src[:g*block])
		default:
			absMaxBlocks32AVX2(dst[:g], src[:g*block])
		}
		if g < len(dst) {
			absMaxBlocksAVX2(dst[g:], src[g*block:], block)
		}
	default:
		absMaxBlocksGo(dst, src, block)
	}
}

func absMaxBlocksMasked(dst []uint32, src []float32, keep []bool, block int) {
	switch active {
	case tierAVX512:
		absMaxBlocksMaskedAVX512(dst, src, keep, block)
	case tierAVX2:
		absMaxBlocksMaskedAVX2(dst, src, keep, block)
	default:
		absMaxBlocksMaskedGo(dst, src, keep, block)
	}
}
