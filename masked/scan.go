package masked

import (
	"math"
	"slices"
)

// lineFn fills ys (the output line) from the line xs with mask ks.
type lineFn[T Float] func(xs []T, ks []bool, ys []T)

// scan applies f to every line of x along dim and returns the result in x's
// layout, with x's mask (for a sparse input: the same entries).
func scan[T Float, X Input[T]](op string, x X, dim int, acc Acc, f lineFn[T]) (X, error) {
	var zero X
	shape, dense, sp, err := inputOf[T](op, x)
	if err != nil {
		return zero, err
	}
	if acc != AccData && acc != AccFloat64 {
		return zero, errorf(ErrArg, op, "acc", "unknown accumulation type %d", int(acc))
	}
	red, err := canonicalDims(op, []int{dim}, len(shape))
	if err != nil {
		return zero, err
	}
	if dense != nil {
		out := make([]T, len(dense.data))
		forBlocks(newPlan(shape, red), dense.data, dense.mask, out, func(_ int, xs []T, ks []bool, ys []T) {
			f(xs, ks, ys)
		})
		r := &Tensor[T]{shape: slices.Clone(shape), data: out, mask: slices.Clone(dense.mask)}
		return any(r).(X), nil
	}
	vals := make([]T, len(sp.vals))
	var ys []T
	sp.groups(red, func(_ int, xs []T, ks []bool, _, ent []int) {
		ys = grow(&ys, len(xs))
		f(xs, ks, ys)
		for i, e := range ent {
			vals[e] = ys[i]
		}
	})
	c := sp.withValues(vals, slices.Clone(sp.mask))
	switch any(x).(type) {
	case *COO[T]:
		return any(&COO[T]{c: c}).(X), nil
	default:
		r, err := csrFromCoords(op, c)
		if err != nil {
			return zero, err
		}
		return any(r).(X), nil
	}
}

// byAccLine picks the line function of the accumulation type.
func byAccLine[T Float](acc Acc, data, wide lineFn[T]) lineFn[T] {
	if acc == AccFloat64 {
		return wide
	}
	return data
}

// Cumsum returns the cumulative sum of the kept elements along dim, in x's
// layout (a *Tensor, *COO or *CSR) and with x's mask: element i holds the sum
// of the kept elements at positions ≤ i. Masked-out positions hold the running
// sum so far (0 before the first kept element), as torch computes them; a
// fully masked line is 0 throughout.
func Cumsum[T Float, X Input[T]](x X, dim int, acc Acc) (X, error) {
	return scan("cumsum", x, dim, acc, byAccLine(acc, cumsumLine[T, T], cumsumLine[T, float64]))
}

// Cumprod is Cumsum with products: masked-out positions hold the running
// product (1 before the first kept element); a fully masked line is 1
// throughout.
func Cumprod[T Float, X Input[T]](x X, dim int, acc Acc) (X, error) {
	return scan("cumprod", x, dim, acc, byAccLine(acc, cumprodLine[T, T], cumprodLine[T, float64]))
}

// Softmax returns exp(x − m) / sum(exp(x − m)) over the kept elements of each
// line along dim (m the line's kept maximum), in x's layout and with x's mask.
// Masked-out positions are 0; a fully masked line is NaN throughout (a softmax
// of nothing), as in torch. A kept NaN or +Inf, or kept elements that are all
// -Inf, make the line's kept outputs NaN.
func Softmax[T Float, X Input[T]](x X, dim int, acc Acc) (X, error) {
	return scan("softmax", x, dim, acc, softmaxFn[T](acc, false))
}

// Softmin is Softmax of −x: exp(m − x) / sum(exp(m − x)) over the kept
// elements (m their minimum). Masked-out positions are 0, a fully masked line
// is NaN throughout.
func Softmin[T Float, X Input[T]](x X, dim int, acc Acc) (X, error) {
	return scan("softmin", x, dim, acc, softmaxFn[T](acc, true))
}

func softmaxFn[T Float](acc Acc, neg bool) lineFn[T] {
	if acc == AccFloat64 {
		var e []float64
		return func(xs []T, ks []bool, ys []T) { softmaxLine(xs, ks, ys, neg, &e) }
	}
	var e []T
	return func(xs []T, ks []bool, ys []T) { softmaxLine(xs, ks, ys, neg, &e) }
}

// LogSoftmax returns x − m − log(sum(exp(x − m))) over the kept elements of
// each line along dim, in x's layout and with x's mask. Masked-out positions
// are -Inf (the log of Softmax's 0); a fully masked line is NaN throughout.
func LogSoftmax[T Float, X Input[T]](x X, dim int, acc Acc) (X, error) {
	return scan("log_softmax", x, dim, acc, byAccLine(acc, logSoftmaxLine[T, T], logSoftmaxLine[T, float64]))
}

// Normalize returns x / max(norm, eps) along dim, norm being the masked vector
// norm of order ord of each line (as Norm), in x's layout and with x's mask.
// Masked-out positions are 0 / max(norm, eps): 0 unless the norm is NaN. A
// fully masked line has norm 0 (or +Inf for ord < 0) and is 0 throughout.
// torch's default eps is 1e-12.
func Normalize[T Float, X Input[T]](x X, ord float64, dim int, eps float64, acc Acc) (X, error) {
	if math.IsNaN(ord) {
		var zero X
		return zero, errorf(ErrArg, "normalize", "ord", "NaN")
	}
	return scan("normalize", x, dim, acc, normalizeFn[T](acc, ord, eps))
}

