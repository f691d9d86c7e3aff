package kernels

import "math"

// WeightedErrorSums adds the importance-weighted sums an SQNR needs:
// for each i with a finite error e = float64(want[i]) − float64(got[i]), it
// adds float64(w[i])·a·a (a = float64(want[i])) to sig[i%8] and
// float64(w[i])·e·e to noise[i%8], in order of i, each product rounded to
// float64 before the next (never fused), so every tier gives the same bits.
// Elements whose error is NaN or infinite are left out (the plain error
// sums count them). A sum that is NaN on return (a NaN or infinite
// weight, or sums reaching both infinities) is the quiet NaN without a
// payload (bits 0x7FF8000000000000): which NaN payload an addition passes
// on depends on its operand order, which differs between tiers. want and got must be at
// least len(w) long.
func WeightedErrorSums(sig, noise *[ErrorLanes]float64, w, want, got []float32) {
	want, got = want[:len(w)], got[:len(w)]
	weightedErrorSums(sig, noise, w, want, got)
	canonicalNaNs(sig, noise)
}

// canonicalNaNs replaces every NaN of sig and noise by the quiet NaN
// without a payload.
func canonicalNaNs(sig, noise *[ErrorLanes]float64) {
	qnan := math.Float64frombits(0x7FF8000000000000)
	for i := range ErrorLanes {
		if sig[i] != sig[i] {
			sig[i] = qnan
		}
		if noise[i] != noise[i] {
			noise[i] = qnan
		}
	}
}

// weightedErrorSumsGo is the reference of WeightedErrorSums over any length
// (lane i%8 for element i).
func weightedErrorSumsGo(sig, noise *[ErrorLanes]float64, w, want, got []float32) {
	for i, v := range w {
		a := float64(want[i])
		e := a - float64(got[i])
		if e-e != 0 { // NaN or infinite
			continue
		}
		sig[i%ErrorLanes] += float64(float64(v) * a * a) // the conversion forbids fusing
		noise[i%ErrorLanes] += float64(float64(v) * e * e)
	}
}
