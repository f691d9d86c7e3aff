//go:build amd64 && !purego

package kernels

// meanSquare is meanSquareGo, through the AVX-512 or AVX2 kernel where it
// runs.
func meanSquare(x []float32, ia float32) float32 {
	if len(x) == 0 || len(x)%16 != 0 {
		return meanSquareGo(x, ia)
	}
	switch {
	case active >= tierAVX512:
		return meanSquareAVX512(x, ia)
	case active >= tierAVX2:
		return meanSquareAVX2(x, ia)
	}
	return meanSquareGo(x, ia)
}

// sigmaWeights is sigmaWeightsGo, whole steps of 16 (8) through the
// AVX-512 (AVX2) kernel where it runs.
func sigmaWeights(w, x, base []float32, ia, s2 float32) {
	n := 0
	switch {
	case active >= tierAVX512:
		n = len(x) &^ 15
		sigmaWeightsAVX512(w[:n], x[:n], base[:n], ia, s2)
	case active >= tierAVX2:
		n = len(x) &^ 7
		sigmaWeightsAVX2(w[:n], x[:n], base[:n], ia, s2)
	}
	sigmaWeightsGo(w[n:], x[n:], base[n:], ia, s2)
}

// absWeights is absWeightsGo, whole steps of 16 (8) through the AVX-512
// (AVX2) kernel where it runs.
func absWeights(w, x, base []float32, ia float32) {
	n := 0
	switch {
	case active >= tierAVX512:
		n = len(x) &^ 15
		absWeightsAVX512(w[:n], x[:n], base[:n], ia)
	case active >= tierAVX2:
		n = len(x) &^ 7
		absWeightsAVX2(w[:n], x[:n], base[:n], ia)
	}
	absWeightsGo(w[n:], x[n:], base[n:], ia)
}

func gainSums(w, x, q []float32, ia float32) (xx, xq float32) {
	if active >= tierAVX512 && len(x) > 0 && len(x)%16 == 0 {
		return gainSumsAVX512(w[:len(x)], x, q[:len(x)], ia)
	}
	return gainSumsGo(w, x, q, ia)
}
