//go:build !amd64 || purego

package kernels

func meanSquare(x []float32, ia float32) float32 { return meanSquareGo(x, ia) }

func sigmaWeights(w, x, base []float32, ia, s2 float32) { sigmaWeightsGo(w, x, base, ia, s2) }

func absWeights(w, x, base []float32, ia float32) { absWeightsGo(w, x, base, ia) }

func gainSums(w, x, q []float32, ia float32) (xx, xq float32) { return gainSumsGo(w, x, q, ia) }
