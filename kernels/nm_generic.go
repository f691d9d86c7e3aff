//go:build !amd64 || purego

package kernels

func selectNM(dst []byte, src []float32, n, m int) { selectNMTail(dst, src, n, m) }
