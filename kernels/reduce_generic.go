//go:build !amd64 || purego

package kernels

func absMaxBits(src []float32) uint32 { return absMaxBitsGo(src) }

func absMaxBitsMasked(src []float32, keep []bool) uint32 { return absMaxBitsMaskedGo(src, keep) }

func absMaxBlocks(dst []uint32, src []float32, block int) { absMaxBlocksGo(dst, src, block) }

func absMaxBlocksMasked(dst []uint32, src []float32, keep []bool, block int) {
	absMaxBlocksMaskedGo(dst, src, keep, block)
}
