package convert

import (
	"math"
	"sort"

	"github.com/tensorcast-go/tensorcast/internal/shape"
)

// Summary sums up the tensors of a conversion (Result.Summarize), the
// line the CLI prints under a GGUF mix's report.
type Summary struct {
	// Types counts the tensors of each datatype, "kept" for the tensors
	// kept, most frequent first (ties by name); dropped tensors are not
	// counted.
	Types []TypeCount `json:"types"`
	// Bits is the bits per value of the cast weights, a mean by elements;
	// 0 when nothing was cast.
	Bits float64 `json:"bits_per_value"`
	// SQNR is the mean SQNR in dB of the cast weights that have one, by
	// elements (MeanSQNR); nil when none has.
	SQNR *float64 `json:"sqnr_db,omitempty"`
	// WeightedSQNR is the same mean of TensorResult.WeightedSQNR.
	WeightedSQNR *float64 `json:"weighted_sqnr_db,omitempty"`
	// SQNRUnrotated is, for a conversion with a rotation, the same mean
	// of TensorResult.SQNRUnrotated: the SQNR without the rotation.
	SQNRUnrotated *float64 `json:"sqnr_unrotated_db,omitempty"`
	// Importance counts the tensors by TensorResult.Importance (with an
	// importance matrix).
	Importance map[ImportanceStatus]int `json:"importance,omitempty"`
}

// TypeCount is the number of tensors of one datatype.
type TypeCount struct {
	DataType string `json:"datatype"`
	Tensors  int    `json:"tensors"`
}

// Summarize sums up the report's tensors.
func (r *Result) Summarize() Summary {
	var s Summary
	count := map[string]int{}
	var sq, wsq, usq MeanSQNR
	var bits float64
	var elements int64
	for _, t := range r.Tensors {
		typ := t.DataType
		switch {
		case t.Dropped:
			continue
		case typ == "":
			typ = "kept"
		}
		count[typ]++
		if t.Importance != ImportanceNone {
			if s.Importance == nil {
				s.Importance = map[ImportanceStatus]int{}
			}
			s.Importance[t.Importance]++
		}
		if t.DataType != "" {
			n := elementsOf(t.Shape)
			bits += t.Bits * float64(n)
			elements += n
			sq.Add(t.SQNR, n) // −Inf (lost values) is left out
			if t.Lost == 0 {
				wsq.Add(t.WeightedSQNR, n)
			}
			if t.Rotation != "" {
				usq.Add(t.SQNRUnrotated, n)
			}
		}
	}
	for typ, n := range count {
		s.Types = append(s.Types, TypeCount{typ, n})
	}
	sort.Slice(s.Types, func(i, j int) bool {
		a, b := s.Types[i], s.Types[j]
		return a.Tensors > b.Tensors || a.Tensors == b.Tensors && a.DataType < b.DataType
	})
	if elements > 0 {
		s.Bits = bits / float64(elements)
	}
	s.SQNR, s.WeightedSQNR, s.SQNRUnrotated = sq.Mean(), wsq.Mean(), usq.Mean()
	return s
}

// MeanSQNR is a mean of tensors' SQNRs in dB weighted by their numbers of
// elements, as convert's summary and tcast verify give it: a large tensor
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

// elementsOf returns the number of elements of a tensor of the given
// shape (0 for a bad shape).
func elementsOf(dims []int) int64 {
	n, _, ok := shape.Elements(dims)
	if !ok {
		return 0
	}
	return int64(n)
}
