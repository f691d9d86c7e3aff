//go:build !amd64 || purego

package kernels

func blendMasked(dst, a, b []float32, mask []byte) { blendMaskedGo(dst, a, b, mask) }
func zeroMasked(dst, src []float32, mask []byte)   { zeroMaskedGo(dst, src, mask) }
