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

// A new mask keeps nothing; Set and SetAt keep elements.
func ExampleNew() {
	m, err := mask.New([]int{2, 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	m.Set(0, true)
	m.SetAt(true, 1, 2)
	fmt.Println(m, m.Count())
	// Output:
	// [[1 0 0] [0 0 1]] 2
}

// NumPy's broadcasting: shapes align at their last dimension and a 1
// stretches; 2 against 3 is a *ShapeError.
func ExampleBroadcastShapes() {
	s, err := mask.BroadcastShapes([]int{3, 1, 5}, []int{4, 1})
	fmt.Println(s, err)
	_, err = mask.BroadcastShapes([]int{2}, []int{3})
	var se *mask.ShapeError
	fmt.Println(errors.Is(err, mask.ErrShape), errors.As(err, &se), se.Other)
	// Output:
	// [3 4 5] <nil>
	// true true [3]
}

// Packed bits with a set bit past the last element are no mask.
func ExampleDecodeError() {
	_, err := mask.FromBytes([]int{3}, []byte{0b1101})
	var de *mask.DecodeError
	fmt.Println(errors.Is(err, mask.ErrDecode), errors.As(err, &de), de.Offset, de.Value)
	// Output:
	// true true 0 13
}

// Using a Buffer before any Materialize is a *BufferError.
func ExampleBufferError() {
	var b mask.Buffer
	err := b.Release()
	var be *mask.BufferError
	fmt.Println(errors.Is(err, mask.ErrNotMaterialized), errors.As(err, &be), be.Op)
	fmt.Println(err)
	// Output:
	// true true release
	// mask: buffer release: buffer used before Materialize
}
