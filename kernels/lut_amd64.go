//go:build amd64 && !purego

package kernels

import (
	"math/bits"

	"golang.org/x/sys/cpu"
)

// The dispatchers of the lookup-table kernels: the AVX-512 assembly when the
// CPU has VBMI (VPERMB) and BMI1/BMI2 (TZCNT, BZHI) and the tables fit it (up
// to 64 entries for an encoder; 2, 4, 8 or 16 tables and groups up to 64 for
// a selection), else the Go reference. The assembly masks the tails itself. The exported callers
// have checked the lengths.

// hasLUTAVX512 reports whether the CPU has what the AVX-512 lookup-table
// kernels use beyond the AVX-512 tier.
var hasLUTAVX512 = cpu.X86.HasAVX512VBMI && cpu.X86.HasBMI1 && cpu.X86.HasBMI2

// lutVec reports whether the AVX-512 lookup-table kernels run.
func lutVec() bool { return active >= tierAVX512 && hasLUTAVX512 }

func lutEncodeBlocks(e *LUTEncoder, dst []uint8, src []float32, block int, muls []float32) {
	v := e.vec
	switch {
	case !lutVec() || v == nil || len(src) == 0:
		lutEncodeBlocksGo(e, dst, src, block, muls)
	case v.levels == 4:
		lutEncode4AVX512(dst, src, block, muls, &v.words)
	default:
		lutEncode6AVX512(dst, src, block, muls, &v.words)
	}
}

// selectVec reports whether the AVX-512 selection kernels (Select's and
// SelectWeighted's) take n values in groups of group. There are kernels for
// 2, 4, 8 and 16 tables and groups up to 64. Those of two tables write the
// codes of 64 values at a time after their groups: groups of a power of
// two.
func (s *LUTSelector) selectVec(group, n int) bool {
	nt := s.nt
	return lutVec() && s.vec6 != nil && nt >= 2 && nt <= 16 && nt&(nt-1) == 0 && group <= 64 && n != 0 &&
		(nt != 2 || group&(group-1) == 0)
}

func lutSelect(s *LUTSelector, codes, meta []uint8, x []float32, group, block int, muls, scales []float32) {
	if !s.selectVec(group, len(x)) {
		lutSelectGo(s, codes, meta, x, group, block, muls, scales)
		return
	}
	tb := &s.vec6.words
	nt, nb := s.nt, (len(x)+block-1)/block
	switch {
	case s.pow2Exact(muls[:nb], scales[:nb]):
		switch nt {
		case 2:
			lutSelect2Pow2AVX512(codes, meta, x, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		case 4:
			lutSelect4Pow2AVX512(codes, meta, x, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		case 8:
			lutSelect8Pow2AVX512(codes, meta, x, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		default:
			lutSelect16Pow2AVX512(codes, meta, x, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		}
	case s.exactScales(scales[:nb]):
		switch nt {
		case 2:
			lutSelect2ExactAVX512(codes, meta, x, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		case 4:
			lutSelect4ExactAVX512(codes, meta, x, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		case 8:
			lutSelect8ExactAVX512(codes, meta, x, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		default:
			lutSelect16ExactAVX512(codes, meta, x, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		}
	default:
		switch nt {
		case 2:
			lutSelect2AVX512(codes, meta, x, group, block, muls, scales, tb, s.mags, s.codes, s.zero)
		case 4:
			lutSelect4AVX512(codes, meta, x, group, block, muls, scales, tb, s.mags, s.codes, s.zero)
		case 8:
			lutSelect8AVX512(codes, meta, x, group, block, muls, scales, tb, s.mags, s.codes, s.zero)
		default:
			lutSelect16AVX512(codes, meta, x, group, block, muls, scales, tb, s.mags, s.codes, s.zero)
		}
	}
}

func lutDecodeGroups(dst []float32, src, meta []uint8, group, block, entries int, luts, scales []float32) {
	if !lutVec() || len(src) == 0 {
		lutDecodeGroupsGo(dst, src, meta, group, block, entries, luts, scales)
		return
	}
	tm, log2 := len(luts)/entries-1, bits.TrailingZeros(uint(entries))
	lanes := -2 // 16 codes at a time across groups: no
	if block%16 == 0 && (group%16 == 0 || 16%group == 0) {
		lanes = -1 // groups of multiples of 16
		if group < 16 {
			lanes = bits.TrailingZeros(uint(group))
		}
	}
	switch {
	case lanes >= -1 && len(luts) <= 16:
		lutDecodeLanes16AVX512(dst, src, meta, group, block, luts, scales, tm, log2, lanes)
	case lanes >= -1 && len(luts) <= 32:
		lutDecodeLanes32AVX512(dst, src, meta, group, block, luts, scales, tm, log2, lanes)
	case lanes >= -1 && len(luts) <= 64:
		lutDecodeLanes64AVX512(dst, src, meta, group, block, luts, scales, tm, log2, lanes)
	case entries == 16:
		// A table of 16 in a register per group (faster than gathers).
		lutDecodeGroupsAVX512(dst, src, meta, group, block, luts, scales, tm)
	case lanes >= -1:
		lutDecodeLanesGatherAVX512(dst, src, meta, group, block, luts, scales, tm, log2, lanes)
	default:
		lutDecodeGroupsGatherAVX512(dst, src, meta, group, block, luts, scales, tm, log2)
	}
}

// packNibbles is PackBits of width 4: whole runs of 64 codes (AVX-512) or
// 32 (AVX2) through the assembly, the rest through the Go reference.
func packNibbles(dst []byte, src []uint8) {
	var m int // codes done
	switch active {
	case tierAVX512:
		m = len(src) &^ 63
		packNibblesAVX512(dst[:m/2], src[:m])
	case tierAVX2:
		m = len(src) &^ 31
		packNibblesAVX2(dst[:m/2], src[:m])
	}
	packBitsGo(dst[m/2:], src[m:], 4)
}

// unpackNibbles is UnpackBits of width 4, as packNibbles splits it.
func unpackNibbles(dst []uint8, src []byte) {
	var m int
	switch active {
	case tierAVX512:
		m = len(dst) &^ 63
		unpackNibblesAVX512(dst[:m], src[:m/2])
	case tierAVX2:
		m = len(dst) &^ 31
		unpackNibblesAVX2(dst[:m], src[:m/2])
	}
	unpackBitsGo(dst[m:], src[m/2:], 4)
}
