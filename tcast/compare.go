package tcast

// Errors compares dequantized values with their source: what a cast lost.
type Errors struct {
	// SQNR in dB over elements where both are finite; nil when the error is
	// zero or the source is all zero. When finite values were lost (Lost >
	// 0) it is −Inf: the error is not finite, whatever the other elements
	// measure.
	SQNR *float64
	// MaxAbs and MSE are the largest and the mean squared absolute error over
	// the same elements; both are +Inf when finite values were lost.
	MaxAbs, MSE float64
	// Lost counts finite source values that came back NaN or infinite. Any
	// makes the error infinite (SQNR −Inf, MaxAbs and MSE +Inf), so that no
	// figure says a cast that lost values was exact.
	Lost int
	// NaN, PosInf and NegInf count the source values that are NaN, +Inf
	// and −Inf, left out of the measures above. They come with the pass
	// that measures the error (a piece holding one takes the element by
	// element path), so a converter learns of them without reading its
	// source again.
	NaN, PosInf, NegInf int
}

// IsLost reports whether finite source values came back NaN or infinite
// (Lost > 0): the error is not finite.
func (e Errors) IsLost() bool { return e.Lost > 0 }

// NonFinite returns NaN + PosInf + NegInf.
func (e Errors) NonFinite() int { return e.NaN + e.PosInf + e.NegInf }

// Compare measures got against want (len(got) ≥ len(want)), element by
// element in order.
func Compare(want, got []float32) Errors {
	var s ErrorSum
	s.addSlow(want, got)
	return s.Errors()
}
