package masked

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// Options selects what a reduction reduces over. The zero value reduces over
// every dimension, drops them from the result and accumulates in the data's
// type.
type Options struct {
	// Dims are the dimensions to reduce; negative values count from the end
	// (-1 is the last). Nil or empty reduces every dimension.
	Dims []int
	// KeepDim keeps the reduced dimensions in the result's shape with size 1.
	KeepDim bool
	// Acc is the accumulation type (sums, products, means, variances, norms,
	// logsumexp); it does not change the result's type.
	Acc Acc
}

// blockFn computes one output of a reduction from a block: the block's data,
// its mask and, for a sparse input, the position of each element within the
// reduced dimensions (nil for a dense block, where element i is at position i).
type blockFn[T Float, R any] func(xs []T, ks []bool, pos []int) R

// reduction is the raw result of a reduction.
type reduction[R any] struct {
	shape []int
	vals  []R
	mask  []bool
}

// reduce runs f over every block of x for the reduction described by o. The
// output mask is true where a block holds a kept element.
func reduce[T Float, R any](op string, x Input[T], o Options, f blockFn[T, R]) (*reduction[R], error) {
	shape, dense, sp, err := inputOf(op, x)
	if err != nil {
		return nil, err
	}
	if o.Acc != AccData && o.Acc != AccFloat64 {
		return nil, errorf(ErrArg, op, "Acc", "unknown accumulation type %d", int(o.Acc))
	}
	red, err := canonicalDims(op, o.Dims, len(shape))
	if err != nil {
		return nil, err
	}
	r := &reduction[R]{shape: outShape(shape, red, o.KeepDim)}
	if dense != nil {
		p := newPlan(shape, red)
		r.vals, r.mask = make([]R, p.nOut), make([]bool, p.nOut)
		forBlocks(p, dense.data, dense.mask, nil, func(o int, xs []T, ks []bool, _ []T) {
			r.vals[o] = f(xs, ks, nil)
			r.mask[o] = anyTrue(ks)
		})
		return r, nil
	}
	nOut, _ := counts(shape, red)
	r.vals, r.mask = make([]R, nOut), make([]bool, nOut)
	empty := f(nil, nil, nil)
	for o := range r.vals {
		r.vals[o] = empty
	}
	sp.groups(red, func(o int, xs []T, ks []bool, pos, _ []int) {
		r.vals[o] = f(xs, ks, pos)
		r.mask[o] = anyTrue(ks)
	})
	return r, nil
}

// counts returns the number of outputs and of reduced elements per output.
func counts(shape []int, red []bool) (nOut, nRed int) {
	nOut, nRed = 1, 1
	for d, s := range shape {
		if red[d] {
			nRed *= s
		} else {
			nOut *= s
		}
	}
	return nOut, nRed
}

// reduceT runs a reduction whose outputs are values of T.
func reduceT[T Float](op string, x Input[T], o Options, f blockFn[T, T]) (*Tensor[T], error) {
	r, err := reduce(op, x, o, f)
	if err != nil {
		return nil, err
	}
	return &Tensor[T]{shape: r.shape, data: r.vals, mask: r.mask}, nil
}

// byAcc picks the block function of the accumulation type.
func byAcc[T Float](o Options, data, wide blockFn[T, T]) blockFn[T, T] {
	if o.Acc == AccFloat64 {
		return wide
	}
	return data
}

// Sum returns the sum of the kept elements over the reduced dimensions. A
// fully masked slice gives 0, the identity of the sum.
func Sum[T Float](x Input[T], o Options) (*Tensor[T], error) {
	return reduceT("sum", x, o, byAcc(o,
		func(xs []T, ks []bool, _ []int) T { return sumBlock[T, T](xs, ks) },
		func(xs []T, ks []bool, _ []int) T { return T(sumBlock[T, float64](xs, ks)) }))
}

// Prod returns the product of the kept elements over the reduced dimensions. A
// fully masked slice gives 1, the identity of the product.
func Prod[T Float](x Input[T], o Options) (*Tensor[T], error) {
	return reduceT("prod", x, o, byAcc(o,
		func(xs []T, ks []bool, _ []int) T { return prodBlock[T, T](xs, ks) },
		func(xs []T, ks []bool, _ []int) T { return T(prodBlock[T, float64](xs, ks)) }))
}

