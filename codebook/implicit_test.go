package codebook

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// positives returns the magnitudes above 0 of a signed table (codes 1 to
// half−1), the form TensorCast's documentation lists mappings in.
func positives(t *Table) []float32 {
	v := t.Values()
	return v[1 : len(v)/2]
}

// halves returns each table's name and magnitudes (codes 0 to half−1).
func halves(c *Codebook) (names []string, mags [][]float32) {
	for _, t := range c.Tables() {
		v := t.Values()
		names = append(names, t.Name())
		mags = append(mags, v[:len(v)/2])
	}
	return names, mags
}

// TestICB44FI checks the 16 mappings of TensorCast v2's icb44fi on three
// compute formats against the positive halves of docs/CODEBOOK.md §4.4
// (TensorCast's own tables).
func TestICB44FI(t *testing.T) {
	cb, err := Parse("icb44fi_e2m3fnuz")
	require.NoError(t, err)
	assert.Equal(t, 4, cb.IndexBits())
	assert.Equal(t, 4, cb.MetaBits())
	assert.Equal(t, 16, cb.Len())
	assert.Equal(t, "e2m3fnuz", cb.Compute().Name())
	want := map[string][]float32{
		"f_0": {0.875, 1.375, 1.875, 2.75, 3.75, 5.5, 7.5},
		"f_1": {0.75, 1.25, 1.75, 2.5, 3.5, 5, 7},
		"f_2": {0.625, 1.125, 1.625, 2.25, 3.25, 4.5, 6.5},
		"f_3": {0.5, 1, 1.5, 2, 3, 4, 6},
		"f_4": {0.375, 0.875, 1.375, 1.875, 2.75, 3.75, 5.5},
		"f_5": {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5},
		"f_6": {0.125, 0.625, 1.125, 1.625, 2.25, 3.25, 4.5},
		"f_7": {0, 0.5, 1, 1.5, 2, 3, 4},
		"i_0": {1.125, 2.25, 3.25, 4.5, 5.5, 6.5, 7.5},
		"i_1": {1, 2, 3, 4, 5, 6, 7},
		"i_2": {0.875, 1.875, 2.75, 3.75, 4.5, 5.5, 6.5},
		"i_3": {0.75, 1.75, 2.5, 3.5, 4, 5, 6},
		"i_4": {0.625, 1.625, 2.25, 3.25, 3.75, 4.5, 5.5},
		"i_5": {0.5, 1.5, 2, 3, 3.5, 4, 5},
		"i_6": {0.375, 1.375, 1.875, 2.75, 3.25, 3.75, 4.5},
		"i_7": {0.25, 1.25, 1.75, 2.5, 3, 3.5, 4},
	}
	order := []string{"f_0", "f_1", "f_2", "f_3", "f_4", "f_5", "f_6", "f_7", "i_0", "i_1", "i_2", "i_3", "i_4", "i_5", "i_6", "i_7"}
	for k, tb := range cb.Tables() {
		require.Equal(t, order[k], tb.Name())
		assert.Equal(t, want[tb.Name()], positives(tb), tb.Name())
		assert.Equal(t, 4, tb.Bits())
		assert.True(t, tb.Signed())
	}

	e4, err := Parse("icb44fi_e4m3fn")
	require.NoError(t, err)
	for i, w := range map[int][]float32{
		0:  {40, 80, 112, 160, 224, 320, 448},
		2:  {32, 64, 96, 128, 192, 256, 384},
		7:  {22, 44, 60, 88, 120, 176, 240},
		8:  {64, 128, 192, 256, 320, 384, 448},
		15: {36, 72, 104, 144, 176, 208, 240},
	} {
		assert.Equal(t, w, positives(e4.Table(i)), e4.Table(i).Name())
	}
	e3, err := Parse("ICB44FI_E3M2FNUZ")
	require.NoError(t, err)
	for i, w := range map[int][]float32{
		0:  {2.5, 5, 7, 10, 14, 20, 28},
		5:  {1, 2, 3, 4, 6, 8, 12},
		8:  {4, 8, 12, 16, 20, 24, 28},
		15: {1.25, 2.5, 3.5, 5, 6, 7, 8},
	} {
		assert.Equal(t, w, positives(e3.Table(i)), e3.Table(i).Name())
	}
	// Two tables per clause: shifts of 2 indices (f_0, f_2, i_0, i_2).
	c42, err := Parse("icb42fi_e2m3fnuz")
	require.NoError(t, err)
	names, _ := halves(c42)
	assert.Equal(t, []string{"f_0", "f_2", "i_0", "i_2"}, names)
	assert.Equal(t, want["f_2"], positives(c42.Table(1)))
	assert.Equal(t, want["i_2"], positives(c42.Table(3)))
}

