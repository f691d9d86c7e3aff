//go:build !amd64 || purego

package kernels

func quantMXFP8(codes []byte, scales []uint8, src []float32) { quantizeMXFP8Go(codes, scales, src) }
func quantMXFP8E5M2(codes []byte, scales []uint8, src []float32) {
	quantizeMXFP8E5M2Go(codes, scales, src)
}
func quantMXINT8(codes []byte, scales []uint8, src []float32) {
	quantizeMXINT8Go(codes, scales, src)
}
func dequantMXFP8(dst []float32, codes []byte, scales []uint8) {
	dequantizeMXFP8Go(dst, codes, scales)
}
func dequantMXFP8E5M2(dst []float32, codes []byte, scales []uint8) {
	dequantizeMXFP8E5M2Go(dst, codes, scales)
}
func dequantMXINT8(dst []float32, codes []byte, scales []uint8) {
	dequantizeMXINT8Go(dst, codes, scales)
}
func quantizeMXFP6(codes []byte, scales []uint8, src []float32, e *mxElem) {
	quantMXFP6Go(codes, scales, src, e)
}
func dequantizeMXFP6(dst []float32, codes []byte, scales []uint8, e *mxElem) {
	dequantMXFP6Go(dst, codes, scales, e)
}

func encodeFloat8(f *FloatCodec, dst []uint8, src []float32, saturate bool) bool { return false }
func decodeFloat8(f *FloatCodec, dst []float32, src []uint8, lut *[256]float32) bool {
	return false
}