// Mean returns the mean of the kept elements (their sum over their count) over
// the reduced dimensions. A fully masked slice gives NaN (0/0: a mean has no
// identity).
func Mean[T Float](x Input[T], o Options) (*Tensor[T], error) {
	return reduceT("mean", x, o, byAcc(o,
		func(xs []T, ks []bool, _ []int) T { return meanBlock[T, T](xs, ks) },
		func(xs []T, ks []bool, _ []int) T { return T(meanBlock[T, float64](xs, ks)) }))
}

// Amax returns the largest kept element over the reduced dimensions; a kept
// NaN makes the result NaN. A fully masked slice gives -Inf, the identity of
// the maximum.
func Amax[T Float](x Input[T], o Options) (*Tensor[T], error) {
	return reduceT("amax", x, o, func(xs []T, ks []bool, _ []int) T { return amaxBlock(xs, ks) })
}

// Amin returns the smallest kept element over the reduced dimensions; a kept
// NaN makes the result NaN. A fully masked slice gives +Inf, the identity of
// the minimum.
func Amin[T Float](x Input[T], o Options) (*Tensor[T], error) {
	return reduceT("amin", x, o, func(xs []T, ks []bool, _ []int) T { return aminBlock(xs, ks) })
}

// Median returns the lower median of the kept elements over the reduced
// dimensions: the element of rank (n−1)/2 of the n kept values in ascending
// order. As in torch.masked (which is torch.nanmedian over the kept elements),
// kept NaNs are skipped too. A fully masked slice, or one whose kept elements
// are all NaN, gives NaN; only the former has a false output mask.
func Median[T Float](x Input[T], o Options) (*Tensor[T], error) {
	var buf []T
	return reduceT("median", x, o, func(xs []T, ks []bool, _ []int) T { return medianBlock(xs, ks, &buf) })
}

// Var returns the variance of the kept elements over the reduced dimensions:
// the sum of squared deviations from their mean divided by max(n −
// correction, 0) for n kept elements. Correction 0 is the population variance
// (torch.masked's unbiased=False, its default), 1 the sample variance with
// Bessel's correction (unbiased=True). A fully masked slice gives NaN, and so
// does a slice with n ≤ correction (0/0; +Inf if its sum of squares is not 0).
func Var[T Float](x Input[T], correction int, o Options) (*Tensor[T], error) {
	return reduceT("var", x, o, byAcc(o,
		func(xs []T, ks []bool, _ []int) T { return varBlock[T, T](xs, ks, correction) },
		func(xs []T, ks []bool, _ []int) T { return T(varBlock[T, float64](xs, ks, correction)) }))
}

// Std returns the standard deviation of the kept elements over the reduced
// dimensions: the square root of Var with the same correction. A fully masked
// slice gives NaN.
func Std[T Float](x Input[T], correction int, o Options) (*Tensor[T], error) {
	return reduceT("std", x, o, byAcc(o,
		func(xs []T, ks []bool, _ []int) T {
			return T(math.Sqrt(float64(varBlock[T, T](xs, ks, correction))))
		},
		func(xs []T, ks []bool, _ []int) T {
			return T(math.Sqrt(varBlock[T, float64](xs, ks, correction)))
		}))
}

// Norm returns the vector norm of order ord of the kept elements over the
// reduced dimensions, as torch.linalg.vector_norm: +Inf is max|x|, -Inf is
// min|x|, 0 counts the nonzero elements (a NaN counts), 1 is the sum of |x|, 2
// the Euclidean norm, any other p is (sum |x|^p)^(1/p), negative p included
// (where torch.masked 1.13 wrongly lets masked-out elements count as zeros). A
// fully masked slice gives 0 for ord ≥ 0 and +Inf for ord < 0 (the identity of
// min|x|, and the limit of the empty power sum). A kept NaN gives NaN, except
// for ord 0.
//
// Norm of order +Inf over trailing dimensions of float32 data goes through the
// kernels package's masked per-block absolute maximum.
func Norm[T Float](x Input[T], ord float64, o Options) (*Tensor[T], error) {
	const op = "norm"
	if math.IsNaN(ord) {
		return nil, errorf(ErrArg, op, "ord", "NaN")
	}
	if t, ok := x.(*Tensor[T]); ok && t != nil && math.IsInf(ord, 1) && o.Acc == AccData {
		if _, _, _, err := inputOf(op, x); err != nil {
			return nil, err
		}
		if r, ok, err := absMaxTrailing(op, t, o); ok || err != nil {
			return r, err
		}
	}
	return reduceT(op, x, o, byAcc(o,
		func(xs []T, ks []bool, _ []int) T { return normBlock[T, T](xs, ks, ord) },
		func(xs []T, ks []bool, _ []int) T { return T(normBlock[T, float64](xs, ks, ord)) }))
}

