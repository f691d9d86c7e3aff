package convert

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// TestConvertScaleSearch converts the iris fixture with and without
// ScaleSearch: every cast tensor's SQNR with the search is at least the
// rule's (the search never picks a worse scale for a block), the output
// records the search, and what load decodes from the output is the
// library's searched cast decoded by the unchanged decoder: load's Float32
// equals Decompress of the stored packed tensor, and in the tcast layout
// equals a searched tcast.Cast of the source's values.
func TestConvertScaleSearch(t *testing.T) {
	var table strings.Builder
	for _, c := range []struct{ dt, lay string }{
		{"mxfp4", "tcast"}, {"nvfp4", "tcast"}, {"int4_g128", "tcast"}, {"fp8e4_block128", "tcast"},
		{"mxfp4", "gpt-oss"},
	} {
		t.Run(c.dt+"/"+c.lay, func(t *testing.T) {
			dir := t.TempDir()
			run := func(search bool) *Result {
				o := opts(t, c.dt, c.lay)
				o.ScaleSearch = search
				res, err := Convert(iris, filepath.Join(dir, fmt.Sprint(search)), o)
				require.NoError(t, err)
				assert.Equal(t, search, res.ScaleSearch)
				return res
			}
			rule, searched := run(false), run(true)
			require.Equal(t, len(rule.Tensors), len(searched.Tensors))
			better := 0
			for i, r := range rule.Tensors {
				s := searched.Tensors[i]
				require.Equal(t, r.Name, s.Name)
				require.Equal(t, r.DataType, s.DataType, r.Name)
				if r.SQNR == nil || s.SQNR == nil {
					assert.Equal(t, r.SQNR == nil, s.SQNR == nil, r.Name)
					continue
				}
				assert.GreaterOrEqual(t, *s.SQNR, *r.SQNR-1e-9, r.Name)
				if *s.SQNR > *r.SQNR+1e-9 {
					better++
				}
			}
			assert.Positive(t, better, "the search improves some tensor")
			fmt.Fprintf(&table, "%-15s %-19s rule %6.2f dB  search %6.2f dB  (%d tensors better)\n",
				c.dt, c.lay, *rule.Summary.SQNR, *searched.Summary.SQNR, better)

			src, err := load.Open(iris)
			require.NoError(t, err)
			defer src.Close()
			for search, res := range map[bool]*Result{false: rule, true: searched} {
				conv, err := load.Open(res.Output)
				require.NoError(t, err)
				defer conv.Close()
				if search {
					assert.Equal(t, layout.ScaleSearchOn, conv.Metadata()[layout.KeyScaleSearch])
				} else {
					assert.NotContains(t, conv.Metadata(), layout.KeyScaleSearch)
				}
				if !search {
					continue
				}
				for _, r := range res.Tensors {
					if r.DataType == "" {
						continue
					}
					ct, err := conv.Tensor(r.Name)
					require.NoError(t, err)
					dec, err := tcast.Decompress(ct)
					require.NoError(t, err)
					got, shape, err := conv.Float32(r.Name)
					require.NoError(t, err)
					sameBits(t, dec, got, r.Name)
					if c.lay != "tcast" {
						continue
					}
					x, _, err := src.Float32(r.Name)
					require.NoError(t, err)
					want, err := tcast.Cast(x, shape, tcast.MustLookup(c.dt), &tcast.Options{Axis: -1, ScaleSearch: true})
					require.NoError(t, err)
					sameBits(t, want.Values, got, r.Name)
				}
			}
		})
	}
	t.Log("\nmean SQNR of the cast weights (by elements), rule and -scale-search\n" + table.String())
}

// TestScaleSearchCheck: Check refuses ScaleSearch where it would change
// nothing, and takes an importance matrix with it for the datatypes it
// searches.
func TestScaleSearchCheck(t *testing.T) {
	for _, c := range []struct {
		dt, lay string
		imatrix bool
		err     error // nil: accepted
		says    string
	}{
		{"mxfp4", "tcast", false, nil, ""},
		{"nvfp4", "modelopt", true, nil, ""},
		{"int4_g128", "compressed-tensors", true, nil, ""},
		{"fp8e4_block128", "fp8-block", true, nil, ""},
		{"mxfp4", "gguf", false, ErrScaleSearchUnused, "llama.cpp's own quantizers"},
		{"uint4_g128", "tcast", false, ErrScaleSearchUnused, "zero point"},
		{"nf4", "tcast", false, ErrScaleSearchUnused, "codebook"},
		{"nf4", "tcast", true, ErrScaleSearchUnused, "codebook"},
		{"bfloat16", "tcast", false, ErrScaleSearchUnused, "no scale"},
	} {
		o := opts(t, c.dt, c.lay)
		o.ScaleSearch = true
		if c.imatrix {
			o.Imatrix = &imatrix.Imatrix{Path: "m.gguf"}
		}
		err := o.Check()
		if c.err == nil {
			assert.NoError(t, err, c.dt)
			continue
		}
		var oe *OptionError
		require.ErrorAs(t, err, &oe, c.dt)
		assert.Equal(t, "ScaleSearch", oe.Option, c.dt)
		assert.ErrorIs(t, err, c.err, c.dt)
		assert.ErrorContains(t, err, c.says, c.dt)
		assert.ErrorContains(t, err, "unset Options.ScaleSearch", c.dt)
	}
	o := Options{ScaleSearch: true}
	assert.ErrorIs(t, o.Check(), ErrScaleSearchUnused)

	// Without the search, -imatrix with a rule-scaled datatype is refused,
	// and the refusal names -scale-search.
	o = opts(t, "mxfp4", "tcast")
	o.Imatrix = &imatrix.Imatrix{Path: "m.gguf"}
	err := o.Check()
	require.ErrorIs(t, err, ErrImatrixUnused)
	assert.ErrorContains(t, err, "set Options.ScaleSearch to true")
	o.ScaleSearch = true
	assert.NoError(t, o.Check())
}
