package kernels

import "math"

// fma32 returns x·y + z rounded once to float32, to nearest even: what a
// fused multiply-add instruction (VFMADD231PS) gives. The product is exact
// in float64 (24 + 24 significant bits), so the float64 sum s carries one
// rounding, and float32(s) a second one; the two differ from the single
// rounding only when s lies exactly halfway between two float32 values,
// where the sign of the first rounding's error decides (fma32Tie).
func fma32(x, y, z float32) float32 {
	if s := float64(x)*float64(y) + float64(z); fma32Easy(s) {
		return float32(s)
	}
	return fma32Tie(x, y, z)
}

// fma32Easy reports whether float32(s) rounds the sum s = float64(x·y) +
// float64(z) as a single rounding of x·y + z would: s is 0, or a float32
// normal's magnitude (2^-126 ≤ |s| < 2^128, biased exponent 897..1151)
// not halfway between two float32 values (of s's 53 significant bits the
// 29 below a float32's are not 1000…0; this also catches the overflow
// threshold 2^128 − 2^103, beyond which every rounding gives ±Inf). The
// loops that call fma32 in every step inline this test themselves.
func fma32Easy(s float64) bool {
	b := math.Float64bits(s)
	return b&(1<<29-1) != 1<<28 && (b>>52&0x7ff-897 < 255 || s == 0)
}

// fma32Tie is fma32 when the float64 sum s may be halfway between two
// float32 values, or is not in the range of float32 normals.
func fma32Tie(x, y, zf float32) float32 {
	p, z := float64(x)*float64(y), float64(zf)
	s := p + z
	r := float32(s)
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return r
	}
	// The error of s (Knuth's two-sum): p + z = s + err exactly.
	bb := s - p
	err := (p - (s - bb)) + (z - bb)
	if err == 0 || float64(r) == s {
		return r // s is p + z, or a float32: rounding it once more is exact
	}
	// o is the other float32 next to s; r's value as a float64 (2^128 for
	// an overflow to infinity, the power of two the rounding reached).
	rv := float64(r)
	if math.IsInf(rv, 0) {
		rv = math.Copysign(math.Ldexp(1, 128), s)
	}
	var o float32
	if rv > s {
		o = math.Nextafter32(r, float32(math.Inf(-1)))
	} else {
		o = math.Nextafter32(r, float32(math.Inf(1)))
	}
	if s-float64(o) != rv-s { // not halfway: float32(s) is the nearest
		return r
	}
	if (err > 0) == (float64(o) > s) {
		return o
	}
	return r
}
