//go:build !amd64 || purego

package kernels

func fwhtRows(dst, src []float32, block int, buf []float64) {
	fwhtRowsGo(dst, src, block, buf)
}
