package tcast

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSearchesScales: which datatypes the scale search changes, read off
// their codes (a zero point, subtile offsets "o1"/"o2", a codebook or no
// scale at all leave it nothing to search), and which also take an
// importance vector.
func TestSearchesScales(t *testing.T) {
	cases := []struct {
		name            string
		searches, cbImp bool
	}{
		{"mxfp4", true, false},          // e2m1, E8M0 per 32
		{"nvfp4", true, false},          // e2m1, UE4M3 per 16, float32 tensor scale
		{"int4_g128", true, false},      // int4, float16 per 128
		{"fp8e4_block128", true, false}, // e4m3fn, float32 per 128×128
		{"fp8e4_tensor", true, false},   // e4m3fn, float32 per tensor
		{"mxint8", true, false},         // int8 (1.6), E8M0 per 32
		{"uint4_g128", false, false},    // zero point int8
		{"e2m1_e32s4o1", false, false},  // subtile offsets
		{"nf4", false, false},           // codebook of one table
		{"mxfi4", false, true},          // codebook of several tables
		{"bfloat16", false, false},      // no scale
		{"float8_e4m3fn", false, false}, // no scale
	}
	for _, c := range cases {
		dt := MustLookup(c.name)
		assert.Equal(t, c.searches, dt.SearchesScales(), c.name)
		assert.Equal(t, c.cbImp, dt.UsesImportanceWith(nil), c.name)
		assert.Equal(t, c.cbImp, dt.UsesImportanceWith(&Options{}), c.name)
		assert.Equal(t, c.cbImp || c.searches, dt.UsesImportanceWith(&Options{ScaleSearch: true}), c.name)
	}
	var nilDT *DataType
	assert.False(t, nilDT.SearchesScales())
	assert.False(t, nilDT.UsesImportanceWith(&Options{ScaleSearch: true}))
}

// TestSearchesScalesIgnored: every registered datatype that SearchesScales
// rules out casts the same bytes and values with and without the search.
func TestSearchesScalesIgnored(t *testing.T) {
	off := offDigests(t, nil)
	on := offDigests(t, &Options{ScaleSearch: true})
	changed := 0
	for name, d := range off {
		if !MustLookup(name).SearchesScales() {
			assert.Equal(t, d, on[name], name)
		} else if d != on[name] {
			changed++
		}
	}
	assert.Positive(t, changed)
}