// TestTritonCodebooks checks TensorCast's triton-branch predefined codebooks
// against docs/CODEBOOK.md §4.4.
func TestTritonCodebooks(t *testing.T) {
	fp4 := []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}
	for _, c := range []struct {
		code  string
		name  string
		names []string
		mags  [][]float32
	}{
		{"cb41fi_e2m2fnuz", "cb41fi_e2m2fnuz", []string{"f", "i"},
			[][]float32{fp4, {0, 1, 2, 3, 4, 5, 6, 7}}},
		{"cb41f01_e2m2fnuz", "cb41f01_e2m2fnuz", []string{"f0", "f1"},
			[][]float32{{0, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 7}, fp4}},
		{"cb42f1346_e2m3fnuz", "cb42f1346_e2m3fnuz", []string{"f1", "f3", "f4", "f6"},
			[][]float32{{0, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 7}, fp4,
				{0, 0.375, 0.875, 1.375, 1.875, 2.75, 3.75, 5.5}, {0, 0.125, 0.625, 1.125, 1.625, 2.25, 3.25, 4.5}}},
		// FP4 at four exponent offsets: tops 24, 12, 6, 3.
		{"cb42fe0123_e3m2fnuz", "cb42fe0123_e3m2fnuz", []string{"fe0", "fe1", "fe2", "fe3"},
			[][]float32{{0, 2, 4, 6, 8, 12, 16, 24}, {0, 1, 2, 3, 4, 6, 8, 12}, {0, 0.5, 1, 1.5, 2, 3, 4, 6},
				{0, 0.25, 0.5, 0.75, 1, 1.5, 2, 3}}},
		{"cb31ie_e2m3fnuz_mx", "mx", []string{"ie0", "ie1"},
			[][]float32{{0, 2, 4, 6}, {0, 1, 2, 3}}}, // int3 = q1.1 ×4 and ×2
	} {
		cb, err := Parse(c.code)
		require.NoError(t, err, c.code)
		assert.Equal(t, c.name, cb.Name())
		names, mags := halves(cb)
		assert.Equal(t, c.names, names, c.code)
		assert.Equal(t, c.mags, mags, c.code)
	}
	// MX6 "prime bit" emulation: int5 ×4 and ×2 on e2m3fnuz.
	mx6, err := Parse("cb51ie_e2m3fnuz_mx6")
	require.NoError(t, err)
	assert.Equal(t, "mx6", mx6.Name())
	_, mags := halves(mx6)
	for k := range 16 {
		assert.Equal(t, float32(k)*0.5, mags[0][k])
		assert.Equal(t, float32(k)*0.25, mags[1][k])
	}
	// MSFP MX9, MX6, MX4: the int(I) pattern and its half on int(I+1),
	// TensorCast's fixed point: int9 = q1.7, int7 = q1.5, int5 = q1.3.
	for _, c := range []struct {
		code        string
		index, step int // step of the natural placement: 2^−(I−2)
	}{{"cb81ie_int9", 8, 64}, {"cb51ie_int7", 5, 8}, {"cb31ie_int5", 3, 2}} {
		cb, err := Parse(c.code)
		require.NoError(t, err, c.code)
		assert.Equal(t, c.index, cb.IndexBits())
		assert.Equal(t, 1, cb.MetaBits())
		_, mags := halves(cb)
		for k := range 1 << (c.index - 1) {
			assert.Equal(t, float32(k)/float32(c.step), mags[0][k], "%s i k=%d", c.code, k)
			assert.Equal(t, float32(k)/float32(2*c.step), mags[1][k], "%s ie1 k=%d", c.code, k)
		}
	}
}

