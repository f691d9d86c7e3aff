//go:build amd64 && !purego

package kernels

// The dispatchers of the ggml block codecs: every block goes through the
// assembly of the active tier (blocks are whole, so there is no tail), or
// through the Go reference on the generic tier.

// ggmlGroup is the number of floats the AVX-512 quantizers take 16 blocks
// at a time; the blocks after the last whole group go one by one.
const ggmlGroup = 16 * ggmlBlock

func quantQ8_0(dst []byte, src []float32) {
	switch active {
	case tierAVX512:
		n := len(src) / ggmlGroup * ggmlGroup
		quantQ8_0x16AVX512(dst, src[:n])
		quantQ8_0AVX512(dst[n/ggmlBlock*q8_0BlockBytes:], src[n:])
	case tierAVX2:
		quantQ8_0AVX2(dst, src)
	default:
		quantQ8_0Go(dst, src)
	}
}

func dequantQ8_0(dst []float32, src []byte) {
	switch active {
	case tierAVX512:
		dequantQ8_0AVX512(dst, src)
	case tierAVX2:
		dequantQ8_0AVX2(dst, src)
	default:
		dequantQ8_0Go(dst, src)
	}
}

func quantQ4_0(dst []byte, src []float32) {
	switch active {
	case tierAVX512:
		n := len(src) / ggmlGroup * ggmlGroup
		quantQ4_0x16AVX512(dst, src[:n])
		quantQ4_0AVX512(dst[n/ggmlBlock*q4_0BlockBytes:], src[n:])
	case tierAVX2:
		quantQ4_0AVX2(dst, src)
	default:
		quantQ4_0Go(dst, src)
	}
}

func dequantQ4_0(dst []float32, src []byte) {
	switch active {
	case tierAVX512:
		dequantQ4_0AVX512(dst, src)
	case tierAVX2:
		dequantQ4_0AVX2(dst, src)
	default:
		dequantQ4_0Go(dst, src)
	}
}
