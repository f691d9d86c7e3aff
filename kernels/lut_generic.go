//go:build !amd64 || purego

package kernels

func lutEncodeBlocks(e *LUTEncoder, dst []uint8, src []float32, block int, muls []float32) {
	lutEncodeBlocksGo(e, dst, src, block, muls)
}

func lutSelect(s *LUTSelector, codes, meta []uint8, x []float32, group, block int, muls, scales []float32) {
	lutSelectGo(s, codes, meta, x, group, block, muls, scales)
}

func lutDecodeGroups(dst []float32, src, meta []uint8, group, block, entries int, luts, scales []float32) {
	lutDecodeGroupsGo(dst, src, meta, group, block, entries, luts, scales)
}

func packNibbles(dst []byte, src []uint8)   { packBitsGo(dst, src, 4) }
func unpackNibbles(dst []uint8, src []byte) { unpackBitsGo(dst, src, 4) }
