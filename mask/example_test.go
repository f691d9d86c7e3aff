package mask_test

import (
	"errors"
	"fmt"

	"github.com/tensorcast-go/tensorcast/mask"
)

func ExampleFromBools() {
	m, _ := mask.FromBools([]int{2, 5}, []bool{
		true, false, true, true, false,
		false, false, false, true, true,
	})
	fmt.Println(m)
	fmt.Printf("bytes % x, count %d, first set %d, any %v, all %v\n", m.Bytes(), m.Count(), m.FirstSet(), m.Any(), m.All())
	// Output:
	// [[1 0 1 1 0] [0 0 0 1 1]]
	// bytes 0d 03, count 5, first set 0, any true, all false
}

func ExampleMask_Broadcast() {
	// A [3,1,1] mask, one flag per leading index, against [3,2,2].
	m, _ := mask.FromBools([]int{3, 1, 1}, []bool{true, false, true})
	b, _ := m.Broadcast([]int{3, 2, 2})
	fmt.Println(b)
	// A [2] mask against [3,2]: every row.
	r, _ := mask.FromBools([]int{2}, []bool{false, true})
	b, _ = r.Broadcast([]int{3, 2})
	fmt.Println(b)
	_, err := r.Broadcast([]int{3})
	fmt.Println(errors.Is(err, mask.ErrShape))
	// Output:
	// [[[1 1] [1 1]] [[0 0] [0 0]] [[1 1] [1 1]]]
	// [[0 1] [0 1] [0 1]]
	// true
}

func ExampleMask_And() {
	rows, _ := mask.FromBools([]int{2, 1}, []bool{true, false})
	cols, _ := mask.FromBools([]int{3}, []bool{true, true, false})
	and, _ := rows.And(cols)
	or, _ := rows.Or(cols)
	fmt.Println(and, or, and.Not())
	// Output:
	// [[1 1 0] [0 0 0]] [[1 1 1] [1 1 0]] [[0 0 1] [1 1 1]]
}

func ExampleMask_Select() {
	m, _ := mask.FromBools([]int{4}, []bool{true, false, false, true})
	dst := make([]float32, 4)
	_ = m.Select(dst, []float32{1, 2, 3, 4}, []float32{-1, -2, -3, -4})
	fmt.Println(dst)
	kept := make([]float32, m.Count())
	n, _ := m.Compact(kept, []float32{1, 2, 3, 4})
	back := make([]float32, 4)
	_, _ = m.Expand(back, kept)
	fmt.Println(n, kept, back)
	// Output:
	// [1 -2 -3 4]
	// 2 [1 4] [1 0 0 4]
}

func ExampleBuffer() {
	var shared mask.Buffer
	pad, _ := mask.FromBools([]int{2, 3}, []bool{true, true, false, true, false, false})
	// Two layers bring the same padding mask: one copy, two references.
	_ = shared.Materialize(pad)
	_ = shared.Materialize(pad)
	// A [2,3,2] activation: each flag covers a hidden vector of 2.
	x := []float32{1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}
	_ = shared.Apply(x, []int{2, 3, 2})
	fmt.Println(x, shared.Refs())
	other, _ := mask.Full([]int{2, 3}, true)
	fmt.Println(errors.Is(shared.Materialize(other), mask.ErrMismatch))
	_ = shared.Release()
	_ = shared.Release()
	fmt.Println(errors.Is(shared.Release(), mask.ErrReleased))
	// Output:
	// [1 1 2 2 0 0 4 4 0 0 0 0] 2
	// true
	// true
}
