//go:build !amd64 || purego

package kernels

func packMask(dst, src []byte)   { packMaskGo(dst, src) }
func unpackMask(dst, src []byte) { unpackMaskGo(dst, src) }
func popCount(src []byte) int    { return popCountGo(src) }

func selectMasked(dst, src []float32, mask []byte) int { return selectMaskedGo(dst, src, mask) }
func expandMasked(dst, src []float32, mask []byte) int { return expandMaskedGo(dst, src, mask) }
