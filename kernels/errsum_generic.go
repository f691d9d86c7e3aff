//go:build !amd64 || purego

package kernels

func errorSums(sig, noise *[ErrorLanes]float64, want, got []float32) float64 {
	return errorSumsGo(sig, noise, want, got)
}
