// Package measure holds the measures that convert, verify and report share:
// the comparison of a tensor with its source, the mean of SQNRs by
// elements, the importance-weighted SQNR and where a weight's importance
// is found in an importance matrix.
package measure

import (
	"math"

	"github.com/tensorcast-go/tensorcast/internal/shape"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// Compare measures got against want as convert and verify measure each
// tensor: tcast.Compare's figures, with the sums kept in eight partial
// sums by tcast.ErrorSum's kernel, as the streamed casts measure their
// chunks, so a weight gets the same figures cast whole or streamed (they
// may differ from tcast.Compare's in the last bits).
func Compare(want, got []float32) tcast.Errors {
	var s tcast.ErrorSum
	s.Add(want, got)
	return s.Errors()
}

// MeanSQNR is a mean of tensors' SQNRs in dB weighted by their numbers of
// elements, as convert's summary and verify give it: a large tensor
// counts for as many small ones as it holds. The zero value is empty.
type MeanSQNR struct {
	sum      float64
	elements int64
}

// Add adds a tensor of n elements whose SQNR is db; nil (an exact tensor,
// or none measured) is left out, and so is −Inf (a tensor that lost finite
// values to NaN or Inf, whose error is not finite: the reports show it
// tensor by tensor and fail it, and a mean of −Inf would say nothing of
// the others).
func (m *MeanSQNR) Add(db *float64, n int64) {
	if db != nil && n > 0 && !math.IsInf(*db, 0) && !math.IsNaN(*db) {
		m.sum += *db * float64(n)
		m.elements += n
	}
}

// Mean returns the mean, nil when nothing was added.
func (m *MeanSQNR) Mean() *float64 {
	if m.elements == 0 {
		return nil
	}
	v := m.sum / float64(m.elements)
	return &v
}

// Elements returns the number of elements of a tensor of the given shape
// (0 for a bad shape).
func Elements(dims []int) int64 {
	n, _, ok := shape.Elements(dims)
	if !ok {
		return 0
	}
	return int64(n)
}

// StoredBits is what a tensor of the given shape costs per value in a
// checkpoint that stores bytes for it: every byte of every tensor the
// layout stores for it (values, scales, masks, meta, shapes), so that a
// sparse weight counts its kept values only; 0 for an empty or bad shape.
func StoredBits(bytes int64, dims []int) float64 {
	n, _, ok := shape.Elements(dims)
	if !ok || n == 0 {
		return 0
	}
	return float64(8*bytes) / float64(n)
}
