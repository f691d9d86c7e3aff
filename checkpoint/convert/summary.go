package convert

import (
	"sort"

	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
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
	// elements; nil when none has.
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
	var sq, wsq, usq measure.MeanSQNR
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
			n := measure.Elements(t.Shape)
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
