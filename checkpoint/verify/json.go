package verify

import (
	"encoding/json"
	"math"
)

// A tensor whose conversion lost finite values (Lost > 0) has an infinite
// error: SQNR −Inf and MSE and maximum absolute error +Inf. JSON has no
// infinities, so a Result writes those figures as null, with
// nonfinite_outputs giving how many values were lost; reading it back
// gives the infinities again.

// MarshalJSON writes r; with Lost > 0 sqnr_db, mse, max_abs_error and
// weighted_sqnr_db are null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	if r.Lost == 0 {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		plain
		SQNR         *float64 `json:"sqnr_db"`
		MSE          *float64 `json:"mse"`
		MaxAbsErr    *float64 `json:"max_abs_error"`
		WeightedSQNR *float64 `json:"weighted_sqnr_db"`
	}{plain: plain(r)})
}

// UnmarshalJSON reads r; with Lost > 0 its SQNR is −Inf, its MSE and
// MaxAbsErr +Inf and its WeightedSQNR nil.
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = Result(p)
	if r.Lost > 0 {
		inf := math.Inf(-1)
		r.SQNR, r.MSE, r.MaxAbsErr, r.WeightedSQNR = &inf, math.Inf(1), math.Inf(1), nil
	}
	return nil
}
