package tcast_test

import (
	"fmt"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// Cast a row of weights to OCP MXFP4: one E8M0 scale per 32 values, E2M1 codes
// packed two per byte, low nibble first.
func ExampleCast() {
	x := make([]float32, 32)
	for i := range x {
		x[i] = float32(i-16) / 4
	}
	opts := tcast.DefaultOptions()
	opts.Form = tcast.Compressed
	t, err := tcast.Cast(x, []int{1, 32}, tcast.MustLookup("mxfp4"), &opts)
	if err != nil {
		panic(err)
	}
	fmt.Printf("scale byte %d, %d data bytes, %.2f bits per value\n", t.Scale.Bytes[0], len(t.Data.Bytes), t.BitsPerValue())
	back, _ := tcast.Decompress(t)
	fmt.Println(x[1:6], "→", back[1:6])
	// Output:
	// scale byte 127, 16 data bytes, 4.25 bits per value
	// [-3.75 -3.5 -3.25 -3 -2.75] → [-4 -4 -3 -3 -3]
}

// Look up a datatype by name; unknown names suggest close ones.
func ExampleLookup() {
	dt, _ := tcast.Lookup("nvfp4")
	fmt.Println(dt.Code(), dt.BitsPerValue())
	_, err := tcast.Lookup("mxfp3")
	fmt.Println(err)
	// Output:
	// float4_e2m1fn_multi_ue4m3_float32_t16 4.5
	// tcast: unknown datatype "mxfp3" (closest: mxfp4, mxfp6, mxfp8)
}

// MXFP4 with 2:4 sparsity: the scale of 32 kept values is shared by 64
// elements, pruned elements are zero, and the compressed data holds the kept
// codes only.
func ExampleCast_sparse() {
	dt, err := tcast.Lookup("e2m1_e8m0_t32n2m4")
	if err != nil {
		fmt.Println(err)
		return
	}
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(i%4) - 1.5 // -1.5 -0.5 0.5 1.5, repeated
	}
	c, err := tcast.Cast(x, []int{1, 64}, dt, &tcast.Options{Form: tcast.Compressed})
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := tcast.Decompress(c)
	fmt.Println(v[:8])
	fmt.Println("data", c.Data.Shape, "scale", c.Scale.Shape, "mask", c.Mask.Bytes()[:2])
	fmt.Printf("%.3f bits per value\n", c.BitsPerValue())
	// Output:
	// [-1.5 0 0 1.5 -1.5 0 0 1.5]
	// data [1 32] scale [1 1] mask [153 153]
	// 3.125 bits per value
}

// A codebook datatype: icb44fi2_e32s8 picks one of 16 tables per subtile of
// 8 and stores its index in the meta part (4 bits each, packed LSB first:
// tables 4, 4, 12, 9, that is f_4, f_4, i_4, i_1).
func ExampleNewCodebook() {
	x := make([]float32, 32)
	for i := range x {
		x[i] = float32(i%8) * float32(i/8+1) / 4
	}
	opts := tcast.DefaultOptions()
	opts.Form = tcast.Compressed
	t, err := tcast.Cast(x, []int{32}, tcast.MustLookup("icb44fi2_e32s8"), &opts)
	if err != nil {
		panic(err)
	}
	fmt.Printf("scale %d, meta % x, %.2f bits per value\n", t.Scale.Bytes, t.Meta.Bytes, t.BitsPerValue())
	back, _ := tcast.Decompress(t)
	fmt.Println(x[8:16], "→", back[8:16])
	// Output:
	// scale [127], meta 44 9c, 4.75 bits per value
	// [0 0.5 1 1.5 2 2.5 3 3.5] → [0 0.375 0.875 1.375 1.875 2.75 2.75 3.75]
}

// Forms are named as Form.String writes them.
func ExampleParseForm() {
	f, err := tcast.ParseForm("compressed")
	fmt.Println(f == tcast.Compressed, err)
	_, err = tcast.ParseForm("packed")
	fmt.Println(err)
	// Output:
	// true <nil>
	// tcast: unknown form "packed" (want virtual, actual or compressed)
}

// The values of ExampleCast as float16 and bfloat16 codes, for a loader that
// computes in 16 bits: −4 is 0xc400 and 0xc080, −3 is 0xc200 and 0xc040.
func ExampleDecompress16() {
	x := make([]float32, 32)
	for i := range x {
		x[i] = float32(i-16) / 4
	}
	t, err := tcast.Cast(x, []int{1, 32}, tcast.MustLookup("mxfp4"), nil)
	if err != nil {
		panic(err)
	}
	for _, name := range []string{"float16", "bfloat16"} {
		h, err := tcast.Decompress16(t, dtype.MustParse(name))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s %#04x\n", name, h[1:6])
	}
	// Output:
	// float16 [0xc400 0xc400 0xc200 0xc200 0xc200]
	// bfloat16 [0xc080 0xc080 0xc040 0xc040 0xc040]
}
