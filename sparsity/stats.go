package sparsity

import (
	"fmt"
	"math"
	"slices"

	"github.com/tensorcast-go/tensorcast/mask"
)

// Stats describes what a mask keeps of a tensor and what pruning to it loses.
// Sums run over the finite elements of x (NaN and ±Inf are counted in
// Elements and Kept but add nothing to the magnitudes or the error).
type Stats struct {
	Elements, Kept int
	// Density is Kept/Elements, 0 for an empty tensor.
	Density float64
	// MinRowDensity and MaxRowDensity bound the density of the rows (runs of
	// the last axis); equal to Density for an N:M mask along the last axis.
	MinRowDensity, MaxRowDensity float64
	// MagnitudeKept is Σ|x| over the kept elements divided by Σ|x|, and
	// EnergyKept the same for x²; both 1 when x is all zero.
	MagnitudeKept, EnergyKept float64
	// MaxDropped is the largest |x| pruned.
	MaxDropped float64
	// SQNR is the signal-to-noise ratio of pruning in dB, 10·log10(Σx² /
	// Σ(pruned x)²), the measure tcast.Compare gives for a cast; nil when
	// nothing non-zero is pruned or x is all zero.
	SQNR *float64
}

// Measure returns the statistics of pruning x with m, which must have as
// many elements as x (else a *ShapeError).
func Measure(x []float32, m *mask.Mask) (Stats, error) {
	if len(x) != m.Len() {
		return Stats{}, &ShapeError{Op: "measure", Shape: m.Shape(), Reason: fmt.Sprintf("x holds %d floats for %d elements", len(x), m.Len())}
	}
	s := Stats{Elements: len(x), Kept: m.Count()}
	var absAll, absKept, sqAll, sqKept float64
	for i, v := range x {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		a := math.Abs(f)
		absAll += a
		sqAll += f * f
		if m.Get(i) {
			absKept += a
			sqKept += f * f
		} else {
			s.MaxDropped = max(s.MaxDropped, a)
		}
	}
	s.MagnitudeKept, s.EnergyKept = 1, 1
	if absAll > 0 {
		s.MagnitudeKept = absKept / absAll
		s.EnergyKept = sqKept / sqAll
	}
	if noise := sqAll - sqKept; noise > 0 && sqAll > 0 {
		q := 10 * math.Log10(sqAll/noise)
		s.SQNR = &q
	}
	if s.Elements > 0 {
		s.Density = float64(s.Kept) / float64(s.Elements)
		rd := RowDensity(m)
		s.MinRowDensity, s.MaxRowDensity = slices.Min(rd), slices.Max(rd)
	}
	return s, nil
}

// MaskDensity returns the fraction of m's elements kept, 0 for an empty mask.
func MaskDensity(m *mask.Mask) float64 {
	if m.Len() == 0 {
		return 0
	}
	return float64(m.Count()) / float64(m.Len())
}

// RowDensity returns the density of every row of m (every run of its last
// axis; a scalar mask is one row of one). A row of length 0 has density 0.
func RowDensity(m *mask.Mask) []float64 {
	shape := m.Shape()
	if len(shape) == 0 {
		shape = []int{1}
	}
	rows, cols := rowsOf(shape)
	out := make([]float64, rows)
	if cols == 0 {
		return out
	}
	for r := range out {
		out[r] = float64(m.CountRange(r*cols, r*cols+cols)) / float64(cols)
	}
	return out
}
