package tcast

import "math"

// Errors compares dequantized values with their source: what a cast lost.
type Errors struct {
	// SQNR in dB over elements where both are finite; nil when the error is
	// zero or the source is all zero.
	SQNR *float64
	// MaxAbs and MSE are the largest and the mean squared absolute error over
	// the same elements.
	MaxAbs, MSE float64
	// Lost counts finite source values that came back NaN or infinite.
	Lost int
}

// Compare measures got against want.
func Compare(want, got []float32) Errors {
	var e Errors
	var sig, noise float64
	n := 0
	for i, w := range want {
		g := got[i]
		wf := !math.IsNaN(float64(w)) && !math.IsInf(float64(w), 0)
		gf := !math.IsNaN(float64(g)) && !math.IsInf(float64(g), 0)
		if wf && !gf {
			e.Lost++
		}
		if !wf || !gf {
			continue
		}
		d := float64(g) - float64(w)
		sig += float64(w) * float64(w)
		noise += d * d
		e.MaxAbs = max(e.MaxAbs, math.Abs(d))
		n++
	}
	if n > 0 {
		e.MSE = noise / float64(n)
	}
	if noise != 0 && sig != 0 {
		s := 10 * math.Log10(sig/noise)
		e.SQNR = &s
	}
	return e
}
