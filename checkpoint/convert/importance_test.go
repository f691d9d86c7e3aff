package convert

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
	"github.com/tensorcast-go/tensorcast/tcast"
)

func TestImatrixApplies(t *testing.T) {
	tc, err := layout.Get("tcast")
	require.NoError(t, err)
	gg, err := layout.Get("gguf")
	require.NoError(t, err)
	for _, c := range []struct {
		lay    layout.Layout
		dtype  string
		search bool
		ok     bool
	}{
		{tc, "icb44fi2_e32s8", false, true},
		{tc, "mxfi4", false, true},
		{tc, "mxfi4", true, true},
		{nil, "mxfp4e", false, true},
		{tc, "mxfp4", false, false},
		{nil, "nvfp4", false, false},
		{tc, "nf4", false, false}, // one table: nothing to choose
		{gg, "q8_0", false, true},
		// The scale search weighs its candidates by the importance.
		{tc, "mxfp4", true, true},
		{nil, "nvfp4", true, true},
		{tc, "int4_g128", true, true},
		{tc, "fp8e4_block128", true, true},
		{tc, "nf4", true, false},        // a codebook: no scale to search
		{tc, "uint4_g128", true, false}, // a zero point: no search
	} {
		l := c.lay
		if l == nil {
			l = tc
		}
		err := imatrixApplies(c.lay, mustDataType(t, l, c.dtype), c.search)
		if c.ok {
			assert.NoError(t, err, c.dtype)
			continue
		}
		require.ErrorIs(t, err, ErrImatrixUnused, c.dtype)
		assert.ErrorContains(t, err, "unset Options.Imatrix")
		assert.ErrorContains(t, err, "scale search", c.dtype)
		if !c.search && mustDataType(t, l, c.dtype).SearchesScales() {
			assert.ErrorContains(t, err, "set Options.ScaleSearch to true", c.dtype)
		}
	}
}

// weightedSQNRdB is 10·log10(Σ w_c·x² / Σ w_c·(x − y)²), w_c the importance
// of x's column (row length len(w)).
func weightedSQNRdB(x, y, w []float32) float64 {
	var sig, noise float64
	for i, v := range x {
		k := float64(w[i%len(w)])
		d := float64(v) - float64(y[i])
		sig += k * float64(v) * float64(v)
		noise += k * d * d
	}
	return 10 * math.Log10(sig/noise)
}

// TestTcastImatrix converts the mix test's Llama (config.json names the
// llama architecture) to the tcast layout with a codebook datatype, with and
// without an importance matrix whose entries are GGUF names (blk.1.attn_q,
// blk.1.ffn_down) and, for one weight, the Hugging Face name itself
// (o_proj of layer 2). Those three weights use it, the other weights are
// quantized without (missing); each cast with it is the cast of
// tcast.Cast with that importance, and its importance-weighted SQNR,
// measured here from the decoded tensors, is at least that of the cast
// without. Rule-scaled datatypes refuse the matrix.
func TestTcastImatrix(t *testing.T) {
	dir := t.TempDir()
	src := mixLlama(t, dir)
	impQ, impDown, impO := ramp(mixHidden), ramp(mixFF), ramp(mixHidden)
	for i := range impO {
		impO[i] = float32(1 + i%5*i%11)
	}
	imPath := filepath.Join(dir, "imatrix.dat")
	writeDat(t, imPath, []datEntry{
		{"blk.1.attn_q.weight", 1, impQ},
		{"blk.1.ffn_down.weight", 1, impDown},
		{"model.layers.2.self_attn.o_proj.weight", 1, impO},
	})
	im, err := imatrix.Read(imPath)
	require.NoError(t, err)
	tc, err := layout.Get("tcast")
	require.NoError(t, err)
	dt := mustDataType(t, tc, "icb44fi2_e32s8")
	run := func(im *imatrix.Imatrix) (string, *Result) {
		out := filepath.Join(t.TempDir(), "o")
		res, err := Convert(src, out, Options{Layout: tc, DataType: dt, Imatrix: im, Workers: 2})
		require.NoError(t, err)
		return out, res
	}
	plainOut, _ := run(nil)
	weightedOut, res := run(im)
	want := map[string][]float32{
		"model.layers.1.self_attn.q_proj.weight": impQ,
		"model.layers.1.mlp.down_proj.weight":    impDown,
		"model.layers.2.self_attn.o_proj.weight": impO,
	}
	in, err := load.Open(src)
	require.NoError(t, err)
	defer in.Close()
	pl, err := load.Open(plainOut)
	require.NoError(t, err)
	defer pl.Close()
	wl, err := load.Open(weightedOut)
	require.NoError(t, err)
	defer wl.Close()
	used := 0
	for _, r := range res.Tensors {
		if r.DataType == "" {
			assert.Empty(t, r.Importance, "%s is kept", r.Name)
			continue
		}
		imp, ok := want[r.Name]
		if !ok {
			assert.Equal(t, ImportanceMissing, r.Importance, r.Name)
			continue
		}
		used++
		assert.Equal(t, ImportanceUsed, r.Importance, r.Name)
		require.NotNil(t, r.WeightedSQNR, r.Name)
		x, shape, err := in.Float32(r.Name)
		require.NoError(t, err)
		yp, _, err := pl.Float32(r.Name)
		require.NoError(t, err)
		yw, _, err := wl.Float32(r.Name)
		require.NoError(t, err)
		ref, err := tcast.Cast(x, shape, dt, &tcast.Options{Importance: imp})
		require.NoError(t, err)
		assert.Equal(t, ref.Values, yw, "%s: the cast of tcast.Cast with the importance", r.Name)
		before, after := weightedSQNRdB(x, yp, imp), weightedSQNRdB(x, yw, imp)
		assert.GreaterOrEqual(t, after, before, r.Name)
		assert.Greater(t, after, before+0.01, "%s: the importance pays", r.Name)
		assert.InDelta(t, after, *r.WeightedSQNR, 1e-9, r.Name)
		t.Logf("%s: importance-weighted SQNR %.3f dB without the matrix, %.3f dB with it", r.Name, before, after)
	}
	assert.Equal(t, 3, used)

	// Verify with the matrix finds the same entries and measures the same.
	vr, err := verifyTensorsWith(src, weightedOut, verify.Options{Imatrix: im})
	require.NoError(t, err)
	byName := map[string]*float64{}
	for _, r := range res.Tensors {
		byName[r.Name] = r.WeightedSQNR
	}
	got := 0
	for _, r := range vr {
		if _, ok := want[r.Name]; !ok {
			assert.Nil(t, r.WeightedSQNR, r.Name)
			continue
		}
		got++
		require.NotNil(t, r.WeightedSQNR, r.Name)
		assert.InDelta(t, *byName[r.Name], *r.WeightedSQNR, 1e-9, r.Name)
	}
	assert.Equal(t, 3, got)

	_, err = Convert(src, filepath.Join(t.TempDir(), "o"), Options{Layout: tc, DataType: mustDataType(t, tc, "mxfp4"), Imatrix: im})
	assert.True(t, errors.Is(err, ErrImatrixUnused), "%v", err)
}
