//go:build amd64 && !purego

package kernels

// errorSums runs whole steps of 8 elements through the assembly of the active
// tier and the rest (lanes continue: the step is the lane count) through the
// Go reference.
func errorSums(sig, noise *[ErrorLanes]float64, want, got []float32) float64 {
	n := len(want) &^ (ErrorLanes - 1)
	var m float64
	switch {
	case n == 0:
	case active >= tierAVX512:
		m = errorSumsAVX512(sig, noise, want[:n], got[:n])
	case active >= tierAVX2:
		m = errorSumsAVX2(sig, noise, want[:n], got[:n])
	default:
		n = 0
	}
	if t := errorSumsGo(sig, noise, want[n:], got[n:]); t > m {
		m = t
	}
	return m
}
