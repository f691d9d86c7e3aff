package masked_test

import (
	"fmt"
	"math"

	"github.com/tensorcast-go/tensorcast/masked"
)

// torch.masked's documentation example: row 1 is fully masked.
func ExampleSum() {
	x, err := masked.New([]float32{-3, -2, -1, 0, 1, 2}, []int{2, 3},
		[]bool{true, false, true, false, false, false}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(x)
	s, _ := masked.Sum(x, masked.Options{Dims: []int{1}})
	fmt.Println(s, s.Data(), s.Mask())
	m, _ := masked.Mean(x, masked.Options{Dims: []int{1}})
	fmt.Println(m.Data())
	a, _ := masked.Amax(x, masked.Options{Dims: []int{-1}, KeepDim: true})
	fmt.Println(a.Shape(), a.Data())
	// Output:
	// [[-3 -- -1] [-- -- --]]
	// [-4 --] [-4 0] [true false]
	// [-2 NaN]
	// [2 1] [-1 -Inf]
}

// A mask of shape [3,1,1] broadcasts over a [3,4,5] tensor.
func ExampleNew() {
	data := make([]float64, 60)
	for i := range data {
		data[i] = float64(i)
	}
	x, err := masked.New(data, []int{3, 4, 5}, []bool{true, false, true}, []int{3, 1, 1})
	if err != nil {
		panic(err)
	}
	s, _ := masked.Sum(x, masked.Options{Dims: []int{1, 2}})
	fmt.Println(s)
	_, err = masked.New(data, []int{3, 4, 5}, []bool{true, false}, []int{2})
	fmt.Println(err)
	// Output:
	// [190 -- 990]
	// masked: New: mask: mask shape [2] does not broadcast to [3 4 5]
}

func ExampleArgmax() {
	x, _ := masked.New([]float64{1, 9, 3, 4, 5, 6}, []int{2, 3}, []bool{true, false, true, false, false, false}, nil)
	i, _ := masked.Argmax(x, masked.Options{Dims: []int{1}})
	fmt.Println(i, i.Data())
	// Output:
	// [2 --] [2 -1]
}

func ExampleCumsum() {
	x, _ := masked.New([]float64{1, 2, 3, 4}, []int{4}, []bool{true, false, true, true}, nil)
	c, _ := masked.Cumsum(x, 0, masked.AccData)
	fmt.Println(c.Data())
	// Output:
	// [1 1 4 8]
}

func ExampleSoftmax() {
	x, _ := masked.New([]float64{0, 100, math.Log(3)}, []int{3}, []bool{true, false, true}, nil)
	p, _ := masked.Softmax(x, 0, masked.AccData)
	fmt.Printf("%.2f\n", p.Data())
	// Output:
	// [0.25 0.00 0.75]
}

// The slice form, as scale selection uses it: the block amax is the norm of
// order +Inf of the kept elements.
func ExampleNormSlice() {
	block := []float32{0.5, -6, float32(math.NaN()), 2}
	keep := []bool{true, true, false, true}
	amax, kept := masked.NormSlice(block, keep, math.Inf(1))
	fmt.Println(amax, kept)
	amax, kept = masked.NormSlice(block, make([]bool, 4), math.Inf(1))
	fmt.Println(amax, kept)
	// Output:
	// 6 true
	// 0 false
}

func ExampleAmaxSlice() {
	v, ok := masked.AmaxSlice([]float64{3, math.NaN(), -1}, []bool{true, false, true})
	fmt.Println(v, ok)
	v, ok = masked.AmaxSlice([]float64{3}, []bool{false})
	fmt.Println(v, ok)
	// Output:
	// 3 true
	// -Inf false
}

func ExampleVar() {
	x, _ := masked.New([]float64{1, 2, 3, 4, 100}, []int{5}, []bool{true, true, true, true, false}, nil)
	biased, _ := masked.Var(x, 0, masked.Options{})
	unbiased, _ := masked.Var(x, 1, masked.Options{})
	fmt.Println(biased.Data(), unbiased.Data())
	// Output:
	// [1.25] [1.6666666666666667]
}

func ExampleNewCOO() {
	// A 2×3 sparse tensor: (0,1)=5 kept, (1,0)=7 kept, (1,2) specified but masked out.
	s, err := masked.NewCOO([]int{2, 3}, [][]int{{0, 1, 1}, {1, 0, 2}}, []float64{5, 7, 99}, []bool{true, true, false})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.ToDense())
	r, _ := masked.Amax(s, masked.Options{Dims: []int{1}})
	fmt.Println(r)
	csr, _ := s.ToCSR()
	fmt.Println(csr.CrowIndices(), csr.ColIndices(), csr.Values())
	// Output:
	// [[-- 5 --] [7 -- --]]
	// [5 7]
	// [0 1 3] [1 0 2] [5 7 99]
}

func ExampleIsTensor() {
	x, _ := masked.New([]float32{1}, []int{1}, nil, nil)
	fmt.Println(masked.IsTensor(x), masked.IsTensor(x.ToCOO()), masked.IsTensor([]float32{1}))
	// Output:
	// true true false
}

func ExampleLogAddExp() {
	a, _ := masked.New([]float64{0, 1, 2}, []int{3}, []bool{true, true, false}, nil)
	b, _ := masked.New([]float64{0, 5, 3}, []int{3}, []bool{true, false, false}, nil)
	r, _ := masked.LogAddExp(a, b, masked.AccData)
	fmt.Printf("%.4f %v\n", r.Data(), r.Mask())
	// Output:
	// [0.6931 1.0000 -Inf] [true true false]
}