// absMaxTrailing is Norm of order +Inf through kernels.AbsMaxBlocksMasked when
// t is float32 data reduced over trailing dimensions; ok is false otherwise.
func absMaxTrailing[T Float](op string, t *Tensor[T], o Options) (r *Tensor[T], ok bool, err error) {
	data, isF32 := asF32(t.data)
	if !isF32 {
		return nil, false, nil
	}
	red, err := canonicalDims(op, o.Dims, len(t.shape))
	if err != nil {
		return nil, false, err
	}
	p := newPlan(t.shape, red)
	if p.mode != planDirect || p.nRed == 0 || p.nOut == 0 {
		return nil, false, nil
	}
	bits := make([]uint32, p.nOut)
	kernels.AbsMaxBlocksMasked(bits, data, t.mask, p.nRed)
	vals, mask := make([]T, p.nOut), make([]bool, p.nOut)
	for i, b := range bits {
		vals[i] = T(math.Float32frombits(b))
		mask[i] = anyTrue(t.mask[i*p.nRed : (i+1)*p.nRed])
	}
	return &Tensor[T]{shape: outShape(t.shape, red, o.KeepDim), data: vals, mask: mask}, true, nil
}

// LogSumExp returns log(sum(exp(x))) of the kept elements over the reduced
// dimensions, computed stably (shifted by their maximum). A fully masked slice
// gives -Inf, the identity (log 0).
func LogSumExp[T Float](x Input[T], o Options) (*Tensor[T], error) {
	return reduceT("logsumexp", x, o, byAcc(o,
		func(xs []T, ks []bool, _ []int) T { return logSumExpBlock[T, T](xs, ks) },
		func(xs []T, ks []bool, _ []int) T { return T(logSumExpBlock[T, float64](xs, ks)) }))
}

// Indices is the result of Argmax and Argmin: an index per output position, a
// mask, and the shape.
type Indices struct {
	shape []int
	idx   []int
	mask  []bool
}

// Shape returns a copy of the shape.
func (r *Indices) Shape() []int { return slices.Clone(r.shape) }

// Data returns the indices in row-major order (shared, not a copy).
func (r *Indices) Data() []int { return r.idx }

// Mask returns the output mask in row-major order (shared, not a copy).
func (r *Indices) Mask() []bool { return r.mask }

// String formats the indices as nested brackets, "--" where masked out.
func (r *Indices) String() string {
	var b strings.Builder
	writeNested(&b, r.shape, func(i int) string {
		if !r.mask[i] {
			return "--"
		}
		return strconv.Itoa(r.idx[i])
	})
	return b.String()
}

func argReduce[T Float](op string, x Input[T], o Options, block func([]T, []bool) int) (*Indices, error) {
	r, err := reduce(op, x, o, func(xs []T, ks []bool, pos []int) int {
		i := block(xs, ks)
		if i >= 0 && pos != nil {
			i = pos[i]
		}
		return i
	})
	if err != nil {
		return nil, err
	}
	return &Indices{shape: r.shape, idx: r.vals, mask: r.mask}, nil
}

// Argmax returns the index of the largest kept element over the reduced
// dimensions: with one dimension, the index along it; with several (or all,
// torch's dim=None), the flat row-major index within the reduced dimensions.
// Ties go to the first index; a kept NaN wins over every number (the first
// NaN). A fully masked slice gives -1 (torch returns 0 there, an index that
// points at a masked-out element).
func Argmax[T Float](x Input[T], o Options) (*Indices, error) {
	return argReduce("argmax", x, o, argmaxBlock[T])
}

// Argmin is Argmax for the smallest kept element: ties go to the first index,
// a kept NaN wins (the first NaN), a fully masked slice gives -1.
func Argmin[T Float](x Input[T], o Options) (*Indices, error) {
	return argReduce("argmin", x, o, argminBlock[T])
}
