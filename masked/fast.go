package masked

import "math"

// Branch-free loops for the float32 and float64 element types (the generic
// kernels branch on every mask bit, which a random mask mispredicts). A
// masked-out element is removed by and-ing its bits with 0: it becomes +0 for a
// sum, and the key 0 (below every number) for a maximum. They give the same
// results as the generic loops they stand for.

func b2u32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

func b2u64(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// sumF32 is sumBlock[float32, float32].
func sumF32(xs []float32, ks []bool) float32 {
	ks = ks[:len(xs)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		x, k := xs[i:i+4:i+4], ks[i:i+4:i+4]
		s0 += math.Float32frombits(math.Float32bits(x[0]) & -b2u32(k[0]))
		s1 += math.Float32frombits(math.Float32bits(x[1]) & -b2u32(k[1]))
		s2 += math.Float32frombits(math.Float32bits(x[2]) & -b2u32(k[2]))
		s3 += math.Float32frombits(math.Float32bits(x[3]) & -b2u32(k[3]))
	}
	for ; i < len(xs); i++ {
		s0 += math.Float32frombits(math.Float32bits(xs[i]) & -b2u32(ks[i]))
	}
	return (s0 + s1) + (s2 + s3)
}

// sumF32Wide is sumBlock[float32, float64].
func sumF32Wide(xs []float32, ks []bool) float64 {
	ks = ks[:len(xs)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		x, k := xs[i:i+4:i+4], ks[i:i+4:i+4]
		s0 += float64(math.Float32frombits(math.Float32bits(x[0]) & -b2u32(k[0])))
		s1 += float64(math.Float32frombits(math.Float32bits(x[1]) & -b2u32(k[1])))
		s2 += float64(math.Float32frombits(math.Float32bits(x[2]) & -b2u32(k[2])))
		s3 += float64(math.Float32frombits(math.Float32bits(x[3]) & -b2u32(k[3])))
	}
	for ; i < len(xs); i++ {
		s0 += float64(math.Float32frombits(math.Float32bits(xs[i]) & -b2u32(ks[i])))
	}
	return (s0 + s1) + (s2 + s3)
}

// sumF64 is sumBlock[float64, float64].
func sumF64(xs []float64, ks []bool) float64 {
	ks = ks[:len(xs)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		x, k := xs[i:i+4:i+4], ks[i:i+4:i+4]
		s0 += math.Float64frombits(math.Float64bits(x[0]) & -b2u64(k[0]))
		s1 += math.Float64frombits(math.Float64bits(x[1]) & -b2u64(k[1]))
		s2 += math.Float64frombits(math.Float64bits(x[2]) & -b2u64(k[2]))
		s3 += math.Float64frombits(math.Float64bits(x[3]) & -b2u64(k[3]))
	}
	for ; i < len(xs); i++ {
		s0 += math.Float64frombits(math.Float64bits(xs[i]) & -b2u64(ks[i]))
	}
	return (s0 + s1) + (s2 + s3)
}

// The maxima map float bits b to integer keys that order like the numbers:
// b | sign for positive numbers, ^b for negative ones (so -Inf has key
// 0x007fffff and a masked-out element, key 0, is below everything). NaNs are
// found separately, as an absolute value above +Inf's bits.

// amaxF32 is amaxBlock[float32], or aminBlock with neg set (the maximum of the
// negated values, negated back).
func amaxF32(xs []float32, ks []bool, neg bool) float32 {
	ks = ks[:len(xs)]
	flip := uint32(0)
	if neg {
		flip = 1 << 31
	}
	key := func(b, k uint32) uint32 {
		b ^= flip
		return (b ^ (uint32(int32(b)>>31) | 1<<31)) & k
	}
	var m0, m1, m2, m3, a0, a1 uint32
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		x, k := xs[i:i+4:i+4], ks[i:i+4:i+4]
		b0, b1, b2, b3 := math.Float32bits(x[0]), math.Float32bits(x[1]), math.Float32bits(x[2]), math.Float32bits(x[3])
		k0, k1, k2, k3 := -b2u32(k[0]), -b2u32(k[1]), -b2u32(k[2]), -b2u32(k[3])
		a0 = max(a0, b0&k0&0x7fffffff, b1&k1&0x7fffffff)
		a1 = max(a1, b2&k2&0x7fffffff, b3&k3&0x7fffffff)
		m0 = max(m0, key(b0, k0))
		m1 = max(m1, key(b1, k1))
		m2 = max(m2, key(b2, k2))
		m3 = max(m3, key(b3, k3))
	}
	for ; i < len(xs); i++ {
		b, k := math.Float32bits(xs[i]), -b2u32(ks[i])
		a0 = max(a0, b&k&0x7fffffff)
		m0 = max(m0, key(b, k))
	}
	if max(a0, a1) > 0x7f800000 {
		return float32(math.NaN())
	}
	m := max(m0, m1, m2, m3)
	var r float32
	switch {
	case m == 0:
		r = float32(math.Inf(-1))
	case m&(1<<31) != 0:
		r = math.Float32frombits(m &^ (1 << 31))
	default:
		r = math.Float32frombits(^m)
	}
	if neg {
		r = -r
	}
	return r
}

// amaxF64 is amaxF32 for float64.
func amaxF64(xs []float64, ks []bool, neg bool) float64 {
	ks = ks[:len(xs)]
	flip := uint64(0)
	if neg {
		flip = 1 << 63
	}
	key := func(b, k uint64) uint64 {
		b ^= flip
		return (b ^ (uint64(int64(b)>>63) | 1<<63)) & k
	}
	const absMask, infBits = 1<<63 - 1, 0x7ff0000000000000
	var m0, m1, m2, m3, a0, a1 uint64
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		x, k := xs[i:i+4:i+4], ks[i:i+4:i+4]
		b0, b1, b2, b3 := math.Float64bits(x[0]), math.Float64bits(x[1]), math.Float64bits(x[2]), math.Float64bits(x[3])
		k0, k1, k2, k3 := -b2u64(k[0]), -b2u64(k[1]), -b2u64(k[2]), -b2u64(k[3])
		a0 = max(a0, b0&k0&absMask, b1&k1&absMask)
		a1 = max(a1, b2&k2&absMask, b3&k3&absMask)
		m0 = max(m0, key(b0, k0))
		m1 = max(m1, key(b1, k1))
		m2 = max(m2, key(b2, k2))
		m3 = max(m3, key(b3, k3))
	}
	for ; i < len(xs); i++ {
		b, k := math.Float64bits(xs[i]), -b2u64(ks[i])
		a0 = max(a0, b&k&absMask)
		m0 = max(m0, key(b, k))
	}
	if max(a0, a1) > infBits {
		return math.NaN()
	}
	m := max(m0, m1, m2, m3)
	var r float64
	switch {
	case m == 0:
		r = math.Inf(-1)
	case m&(1<<63) != 0:
		r = math.Float64frombits(m &^ (1 << 63))
	default:
		r = math.Float64frombits(^m)
	}
	if neg {
		r = -r
	}
	return r
}
