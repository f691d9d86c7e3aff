// Package shape counts the elements of tensor shapes, for the packages that
// take shapes from callers and files: one rule for negative dimensions and
// for counts too large to address.
package shape

import "math"

// MaxElements is the largest element count Elements accepts: math.MaxInt>>7
// (2^56−1 where int has 64 bits, 2^24−1 where it has 32), so that a count
// times 64, the bits of a float64, still fits an int.
const MaxElements = math.MaxInt >> 7

// Elements returns the product of dims. It stops at the first dimension that
// is negative (neg is its index) or that takes the product beyond
// MaxElements (neg is −1); ok reports whether there was neither.
func Elements(dims []int) (n, neg int, ok bool) {
	n = 1
	for i, d := range dims {
		if d < 0 {
			return 0, i, false
		}
		if d != 0 && n > MaxElements/d {
			return 0, -1, false
		}
		n *= d
	}
	return n, -1, true
}
