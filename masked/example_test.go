package masked_test

import (
	"errors"
	"fmt"
	"math"

	"github.com/tensorcast-go/tensorcast/mask"
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

// The reductions of one tensor over its last dimension: row 0 keeps 4, -2
// and 1; row 1 keeps 3 and 5 (its 8 is masked out).
func ExampleProd() {
	x, err := masked.New([]float64{4, -2, 1, 3, 8, 5}, []int{2, 3},
		[]bool{true, true, true, true, false, true}, nil)
	if err != nil {
		panic(err)
	}
	o := masked.Options{Dims: []int{1}}
	prod, _ := masked.Prod(x, o)
	amin, _ := masked.Amin(x, o)
	argmin, _ := masked.Argmin(x, o)
	median, _ := masked.Median(x, o) // of an even count, the lower middle value
	std, _ := masked.Std(x, 0, o)    // correction 0: torch's unbiased=False
	norm, _ := masked.Norm(x, 2, o)
	lse, _ := masked.LogSumExp(x, o)
	fmt.Println("prod", prod.Data())
	fmt.Println("amin", amin.Data())
	fmt.Println("argmin", argmin.Data())
	fmt.Println("median", median.Data())
	fmt.Printf("std %.4f\n", std.Data())
	fmt.Printf("norm %.4f\n", norm.Data())
	fmt.Printf("logsumexp %.4f\n", lse.Data())
	// Output:
	// prod [-8 15]
	// amin [-2 3]
	// argmin [1 0]
	// median [1 3]
	// std [2.4495 1.0000]
	// norm [4.5826 5.8310]
	// logsumexp [4.0509 5.1269]
}

// A masked-out position holds the running product.
func ExampleCumprod() {
	x, _ := masked.New([]float64{2, 3, 4, 0.5}, []int{4}, []bool{true, false, true, true}, nil)
	c, _ := masked.Cumprod(x, 0, masked.AccData)
	fmt.Println(c.Data())
	// Output:
	// [2 2 8 4]
}

// Softmin is Softmax of −x; LogSoftmax its logarithm, -Inf where masked out.
func ExampleSoftmin() {
	x, _ := masked.New([]float64{0, 100, math.Log(3)}, []int{3}, []bool{true, false, true}, nil)
	p, _ := masked.Softmin(x, 0, masked.AccData)
	fmt.Printf("%.2f\n", p.Data())
	l, _ := masked.LogSoftmax(x, 0, masked.AccData)
	fmt.Printf("%.4f\n", l.Data())
	// Output:
	// [0.75 0.00 0.25]
	// [-1.3863 -Inf -0.2877]
}

// The vector 3, 4 (100 masked out) has norm 5.
func ExampleNormalize() {
	x, _ := masked.New([]float64{3, 100, 4}, []int{3}, []bool{true, false, true}, nil)
	n, _ := masked.Normalize(x, 2, 0, 1e-12, masked.AccData)
	fmt.Println(n.Data())
	// Output:
	// [0.6 0 0.8]
}

// The 2×3 tensor of ExampleNewCOO in CSR form: row i's entries are
// colIndices[crowIndices[i]:crowIndices[i+1]].
func ExampleNewCSR() {
	s, err := masked.NewCSR([]int{2, 3}, []int{0, 1, 3}, []int{1, 0, 2},
		[]float64{5, 7, 99}, []bool{true, true, false})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.ToDense())
	sum, _ := masked.Sum(s, masked.Options{Dims: []int{1}})
	fmt.Println(sum)
	// Output:
	// [[-- 5 --] [7 -- --]]
	// [5 7]
}

// A bit mask (package mask) as the tensor's mask; a mask of shape [2, 1]
// broadcasts over the columns.
func ExampleFromMask() {
	m, _ := mask.FromBools([]int{2, 3}, []bool{true, false, true, true, true, false})
	x, _ := masked.FromMask([]float32{1, 2, 3, 4, 5, 6}, []int{2, 3}, m)
	sums, _ := masked.Sum(x, masked.Options{Dims: []int{1}})
	fmt.Println(sums)
	rows, _ := mask.FromBools([]int{2, 1}, []bool{false, true})
	y, _ := masked.FromMask([]float32{1, 2, 3, 4, 5, 6}, []int{2, 3}, rows)
	fmt.Println(y)
	// Output:
	// [4 9]
	// [[-- -- --] [4 5 6]]
}

