package tcast

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Errors prints its figures, not the SQNR's pointer (finding 6).
func TestErrorsString(t *testing.T) {
	db := 18.3
	for _, c := range []struct {
		e    Errors
		want string
	}{
		{Errors{SQNR: &db, MaxAbs: 0.055, MSE: 0.00012}, "SQNR 18.30 dB, max abs error 0.055, MSE 0.00012"},
		{Errors{}, "exact"},
		{Errors{MaxAbs: 1, MSE: 0.5}, "SQNR none (an all-zero source), max abs error 1, MSE 0.5"},
		{Errors{Lost: 3, NaN: 1}, "lost: 3 finite values became NaN or Inf; source holds 1 NaN, 0 +Inf, 0 -Inf"},
	} {
		assert.Equal(t, c.want, c.e.String())
		assert.Equal(t, c.want, fmt.Sprintf("%+v", c.e))
	}
}
