package kernels

import "testing"

// FuzzWeigh compares every tier's weight kernels with the Go references:
// the fuzzer's bytes read as float32 values, their finite ones as elements
// and the magnitudes of their reverse as the weights.
func FuzzWeigh(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0xcd, 0xcc, 0x8c, 0x3f, 0, 0, 0x80, 0x7f, 1, 0, 0, 0})
	f.Add(make([]byte, 4*48))
	f.Fuzz(func(t *testing.T, data []byte) {
		v := floatsOf(data)
		x, base := make([]float32, 0, len(v)), make([]float32, 0, len(v))
		for i, a := range v {
			if finite(a) {
				x = append(x, a)
			}
			if b := abs32(v[len(v)-1-i]); finite(b) && len(base) < len(x) {
				base = append(base, b)
			}
		}
		for len(base) < len(x) {
			base = append(base, 1)
		}
		requireWeighTiers(t, x, base, "fuzz")
	})
}
