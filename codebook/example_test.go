package codebook_test

import (
	"fmt"

	"github.com/tensorcast-go/tensorcast/codebook"
)

// NF4 as bitsandbytes uses it: a block's values divided by its absmax, each
// encoded to a 4-bit code, decoded times the absmax.
func ExampleNF4() {
	nf4 := codebook.NF4()
	block := []float32{0.5, -2, 0.03, 1.2}
	absmax := float32(2)
	codes := make([]uint8, len(block))
	nf4.EncodeScaled(codes, block, 1/absmax)
	back := make([]float32, len(block))
	_ = nf4.DecodeScaled(back, codes, absmax)
	fmt.Println(codes)
	fmt.Println(back)
	// Output:
	// [10 0 7 13]
	// [0.4922246 -2 0 1.125234]
}

// A user table: entries in ascending order, ties to the lower entry by
// default.
func ExampleNewTable() {
	t, err := codebook.NewTable("thirds", []float32{-1, -1.0 / 3, 1.0 / 3, 1}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Bits(), t.Encode(0), t.Encode(0.9), t.Quantize(-0.5))
	_, err = codebook.NewTable("bad", []float32{0, 1, 1}, nil)
	fmt.Println(err)
	// Output:
	// 2 1 3 -0.33333334
	// codebook: table "bad": entry 2 (1): duplicate entry: equal to entry 1
}

// E2M1 read as a table encodes as the e2m1 format rounds: to nearest, ties
// to the even code, with the sign in bit 3.
func ExampleE2M1() {
	t := codebook.E2M1()
	for _, x := range []float32{0.25, 0.75, -2.5, 5} {
		fmt.Printf("%v→%d ", x, t.Encode(x))
	}
	fmt.Println()
	// Output:
	// 0.25→0 0.75→2 -2.5→12 5→6
}

// A 4-entry table learned from the data of one channel.
func ExampleKMeans() {
	x := []float32{-2.1, -1.9, -0.1, 0, 0.1, 1, 1.2, 3}
	r, err := codebook.KMeans("learned", x, 4, &codebook.KMeansOptions{Init: codebook.InitQuantile})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Table.Values(), r.Iterations)
	fmt.Printf("%.3f\n", r.SSE)
	// Output:
	// [-2 0 1.1 3] 1
	// 0.060
}

// TensorCast's implicit codebooks from their names: mxfi4's two tables.
func ExampleParse() {
	cb, err := codebook.Parse("cb41fi_e2m2fnuz")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cb.IndexBits(), cb.MetaBits(), cb.Compute())
	for _, t := range cb.Tables() {
		fmt.Println(t.Name(), t.Values()[:8])
	}
	// Output:
	// 4 1 e2m2fnuz
	// f [0 0.5 1 1.5 2 3 4 6]
	// i [0 1 2 3 4 5 6 7]
}

// Each subtile of 4 takes the table with the smaller squared error; the
// meta fields are then packed one bit each.
func ExampleCodebook_Select() {
	cb, _ := codebook.Parse("cb41fi_e2m2fnuz")
	x := []float32{0.5, 1, 3, 6, 5, 7, 2, 1}
	codes := make([]uint8, len(x))
	meta := make([]uint8, 2)
	if err := cb.Select(codes, meta, x, 4, nil); err != nil {
		fmt.Println(err)
		return
	}
	packed := make([]byte, codebook.MetaLen(len(meta), cb.MetaBits()))
	_ = codebook.PackMeta(packed, meta, cb.MetaBits())
	fmt.Println(meta, codes, packed)
	// Output:
	// [0 1] [1 2 5 7 5 7 2 1] [2]
}
