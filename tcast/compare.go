package tcast

import (
	"fmt"
	"strings"
)

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

// String returns the figures with the SQNR's value, not its pointer:
// "SQNR 18.30 dB, max abs error 0.055, MSE 0.00012", "exact" for no error,
// and the counts of lost and non-finite values where there are any. fmt's
// %v and %+v print it.
func (e Errors) String() string {
	var b strings.Builder
	switch {
	case e.Lost > 0:
		fmt.Fprintf(&b, "lost: %d finite values became NaN or Inf", e.Lost)
	case e.SQNR == nil && e.MaxAbs == 0:
		b.WriteString("exact")
	case e.SQNR == nil:
		fmt.Fprintf(&b, "SQNR none (an all-zero source), max abs error %.3g, MSE %.3g", e.MaxAbs, e.MSE)
	default:
		fmt.Fprintf(&b, "SQNR %.2f dB, max abs error %.3g, MSE %.3g", *e.SQNR, e.MaxAbs, e.MSE)
	}
	if n := e.NonFinite(); n > 0 {
		fmt.Fprintf(&b, "; source holds %d NaN, %d +Inf, %d -Inf", e.NaN, e.PosInf, e.NegInf)
	}
	return b.String()
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
