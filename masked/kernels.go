package masked

import (
	"math"
	"slices"
	"unsafe"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// The block kernels below are the single implementation behind the tensor,
// sparse and slice forms: each works on one block of elements, xs with its
// mask ks (same length), and reads nothing where ks is false. T is the data's
// type, A the accumulator's.

func inf[T Float](sign int) T { return T(math.Inf(sign)) }

func nan[T Float]() T { return T(math.NaN()) }

func isNaN[T Float](x T) bool { return x != x }

// asF32 returns xs as a []float32 when T is float32-based (the same memory),
// and asF64 as a []float64 when it is float64-based: the branch-free loops of
// fast.go take those.
func asF32[T Float](xs []T) ([]float32, bool) {
	var z T
	if unsafe.Sizeof(z) != 4 {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)), true
}

func asF64[T Float](xs []T) ([]float64, bool) {
	var z T
	if unsafe.Sizeof(z) != 8 {
		return nil, false
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)), true
}

// isWide reports whether A is float64-based.
func isWide[A Float]() bool {
	var z A
	return unsafe.Sizeof(z) == 8
}

// sumBlock is the sum of the kept elements (0 when none is kept), with four
// accumulators (in the groups of four, element i goes to accumulator i mod 4;
// the tail goes to the first).
func sumBlock[T, A Float](xs []T, ks []bool) A {
	if x, ok := asF32(xs); ok {
		if isWide[A]() {
			return A(sumF32Wide(x, ks))
		}
		return A(sumF32(x, ks))
	}
	x, _ := asF64(xs)
	return A(sumF64(x, ks))
}

// countBlock is the number of kept elements.
func countBlock(ks []bool) int {
	n := 0
	for _, k := range ks {
		if k {
			n++
		}
	}
	return n
}

// prodBlock is the product of the kept elements (1 when none is kept).
func prodBlock[T, A Float](xs []T, ks []bool) A {
	ks = ks[:len(xs)]
	p := A(1)
	for i, x := range xs {
		if ks[i] {
			p *= A(x)
		}
	}
	return p
}

// amaxBlock is the largest kept element: a NaN if one is kept, -Inf when none
// is kept.
func amaxBlock[T Float](xs []T, ks []bool) T {
	if x, ok := asF32(xs); ok {
		return T(amaxF32(x, ks, false))
	}
	x, _ := asF64(xs)
	return T(amaxF64(x, ks, false))
}

// aminBlock is the smallest kept element: a NaN if one is kept, +Inf when none
// is kept.
func aminBlock[T Float](xs []T, ks []bool) T {
	if x, ok := asF32(xs); ok {
		return T(amaxF32(x, ks, true))
	}
	x, _ := asF64(xs)
	return T(amaxF64(x, ks, true))
}

// argmaxBlock is the index of the first largest kept element, or of the first
// kept NaN if there is one; -1 when none is kept.
func argmaxBlock[T Float](xs []T, ks []bool) int {
	ks = ks[:len(xs)]
	at := -1
	var m T
	for i, x := range xs {
		if !ks[i] {
			continue
		}
		if isNaN(x) {
			return i
		}
		if at < 0 || x > m {
			at, m = i, x
		}
	}
	return at
}

// argminBlock is the index of the first smallest kept element, or of the first
// kept NaN if there is one; -1 when none is kept.
func argminBlock[T Float](xs []T, ks []bool) int {
	ks = ks[:len(xs)]
	at := -1
	var m T
	for i, x := range xs {
		if !ks[i] {
			continue
		}
		if isNaN(x) {
			return i
		}
		if at < 0 || x < m {
			at, m = i, x
		}
	}
	return at
}

// meanBlock is the sum of the kept elements over their count: NaN (0/0) when
// none is kept.
func meanBlock[T, A Float](xs []T, ks []bool) A {
	return sumBlock[T, A](xs, ks) / A(countBlock(ks))
}

// varBlock is the variance of the kept elements with the given correction
// (0: population variance, 1: Bessel's): the sum of squared deviations from
// the mean over max(count − correction, 0). No kept element, or count ≤
// correction, gives 0/0 = NaN (or +Inf for a nonzero sum of squares). The
// deviations are taken from the mean rounded to A, as torch does.
func varBlock[T, A Float](xs []T, ks []bool, correction int) A {
	ks = ks[:len(xs)]
	n := countBlock(ks)
	mean := sumBlock[T, A](xs, ks) / A(n)
	var s0, s1 A
	i := 0
	for ; i+2 <= len(xs); i += 2 {
		if ks[i] {
			d := A(xs[i]) - mean
			s0 += d * d
		}
		if ks[i+1] {
			d := A(xs[i+1]) - mean
			s1 += d * d
		}
	}
	if i < len(xs) && ks[i] {
		d := A(xs[i]) - mean
		s0 += d * d
	}
	return (s0 + s1) / A(max(n-correction, 0))
}

