package convert

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLostJSON: a result whose cast lost finite values is written with null
// error figures (JSON has no infinities: on i15-int encoding failed, or
// with the finite elements' figures said 0) and read back as infinities; a
// result without lost values is written as before.
func TestLostJSON(t *testing.T) {
	inf := math.Inf(-1)
	db := 12.5
	lost := TensorResult{Name: "w", DataType: "fp8e4_tensor", SQNR: &inf, MaxAbsErr: math.Inf(1), Lost: 3, WeightedSQNR: &db}
	b, err := json.Marshal(lost)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"sqnr_db", "max_abs_error", "weighted_sqnr_db"} {
		assert.Contains(t, m, k)
		assert.Nil(t, m[k], k)
	}
	assert.Equal(t, 3.0, m["nonfinite_outputs"])
	var back TensorResult
	require.NoError(t, json.Unmarshal(b, &back))
	require.NotNil(t, back.SQNR)
	assert.True(t, math.IsInf(*back.SQNR, -1))
	assert.True(t, math.IsInf(back.MaxAbsErr, 1))

	exact := TensorResult{Name: "w", DataType: "bf16", MaxAbsErr: 0}
	b, err = json.Marshal(exact)
	require.NoError(t, err)
	assert.Equal(t, `{"name":"w","shape":null,"source_dtype":"","datatype":"bf16","bits_per_value":0,"max_abs_error":0,"bytes_in":0,"bytes_out":0}`, string(b))

	rot := TensorResult{Name: "w", SQNR: &db, SQNRUnrotated: &inf, Rotation: "hadamard:32"}
	b, err = json.Marshal(rot)
	require.NoError(t, err, "an unrotated cast that lost values does not break the report")
	assert.NotContains(t, string(b), "sqnr_unrotated_db")
}
