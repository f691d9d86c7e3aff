//go:build !amd64 || purego

package kernels

func f16ToF32(dst []float32, src []uint16)                 { f16ToF32Go(dst, src) }
func bf16ToF32(dst []float32, src []uint16)                { bf16ToF32Go(dst, src) }
func f16BytesToF32(dst []float32, src []byte)              { f16BytesToF32Go(dst, src) }
func bf16BytesToF32(dst []float32, src []byte)             { bf16BytesToF32Go(dst, src) }
func f32ToBF16(dst []uint16, src []float32, saturate bool) { f32ToBF16Go(dst, src, saturate) }
func f32ToF16(dst []uint16, src []float32, saturate bool)  { f32ToF16Go(dst, src, saturate) }
