//go:build !amd64 || purego

package kernels

func searchIntSymGroups(codes, scales []byte, src []float32, g IntGroups) {
	searchIntSymGo(codes, scales, src, g)
	clearLastNibble(codes, len(src), g.Bits)
}
