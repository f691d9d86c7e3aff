//go:build amd64 && !purego

package kernels

// selectNM is SelectNM's dispatcher: whole runs of 32 floats through the
// AVX-512 kernel of the group size (every group lies within a run), the rest
// through the Go reference. The exported caller has checked the pattern and
// the lengths.
func selectNM(dst []byte, src []float32, n, m int) {
	k := 0 // floats done
	if active >= tierAVX512 {
		k = len(src) &^ 31
		d, s := dst[:k/8], src[:k]
		switch m {
		case 2:
			selectNM2AVX512(d, s, n)
		case 4:
			selectNM4AVX512(d, s, n)
		case 8:
			selectNM8AVX512(d, s, n)
		default:
			selectNM16AVX512(d, s, n)
		}
	}
	selectNMTail(dst[k/8:], src[k:], n, m)
}
