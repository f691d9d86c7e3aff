package kernels

import "math"

// Blends by a bit mask (element 8k+i in bit i of byte k, set = keep): the
// element-wise choice between two float32 slices that torch.where(mask, a, b)
// makes, and its special case against zero. Unlike SelectMasked they keep
// every position; the chosen float32 is copied bit for bit (NaN payloads and
// −0 included).

// BlendMasked sets dst[i] to a[i] where bit i of mask is set and to b[i]
// where it is clear. a and b must hold at least len(dst) floats and mask
// PackedLen(len(dst), 1) bytes. dst may be a or b itself, but must not
// overlap them otherwise.
func BlendMasked(dst, a, b []float32, mask []byte) {
	n := len(dst)
	blendMasked(dst, a[:n], b[:n], mask[:PackedLen(n, 1)])
}

// ZeroMasked sets dst[i] to src[i] where bit i of mask is set and to +0
// where it is clear. src must hold at least len(dst) floats and mask
// PackedLen(len(dst), 1) bytes. dst may be src itself (masking in place),
// but must not overlap it otherwise.
func ZeroMasked(dst, src []float32, mask []byte) {
	n := len(dst)
	zeroMasked(dst, src[:n], mask[:PackedLen(n, 1)])
}

// blendMaskedGo is the reference of BlendMasked: a branch-free select of the
// float bits (len(a) = len(b) = len(dst)).
func blendMaskedGo(dst, a, b []float32, mask []byte) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		m := -(uint32(mask[i>>3]>>(i&7)) & 1) // all ones where kept
		dst[i] = math.Float32frombits(math.Float32bits(a[i])&m | math.Float32bits(b[i])&^m)
	}
}

// zeroMaskedGo is the reference of ZeroMasked (len(src) = len(dst)).
func zeroMaskedGo(dst, src []float32, mask []byte) {
	src = src[:len(dst)]
	for i := range dst {
		m := -(uint32(mask[i>>3]>>(i&7)) & 1)
		dst[i] = math.Float32frombits(math.Float32bits(src[i]) & m)
	}
}
