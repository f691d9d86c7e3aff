package tcast

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

// Compare measures got against want (len(got) ≥ len(want)), element by
// element in order.
func Compare(want, got []float32) Errors {
	var s ErrorSum
	s.addSlow(want, got)
	return s.Errors()
}
