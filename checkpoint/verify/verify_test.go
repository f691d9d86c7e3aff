package verify_test

import (
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
)

// TestResultJSON: a result whose conversion lost finite values is written
// with null error figures (JSON has no infinities) and read back as
// infinities.
func TestResultJSON(t *testing.T) {
	inf := math.Inf(-1)
	v := verify.Result{Name: "w", Converted: true, SQNR: &inf, MSE: math.Inf(1), MaxAbsErr: math.Inf(1), Lost: 2}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"sqnr_db", "mse", "max_abs_error"} {
		assert.Contains(t, m, k)
		assert.Nil(t, m[k], k)
	}
	var vb verify.Result
	require.NoError(t, json.Unmarshal(b, &vb))
	assert.True(t, math.IsInf(vb.MSE, 1))
	require.NotNil(t, vb.SQNR)
	assert.True(t, math.IsInf(*vb.SQNR, -1))

	db := 20.5
	b, err = json.Marshal(verify.Result{Name: "w", Shape: []int{2}, DataType: "mxfp4e2", Bits: 4.25, SQNR: &db})
	require.NoError(t, err)
	assert.Equal(t, `{"name":"w","shape":[2],"converted":false,"datatype":"mxfp4e2","bits_per_value":4.25,`+
		`"sqnr_db":20.5,"mse":0,"max_abs_error":0,"nonfinite_outputs":0}`, string(b))
}

func TestReportWeightedSQNR(t *testing.T) {
	db := func(v float64) *float64 { return &v }
	rep := verify.Report{Tensors: []verify.Result{{Shape: []int{4, 25}, WeightedSQNR: db(20)},
		{Shape: []int{300}, WeightedSQNR: db(24)}, {Shape: []int{7}},
		{Shape: []int{1000}, WeightedSQNR: db(1), Lost: 1}}}
	mw, n := rep.WeightedSQNR()
	require.NotNil(t, mw)
	assert.Equal(t, 2, n)
	assert.InDelta(t, 23.0, *mw, 1e-12) // (100·20 + 300·24) / 400
	mw, n = (&verify.Report{}).WeightedSQNR()
	assert.Nil(t, mw)
	assert.Zero(t, n)
}

// TestSwapped: a converted checkpoint given as the source, and its source
// as the conversion, compare without error (every tensor "converted
// false"), and the report says they look swapped.
func TestSwapped(t *testing.T) {
	out := convertIris(t)
	rep, err := verify.Checkpoints(out, iris, verify.Options{})
	require.NoError(t, err)
	assert.True(t, rep.Swapped)
	for _, r := range rep.Tensors {
		assert.False(t, r.Converted, r.Name)
	}
	rep, err = verify.Checkpoints(iris, out, verify.Options{})
	require.NoError(t, err)
	assert.False(t, rep.Swapped)
	rep, err = verify.Checkpoints(iris, iris, verify.Options{})
	require.NoError(t, err)
	assert.False(t, rep.Swapped, "a plain checkpoint against itself")
}

// TestMismatch: checkpoints that do not hold the same tensors match
// ErrMismatch, a missing tensor as a *MissingError naming it.
func TestMismatch(t *testing.T) {
	f, err := safetensors.Open(iris)
	require.NoError(t, err)
	defer f.Close()
	ti := f.Tensors()[1]
	data, err := f.Bytes(ti.Name)
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name string, ts ...safetensors.Tensor) string {
		p := filepath.Join(dir, name)
		require.NoError(t, safetensors.WriteFile(p, ts, nil))
		return p
	}
	one := write("one.safetensors", safetensors.Tensor{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, Data: data})
	other := write("other.safetensors", safetensors.Tensor{Name: "w", DType: ti.DType, Shape: ti.Shape, Data: data})
	ints := write("ints.safetensors", safetensors.Tensor{Name: "n", DType: safetensors.I32, Shape: []int{2}, Data: make([]byte, 8)})
	ints2 := write("ints2.safetensors", safetensors.Tensor{Name: "n", DType: safetensors.I32, Shape: []int{2}, Data: []byte{1, 0, 0, 0, 0, 0, 0, 0}})

	_, err = verify.Checkpoints(one, other, verify.Options{})
	assert.True(t, errors.Is(err, verify.ErrMismatch))
	var me *verify.MissingError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, verify.MissingError{Orig: one, Conv: other, Tensor: ti.Name}, *me)
	assert.Empty(t, me.Other())
	assert.EqualError(t, err, "checkpoints differ: "+one+" has tensor "+ti.Name+", "+other+" does not")

	_, err = verify.Checkpoints(ints, ints2, verify.Options{})
	assert.True(t, errors.Is(err, verify.ErrMismatch))
	assert.ErrorContains(t, err, "tensor n differs between")
	_, err = verify.Checkpoints(ints, ints, verify.Options{})
	assert.NoError(t, err)
}
