package codebook_test

import (
	"errors"
	"fmt"
	"math"

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

// bitsandbytes' FP4: the sign in code bit 3, magnitudes {0, 0.0625, 8, 12,
// 4, 6, 2, 3}/12 for codes 0 to 7; −0 encodes as +0.
func ExampleFP4() {
	t := codebook.FP4()
	fmt.Println(t.Signed(), t.Values()[:8])
	for _, x := range []float32{1, -0.5, 0.3, float32(math.Copysign(0, -1))} {
		fmt.Printf("%v→%d ", x, t.Encode(x))
	}
	fmt.Println()
	// Output:
	// true [0 0.0052083335 0.6666667 1 0.33333334 0.5 0.16666667 0.25]
	// 1→3 -0.5→13 0.3→4 -0→0
}

// A sign-magnitude table from its magnitudes: code 4+c is −magnitudes[c].
func ExampleNewSignedTable() {
	t, err := codebook.NewSignedTable("pow2", []float32{0, 1, 2, 4}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Bits(), t.Values())
	fmt.Println(t.Encode(-2), t.Encode(3.5), t.Quantize(-0.8))
	// Output:
	// 3 [0 1 2 4 -0 -1 -2 -4]
	// 6 3 -1
}

// One 2-entry table per row of a 2×4 tensor (axis 0).
func ExampleKMeansPerChannel() {
	x := []float32{
		1, 1.5, 5, 5.5,
		-3, -3, 0, 0,
	}
	rs, err := codebook.KMeansPerChannel("row", x, []int{2, 4}, 0, 2,
		&codebook.KMeansOptions{Init: codebook.InitQuantile})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rs {
		fmt.Println(r.Table.Name(), r.Table.Values(), r.SSE)
	}
	// Output:
	// row[0] [1.25 5.25] 0.25
	// row[1] [-3 0] 0
}

// Meta fields of 3 bits form one LSB-first bit stream: 5, 2 and 7 are
// 101, 010 and 111 from bit 0 up, 0xd5 0x01. Set padding bits are refused.
func ExampleUnpackMeta() {
	fields := make([]uint8, 3)
	err := codebook.UnpackMeta(fields, []byte{0xd5, 0x01}, 3)
	fmt.Println(fields, err)
	err = codebook.UnpackMeta(fields, []byte{0xd5, 0x03}, 3)
	var me *codebook.MetaError
	fmt.Println(errors.Is(err, codebook.ErrMeta), errors.As(err, &me), me.Offset)
	// Output:
	// [5 2 7] <nil>
	// true true 1
}

// The default criterion of Select, which a Criterion can wrap.
func ExampleSquaredError() {
	fmt.Println(codebook.SquaredError([]float32{1, 2, 3}, []float32{1.5, 2, 2}))
	// Output:
	// 1.25
}

// Every error wraps one of the package's sentinels; a table's is a
// *TableError naming the entry, a name's a *GrammarError with the offset.
func Example_errors() {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	newTable := func(v []float32, o *codebook.TableOptions) error {
		_, err := codebook.NewTable("t", v, o)
		return err
	}
	_, errNegative := codebook.NewSignedTable("s", []float32{0, -1}, nil)
	_, errGrammar := codebook.Parse("cb4")
	_, errOffLine := codebook.Parse("cb41f9i_e2m1fnuz")
	three, _ := codebook.NewTable("three", []float32{0, 1, 2}, nil)
	errCode := three.DecodeSlice(make([]float32, 1), []uint8{3})
	errMeta := codebook.UnpackMeta(make([]uint8, 3), []byte{0xd5}, 3)
	_, errArg := codebook.KMeans("k", []float32{1, 2}, 0, nil)
	for _, c := range []struct {
		err, kind error
	}{
		{newTable(nil, nil), codebook.ErrSize},
		{newTable([]float32{0, nan}, nil), codebook.ErrNaN},
		{newTable([]float32{0, inf}, nil), codebook.ErrInf},
		{newTable([]float32{1, 0}, nil), codebook.ErrUnsorted},
		{newTable([]float32{0, 0}, nil), codebook.ErrDuplicate},
		{errNegative, codebook.ErrNegative},
		{newTable([]float32{0, 1, 2}, &codebook.TableOptions{Thresholds: []float32{0.5, 2}}),
			codebook.ErrThreshold},
		{errCode, codebook.ErrCode},
		{errGrammar, codebook.ErrGrammar},
		{errOffLine, codebook.ErrOffLine},
		{errMeta, codebook.ErrMeta},
		{errArg, codebook.ErrArg},
	} {
		var (
			te *codebook.TableError
			ge *codebook.GrammarError
		)
		fmt.Println(errors.Is(c.err, c.kind), errors.As(c.err, &te), errors.As(c.err, &ge), c.kind)
	}
	// Output:
	// true true false table size out of range
	// true true false NaN entry
	// true true false infinite entry
	// true true false entries not in ascending order
	// true true false duplicate entry
	// true true false negative magnitude
	// true true false threshold out of place
	// true true false code out of range
	// true false true bad codebook name
	// true false true pattern off the number line
	// true false false bad meta
	// true false false bad argument
}
