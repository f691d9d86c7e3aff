package masked

import (
	"math"
)

// The slice forms reduce one plain slice x under a keep mask (the form the
// scale code uses). keep must be nil (every element kept) or as long as x, and
// dst as long as x; another length panics, like an index out of range. They
// run the same block kernels as the tensor forms, accumulating in T (wrap the
// slice in a one-dimensional Tensor with New, which does not copy, for
// AccFloat64). The boolean result is true when some element is kept: false
// means the value is the fully masked one documented on the tensor form.

// SumSlice is Sum over the kept elements of x (0 when none is kept).
func SumSlice[T Float](x []T, keep []bool) (T, bool) {
	k := keepOrAll(keep, len(x))
	return sumBlock[T, T](x, k), anyTrue(k)
}

// ProdSlice is Prod over the kept elements of x (1 when none is kept).
func ProdSlice[T Float](x []T, keep []bool) (T, bool) {
	k := keepOrAll(keep, len(x))
	return prodBlock[T, T](x, k), anyTrue(k)
}

// MeanSlice is Mean over the kept elements of x (NaN when none is kept).
func MeanSlice[T Float](x []T, keep []bool) (T, bool) {
	k := keepOrAll(keep, len(x))
	return meanBlock[T, T](x, k), anyTrue(k)
}

// AmaxSlice is Amax over the kept elements of x (-Inf when none is kept).
func AmaxSlice[T Float](x []T, keep []bool) (T, bool) {
	k := keepOrAll(keep, len(x))
	return amaxBlock(x, k), anyTrue(k)
}

// AminSlice is Amin over the kept elements of x (+Inf when none is kept).
func AminSlice[T Float](x []T, keep []bool) (T, bool) {
	k := keepOrAll(keep, len(x))
	return aminBlock(x, k), anyTrue(k)
}

// ArgmaxSlice is Argmax over the kept elements of x (-1 when none is kept).
func ArgmaxSlice[T Float](x []T, keep []bool) (int, bool) {
	k := keepOrAll(keep, len(x))
	i := argmaxBlock(x, k)
	return i, i >= 0
}

// ArgminSlice is Argmin over the kept elements of x (-1 when none is kept).
func ArgminSlice[T Float](x []T, keep []bool) (int, bool) {
	k := keepOrAll(keep, len(x))
	i := argminBlock(x, k)
	return i, i >= 0
}

// MedianSlice is Median over the kept elements of x (NaN when none is kept,
// kept NaNs skipped). It allocates scratch space for the kept values.
func MedianSlice[T Float](x []T, keep []bool) (T, bool) {
	k := keepOrAll(keep, len(x))
	var buf []T
	return medianBlock(x, k, &buf), anyTrue(k)
}

// VarSlice is Var over the kept elements of x with the given correction (NaN
// when none is kept).
func VarSlice[T Float](x []T, keep []bool, correction int) (T, bool) {
	k := keepOrAll(keep, len(x))
	return varBlock[T, T](x, k, correction), anyTrue(k)
}

// StdSlice is Std over the kept elements of x with the given correction (NaN
// when none is kept).
func StdSlice[T Float](x []T, keep []bool, correction int) (T, bool) {
	k := keepOrAll(keep, len(x))
	return T(math.Sqrt(float64(varBlock[T, T](x, k, correction)))), anyTrue(k)
}

// NormSlice is Norm of order ord over the kept elements of x (0 when none is
// kept, +Inf for ord < 0). Order +Inf, the largest kept |x|, is the block
// amax of scale selection; for float32 it runs kernels.AbsMaxBitsMasked.
func NormSlice[T Float](x []T, keep []bool, ord float64) (T, bool) {
	k := keepOrAll(keep, len(x))
	if f, ok := asF32(x); ok && math.IsInf(ord, 1) {
		return T(absMaxFloat32(f, k)), anyTrue(k)
	}
	return normBlock[T, T](x, k, ord), anyTrue(k)
}

// LogSumExpSlice is LogSumExp over the kept elements of x (-Inf when none is
// kept).
func LogSumExpSlice[T Float](x []T, keep []bool) (T, bool) {
	k := keepOrAll(keep, len(x))
	return logSumExpBlock[T, T](x, k), anyTrue(k)
}

// CumsumSlice writes Cumsum of x under keep to dst.
func CumsumSlice[T Float](dst, x []T, keep []bool) {
	cumsumLine[T, T](x, keepOrAll(keep, len(x)), dst[:len(x):len(x)])
}

// CumprodSlice writes Cumprod of x under keep to dst.
func CumprodSlice[T Float](dst, x []T, keep []bool) {
	cumprodLine[T, T](x, keepOrAll(keep, len(x)), dst[:len(x):len(x)])
}

// SoftmaxSlice writes Softmax of x under keep to dst.
func SoftmaxSlice[T Float](dst, x []T, keep []bool) {
	var e []T
	softmaxLine(x, keepOrAll(keep, len(x)), dst[:len(x):len(x)], false, &e)
}

// SoftminSlice writes Softmin of x under keep to dst.
func SoftminSlice[T Float](dst, x []T, keep []bool) {
	var e []T
	softmaxLine(x, keepOrAll(keep, len(x)), dst[:len(x):len(x)], true, &e)
}

// LogSoftmaxSlice writes LogSoftmax of x under keep to dst.
func LogSoftmaxSlice[T Float](dst, x []T, keep []bool) {
	logSoftmaxLine[T, T](x, keepOrAll(keep, len(x)), dst[:len(x):len(x)])
}

// NormalizeSlice writes Normalize of x under keep (order ord, floor eps) to
// dst.
func NormalizeSlice[T Float](dst, x []T, keep []bool, ord, eps float64) {
	normalizeLine(x, keepOrAll(keep, len(x)), dst[:len(x):len(x)], eps,
		func(xs []T, ks []bool) T { return normBlock[T, T](xs, ks, ord) })
}

// LogAddExpSlice writes LogAddExp of a under keepA and b under keepB to dst,
// and the output mask (keepA or keepB) to dstKeep unless it is nil. a, b, dst
// and the non-nil masks must have the same length.
func LogAddExpSlice[T Float](dst []T, dstKeep []bool, a []T, keepA []bool, b []T, keepB []bool) {
	ka, kb := keepOrAll(keepA, len(a)), keepOrAll(keepB, len(a))
	b, dst = b[:len(a):len(a)], dst[:len(a):len(a)]
	if dstKeep != nil {
		dstKeep = dstKeep[:len(a):len(a)]
	}
	ninf := inf[T](-1)
	for i := range a {
		x, y := a[i], b[i]
		if !ka[i] {
			x = ninf
		}
		if !kb[i] {
			y = ninf
		}
		dst[i] = logAddExp(x, y)
		if dstKeep != nil {
			dstKeep[i] = ka[i] || kb[i]
		}
	}
}