// TestProgressiveStatic checks the documented p and s semantics (indices
// from the top of the compute line: p's gap starts at the interval and grows
// by one a step, s's stays), hand-derived on the e2m3fnuz line, whose
// positive indices 0–15 step 0.125, 16–23 step 0.25 from 2, 24–31 step 0.5
// from 4.
func TestProgressiveStatic(t *testing.T) {
	for _, c := range []struct {
		code  string
		names []string
		pos   [][]float32
	}{
		// p1: 31, 30, 28, 25, 21, 16, 10; p2: 31, 29, 26, 22, 17, 11, 4.
		{"cb41p1p2_e2m3fnuz", []string{"p1_0", "p2_0"},
			[][]float32{{1.25, 2, 3.25, 4.5, 6, 7, 7.5}, {0.5, 1.375, 2.25, 3.5, 5, 6.5, 7.5}}},
		// s2: 31, 29, …, 19; s3: 31, 28, …, 13.
		{"cb41s2s3_e2m3fnuz", []string{"s2_0", "s3_0"},
			[][]float32{{2.75, 3.25, 3.75, 4.5, 5.5, 6.5, 7.5}, {1.625, 2, 2.75, 3.5, 4.5, 6, 7.5}}},
		// Offsets: s2 from index 30 and 29; bare p is p1.
		{"cb42s212p_e2m3fnuz", []string{"s2_1", "s2_2", "p1_0"},
			nil},
		// v2: p0 = increment 1, s1 = increment 2 (digits: increment − 1,
		// start offset).
		{"icb41p0s1_e2m3fnuz", []string{"p1_0", "s2_0"},
			[][]float32{{1.25, 2, 3.25, 4.5, 6, 7, 7.5}, {2.75, 3.25, 3.75, 4.5, 5.5, 6.5, 7.5}}},
		{"icb41p01s12_e2m3fnuz", []string{"p1_1", "s2_2"},
			[][]float32{{1.125, 1.875, 3, 4, 5.5, 6.5, 7}, {2.25, 2.75, 3.25, 3.75, 4.5, 5.5, 6.5}}},
	} {
		cb, err := Parse(c.code)
		if len(c.names) == 3 {
			require.ErrorIs(t, err, ErrGrammar, c.code) // 3 tables for 2 meta bits
			continue
		}
		require.NoError(t, err, c.code)
		names, _ := halves(cb)
		assert.Equal(t, c.names, names, c.code)
		for k, w := range c.pos {
			assert.Equal(t, w, positives(cb.Table(k)), "%s %s", c.code, names[k])
		}
	}
	cb, err := Parse("cb42s212pp2_e2m3fnuz")
	require.NoError(t, err)
	names, _ := halves(cb)
	assert.Equal(t, []string{"s2_1", "s2_2", "p1_0", "p2_0"}, names)
	assert.Equal(t, []float32{2.5, 3, 3.5, 4, 5, 6, 7}, positives(cb.Table(0)))
	assert.Equal(t, []float32{2.25, 2.75, 3.25, 3.75, 4.5, 5.5, 6.5}, positives(cb.Table(1)))
}