func normalizeFn[T Float](acc Acc, ord, eps float64) lineFn[T] {
	if acc == AccFloat64 {
		norm := func(xs []T, ks []bool) float64 { return normBlock[T, float64](xs, ks, ord) }
		return func(xs []T, ks []bool, ys []T) { normalizeLine(xs, ks, ys, eps, norm) }
	}
	norm := func(xs []T, ks []bool) T { return normBlock[T, T](xs, ks, ord) }
	return func(xs []T, ks []bool, ys []T) { normalizeLine(xs, ks, ys, eps, norm) }
}

// LogAddExp returns log(exp(a) + exp(b)) element by element, a masked-out
// element counting as -Inf (the identity: log(exp(a) + 0) = a). a and b must
// have the same shape and layout (*Tensor, *COO or *CSR). The output mask is
// a's mask or b's: an element is kept when either operand's is, and an
// element masked out in both is -Inf. For sparse inputs the result's entries
// are the union of both operands' entries.
func LogAddExp[T Float, X Input[T]](a, b X, acc Acc) (X, error) {
	const op = "logaddexp"
	var zero X
	as, ad, asp, err := inputOf[T](op, a)
	if err != nil {
		return zero, err
	}
	bs, bd, bsp, err := inputOf[T](op, b)
	if err != nil {
		return zero, err
	}
	if acc != AccData && acc != AccFloat64 {
		return zero, errorf(ErrArg, op, "acc", "unknown accumulation type %d", int(acc))
	}
	if (ad == nil) != (bd == nil) {
		return zero, errorf(ErrArg, op, "b", "layouts differ")
	}
	if !slices.Equal(as, bs) {
		return zero, errorf(ErrShape, op, "b", "shape %v differs from a's %v", bs, as)
	}
	f := logAddExp[T]
	if acc == AccFloat64 {
		f = func(x, y T) T { return T(logAddExp(float64(x), float64(y))) }
	}
	if ad != nil {
		return any(logAddExpDense(as, ad, bd, f)).(X), nil
	}
	return sparseLike(op, a, b, logAddExpSparse(as, asp, bsp, f))
}

// logAddExpDense is LogAddExp of dense a and b of shape sh, through f.
func logAddExpDense[T Float](sh []int, a, b *Tensor[T], f func(x, y T) T) *Tensor[T] {
	ninf := inf[T](-1)
	out, mask := make([]T, len(a.data)), make([]bool, len(a.data))
	for i := range out {
		x, y := a.data[i], b.data[i]
		if !a.mask[i] {
			x = ninf
		}
		if !b.mask[i] {
			y = ninf
		}
		out[i] = f(x, y)
		mask[i] = a.mask[i] || b.mask[i]
	}
	return &Tensor[T]{shape: slices.Clone(sh), data: out, mask: mask}
}

// logAddExpSparse is LogAddExp of the entries of sparse a and b of shape
// sh, through f: it merges the two sorted entry lists.
func logAddExpSparse[T Float](sh []int, a, b *coords[T], f func(x, y T) T) coords[T] {
	ninf := inf[T](-1)
	c := coords[T]{shape: slices.Clone(sh)}
	i, j := 0, 0
	for i < len(a.lin) || j < len(b.lin) {
		x, y, l := ninf, ninf, 0
		ka, kb := false, false
		switch {
		case j == len(b.lin) || (i < len(a.lin) && a.lin[i] < b.lin[j]):
			l, ka = a.lin[i], a.mask[i]
			x = a.vals[i]
			i++
		case i == len(a.lin) || b.lin[j] < a.lin[i]:
			l, kb = b.lin[j], b.mask[j]
			y = b.vals[j]
			j++
		default:
			l, ka, kb = a.lin[i], a.mask[i], b.mask[j]
			x, y = a.vals[i], b.vals[j]
			i++
			j++
		}
		if !ka {
			x = ninf
		}
		if !kb {
			y = ninf
		}
		c.lin = append(c.lin, l)
		c.vals = append(c.vals, f(x, y))
		c.mask = append(c.mask, ka || kb)
	}
	return c
}

// sparseLike returns entries c in the sparse layout of a (*COO or *CSR),
// which b must share.
func sparseLike[T Float, X Input[T]](op string, a, b X, c coords[T]) (X, error) {
	var zero X
	switch any(a).(type) {
	case *COO[T]:
		if _, ok := any(b).(*COO[T]); !ok {
			return zero, errorf(ErrArg, op, "b", "layouts differ")
		}
		return any(&COO[T]{c: c}).(X), nil
	default:
		if _, ok := any(b).(*CSR[T]); !ok {
			return zero, errorf(ErrArg, op, "b", "layouts differ")
		}
		r, err := csrFromCoords(op, c)
		if err != nil {
			return zero, err
		}
		return any(r).(X), nil
	}
}
