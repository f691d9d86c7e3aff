package mask_test

import (
	"errors"
	"fmt"

	"github.com/tensorcast-go/tensorcast/mask"
)

// A padded batch (a tokenizer's attention_mask) made causal, as a boolean
// mask and as a float16 bias.
func ExampleFromPadding() {
	pad, _ := mask.FromBools([]int{2, 3}, []bool{
		true, true, true,
		false, true, true, // left padding
	})
	a, _ := mask.FromPadding(pad)
	a, _ = a.Causal(nil)
	m, _ := a.Pairwise(1) // [B,1,Q,K], as Hugging Face passes it to SDPA
	fmt.Println(m.Shape(), m)
	bias, _, _ := a.BiasFloat16(mask.BiasOptions{})
	fmt.Printf("%04x\n", bias[9:])
	pos, _, _ := a.PositionIDs(1)
	fmt.Println(pos)
	// Output:
	// [2 1 3 3] [[[[1 0 0] [1 1 0] [1 1 1]]] [[[0 0 0] [0 1 0] [0 1 1]]]]
	// [fc00 fc00 fc00 fc00 0000 fc00 fc00 0000 0000]
	// [0 1 2 1 0 1]
}

// Packed sequences as FlashAttention's varlen functions take them: the
// position IDs restart at each sequence.
func ExampleFromCuSeqlens() {
	a, _ := mask.FromCuSeqlens([]int32{0, 2, 5})
	a, _ = a.Causal(nil)
	pos, _, _ := a.PositionIDs(0)
	fmt.Println(pos)
	seg, _, _ := a.SegmentIDs()
	fmt.Println(seg)
	pic, _ := a.Visualize(mask.VisualizeOptions{ASCII: true})
	fmt.Print(pic)
	// Output:
	// [0 1 0 1 2]
	// [0 0 1 1 1]
	// batch 0: 5 queries × 5 keys
	//   00111
	// 0 #....
	// 0 ##...
	// 1 ..#..
	// 1 ..##.
	// 1 ..###
}

// A padded batch unpadded for a varlen kernel: FlashAttention's cu_seqlens.
func ExampleAttention_CuSeqlens() {
	a, _ := mask.FromLengths([]int{3, 1, 2}, 4)
	cu, _, _ := a.CuSeqlens()
	fmt.Println(cu)
	// Two sequences in one row have no padding mask.
	packed, _ := mask.FromCuSeqlens(cu)
	_, err := packed.Padding()
	fmt.Println(errors.Is(err, mask.ErrNotRepresentable))
	fmt.Println(err)
	// Output:
	// [0 3 4 6]
	// true
	// mask: attention cu_seqlens → padding: batch 0, index 3: a second sequence (segment 1 after 0): a padding mask holds one sequence per row
}

// Two new tokens after a KV cache of three: offset 3 aligns the causal mask
// to the bottom right.
func ExampleAttention_Causal() {
	a, _ := mask.FromQKLengths([]int{2}, 2, []int{5}, 5)
	c, _ := a.Causal([]int{3})
	m, _ := c.Pairwise(0)
	fmt.Println(m)
	// Output:
	// [[[1 1 1 1 0] [1 1 1 1 1]]]
}

// Hugging Face's sliding_window=3 on a causal model keeps the query and the
// two keys before it: window (2, 0).
func ExampleAttention_SlidingWindow() {
	a, _ := mask.FromLengths([]int{5}, 5)
	w, _ := a.SlidingWindow(2, 0, nil)
	pic, _ := w.Visualize(mask.VisualizeOptions{ASCII: true, NoSegments: true})
	fmt.Print(pic)
	// Output:
	// batch 0: 5 queries × 5 keys
	// #....
	// ##...
	// ###..
	// .###.
	// ..###
}

// Image tokens attending each other both ways on top of a causal mask.
func ExampleAttention_TokenTypes() {
	a, _ := mask.FromLengths([]int{5}, 5)
	a, _ = a.Causal(nil)
	a, _ = a.TokenTypes([]int32{-1, 0, 0, 0, -1}, nil, mask.Union)
	pic, _ := a.Visualize(mask.VisualizeOptions{NoSegments: true})
	fmt.Print(pic)
	// Output:
	// batch 0: 5 queries × 5 keys
	// █····
	// ████·
	// ████·
	// ████·
	// █████
}

// Input errors name the argument, the index and the value.
func ExampleInputError() {
	_, err := mask.FromLengths([]int{3, 9}, 8)
	var ie *mask.InputError
	if errors.As(err, &ie) {
		fmt.Println(ie.Arg, ie.Index, ie.Value)
	}
	fmt.Println(err)
	// Output:
	// lengths 1 9
	// mask: from lengths: lengths[1] = 9: outside [0, 8]
}

// Two packed sequences and a padding token in one row of segment IDs.
func ExampleFromSegmentIDs() {
	a, _ := mask.FromSegmentIDs(1, []int32{0, 0, 1, 1, -1})
	m, _ := a.Pairwise(0)
	fmt.Println(m)
	// Output:
	// [[[1 1 0 0 0] [1 1 0 0 0] [0 0 1 1 0] [0 0 1 1 0] [0 0 0 0 0]]]
}

// Queries and keys with their own segment IDs: query 0 belongs to segment
// 0, query 1 to segment 1.
func ExampleFromQKSegmentIDs() {
	a, _ := mask.FromQKSegmentIDs(1, []int32{0, 1}, []int32{0, 0, 1, 1, 1})
	m, _ := a.Pairwise(0)
	fmt.Println(m)
	// Output:
	// [[[1 1 0 0 0] [0 0 1 1 1]]]
}

// Varlen attention with separate cumulative lengths: sequence 0 has one
// query and two keys, sequence 1 two queries and three keys. Lengths that
// decrease are refused.
func ExampleFromQKCuSeqlens() {
	a, _ := mask.FromQKCuSeqlens([]int32{0, 1, 3}, []int32{0, 2, 5})
	m, _ := a.Pairwise(0)
	fmt.Println(m)
	_, err := mask.FromQKCuSeqlens([]int32{0, 2, 1}, []int32{0, 2, 5})
	fmt.Println(errors.Is(err, mask.ErrAttentionInput))
	// Output:
	// [[[1 1 0 0 0] [0 0 1 1 1] [0 0 1 1 1]]]
	// true
}

// A pairwise [B,Q,K] mask as given: a causal mask of two tokens has no
// segment IDs (they describe block-diagonal masks only).
func ExampleFromPairwise() {
	pair, _ := mask.FromBools([]int{1, 2, 2}, []bool{true, false, true, true})
	a, _ := mask.FromPairwise(pair)
	fmt.Println(a.Shape())
	_, _, err := a.SegmentIDs()
	var ce *mask.ConversionError
	fmt.Println(errors.Is(err, mask.ErrNotRepresentable), errors.As(err, &ce), ce.From, ce.To)
	// Output:
	// 1 0 2 2
	// true true pairwise segment ids
}