// TestCodebookTies: TensorCast's tables send |t| at a midpoint up.
func TestCodebookTies(t *testing.T) {
	cb, err := Parse("icb44fi_e2m3fnuz")
	require.NoError(t, err)
	f3 := cb.Table(3) // the E2M1 values
	assert.Equal(t, TieAway, f3.Tie())
	for x, q := range map[float32]float32{0.25: 0.5, 0.75: 1, 1.25: 1.5, 2.5: 3, 5: 6, 0.2: 0, -0.25: -0.5, -5: -6} {
		assert.Equal(t, q, f3.Quantize(x), "x=%v", x)
	}
	// f_7's two zeros: 0 encodes to code 0, a tiny negative to −0 (code 8).
	f7 := cb.Table(7)
	assert.Equal(t, uint8(0), f7.Encode(0))
	assert.Equal(t, uint8(8), f7.Encode(-0.1))
	assert.Equal(t, uint8(2), f7.Encode(0.25), "0.25 is the midpoint of 0 and 0.5")
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		at   int
	}{
		{"xx41f_e2m1fnuz", ErrGrammar, 0},
		{"cb4", ErrGrammar, 2},
		{"cb91f_e2m1fnuz", ErrGrammar, 2},
		{"cb40f_e2m1fnuz", ErrGrammar, 3},
		{"cb41fi", ErrGrammar, 6},
		{"cb41fi_", ErrGrammar, 7},
		{"cb41_e2m3fnuz", ErrGrammar, 4},
		{"cb41fq_e2m3fnuz", ErrGrammar, 5},
		{"cb42fi_e2m3fnuz", ErrGrammar, 4},
		{"cb41fi_e8m0", ErrGrammar, 7},
		{"cb41fi_nope", ErrGrammar, 7},
		{"cb41p0i_e2m3fnuz", ErrGrammar, 5},
		{"cb41f9i_e2m1fnuz", ErrOffLine, 4},
		{"cb41fe5i_e2m1fnuz", ErrOffLine, 4},
		{"cb21fi_e2m3fnuz", ErrGrammar, 4},
		{"cb41p9i_e2m1fnuz", ErrOffLine, 4},
		{"icb42fip_e2m3fnuz", ErrGrammar, 5},
		{"icb41f12i_e2m3fnuz", ErrGrammar, 5},
		{"icb41p123i_e2m3fnuz", ErrGrammar, 5},
	} {
		_, err := Parse(c.name)
		require.Error(t, err, c.name)
		assert.ErrorIs(t, err, c.err, c.name)
		var ge *GrammarError
		require.ErrorAs(t, err, &ge, c.name)
		assert.Equal(t, c.at, ge.Offset, "%s: %v", c.name, err)
		assert.Contains(t, err.Error(), c.name)
	}
}

// g12Input is the input of golden G12 (docs/CODEBOOK.md §4.5).
func g12Input() []float32 {
	x := []float32{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1, 1.5, 2, 2.5, 3, 3.5, 4, 5, 5.5, 6, 6.5, -7}
	for k := range 12 {
		x = append(x, float32(0.05+0.1*float64(k)))
	}
	return x
}

// bestTable is the selection rule written out: the table with the smallest
// sum of squared errors, the first on ties.
func bestTable(cb *Codebook, x []float32) (int, []float32) {
	best, bestErr := -1, math.Inf(1)
	var bestQ []float32
	for k, tb := range cb.Tables() {
		q := make([]float32, len(x))
		e := 0.0
		for i, v := range x {
			q[i] = tb.Quantize(v)
			d := float64(q[i]) - float64(v)
			e += d * d
		}
		if e < bestErr {
			best, bestErr, bestQ = k, e, q
		}
	}
	return best, bestQ
}

// TestGoldenG12 reproduces golden G12: icb44fi_e2m3fnuz with an E8M0 scale
// per 32 (amax 7, scale 2^0) selects table 10 (i_2) for the tile, and with
// subtiles of 8 tables 5, 11, 8, 3 (f_5, i_3, i_0, f_3), with the values
// below — signs included (−7 → −7.5).
func TestGoldenG12(t *testing.T) {
	cb, err := Parse("icb44fi_e2m3fnuz")
	require.NoError(t, err)
	x := g12Input()
	require.Len(t, x, 32)
	k, _ := bestTable(cb, x)
	assert.Equal(t, 10, k)
	assert.Equal(t, "i_2", cb.Table(k).Name())
	wantSel := []int{5, 11, 8, 3}
	wantQ := [][]float32{
		{0, .25, .25, .25, .75, .75, .75, .75},
		{.75, 1.75, 1.75, 2.5, 3.5, 3.5, 4, 5},
		{5.5, 6.5, 6.5, -7.5, 0, 0, 0, 0},
		{.5, .5, .5, 1, 1, 1, 1, 1},
	}
	for s := range 4 {
		k, q := bestTable(cb, x[8*s:8*s+8])
		assert.Equal(t, wantSel[s], k, "subtile %d", s)
		assert.Equal(t, wantQ[s], q, "subtile %d", s)
	}
}