// Bad arguments are an *Error whose kind errors.Is tells.
func ExampleError() {
	x, _ := masked.New([]float64{1, 2, 3, 4}, []int{2, 2}, nil, nil)
	_, errShape := masked.New([]float64{1, 2, 3}, []int{2, 2}, nil, nil)
	_, errDim := masked.Sum(x, masked.Options{Dims: []int{2}})
	_, errIndex := masked.NewCOO([]int{2}, [][]int{{5}}, []float64{1}, nil)
	_, errArg := masked.Norm(x, math.NaN(), masked.Options{})
	for _, c := range []struct{ err, kind error }{
		{errShape, masked.ErrShape}, {errDim, masked.ErrDim},
		{errIndex, masked.ErrIndex}, {errArg, masked.ErrArg},
	} {
		var e *masked.Error
		fmt.Println(errors.Is(c.err, c.kind), errors.As(c.err, &e) && e.Arg != "")
		fmt.Println(c.err)
	}
	// Output:
	// true true
	// masked: New: data: 3 values for shape [2 2] (4 elements)
	// true true
	// masked: sum: dims: dimension 2 out of range for rank 2
	// true true
	// masked: NewCOO: indices: entry 0: index 5 out of range [0, 2) along dimension 0
	// true true
	// masked: norm: ord: NaN
}

// The slice forms of the reductions, over the kept 4, -2 and 1; with nothing
// kept, each gives the fully masked value and false.
func ExampleSumSlice() {
	x := []float64{4, -2, 1, 8}
	keep := []bool{true, true, true, false}
	sum, _ := masked.SumSlice(x, keep)
	prod, _ := masked.ProdSlice(x, keep)
	mean, _ := masked.MeanSlice(x, keep)
	amin, _ := masked.AminSlice(x, keep)
	argmax, _ := masked.ArgmaxSlice(x, keep)
	argmin, _ := masked.ArgminSlice(x, keep)
	median, _ := masked.MedianSlice(x, keep)
	v, _ := masked.VarSlice(x, keep, 0)
	s, _ := masked.StdSlice(x, keep, 1)
	lse, _ := masked.LogSumExpSlice(x, keep)
	fmt.Println(sum, prod, mean, amin, argmax, argmin, median, v, s)
	fmt.Printf("%.4f\n", lse)
	none := make([]bool, len(x))
	fmt.Println(masked.SumSlice(x, none))
	fmt.Println(masked.MeanSlice(x, none))
	// Output:
	// 3 -8 1 -2 0 1 1 6 3
	// 4.0509
	// 0 false
	// NaN false
}

// The slice forms of the scans and normalizations write to dst.
func ExampleSoftmaxSlice() {
	x := []float64{0, 100, math.Log(3)}
	keep := []bool{true, false, true}
	dst := make([]float64, len(x))
	masked.SoftmaxSlice(dst, x, keep)
	fmt.Printf("softmax %.2f\n", dst)
	masked.SoftminSlice(dst, x, keep)
	fmt.Printf("softmin %.2f\n", dst)
	masked.LogSoftmaxSlice(dst, x, keep)
	fmt.Printf("logsoftmax %.4f\n", dst)
	masked.NormalizeSlice(dst, []float64{3, 100, 4}, keep, 2, 1e-12)
	fmt.Println("normalize", dst)

	y := []float64{2, 3, 4, 0.5}
	keepY := []bool{true, false, true, true}
	out := make([]float64, len(y))
	masked.CumsumSlice(out, y, keepY)
	fmt.Println("cumsum", out)
	masked.CumprodSlice(out, y, keepY)
	fmt.Println("cumprod", out)

	outKeep := make([]bool, 3)
	masked.LogAddExpSlice(dst, outKeep, []float64{0, 1, 2}, []bool{true, true, false},
		[]float64{0, 5, 3}, []bool{true, false, false})
	fmt.Printf("logaddexp %.4f %v\n", dst, outKeep)
	// Output:
	// softmax [0.25 0.00 0.75]
	// softmin [0.75 0.00 0.25]
	// logsoftmax [-1.3863 -Inf -0.2877]
	// normalize [0.6 0 0.8]
	// cumsum [2 2 6 6.5]
	// cumprod [2 2 8 4]
	// logaddexp [0.6931 1.0000 -Inf] [true true false]
}
