package kbench

import "unsafe"

// SumFloat32 returns an integer checksum of the bits of src, read as 64-bit words
// in eight independent lanes. It is the memory-read baseline that benchmarks report
// encode and decode speeds against: it touches every byte once and does almost no
// work per byte.
func SumFloat32(src []float32) uint64 {
	var s [8]uint64
	n := len(src) / 2
	var w []uint64
	if n > 0 {
		w = unsafe.Slice((*uint64)(unsafe.Pointer(&src[0])), n)
	}
	i := 0
	for ; i+8 <= len(w); i += 8 {
		v := w[i : i+8 : i+8]
		s[0] += v[0]
		s[1] += v[1]
		s[2] += v[2]
		s[3] += v[3]
		s[4] += v[4]
		s[5] += v[5]
		s[6] += v[6]
		s[7] += v[7]
	}
	for ; i < len(w); i++ {
		s[0] += w[i]
	}
	if len(src)%2 == 1 {
		s[1] += uint64(*(*uint32)(unsafe.Pointer(&src[len(src)-1])))
	}
	return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7]
}
