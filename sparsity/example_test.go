package sparsity_test

import (
	"fmt"

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
