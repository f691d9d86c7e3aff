package kernels

import "math"

// AbsMaxBits returns the largest |x| of src as float32 bits (sign cleared), which
// orders like the magnitudes themselves: a result of 0x7f800000 is an infinity and
// anything above it a NaN (the largest NaN bit pattern when there are several), so
// one value answers both "what is the amax" and "does the block hold a NaN or an
// Inf". An empty slice gives 0.
func AbsMaxBits(src []float32) uint32 { return absMaxBits(src) }

// absMaxBitsGo is the reference of AbsMaxBits.
func absMaxBitsGo(src []float32) uint32 {
	// Four independent accumulators keep the dependency chain short.
	var m0, m1, m2, m3 uint32
	i := 0
	for ; i+4 <= len(src); i += 4 {
		m0 = max(m0, math.Float32bits(src[i])&0x7fffffff)
		m1 = max(m1, math.Float32bits(src[i+1])&0x7fffffff)
		m2 = max(m2, math.Float32bits(src[i+2])&0x7fffffff)
		m3 = max(m3, math.Float32bits(src[i+3])&0x7fffffff)
	}
	for ; i < len(src); i++ {
		m0 = max(m0, math.Float32bits(src[i])&0x7fffffff)
	}
	return max(m0, m1, m2, m3)
}

// AbsMaxBitsMasked is AbsMaxBits over the elements whose keep flag is true; keep
// must be at least as long as src.
func AbsMaxBitsMasked(src []float32, keep []bool) uint32 {
	return absMaxBitsMasked(src, keep[:len(src)])
}

// absMaxBitsMaskedGo is the reference of AbsMaxBitsMasked; len(keep) = len(src).
func absMaxBitsMaskedGo(src []float32, keep []bool) uint32 {
	keep = keep[:len(src)]
	var m uint32
	for i, x := range src {
		b := math.Float32bits(x) & 0x7fffffff
		if !keep[i] {
			b = 0
		}
		m = max(m, b)
	}
	return m
}

// AbsMaxBlocks stores the AbsMaxBits of each block of src in dst: dst[k] is the
// largest |x| bits of src[k*block : min((k+1)*block, len(src))], so the last
// block may be short. dst must hold at least ceil(len(src)/block) values; the
// ones after those are left alone. block must be at least 1.
func AbsMaxBlocks(dst []uint32, src []float32, block int) {
	absMaxBlocks(dst[:numBlocks(len(src), block)], src, block)
}

// AbsMaxBlocksMasked is AbsMaxBlocks over the elements whose keep flag is true
// (a block with none kept gives 0); keep must be at least as long as src.
func AbsMaxBlocksMasked(dst []uint32, src []float32, keep []bool, block int) {
	absMaxBlocksMasked(dst[:numBlocks(len(src), block)], src, keep[:len(src)], block)
}

// numBlocks returns ceil(n/block), panicking on a block size below 1 (a
// programming error, like an index out of range).
func numBlocks(n, block int) int {
	if block < 1 {
		panic("kernels: block size must be at least 1")
	}
	return n/block + min(n%block, 1)
}

// absMaxBlocksGo is the reference of AbsMaxBlocks, with len(dst) = the number
// of blocks.
func absMaxBlocksGo(dst []uint32, src []float32, block int) {
	for k := range dst {
		dst[k] = absMaxBitsGo(src[k*block : min((k+1)*block, len(src))])
	}
}

// absMaxBlocksMaskedGo is the reference of AbsMaxBlocksMasked, with len(dst) =
// the number of blocks and len(keep) = len(src).
func absMaxBlocksMaskedGo(dst []uint32, src []float32, keep []bool, block int) {
	for k := range dst {
		end := min((k+1)*block, len(src))
		dst[k] = absMaxBitsMaskedGo(src[k*block:end], keep[k*block:end])
	}
}

// MinMax returns the smallest and largest value of src among the elements whose
// keep flag is true (all of them when keep is nil), and whether any of those is a
// NaN or an infinity. NaNs and infinities are left out of lo and hi. With no
// finite element kept, lo and hi are 0.
func MinMax(src []float32, keep []bool) (lo, hi float32, nonFinite bool) {
	if keep != nil {
		keep = keep[:len(src)]
	}
	lo, hi = float32(math.Inf(1)), float32(math.Inf(-1))
	for i, x := range src {
		if keep != nil && !keep[i] {
			continue
		}
		if math.Float32bits(x)&0x7fffffff >= 0x7f800000 {
			nonFinite = true
			continue
		}
		lo = min(lo, x)
		hi = max(hi, x)
	}
	if lo > hi {
		return 0, 0, nonFinite
	}
	return lo, hi, nonFinite
}
