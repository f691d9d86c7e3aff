package kernels

import "math"

// The choice of the fast scale searches (searchIntSym, searchE4M3 on
// amd64): they sum each candidate's error in float32 and trust the least
// sum only when it undercuts every other candidate's by a relative margin m
// that bounds, twice over, how far a fast sum can lie from the exact float64
// sum that defines the search (docs/NUMERICS.md §11). Let ε bound the
// relative distance of both the fast sum S and the defining sum F from the
// exact sum T of the defining terms (|S − T| ≤ ε·T, |F − T| ≤ ε·T) and
// m = 2ε. If S_b·(1 + m) < S_c·(1 − m) then F_b ≤ S_b·(1 + ε)/(1 − ε) and
// F_c ≥ S_c·(1 − ε)/(1 + ε), and since S_b < S_c,
// S_b·(1 + ε)² = S_b·(1 + m + ε²) < S_c·(1 − m + ε²) = S_c·(1 − ε)²: so
// F_b < F_c, and b is the defining search's choice. The products are
// rounded to float32 with the factors rounded outwards (marginFactors);
// each ε leaves room for their rounding. Where the margin leaves the choice
// open, the float64 sums decide.

// marginWindow bounds the least fast sum that marginLeast trusts:
// below 2^−100 float32's absolute rounding of underflowing terms may not
// be small against the sum, above 2^100 a sum may have overflowed.
const (
	marginTiny = 0x1p-100
	marginHuge = 0x1p100
)

// marginLeast returns the index b of the least of the candidates' fast
// error sums errs (the first of equal ones; +Inf for a candidate left out)
// and whether it stands without the float64 sums: errs[b] lies in
// [2^−100, 2^100] and float32(errs[b]·hi) < float32(errs[c]·lo) for every
// other c.
func marginLeast(errs []float32, lo, hi float32) (int, bool) {
	b := 0
	for c := 1; c < len(errs); c++ {
		if errs[c] < errs[b] {
			b = c
		}
	}
	ok := errs[b] >= marginTiny && errs[b] <= marginHuge
	h := float32(errs[b] * hi)
	for c, e := range errs {
		if c != b && !(h < float32(e*lo)) {
			ok = false
		}
	}
	return b, ok
}

// marginFactors returns 1 − m rounded down and 1 + m rounded up to float32,
// marginLeast's lo and hi.
func marginFactors(m float64) (lo, hi float32) {
	lo, hi = float32(1-m), float32(1+m)
	if float64(lo) > 1-m {
		lo = math.Nextafter32(lo, 0)
	}
	if float64(hi) < 1+m {
		hi = math.Nextafter32(hi, 2)
	}
	return lo, hi
}
