//go:build amd64 && !purego

package kernels

// The dispatchers of the K-quant, IQ4 and 32-element affine block decoders:
// every block goes through the assembly of the active tier (the blocks are
// whole, so there is no tail), or through the Go reference on the generic
// tier.

func dequantQ4_1(dst []float32, src []byte) {
	switch active {
	case tierAVX512:
		dequantQ4_1AVX512(dst, src)
	case tierAVX2:
		dequantQ4_1AVX2(dst, src)
	default:
		dequantQ4_1Go(dst, src)
	}
}

func dequantQ5_0(dst []float32, src []byte) {
	switch active {
	case tierAVX512:
		dequantQ5_0AVX512(dst, src)
	case tierAVX2:
		dequantQ5_0AVX2(dst, src)
	default:
		dequantQ5_0Go(dst, src)
	}
}

func dequantQ5_1(dst []float32, src []byte) {
	switch active {
	case tierAVX512:
		dequantQ5_1AVX512(dst, src)
	case tierAVX2:
		dequantQ5_1AVX2(dst, src)
	default:
		dequantQ5_1Go(dst, src)
	}
}

func dequantIQ4NL(dst []float32, src []byte) {
	switch active {
	case tierAVX512:
		dequantIQ4NLAVX512(dst, src)
	case tierAVX2:
		dequantIQ4NLAVX2(dst, src)
	default:
		dequantIQ4NLGo(dst, src)
	}
}

func dequantQ2_K(dst []float32, src []byte) {
	switch active {
	case tierAVX512:
		dequantQ2_KAVX512(dst, src)
	case tierAVX2:
		dequantQ2_KAVX2(dst, src)
	default:
		dequantQ2_KGo(dst, src)
	}
}

func dequantQ3_K(dst []float32, src []byte) {
	switch active {
	case tierAVX512:
		dequantQ3_KAVX512(dst, src)
	case tierAVX2:
		dequantQ3_KAVX2(dst, src)
	default:
		dequantQ3_KGo(dst, src)
	}
}

func dequantQ4_K(dst []float32, src []byte) {
	switch active {
	case tierAVX512:
		dequantQ4_KAVX512(dst, src)
	case tierAVX2:
		dequantQ4_KAVX2(dst, src)
	default:
		dequantQ4_KGo(dst, src)
	}
}

func dequantQ5_K(dst []float32, src []byte) {
	switch active {
	case tierAVX512:
		dequantQ5_KAVX512(dst, src)
	case tierAVX2:
		dequantQ5_KAVX2(dst, src)
	default:
		dequantQ5_KGo(dst, src)
	}
}

func dequantQ6_K(dst []float32, src []byte) {
	switch active {
	case tierAVX512:
		dequantQ6_KAVX512(dst, src)
	case tierAVX2:
		dequantQ6_KAVX2(dst, src)
	default:
		dequantQ6_KGo(dst, src)
	}
}

func dequantIQ4XS(dst []float32, src []byte) {
	switch active {
	case tierAVX512:
		dequantIQ4XSAVX512(dst, src)
	case tierAVX2:
		dequantIQ4XSAVX2(dst, src)
	default:
		dequantIQ4XSGo(dst, src)
	}
}

// weightedErrorSums runs whole steps of 8 elements through the assembly of
// the active tier and the rest (lanes continue: the step is the lane count)
// through the Go reference.
func weightedErrorSums(sig, noise *[ErrorLanes]float64, w, want, got []float32) {
	n := len(w) &^ (ErrorLanes - 1)
	switch {
	case n == 0:
	case active >= tierAVX512:
		weightedErrorSumsAVX512(sig, noise, w[:n], want[:n], got[:n])
	case active >= tierAVX2:
		weightedErrorSumsAVX2(sig, noise, w[:n], want[:n], got[:n])
	default:
		n = 0
	}
	weightedErrorSumsGo(sig, noise, w[n:], want[n:], got[n:])
}
