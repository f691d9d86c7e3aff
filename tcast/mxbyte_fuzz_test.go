package tcast

import (
	"math"
	"testing"
)

// FuzzMXByte compares Cast and Decompress of MXFP8 (E4M3, E5M2), MXFP6
// (E2M3, E3M2) and MXINT8, which go through the kernels, with the
// block-by-block path, on inputs made of the fuzzer's bytes (four per
// float32, padded with zeros to whole blocks), in Compressed form; then the
// decompression of the same bytes read as codes and scales.
func FuzzMXByte(f *testing.F) {
	f.Add(fuzzSeed(0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 7, -0.25, 464, 61440, 7.75, 30))
	f.Add(fuzzSeed(float32(math.NaN()), 1))
	f.Add(fuzzSeed(math.Nextafter32(8, 0), 1e-40, -3, float32(math.Inf(-1))))
	f.Add(fuzzSeed(math.MaxFloat32, 1e-45))
	f.Add([]byte{})
	names := []string{"mxfp8e4", "mxfp8e5", "mxfp6e2", "mxfp6e3", "mxint8"}
	f.Fuzz(func(t *testing.T, data []byte) {
		x := fuzzFloats(data, mxBlock)
		n := len(x)
		for _, name := range names {
			dt := MustLookup(name)
			opts := DefaultOptions()
			opts.Form = Compressed
			want, err := cast(x, []int{n}, dt, &opts, false)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Cast(x, []int{n}, dt, &opts)
			if err != nil {
				t.Fatal(err)
			}
			tensorsEqual(t, want, got, name)
			for _, what := range []string{"cast", "raw bytes"} {
				if what == "raw bytes" {
					copy(got.Data.Bytes, data)
					copy(got.Scale.Bytes, data[min(len(data), len(got.Data.Bytes)):])
				}
				wantV, err := decompress(got, false)
				if err != nil {
					t.Fatal(err)
				}
				gotV, err := Decompress(got)
				if err != nil {
					t.Fatal(err)
				}
				valuesEqual(t, wantV, gotV, name+" decompress of "+what)
			}
		}
	})
}
