//go:build !amd64 || purego

package kernels

func quantIntSym(codes, scales []byte, src []float32, g IntGroups) {
	quantIntSymGo(codes, scales, src, g)
	clearLastNibble(codes, len(src), g.Bits)
}

func dequantIntSym(dst []float32, codes, scales []byte, g IntGroups) {
	dequantIntSymGo(dst, codes, scales, g)
}

func quantIntAsym(codes, scales, zeros []byte, src []float32, g IntGroups) {
	quantIntAsymGo(codes, scales, zeros, src, g)
	clearLastNibble(codes, len(src), g.Bits)
}

func dequantIntAsym(dst []float32, codes, scales, zeros []byte, g IntGroups) {
	dequantIntAsymGo(dst, codes, scales, zeros, g)
}
