//go:build !amd64 || purego

package kernels

func quantQ8_0(dst []byte, src []float32)   { quantQ8_0Go(dst, src) }
func dequantQ8_0(dst []float32, src []byte) { dequantQ8_0Go(dst, src) }
func quantQ4_0(dst []byte, src []float32)   { quantQ4_0Go(dst, src) }
func dequantQ4_0(dst []float32, src []byte) { dequantQ4_0Go(dst, src) }
