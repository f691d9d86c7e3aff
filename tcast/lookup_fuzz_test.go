package tcast

import (
	"testing"
)

// FuzzLookup: Lookup never panics on any name, and a datatype it returns
// is found again under its own name and under its code, with the same code
// (the registry and the code grammar agree).
func FuzzLookup(f *testing.F) {
	for _, s := range []string{"mxfp4", "MXFP4", "nvfp4", "int4_g128", "fp8e4_block128", "e2m1_e8m0_t32",
		"int4_float16_int8_t128", "float4_e2m1fn_float8_e8m0fnu_t32", "mxfi4", "icb44fi2_e32s8", "nf4", "uint4_g32",
		"e2m1_e8m0_t0", "e2m1_e8m0_t-1", "int4_float16_t99999999999999999999", "e2m1__", "_", "", "mxfp4e2w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		d, err := Lookup(name)
		if err != nil {
			if d != nil {
				t.Fatalf("%q: a datatype with the error %v", name, err)
			}
			return
		}
		for _, again := range []string{d.Name(), d.Code()} {
			d2, err := Lookup(again)
			if err != nil {
				t.Fatalf("%q gives %s (code %s), but %q is refused: %v", name, d.Name(), d.Code(), again, err)
			}
			if d2.Code() != d.Code() {
				t.Fatalf("%q gives code %s, but %q gives %s", name, d.Code(), again, d2.Code())
			}
		}
	})
}
