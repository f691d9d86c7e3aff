package sparsity_test

import (
	"errors"
	"fmt"

	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/sparsity"
)

// Prune a row of eight values to 2:4 by magnitude: each group of four keeps
// its two largest |x|, with their signs.
func ExamplePrune() {
	x := []float32{0.1, -0.9, 0.5, 0.2, 3, -4, 0, 1}
	pruned, m, err := sparsity.Prune(x, []int{8}, -1, sparsity.P24, sparsity.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pruned)
	fmt.Printf("%#02x\n", m.Bytes())
	// Output:
	// [0 -0.9 0.5 0 3 -4 0 0]
	// 0x36
}

// Wanda ranks each weight by |w|·‖X_j‖, the norm of the activations of its
// input channel: a small weight on a loud channel can outrank a large one.
func ExampleWanda() {
	w := []float32{1, -2, 3, 4} // one output row, four input channels
	norms := []float32{10, 1, 1, 0.1}
	m, err := sparsity.Wanda(w, []int{1, 4}, -1, sparsity.P24, norms)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Bools())
	// Output:
	// [true false true false]
}

// A transposable 2:4 mask keeps two per row and two per column of every 4×4
// block, so the weight and its transpose are both 2:4.
func ExampleTransposable24() {
	w := []float32{
		9, -9, 1, 0,
		9, 9, 0, 1,
		1, 0, -9, 9,
		0, 1, 9, 9,
	}
	m, err := sparsity.Transposable24(w, []int{4, 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m)
	// Output:
	// [[1 1 0 0] [1 1 0 0] [0 0 1 1] [0 0 1 1]]
}

// Store a 2:4 row as its kept values plus either its packed mask or its
// 2-bit index metadata, and expand it back.
func ExampleCompress() {
	x := []float32{0.1, -0.9, 0.5, 0.2, 3, -4, 0, 1}
	shape := []int{1, 8}
	m, err := sparsity.Magnitude(x, shape, -1, sparsity.P24)
	if err != nil {
		fmt.Println(err)
		return
	}
	vals, _ := sparsity.Compress(x, shape, -1, sparsity.P24, m)
	meta, _ := sparsity.EncodeIndices(m, -1, sparsity.P24)
	fmt.Println(vals)
	fmt.Printf("bitmask %#02x, indices %#02x\n", sparsity.PackRows(m), meta)

	back, _ := sparsity.DecodeIndices(meta, shape, -1, sparsity.P24)
	dense, _ := sparsity.Expand(vals, shape, -1, sparsity.P24, back)
	fmt.Println(dense)
	// Output:
	// [-0.9 0.5 3 -4]
	// bitmask 0x36, indices 0x49
	// [0 -0.9 0.5 0 3 -4 0 0]
}

// What 2:4 pruning of a row keeps, and what it costs.
func ExampleMeasure() {
	x := []float32{0.1, -0.9, 0.5, 0.2, 3, -4, 0, 1}
	m, _ := sparsity.Magnitude(x, []int{8}, -1, sparsity.P24)
	s, _ := sparsity.Measure(x, m)
	fmt.Printf("density %.2f, magnitude kept %.3f, SQNR %.2f dB\n", s.Density, s.MagnitudeKept, *s.SQNR)
	// Output:
	// density 0.50, magnitude kept 0.866, SQNR 14.12 dB
}

// Rank by given scores instead of |x|: each group of four keeps the two of
// largest score.
func ExampleByScores() {
	scores := []float32{1, 0, 3, 2, 5, 6, 0, 0}
	m, err := sparsity.ByScores(scores, []int{8}, -1, sparsity.P24)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m)
	// Output:
	// [0 0 1 1 1 1 0 0]
}

// Unstructured pruning keeps every |x| above a threshold; RowDensity tells
// what each row kept.
func ExampleThreshold() {
	x := []float32{0.1, -0.5, 0, 2, 3, -4, 0.3, 1}
	m, err := sparsity.Threshold(x, []int{2, 4}, 0.2)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m)
	fmt.Println(sparsity.RowDensity(m))
	// Output:
	// [[0 1 0 1] [1 1 1 1]]
	// [0.5 1]
}

// The kept values of N:M sparsity take N/M of the sparse axis.
func ExampleValuesShape() {
	for _, c := range []struct {
		shape []int
		axis  int
		p     sparsity.Pattern
	}{
		{[]int{4, 8}, -1, sparsity.P24},
		{[]int{2, 6}, 1, sparsity.P12},
		{[]int{16, 3}, 0, sparsity.P48},
	} {
		s, err := sparsity.ValuesShape(c.shape, c.axis, c.p)
		fmt.Println(c.shape, c.p, s, err)
	}
	// Output:
	// [4 8] 2:4 [4 4] <nil>
	// [2 6] 1:2 [2 3] <nil>
	// [16 3] 4:8 [8 3] <nil>
}

