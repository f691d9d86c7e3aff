//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// The dispatchers of the bit-mask kernels: whole groups (64 or 32 bytes for
// packing, 16 elements for selection) through the assembly of the active
// tier, the rest through the Go reference. The popcount uses VPOPCNTQ where
// the CPU has AVX512_VPOPCNTDQ, and selection needs AVX-512 (VPCOMPRESSD,
// VPEXPANDD): on the AVX2 tier both are Go, whose popcount is POPCNT.

var (
	hasVPOPCNT = cpu.X86.HasAVX512VPOPCNTDQ
	hasPOPCNT  = cpu.X86.HasPOPCNT
)

func packMask(dst, src []byte) {
	var m int // bytes of src done
	switch active {
	case tierAVX512:
		m = len(src) &^ 63
		packMaskAVX512(dst, src[:m])
	case tierAVX2:
		m = len(src) &^ 31
		packMaskAVX2(dst, src[:m])
	}
	packMaskGo(dst[m/8:], src[m:])
}

func unpackMask(dst, src []byte) {
	var m int // bytes of dst done
	switch active {
	case tierAVX512:
		m = len(dst) &^ 63
		unpackMaskAVX512(dst[:m], src)
	case tierAVX2:
		m = len(dst) &^ 31
		unpackMaskAVX2(dst[:m], src)
	}
	unpackMaskGo(dst[m:], src[m/8:])
}

func popCount(src []byte) int {
	if active < tierAVX512 || !hasVPOPCNT {
		return popCountGo(src)
	}
	m := len(src) &^ 63
	return popCountAVX512(src[:m]) + popCountGo(src[m:])
}

func selectMasked(dst, src []float32, mask []byte) int {
	if active < tierAVX512 || !hasPOPCNT {
		return selectMaskedGo(dst, src, mask)
	}
	m := len(src) &^ 15
	j := selectMaskedAVX512(dst, src[:m], mask)
	return j + selectMaskedGo(dst[j:], src[m:], mask[m/8:])
}

func expandMasked(dst, src []float32, mask []byte) int {
	if active < tierAVX512 || !hasPOPCNT {
		return expandMaskedGo(dst, src, mask)
	}
	m := len(dst) &^ 15
	j := expandMaskedAVX512(dst[:m], src, mask)
	return j + expandMaskedGo(dst[m:], src[j:], mask[m/8:])
}