// medianBlock is the lower median of the kept elements that are not NaN (the
// element of rank (n−1)/2 in ascending order, as torch.nanmedian; kept NaNs
// are skipped like masked-out ones); NaN when there is none. buf is scratch
// space, grown as needed.
func medianBlock[T Float](xs []T, ks []bool, buf *[]T) T {
	ks = ks[:len(xs)]
	v := (*buf)[:0]
	for i, x := range xs {
		if ks[i] && !isNaN(x) {
			v = append(v, x)
		}
	}
	*buf = v
	if len(v) == 0 {
		return nan[T]()
	}
	return selectK(v, (len(v)-1)/2)
}

// selectK returns the element of rank k (0-based, ascending) of v, which it
// reorders; v holds no NaN.
func selectK[T Float](v []T, k int) T {
	lo, hi := 0, len(v)-1
	for hi-lo > 16 {
		// Median of three as the pivot, then a three-way partition.
		mid := lo + (hi-lo)/2
		a, b, c := v[lo], v[mid], v[hi]
		piv := max(min(a, b), min(max(a, b), c))
		lt, gt, i := lo, hi, lo
		for i <= gt {
			switch {
			case v[i] < piv:
				v[lt], v[i] = v[i], v[lt]
				lt++
				i++
			case v[i] > piv:
				v[i], v[gt] = v[gt], v[i]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return piv
		}
	}
	slices.Sort(v[lo : hi+1])
	return v[k]
}

// normBlock is the vector norm of order ord of the kept elements, as
// torch.linalg.vector_norm: ord +Inf is max|x|, -Inf min|x|, 0 the number of
// nonzero elements (NaN counts), 1 the sum of |x|, 2 the square root of the sum
// of squares, any other p (sum |x|^p)^(1/p). With none kept: 0, except +Inf for
// a negative ord (the limit of the power sum's empty 0^(1/p)).
func normBlock[T, A Float](xs []T, ks []bool, ord float64) A {
	ks = ks[:len(xs)]
	switch {
	case math.IsInf(ord, 1):
		return absMaxBlock[T, A](xs, ks)
	case math.IsInf(ord, -1):
		return absMinBlock[T, A](xs, ks)
	case ord == 0:
		n := 0
		for i, x := range xs {
			if ks[i] && x != 0 {
				n++
			}
		}
		return A(n)
	case ord == 1:
		return absSumBlock[T, A](xs, ks)
	case ord == 2:
		return A(math.Sqrt(float64(sumSquaresBlock[T, A](xs, ks))))
	}
	var s A
	for i, x := range xs {
		if ks[i] {
			s += A(math.Pow(math.Abs(float64(x)), ord))
		}
	}
	return A(math.Pow(float64(s), 1/ord))
}

// absMaxBlock is the largest kept |x|, a NaN if one is kept, 0 if none is.
func absMaxBlock[T, A Float](xs []T, ks []bool) A {
	ks = ks[:len(xs)]
	var m A
	for i, x := range xs {
		if ks[i] {
			a := A(math.Abs(float64(x)))
			if a > m {
				m = a
			} else if isNaN(a) {
				return a
			}
		}
	}
	return m
}

// absMinBlock is the smallest kept |x|, a NaN if one is kept, +Inf if none
// is.
func absMinBlock[T, A Float](xs []T, ks []bool) A {
	ks = ks[:len(xs)]
	m := inf[A](1)
	for i, x := range xs {
		if ks[i] {
			a := A(math.Abs(float64(x)))
			if a < m {
				m = a
			} else if isNaN(a) {
				return a
			}
		}
	}
	return m
}

// absSumBlock is the sum of the kept |x|, in two interleaved partial sums
// (even and odd positions) added at the end.
func absSumBlock[T, A Float](xs []T, ks []bool) A {
	ks = ks[:len(xs)]
	var s0, s1 A
	i := 0
	for ; i+2 <= len(xs); i += 2 {
		if ks[i] {
			s0 += A(math.Abs(float64(xs[i])))
		}
		if ks[i+1] {
			s1 += A(math.Abs(float64(xs[i+1])))
		}
	}
	if i < len(xs) && ks[i] {
		s0 += A(math.Abs(float64(xs[i])))
	}
	return s0 + s1
}

// sumSquaresBlock is the sum of the kept x², in two interleaved partial
// sums (even and odd positions) added at the end.
func sumSquaresBlock[T, A Float](xs []T, ks []bool) A {
	ks = ks[:len(xs)]
	var s0, s1 A
	i := 0
	for ; i+2 <= len(xs); i += 2 {
		if ks[i] {
			a := A(xs[i])
			s0 += a * a
		}
		if ks[i+1] {
			a := A(xs[i+1])
			s1 += a * a
		}
	}
	if i < len(xs) && ks[i] {
		a := A(xs[i])
		s0 += a * a
	}
	return s0 + s1
}

// absMaxFloat32 is normBlock for ord +Inf on float32 data, through the kernels
// package (same result: the largest kept |x|, a NaN if one is kept, 0 if none).
func absMaxFloat32(xs []float32, ks []bool) float32 {
	return math.Float32frombits(kernels.AbsMaxBitsMasked(xs, ks))
}

// logSumExpBlock is log(sum(exp(x))) over the kept elements, shifted by their
// maximum m for range (by 0 when m is infinite, as torch): -Inf when none is
// kept, +Inf when +Inf is kept, NaN when a NaN is kept.
func logSumExpBlock[T, A Float](xs []T, ks []bool) A {
	ks = ks[:len(xs)]
	m := amaxBlock(xs, ks)
	if isNaN(m) {
		return A(m)
	}
	shift := float64(m)
	if math.IsInf(shift, 0) {
		shift = 0
	}
	var s A
	for i, x := range xs {
		if ks[i] {
			s += A(math.Exp(float64(x) - shift))
		}
	}
	return A(math.Log(float64(s)) + shift)
}

// cumsumLine writes to ys the running sum of the kept elements of xs: ys[i] is
// the sum of the kept xs[j] with j ≤ i (so a masked-out position repeats the
// sum before it, and positions before the first kept one hold 0).
func cumsumLine[T, A Float](xs []T, ks []bool, ys []T) {
	ks, ys = ks[:len(xs)], ys[:len(xs)]
	var s A
	for i, x := range xs {
		if ks[i] {
			s += A(x)
		}
		ys[i] = T(s)
	}
}

// cumprodLine is cumsumLine with products: positions before the first kept one
// hold 1.
func cumprodLine[T, A Float](xs []T, ks []bool, ys []T) {
	ks, ys = ks[:len(xs)], ys[:len(xs)]
	p := A(1)
	for i, x := range xs {
		if ks[i] {
			p *= A(x)
		}
		ys[i] = T(p)
	}
}

// softmaxLine writes exp(x−m)/sum(exp(x−m)) over the kept elements (m their
// maximum) to ys; masked-out positions get 0, and a line with none kept is NaN
// throughout. With neg set it is softmin: the same over −x. A kept NaN or +Inf
// (−Inf for softmin) makes every kept output NaN. scratch holds the
// exponentials (grown as needed).
func softmaxLine[T, A Float](xs []T, ks []bool, ys []T, neg bool, scratch *[]A) {
	ks, ys = ks[:len(xs)], ys[:len(xs)]
	sign := T(1)
	if neg {
		sign = -1
	}
	m := inf[T](-1)
	found := false
	for i, x := range xs {
		if ks[i] {
			found = true
			x *= sign
			if x > m || isNaN(x) {
				m = x
				if isNaN(x) {
					break
				}
			}
		}
	}
	if !found {
		for i := range ys {
			ys[i] = nan[T]()
		}
		return
	}
	e := grow(scratch, len(xs))
	var s A
	for i, x := range xs {
		if ks[i] {
			e[i] = A(math.Exp(float64(A(x*sign) - A(m))))
			s += e[i]
		}
	}
	for i := range xs {
		if ks[i] {
			ys[i] = T(e[i] / s)
		} else {
			ys[i] = 0
		}
	}
}

// logSoftmaxLine writes x − m − log(sum(exp(x−m))) over the kept elements (m
// their maximum) to ys; masked-out positions get -Inf, and a line with none
// kept is NaN throughout.
func logSoftmaxLine[T, A Float](xs []T, ks []bool, ys []T) {
	ks, ys = ks[:len(xs)], ys[:len(xs)]
	if !anyTrue(ks) {
		for i := range ys {
			ys[i] = nan[T]()
		}
		return
	}
	m := A(amaxBlock(xs, ks))
	var s A
	for i, x := range xs {
		if ks[i] {
			s += A(math.Exp(float64(A(x) - m)))
		}
	}
	ls := A(math.Log(float64(s)))
	for i, x := range xs {
		if ks[i] {
			ys[i] = T(A(x) - m - ls)
		} else {
			ys[i] = inf[T](-1)
		}
	}
}

// normalizeLine writes x / max(norm, eps) to ys, norm being the masked vector
// norm of the line (normBlock of some order); masked-out positions get
// 0 / max(norm, eps), which is 0 unless the norm is NaN. The maximum
// propagates NaN, as torch.maximum.
func normalizeLine[T, A Float](xs []T, ks []bool, ys []T, eps float64, norm func([]T, []bool) A) {
	ks, ys = ks[:len(xs)], ys[:len(xs)]
	nrm := norm(xs, ks)
	d := max(nrm, A(eps))
	for i, x := range xs {
		v := A(0)
		if ks[i] {
			v = A(x)
		}
		ys[i] = T(v / d)
	}
}

// logAddExp is log(exp(a) + exp(b)), computed as torch does: a when both are
// the same infinity, otherwise max(a, b) + log1p(exp(−|a−b|)).
func logAddExp[A Float](a, b A) A {
	if math.IsInf(float64(a), 0) && a == b {
		return a
	}
	m := max(a, b)
	return m + A(math.Log1p(math.Exp(-math.Abs(float64(a-b)))))
}

// grow returns (*s)[:n], reallocating when it is too short.
func grow[A any](s *[]A, n int) []A {
	if cap(*s) < n {
		*s = make([]A, n)
	}
	return (*s)[:n]
}
