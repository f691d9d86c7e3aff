package masked

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tensorcast-go/tensorcast/internal/kbench"
)

// Benchmarks over a 1024×1024 float32 tensor (4 MiB of data, 1 MiB of mask)
// with three quarters of the elements kept. MemRead is the memory-read
// baseline of the same run (kbench.SumFloat32 over the data); compare the
// others to it. Run e.g.
//
//	go test -run '^$' -bench . -benchtime 200ms ./masked/

const benchRows, benchCols = 1024, 1024

func benchTensor(b *testing.B) (*Tensor[float32], []float32, []bool) {
	b.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]float32, benchRows*benchCols)
	mask := make([]bool, len(data))
	for i := range data {
		data[i] = float32(rng.NormFloat64())
		mask[i] = rng.IntN(4) > 0
	}
	x, err := New(data, []int{benchRows, benchCols}, mask, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data) * 4))
	b.ResetTimer()
	return x, data, mask
}

var sink uint64

func BenchmarkMemRead(b *testing.B) {
	_, data, _ := benchTensor(b)
	for b.Loop() {
		sink += kbench.SumFloat32(data)
	}
}

func benchReduce(b *testing.B, f func(*Tensor[float32]) (*Tensor[float32], error)) {
	x, _, _ := benchTensor(b)
	for b.Loop() {
		if _, err := f(x); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSumLastDim(b *testing.B) {
	benchReduce(b, func(x *Tensor[float32]) (*Tensor[float32], error) { return Sum(x, Options{Dims: []int{1}}) })
}

func BenchmarkSumFirstDim(b *testing.B) {
	benchReduce(b, func(x *Tensor[float32]) (*Tensor[float32], error) { return Sum(x, Options{Dims: []int{0}}) })
}

func BenchmarkSumAll(b *testing.B) {
	benchReduce(b, func(x *Tensor[float32]) (*Tensor[float32], error) { return Sum(x, Options{}) })
}

func BenchmarkAmaxLastDim(b *testing.B) {
	benchReduce(b, func(x *Tensor[float32]) (*Tensor[float32], error) { return Amax(x, Options{Dims: []int{1}}) })
}

func BenchmarkAmaxFirstDim(b *testing.B) {
	benchReduce(b, func(x *Tensor[float32]) (*Tensor[float32], error) { return Amax(x, Options{Dims: []int{0}}) })
}

// Norm of order +Inf per block of 32 (the scale amax of MX formats) through
// kernels.AbsMaxBlocksMasked.
func BenchmarkAbsMaxBlocks32(b *testing.B) {
	x, data, mask := benchTensor(b)
	blocks, err := New(data, []int{len(data) / 32, 32}, mask, nil)
	if err != nil {
		b.Fatal(err)
	}
	_ = x
	for b.Loop() {
		if _, err := Norm(blocks, math.Inf(1), Options{Dims: []int{1}}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVarLastDim(b *testing.B) {
	benchReduce(b, func(x *Tensor[float32]) (*Tensor[float32], error) { return Var(x, 1, Options{Dims: []int{1}}) })
}

func BenchmarkSoftmaxLastDim(b *testing.B) {
	benchReduce(b, func(x *Tensor[float32]) (*Tensor[float32], error) { return Softmax(x, 1, AccData) })
}

func BenchmarkCumsumFirstDim(b *testing.B) {
	benchReduce(b, func(x *Tensor[float32]) (*Tensor[float32], error) { return Cumsum(x, 0, AccData) })
}

func BenchmarkAmaxSlice(b *testing.B) {
	_, data, mask := benchTensor(b)
	for b.Loop() {
		v, _ := AmaxSlice(data, mask)
		sink += uint64(math.Float32bits(v))
	}
}

func BenchmarkSumSlice(b *testing.B) {
	_, data, mask := benchTensor(b)
	for b.Loop() {
		v, _ := SumSlice(data, mask)
		sink += uint64(math.Float32bits(v))
	}
}

// Sum over the first and last of three dimensions: the gathered blocks of
// forBlocks.
func BenchmarkSumOuterDims(b *testing.B) {
	_, data, mask := benchTensor(b)
	x, err := New(data, []int{32, 32, benchCols}, mask, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Sum(x, Options{Dims: []int{0, 2}}); err != nil {
			b.Fatal(err)
		}
	}
}

// Norms of each order normBlock treats apart, per row.
func BenchmarkNormLastDim(b *testing.B) {
	for _, ord := range []float64{math.Inf(1), math.Inf(-1), 0, 1, 2, 3} {
		b.Run(fmtOrd(ord), func(b *testing.B) {
			benchReduce(b, func(x *Tensor[float32]) (*Tensor[float32], error) {
				return Norm(x, ord, Options{Dims: []int{1}})
			})
		})
	}
}

func fmtOrd(ord float64) string {
	switch {
	case math.IsInf(ord, 1):
		return "inf"
	case math.IsInf(ord, -1):
		return "-inf"
	}
	return string(rune('0' + int(ord)))
}

// LogAddExp of two dense tensors and of two COO tensors holding a quarter
// of the elements each.
func BenchmarkLogAddExp(b *testing.B) {
	x, data, _ := benchTensor(b)
	b.Run("dense", func(b *testing.B) {
		b.SetBytes(int64(len(data) * 4))
		for b.Loop() {
			if _, err := LogAddExp(x, x, AccData); err != nil {
				b.Fatal(err)
			}
		}
	})
	coo := func(phase int) *COO[float32] {
		idx := [][]int{nil, nil}
		var vals []float32
		for i, v := range data {
			if i%4 == phase || i%8 == 1 {
				idx[0], idx[1] = append(idx[0], i/benchCols), append(idx[1], i%benchCols)
				vals = append(vals, v)
			}
		}
		c, err := NewCOO([]int{benchRows, benchCols}, idx, vals, nil)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	ca, cb := coo(0), coo(2)
	b.Run("coo", func(b *testing.B) {
		b.SetBytes(int64(len(data) * 4))
		for b.Loop() {
			if _, err := LogAddExp(ca, cb, AccData); err != nil {
				b.Fatal(err)
			}
		}
	})
}
