package kernels

import "math"

// ErrorLanes is the number of partial sums ErrorSums keeps of each measure.
const ErrorLanes = 8

// ErrorSums measures got against want, the sums a signal-to-noise ratio
// needs, in float64: it adds each want[i]² to sig[i%8] and each
// (got[i]−want[i])² to noise[i%8], in order of i, and returns the largest
// |got[i]−want[i]|, with ok. len(got) must be at least len(want). Each
// product is rounded to float64 before it is added, so every tier gives the
// same bits.
//
// With a NaN or an infinity among the values, ok is false and sig, noise and
// maxAbs are unspecified: the caller measures those values one by one (a
// finite float32's square is far inside float64's range, so finite values
// never overflow a sum, and a non-finite one always shows in one).
func ErrorSums(sig, noise *[ErrorLanes]float64, want, got []float32) (maxAbs float64, ok bool) {
	got = got[:len(want)]
	m := errorSums(sig, noise, want, got)
	for l := range ErrorLanes {
		if nonFinite64(sig[l]) || nonFinite64(noise[l]) {
			return m, false
		}
	}
	return m, true
}

// nonFinite64 reports whether x is a NaN or an infinity.
func nonFinite64(x float64) bool {
	return math.Float64bits(x)&0x7ff0000000000000 == 0x7ff0000000000000
}

// errorSumsGo is the reference of ErrorSums over any length (lane i%8 for
// element i of want), returning the max |d|.
func errorSumsGo(sig, noise *[ErrorLanes]float64, want, got []float32) float64 {
	got = got[:len(want)]
	var m float64
	for i, w := range want {
		x := float64(w)
		d := float64(got[i]) - x
		sig[i%ErrorLanes] += float64(x * x) // the conversion forbids fusing into an FMA
		noise[i%ErrorLanes] += float64(d * d)
		if a := math.Abs(d); a > m {
			m = a
		}
	}
	return m
}
