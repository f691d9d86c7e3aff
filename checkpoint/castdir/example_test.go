package castdir_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/checkpoint/castdir"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

// Open a cast directory and dequantize it. testdata/golden/e2m1_away holds the
// 3×3 array 7.58, -0.034, 0.037, 0, -14.1, 1.01, 0.0070, 0.0037, 0.0061 cast
// to OCP FP4 (E2M1) without a scale: values beyond ±6 saturate, small ones
// round to ±0.
func ExampleOpen() {
	d, err := castdir.Open(filepath.Join("testdata", "golden", "e2m1_away"))
	if err != nil {
		log.Fatal(err)
	}
	v, shape, err := d.Float32()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Info.DataType.Name, d.Info.BitsPerValue, "bits per value")
	fmt.Println(shape, v)
	// Output:
	// float4_e2m1fn 4 bits per value
	// [3 3] [6 -0 0 0 -6 1 0 0 0]
}

// Cast a tensor to MXFP4 and store it as a cast directory.
func ExampleWrite() {
	// One block of 32: amax 7.75 lies in [4, 8), E2M1's largest binade starts
	// at 4, so the E8M0 scale is 2^0 and the elements are rounded to the E2M1
	// grid 0, 0.5, 1, 1.5, 2, 3, 4, 6, ties to even (0.25 → 0, 0.75 → 1,
	// 1.25 → 1, 1.75 → 2, 2.5 → 2).
	x := make([]float32, 32)
	for i := range x {
		x[i] = float32(i) / 4
	}
	act, err := tc.Cast(x, []int{1, 32}, tc.MustLookup("mxfp4"), &tc.Options{Form: tc.Actual, Axis: -1})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "castdir-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "x.mxfp4")
	if err := castdir.Write(out, x, act, castdir.WriteOptions{Input: "x.npy", InputDType: "float32"}); err != nil {
		log.Fatal(err)
	}
	d, err := castdir.Open(out)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range d.Info.Parts {
		fmt.Printf("%s: %s %v in %s (%d bytes)\n", p.Name, p.Storage, p.Shape, p.File, p.Bytes)
	}
	fmt.Println(d.Info.BitsPerValue, "bits per value")
	v, _, _ := d.Float32()
	fmt.Println(v[:12])
	// Output:
	// data: packed4 [1 32] in packed.npy (16 bytes)
	// scale: packed8 [1 1] in scale.npy (1 bytes)
	// 4.25 bits per value
	// [0 0 0.5 1 1 1 1.5 2 2 2 2 3]
}

// The fixed files of a cast directory: its description, the codes and the
// dequantized values for people and tests, and the packed data Open reads.
func Example_files() {
	x := []float32{0.5, -1, 2, 6}
	act, err := tc.Cast(x, []int{4}, tc.MustLookup("e2m1"), &tc.Options{Form: tc.Actual})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "castdir-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "x.e2m1")
	o := castdir.WriteOptions{Input: "x.npy", InputDType: "float32"}
	if err := castdir.Write(out, x, act, o); err != nil {
		log.Fatal(err)
	}
	files := []string{castdir.InfoFile, castdir.CodesFile, castdir.DequantFile, castdir.PackedFile}
	for _, f := range files {
		_, err := os.Stat(filepath.Join(out, f))
		fmt.Println(f, err == nil)
	}
	// Output:
	// info.json true
	// codes.npy true
	// dequant.npy true
	// packed.npy true
}
