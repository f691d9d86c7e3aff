//go:build !amd64 || purego

package kernels

func lutSelectWeighted(s *LUTSelector, codes, meta []uint8, x, w []float32, group, block int, muls, scales []float32) {
	lutSelectWeightedGo(s, codes, meta, x, w, group, block, muls, scales)
}