// compressed-tensors' sparse-bitmask form keeps the non-zeros, a bitmask of
// where they are (LSB first, a byte per row here) and where each row starts.
func ExampleNewSparseBitmask() {
	x := []float32{0, 1.5, 0, -2, 3, 0, 0, 0}
	s, err := sparsity.NewSparseBitmask(x, []int{2, 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%v %#02x %v\n", s.Compressed, s.Bitmask, s.RowOffsets)
	dense, _ := s.Dense()
	fmt.Println(dense)
	// Output:
	// [1.5 -2 3] 0x0a01 [0 2]
	// [0 1.5 0 -2 3 0 0 0]
}

// The sparse-24-bitmask form of a 2:4 row; without a mask it keeps the two
// largest |x| of each group of four, as ExamplePrune does.
func ExampleNewSparse24Bitmask() {
	x := []float32{0.1, -0.9, 0.5, 0.2, 3, -4, 0, 1}
	s, err := sparsity.NewSparse24Bitmask(x, []int{1, 8}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%v %#02x\n", s.Compressed, s.Bitmask)
	m, _ := s.Mask()
	fmt.Println(m)
	// Output:
	// [-0.9 0.5 3 -4] 0x36
	// [[0 1 1 0 1 1 0 0]]
}

// Rows of 3 elements take a byte each, LSB first; a set bit past a row's end
// is refused.
func ExampleUnpackRows() {
	m, err := sparsity.UnpackRows([]byte{0b101, 0b010}, []int{2, 3})
	fmt.Println(m, err)
	_, err = sparsity.UnpackRows([]byte{0b1001, 0}, []int{2, 3})
	fmt.Println(errors.Is(err, sparsity.ErrDecode))
	fmt.Println(err)
	// Output:
	// [[1 0 1] [0 1 0]] <nil>
	// true
	// sparsity: bitmask: offset 0 (0x9): padding bits 3..7 after the 3 elements of row 0 are set
}

// PyTorch's CUTLASS metadata of a 2:4 row of 16 half-precision values: each
// group of four gives a nibble (the columns of its two kept elements, two
// bits each), four nibbles an int16 word, stored little endian.
func ExampleEncodeCUTLASS() {
	keep := []bool{
		true, true, false, false, // columns 0, 1: 0b0100
		false, false, true, true, // columns 2, 3: 0b1110
		true, false, true, false, // columns 0, 2: 0b1000
		false, true, false, true, // columns 1, 3: 0b1101
	}
	m, _ := mask.FromBools([]int{1, 16}, keep)
	meta, err := sparsity.EncodeCUTLASS(m, sparsity.CUTLASSHalf, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%#02x\n", meta)
	back, _ := sparsity.DecodeCUTLASS(meta, 1, 16, sparsity.CUTLASSHalf, false)
	fmt.Println(back)
	elems := []sparsity.CUTLASSElem{sparsity.CUTLASSHalf, sparsity.CUTLASSInt8, sparsity.CUTLASSFloat32}
	for _, e := range elems {
		words, _ := sparsity.CUTLASSMetaShape(64, 64, e, true)
		fmt.Println(e, e.Pattern(), words, e.WordBytes(), "bytes a word")
	}
	// Output:
	// 0xe4d8
	// [[1 1 0 0 0 0 1 1 1 0 1 0 0 1 0 1]]
	// half 2:4 [64 4] 2 bytes a word
	// int8 2:4 [64 2] 4 bytes a word
	// float32 1:2 [64 8] 2 bytes a word
}

// Every error matches one of the package's sentinels with errors.Is, and is
// one of its error types.
func Example_errors() {
	_, errPattern := sparsity.ParsePattern("3:6")
	_, errShape := sparsity.Magnitude([]float32{1, 2, 3}, []int{4}, -1, sparsity.P24)
	_, errScores := sparsity.ByScores([]float32{1, -1, 0, 0}, []int{4}, -1, sparsity.P24)
	all, _ := mask.FromBools([]int{4}, []bool{true, true, true, false})
	errNotNM := sparsity.Check(all, -1, sparsity.P24)
	_, errDecode := sparsity.UnpackRows([]byte{0xff}, []int{1, 4})
	_, errOptions := sparsity.NM([]float32{1, 2, 3, 4}, []int{4}, -1, sparsity.P24,
		sparsity.Options{Scores: []float32{1, 1, 1, 1}, Norms: []float32{1, 1, 1, 1}})
	var (
		pe *sparsity.PatternError
		se *sparsity.ShapeError
		ce *sparsity.ScoreError
		ge *sparsity.GroupError
		de *sparsity.DecodeError
	)
	fmt.Println(errors.Is(errPattern, sparsity.ErrPattern), errors.As(errPattern, &pe))
	fmt.Println(errors.Is(errShape, sparsity.ErrShape), errors.As(errShape, &se))
	fmt.Println(errors.Is(errScores, sparsity.ErrScores), errors.As(errScores, &ce), ce.Offset)
	fmt.Println(errors.Is(errNotNM, sparsity.ErrNotNM), errors.As(errNotNM, &ge), ge.Kept)
	fmt.Println(errors.Is(errDecode, sparsity.ErrDecode), errors.As(errDecode, &de))
	fmt.Println(errors.Is(errOptions, sparsity.ErrOptions))
	// Output:
	// true true
	// true true
	// true true 1
	// true true 3
	// true true
	// true
}
