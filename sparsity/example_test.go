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
