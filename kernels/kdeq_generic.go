//go:build !amd64 || purego

package kernels

func dequantQ4_1(dst []float32, src []byte)  { dequantQ4_1Go(dst, src) }
func dequantQ5_0(dst []float32, src []byte)  { dequantQ5_0Go(dst, src) }
func dequantQ5_1(dst []float32, src []byte)  { dequantQ5_1Go(dst, src) }
func dequantIQ4NL(dst []float32, src []byte) { dequantIQ4NLGo(dst, src) }
func dequantQ2_K(dst []float32, src []byte)  { dequantQ2_KGo(dst, src) }
func dequantQ3_K(dst []float32, src []byte)  { dequantQ3_KGo(dst, src) }
func dequantQ4_K(dst []float32, src []byte)  { dequantQ4_KGo(dst, src) }
func dequantQ5_K(dst []float32, src []byte)  { dequantQ5_KGo(dst, src) }
func dequantQ6_K(dst []float32, src []byte)  { dequantQ6_KGo(dst, src) }
func dequantIQ4XS(dst []float32, src []byte) { dequantIQ4XSGo(dst, src) }

func weightedErrorSums(sig, noise *[ErrorLanes]float64, w, want, got []float32) {
	weightedErrorSumsGo(sig, noise, w, want, got)
}
