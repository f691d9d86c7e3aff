package scale_test

import (
	"errors"
	"testing"

	"github.com/tensorcast-go/tensorcast/scale"
)

// FuzzParse checks that Parse never panics, that its errors are *ParseError naming
// the spec, and that the String of an accepted spec parses back to an equal Spec
// with the same String.
func FuzzParse(f *testing.F) {
	for _, c := range specValidCases {
		f.Add(c.in)
		f.Add(c.canon)
	}
	for _, c := range specErrorCases {
		f.Add(c.in)
	}
	for _, s := range []string{"multi_float8_e4m3fn_float8_e4m3fn_float32_t2_t1024s2o2n15m16", "torch.float16_t",
		"float8_e4m3b11fnuz_q1.6_t8", "e5m2b16inuz_t32_t", "ts2o1_t", "multi_multi_e8m0", "e8m0_tn1m2", "float6_e2m3fn_t8s4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := scale.Parse(in)
		if err != nil {
			var pe *scale.ParseError
			if !errors.As(err, &pe) || pe.Spec != in || pe.Reason == "" {
				t.Fatalf("Parse(%q): error %T %v", in, err, err)
			}
			if s != nil {
				t.Fatalf("Parse(%q): non-nil Spec with error %v", in, err)
			}
			return
		}
		if s.Scale == nil || len(s.Tiles) > 2 || (s.SparseM == 0) != (s.SparseN == 0) ||
			(s.TensorScale != nil && len(s.Tiles) == 0) {
			t.Fatalf("Parse(%q) = %+v: broken invariant", in, s)
		}
		for _, tl := range s.Tiles {
			if tl.Size < 0 || tl.Size > 1024 || tl.Sub < 0 || tl.Offset < 0 || tl.Offset > 2 || (tl.Offset != 0 && tl.Sub == 0) {
				t.Fatalf("Parse(%q): bad tile %+v", in, tl)
			}
		}
		canon := s.String()
		back, err := scale.Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not parse: %v", in, canon, err)
		}
		if back.String() != canon {
			t.Fatalf("Parse(%q): %q parses back as %q", in, canon, back.String())
		}
		if back.Scale != s.Scale || back.Zero != s.Zero || back.TensorScale != s.TensorScale ||
			back.SparseN != s.SparseN || back.SparseM != s.SparseM || len(back.Tiles) != len(s.Tiles) {
			t.Fatalf("Parse(%q) = %+v, but %q parses as %+v", in, s, canon, back)
		}
		for i := range s.Tiles {
			if back.Tiles[i] != s.Tiles[i] {
				t.Fatalf("Parse(%q): tile %d %+v, but %q gives %+v", in, i, s.Tiles[i], canon, back.Tiles[i])
			}
		}
	})
}
