//go:build amd64 && !purego

package kernels

// The dispatchers of the blend kernels: whole groups (64 elements on
// AVX-512, 32 on AVX2) through the assembly of the active tier, the rest
// through the Go reference.

func blendMasked(dst, a, b []float32, mask []byte) {
	var m int // elements done
	switch active {
	case tierAVX512:
		m = len(dst) &^ 63
		blendMaskedAVX512(dst[:m], a, b, mask)
	case tierAVX2:
		m = len(dst) &^ 31
		blendMaskedAVX2(dst[:m], a, b, mask)
	}
	blendMaskedGo(dst[m:], a[m:], b[m:], mask[m/8:])
}

func zeroMasked(dst, src []float32, mask []byte) {
	var m int
	switch active {
	case tierAVX512:
		m = len(dst) &^ 63
		zeroMaskedAVX512(dst[:m], src, mask)
	case tierAVX2:
		m = len(dst) &^ 31
		zeroMaskedAVX2(dst[:m], src, mask)
	}
	zeroMaskedGo(dst[m:], src[m:], mask[m/8:])
}
