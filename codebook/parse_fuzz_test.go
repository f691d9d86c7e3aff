package codebook

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics on any name; it refuses it with a
// *GrammarError wrapping ErrGrammar or ErrOffLine, or gives a codebook
// whose widths are the grammar's (index and meta widths 1–8), whose tables
// are 2^meta (or none, for a generic name) of at most 2^index finite values,
// and which the same name in another case parses to again. Seeds: the
// codebook names of docs/CODEBOOK.md and of this package's tests, both
// grammars, and broken variants.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"cb21fi_e2m3fnuz", "cb31ie_e2m3fnuz_mx", "cb31ie_int5", "cb40f_e2m1fnuz", "cb41_e2m3fnuz",
		"cb41f01_e2m2fnuz", "cb41f9i_e2m1fnuz", "cb41fe5i_e2m1fnuz", "cb41fi_e8m0", "cb41fq_e2m3fnuz",
		"cb41p0i_e2m3fnuz", "cb41p1p2_e2m3fnuz", "cb41s2s3_e2m3fnuz", "cb42f1346_e2m3fnuz",
		"cb42fe0123_e3m2fnuz", "cb42s212pp2_e2m3fnuz", "cb51ie_e2m3fnuz_mx6", "cb81ie_int9", "cb91f_e2m1fnuz",
		"icb41p01s12_e2m3fnuz", "icb41p123i_e2m3fnuz", "icb42fip_e2m3fnuz", "ICB44FI_E3M2FNUZ",
		"icb44fi2_e32s8", "icb44fi2_f32s16", "icb44fi_e4m3fn", "cb41fi_nope", "cb", "icb", "cb00_", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		c, err := Parse(name)
		if err != nil {
			var ge *GrammarError
			if !errors.As(err, &ge) || (!errors.Is(err, ErrGrammar) && !errors.Is(err, ErrOffLine)) {
				t.Fatalf("%q: %T %v", name, err, err)
			}
			return
		}
		ib, mb := c.IndexBits(), c.MetaBits()
		if ib < 1 || ib > 8 || mb < 1 || mb > 8 {
			t.Fatalf("%q: index bits %d, meta bits %d", name, ib, mb)
		}
		if c.Len() != 0 && c.Len() != 1<<mb {
			t.Fatalf("%q: %d tables for %d meta bits", name, c.Len(), mb)
		}
		for i, tb := range c.Tables() {
			if tb.Len() < 1 || tb.Len() > 1<<ib {
				t.Fatalf("%q table %d: %d values for %d index bits", name, i, tb.Len(), ib)
			}
			for _, v := range tb.Values() {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("%q table %d: value %v", name, i, v)
				}
			}
		}
		for _, other := range []string{strings.ToUpper(name), strings.ToLower(name)} {
			d, err := Parse(other)
			if err != nil {
				t.Fatalf("%q parses but %q does not: %v", name, other, err)
			}
			if d.Len() != c.Len() || d.IndexBits() != ib || d.MetaBits() != mb {
				t.Fatalf("%q and %q differ", name, other)
			}
			for i := range c.Len() {
				a, b := c.Table(i).Values(), d.Table(i).Values()
				if len(a) != len(b) {
					t.Fatalf("%q and %q: table %d differs", name, other, i)
				}
				for j := range a {
					if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
						t.Fatalf("%q and %q: table %d value %d differs", name, other, i, j)
					}
				}
			}
		}
	})
}
