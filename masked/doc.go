// Package masked holds masked tensors and the reductions, scans and
// normalizations that ignore masked-out elements, in the semantics of
// torch.masked (PyTorch 1.13).
//
// A [Tensor] is data of any rank (float32 or float64) with a boolean mask of
// the same shape: true keeps an element, false masks it out. [New] broadcasts
// a smaller mask to the data's shape ([3,1,1] or [5] against [3,4,5]). [COO]
// and [CSR] are the sparse layouts: specified entries with their values and
// mask bits sharing one set of indices, unspecified elements masked out.
// [IsTensor] tells whether a value is one of them.
//
// # Operations
//
// Reductions take an [Input] (a *Tensor, *COO or *CSR) and [Options] (the
// dimensions to reduce, keepdim, the accumulation type) and return a dense
// *Tensor whose mask is true where the reduced slice holds at least one kept
// element: the any of the broadcast mask over the reduced dimensions, as
// torch.masked defines it. They are [Sum], [Prod], [Mean], [Amax], [Amin],
// [Argmax] and [Argmin] (which return [Indices]), [Median], [Var] and [Std]
// (with a correction: 0 is torch's unbiased=False, 1 unbiased=True), [Norm]
// (any order, ±Inf and 0 included) and [LogSumExp].
//
// Scans and normalizations along one dimension return the input's layout with
// its mask: [Cumsum], [Cumprod], [Softmax], [LogSoftmax], [Softmin],
// [Normalize]; [LogAddExp] is element-wise, kept where either operand is.
//
// Each has a slice form ([SumSlice], [AmaxSlice], [NormSlice], [CumsumSlice],
// ...) over one plain slice and a keep mask, the form scale selection uses;
// both forms run the same block kernels. [NormSlice] with order +Inf (the
// largest kept |x|, the block amax of scaling) and [Norm] of order +Inf over
// trailing dimensions run the kernels package's masked absolute maximum for
// float32 data.
//
// Masked-out elements are never read: a NaN or an infinity there cannot leak
// into a result.
//
// # Fully masked slices
//
// torch.masked leaves the value of a fully masked slice undefined (its output
// mask is false). This package defines it: the identity of the reduction where
// there is one, NaN where there is none. The values equal what torch 1.13
// computes, except for Argmax/Argmin (torch gives index 0, which points at a
// masked-out element).
//
//	operation       fully masked value                  notes
//	Sum             0                                   identity
//	Prod            1                                   identity
//	Amax            -Inf                                identity; a kept NaN gives NaN
//	Amin            +Inf                                identity; a kept NaN gives NaN
//	Argmax, Argmin  -1                                  no element to point at; a kept NaN wins
//	Mean            NaN                                 0/0, no identity
//	Median          NaN                                 no identity; kept NaNs are skipped (nanmedian)
//	Var, Std        NaN                                 0/0; also NaN when count ≤ correction
//	Norm            0 (ord ≥ 0), +Inf (ord < 0)         identity of max|x| / power sum; min|x| for -Inf
//	LogSumExp       -Inf                                identity (log 0)
//	Cumsum          0 throughout                        masked-out positions hold the running sum
//	Cumprod         1 throughout                        masked-out positions hold the running product
//	Softmax         NaN throughout                      masked-out positions of other lines are 0
//	Softmin         NaN throughout                      masked-out positions of other lines are 0
//	LogSoftmax      NaN throughout                      masked-out positions of other lines are -Inf
//	Normalize       0 throughout                        0/max(norm, eps); masked-out positions 0 too
//	LogAddExp       -Inf (masked out in both)           masked out in one: the other operand
//
// # Differences from torch 1.13
//
// Besides the fully masked argmax, this package departs from torch.masked 1.13
// in three places, each a torch defect: Norm and Normalize of a negative finite
// order (torch's masked norm lets masked-out elements count as zeros, whose
// |0|^p is +Inf, so any slice with a masked-out element gets norm 0);
// Argmax (Argmin) of a slice whose kept elements are all -Inf (+Inf) after a
// masked-out one (torch fills masked-out elements with -Inf (+Inf) and picks
// the first, masked-out one); and the masked-out positions of a Softmax,
// Softmin or LogSoftmax line whose kept elements make the line NaN (torch
// spreads the NaN there, this package keeps 0 or -Inf). Median, Argmax and
// Argmin also reduce several dimensions at once (torch.masked takes one).
//
// # Accumulation and exactness
//
// With [AccData] (the default) sums, products and the like accumulate in the
// data's type, as torch.masked does without a dtype; [AccFloat64] accumulates
// float32 data in float64 and rounds once. The selections (Amax, Amin, Argmax,
// Argmin, Median, Norm of order ±Inf or 0) are exact. Sums and products are
// exact when every partial result is representable; otherwise they round, and
// since torch's summation order differs, a float32 sum may differ from torch's
// in the last bits. Exponentials, logarithms, powers and square roots are
// computed in float64 and rounded. Sums use four accumulators, assigned by
// position in the slice, so a sparse input, whose slices hold only the
// specified elements, may round differently from its dense equivalent.
package masked
