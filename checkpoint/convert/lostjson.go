package convert

import (
	"encoding/json"
	"math"
)

// A weight whose cast lost finite values (Lost > 0) has an infinite error:
// tcast.Errors gives SQNR −Inf and max abs error +Inf. JSON has no
// infinities, so the reports write those figures as null, with
// nonfinite_outputs giving how many values were lost; a weight without lost
// values is written as before. Reading such a report back gives the
// infinities again.

// MarshalJSON writes r; with Lost > 0 sqnr_db, max_abs_error and
// weighted_sqnr_db are null. An SQNRUnrotated of −Inf (the cast without
// the rotation lost values) is left out, as the checkpoint's record
// (layout.EncodeRotated) leaves it.
func (r TensorResult) MarshalJSON() ([]byte, error) {
	type plain TensorResult
	if u := r.SQNRUnrotated; u != nil && (math.IsInf(*u, 0) || math.IsNaN(*u)) {
		r.SQNRUnrotated = nil
	}
	if r.Lost == 0 {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		plain
		SQNR         *float64 `json:"sqnr_db"`
		MaxAbsErr    *float64 `json:"max_abs_error"`
		WeightedSQNR *float64 `json:"weighted_sqnr_db"`
	}{plain: plain(r)})
}

// UnmarshalJSON reads r; with Lost > 0 its SQNR is −Inf, its MaxAbsErr
// +Inf and its WeightedSQNR nil.
func (r *TensorResult) UnmarshalJSON(b []byte) error {
	type plain TensorResult
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = TensorResult(p)
	if r.Lost > 0 {
		r.SQNR, r.MaxAbsErr, r.WeightedSQNR = negInf(), math.Inf(1), nil
	}
	return nil
}

// negInf returns a new −Inf.
func negInf() *float64 {
	v := math.Inf(-1)
	return &v
}
