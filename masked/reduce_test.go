package masked

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Expected values in this file are derived by hand (the derivation is in the
// comments or is the arithmetic written out in the table).

var (
	nan64  = math.NaN()
	pinf   = math.Inf(1)
	ninf   = math.Inf(-1)
	sqrt10 = math.Sqrt(10)
	sqrt5  = math.Sqrt(5)
)

func mustNew(t *testing.T, data []float64, shape []int, mask []bool, mshape []int) *Tensor[float64] {
	t.Helper()
	x, err := New(data, shape, mask, mshape)
	require.NoError(t, err)
	return x
}

// sameFloats compares element by element: NaN equals NaN, infinities must be
// equal, others within rel·max(|want|, 1) (rel 0: exactly; the sign of zero
// is not compared).
func sameFloats[T Float](t *testing.T, want []float64, got []T, rel float64, msg ...any) {
	t.Helper()
	require.Len(t, got, len(want), msg...)
	for i, w := range want {
		g := float64(got[i])
		switch {
		case math.IsNaN(w):
			assert.True(t, math.IsNaN(g), "[%d] want NaN got %v %v", i, g, msg)
		case math.IsInf(w, 0) || rel == 0:
			assert.Equal(t, w, g, "[%d] %v", i, msg)
		default:
			assert.InDelta(t, w, g, rel*math.Max(math.Abs(w), 1), "[%d] %v", i, msg)
		}
	}
}

type reduceFn func(Input[float64], Options) (*Tensor[float64], error)

func normOp(ord float64) reduceFn {
	return func(x Input[float64], o Options) (*Tensor[float64], error) { return Norm(x, ord, o) }
}

func varOp(c int) reduceFn {
	return func(x Input[float64], o Options) (*Tensor[float64], error) { return Var(x, c, o) }
}

func stdOp(c int) reduceFn {
	return func(x Input[float64], o Options) (*Tensor[float64], error) { return Std(x, c, o) }
}

func argOp(f func(Input[float64], Options) (*Indices, error)) reduceFn {
	return func(x Input[float64], o Options) (*Tensor[float64], error) {
		r, err := f(x, o)
		if err != nil {
			return nil, err
		}
		v := make([]float64, len(r.Data()))
		for i, d := range r.Data() {
			v[i] = float64(d)
		}
		return &Tensor[float64]{shape: r.Shape(), data: v, mask: r.Mask()}, nil
	}
}

type reduceCase struct {
	name      string
	x         *Tensor[float64]
	o         Options
	op        reduceFn
	want      []float64
	wantMask  []bool
	wantShape []int
	rel       float64 // 0: exact
}

func runReduceCases(t *testing.T, cases []reduceCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := c.op(c.x, c.o)
			require.NoError(t, err)
			sameFloats(t, c.want, r.Data(), c.rel)
			assert.Equal(t, c.wantMask, r.Mask())
			if c.wantShape != nil {
				assert.Equal(t, c.wantShape, r.Shape())
			}
		})
	}
}

// TestTorchDocsExample uses the input and mask of every torch.masked
// docstring (torch/masked/_docs.py, PyTorch 1.13): input [[-3,-2,-1],[0,1,2]],
// mask [[T,F,T],[F,F,F]], dim 1. The printed outputs there are sum [-4, 0],
// prod [3, 1], amax [-1, min], amin [-3, max], argmax [2, 0], argmin [0, 0],
// mean [-2, nan], median [-3, nan], norm(2) [3.1623, 0], var [1, nan], std [1,
// nan]; row 1 is fully masked, and there this package gives its documented
// values (the float identities, -1 for argmax/argmin).
func TestTorchDocsExample(t *testing.T) {
	x := mustNew(t, []float64{-3, -2, -1, 0, 1, 2}, []int{2, 3}, []bool{true, false, true, false, false, false}, nil)
	o := Options{Dims: []int{1}}
	m := []bool{true, false}
	// logsumexp of the kept {-3, -1}: -1 + log(1 + e^-2).
	lse := -1 + math.Log1p(math.Exp(-2))
	runReduceCases(t, []reduceCase{
		{name: "sum", x: x, o: o, op: Sum[float64], want: []float64{-4, 0}, wantMask: m, wantShape: []int{2}},
		{name: "prod", x: x, o: o, op: Prod[float64], want: []float64{3, 1}, wantMask: m},
		{name: "amax", x: x, o: o, op: Amax[float64], want: []float64{-1, ninf}, wantMask: m},
		{name: "amin", x: x, o: o, op: Amin[float64], want: []float64{-3, pinf}, wantMask: m},
		{name: "argmax", x: x, o: o, op: argOp(Argmax[float64]), want: []float64{2, -1}, wantMask: m},
		{name: "argmin", x: x, o: o, op: argOp(Argmin[float64]), want: []float64{0, -1}, wantMask: m},
		{name: "mean", x: x, o: o, op: Mean[float64], want: []float64{-2, nan64}, wantMask: m},
		{name: "median", x: x, o: o, op: Median[float64], want: []float64{-3, nan64}, wantMask: m},
		{name: "norm2", x: x, o: o, op: normOp(2), want: []float64{sqrt10, 0}, wantMask: m},
		{name: "norm1", x: x, o: o, op: normOp(1), want: []float64{4, 0}, wantMask: m},
		{name: "norm0", x: x, o: o, op: normOp(0), want: []float64{2, 0}, wantMask: m},
		{name: "norm+inf", x: x, o: o, op: normOp(pinf), want: []float64{3, 0}, wantMask: m},
		{name: "norm-inf", x: x, o: o, op: normOp(ninf), want: []float64{1, pinf}, wantMask: m},
		{name: "norm-1", x: x, o: o, op: normOp(-1), want: []float64{1 / (1.0/3 + 1), pinf}, wantMask: m, rel: 1e-15},
		{name: "var", x: x, o: o, op: varOp(0), want: []float64{1, nan64}, wantMask: m},
		{name: "var_unbiased", x: x, o: o, op: varOp(1), want: []float64{2, nan64}, wantMask: m},
		{name: "std", x: x, o: o, op: stdOp(0), want: []float64{1, nan64}, wantMask: m},
		{name: "logsumexp", x: x, o: o, op: LogSumExp[float64], want: []float64{lse, ninf}, wantMask: m, rel: 1e-15},
	})

	// Scans and normalizations (docstrings: cumsum [[-3,-3,-4],[0,0,0]], cumprod
	// [[-3,-3,3],[1,1,1]], softmax [[0.1192,0,0.8808],[nan]*3], log_softmax
	// [[-2.1269,-inf,-0.1269],[nan]*3], softmin [[0.8808,0,0.1192],[nan]*3],
	// normalize [[-0.9487,0,-0.3162],[0,0,0]]).
	s1, s2 := 1/(1+math.Exp(2)), 1/(1+math.Exp(-2))
	scans := []struct {
		name string
		f    func(*Tensor[float64]) (*Tensor[float64], error)
		want []float64
		rel  float64
	}{
		{"cumsum", func(x *Tensor[float64]) (*Tensor[float64], error) { return Cumsum(x, 1, AccData) },
			[]float64{-3, -3, -4, 0, 0, 0}, 0},
		{"cumprod", func(x *Tensor[float64]) (*Tensor[float64], error) { return Cumprod(x, 1, AccData) },
			[]float64{-3, -3, 3, 1, 1, 1}, 0},
		{"softmax", func(x *Tensor[float64]) (*Tensor[float64], error) { return Softmax(x, 1, AccData) },
			[]float64{s1, 0, s2, nan64, nan64, nan64}, 1e-15},
		{"log_softmax", func(x *Tensor[float64]) (*Tensor[float64], error) { return LogSoftmax(x, -1, AccData) },
			[]float64{-3 - lse, ninf, -1 - lse, nan64, nan64, nan64}, 1e-15},
		{"softmin", func(x *Tensor[float64]) (*Tensor[float64], error) { return Softmin(x, 1, AccData) },
			[]float64{s2, 0, s1, nan64, nan64, nan64}, 1e-15},
		{"normalize", func(x *Tensor[float64]) (*Tensor[float64], error) { return Normalize(x, 2, 1, 1e-12, AccData) },
			[]float64{-3 / sqrt10, 0, -1 / sqrt10, 0, 0, 0}, 1e-15},
	}
	for _, c := range scans {
		t.Run(c.name, func(t *testing.T) {
			r, err := c.f(x)
			require.NoError(t, err)
			sameFloats(t, c.want, r.Data(), c.rel)
			assert.Equal(t, x.Mask(), r.Mask())
			assert.Equal(t, []int{2, 3}, r.Shape())
		})
	}
}

// TestIssueExamples: inputs that give the issue's examples. The torch.masked
// pages found with these outputs did not show their inputs, so the inputs are
// derived: data [[1,2,3],[4,5,6]] with mask [[T,F,T],[T,T,F]] keeps {1,3} and
// {4,5}: row sums [4, 9], means [2, 4.5], amax [3, 5], amin [1, 4]; data
// [1,2,3,4] with mask [T,F,T,T] has cumsum [1, 1, 4, 8].
func TestIssueExamples(t *testing.T) {
	x := mustNew(t, []float64{1, 2, 3, 4, 5, 6}, []int{2, 3}, []bool{true, false, true, true, true, false}, nil)
	o := Options{Dims: []int{1}}
	m := []bool{true, true}
	runReduceCases(t, []reduceCase{
		{name: "sum", x: x, o: o, op: Sum[float64], want: []float64{4, 9}, wantMask: m},
		{name: "mean", x: x, o: o, op: Mean[float64], want: []float64{2, 4.5}, wantMask: m},
		{name: "amax", x: x, o: o, op: Amax[float64], want: []float64{3, 5}, wantMask: m},
		{name: "amin", x: x, o: o, op: Amin[float64], want: []float64{1, 4}, wantMask: m},
	})
	c, err := Cumsum(mustNew(t, []float64{1, 2, 3, 4}, []int{4}, []bool{true, false, true, true}, nil), 0, AccData)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 1, 4, 8}, c.Data())
}

// arange60 is 0..59 as a [3,4,5] tensor: element (i,j,k) = 20i + 5j + k.
func arange60() []float64 {
	d := make([]float64, 60)
	for i := range d {
		d[i] = float64(i)
	}
	return d
}

func TestBroadcastMask(t *testing.T) {
	shape := []int{3, 4, 5}
	// Mask [3,1,1] = [T,F,T]: block i covers 20i..20i+19.
	x311 := mustNew(t, arange60(), shape, []bool{true, false, true}, []int{3, 1, 1})
	// Mask [5] = [T,F,F,F,T]: keeps k = 0 and 4, i.e. the elements 5r and 5r+4.
	x5 := mustNew(t, arange60(), shape, []bool{true, false, false, false, true}, []int{5})
	// Mask [4,1] = [F,T,T,F]: keeps j = 1, 2.
	x41 := mustNew(t, arange60(), shape, []bool{false, true, true, false}, []int{4, 1})
	var amax5, amin5 []float64
	for r := range 12 {
		amax5 = append(amax5, float64(5*r+4))
		amin5 = append(amin5, float64(5*r))
	}
	all12 := make([]bool, 12)
	for i := range all12 {
		all12[i] = true
	}
	runReduceCases(t, []reduceCase{
		// sum 0..19 = 190, sum 40..59 = 990.
		{name: "311_sum", x: x311, o: Options{Dims: []int{1, 2}}, op: Sum[float64], want: []float64{190, 0, 990}, wantMask: []bool{true, false, true}, wantShape: []int{3}},
		{name: "311_mean", x: x311, o: Options{Dims: []int{-1, -2}}, op: Mean[float64], want: []float64{9.5, nan64, 49.5}, wantMask: []bool{true, false, true}},
		{name: "311_amax_keepdim", x: x311, o: Options{Dims: []int{2, 1}, KeepDim: true}, op: Amax[float64], want: []float64{19, ninf, 59}, wantMask: []bool{true, false, true}, wantShape: []int{3, 1, 1}},
		// Σ_{r<12} (5r + 5r+4) = 10·66 + 48 = 708.
		{name: "5_sum_all", x: x5, op: Sum[float64], want: []float64{708}, wantMask: []bool{true}, wantShape: []int{}},
		{name: "5_amax_last", x: x5, o: Options{Dims: []int{-1}}, op: Amax[float64], want: amax5, wantMask: all12, wantShape: []int{3, 4}},
		{name: "5_amin_last", x: x5, o: Options{Dims: []int{2}}, op: Amin[float64], want: amin5, wantMask: all12},
		// j=1: Σ_i Σ_k (20i + 5 + k) = 5·20·3 + 3·5·5 + 3·10 = 405; j=2: 300 + 150 + 30 = 480.
		{name: "41_sum_keep_dim1", x: x41, o: Options{Dims: []int{0, 2}}, op: Sum[float64], want: []float64{0, 405, 480, 0}, wantMask: []bool{false, true, true, false}, wantShape: []int{4}},
		{name: "41_sum_keepdim", x: x41, o: Options{Dims: []int{0, 2}, KeepDim: true}, op: Sum[float64], want: []float64{0, 405, 480, 0}, wantMask: []bool{false, true, true, false}, wantShape: []int{1, 4, 1}},
		// The largest kept element of column j is at (i=2, k=4): flat index 2·5+4 = 14 within (i, k).
		{name: "41_argmax_two_dims", x: x41, o: Options{Dims: []int{0, 2}}, op: argOp(Argmax[float64]), want: []float64{-1, 14, 14, -1}, wantMask: []bool{false, true, true, false}},
		{name: "41_argmin_two_dims", x: x41, o: Options{Dims: []int{2, 0}}, op: argOp(Argmin[float64]), want: []float64{-1, 0, 0, -1}, wantMask: []bool{false, true, true, false}},
		// All dims: flat index into [3,4,5]; the largest kept is 59 at 59 (j=3 is masked out: 54 at (2,2,4) = 54).
		{name: "41_argmax_all", x: x41, op: argOp(Argmax[float64]), want: []float64{54}, wantMask: []bool{true}},
	})
}

func TestMaskedOutNaNDoesNotLeak(t *testing.T) {
	// Kept: 1 and 2; masked out: NaN, +Inf, -Inf.
	x := mustNew(t, []float64{nan64, 1, pinf, 2, ninf}, []int{5}, []bool{false, true, false, true, false}, nil)
	one := []bool{true}
	runReduceCases(t, []reduceCase{
		{name: "sum", x: x, op: Sum[float64], want: []float64{3}, wantMask: one},
		{name: "prod", x: x, op: Prod[float64], want: []float64{2}, wantMask: one},
		{name: "mean", x: x, op: Mean[float64], want: []float64{1.5}, wantMask: one},
		{name: "amax", x: x, op: Amax[float64], want: []float64{2}, wantMask: one},
		{name: "amin", x: x, op: Amin[float64], want: []float64{1}, wantMask: one},
		{name: "argmax", x: x, op: argOp(Argmax[float64]), want: []float64{3}, wantMask: one},
		{name: "argmin", x: x, op: argOp(Argmin[float64]), want: []float64{1}, wantMask: one},
		{name: "median_lower", x: x, op: Median[float64], want: []float64{1}, wantMask: one},
		// mean 1.5; squared deviations 0.25 + 0.25 = 0.5.
		{name: "var", x: x, op: varOp(0), want: []float64{0.25}, wantMask: one},
		{name: "var_unbiased", x: x, op: varOp(1), want: []float64{0.5}, wantMask: one},
		{name: "std", x: x, op: stdOp(0), want: []float64{0.5}, wantMask: one},
		{name: "norm2", x: x, op: normOp(2), want: []float64{sqrt5}, wantMask: one},
		{name: "norm1", x: x, op: normOp(1), want: []float64{3}, wantMask: one},
		{name: "norm0", x: x, op: normOp(0), want: []float64{2}, wantMask: one},
		{name: "norm+inf", x: x, op: normOp(pinf), want: []float64{2}, wantMask: one},
		{name: "norm-inf", x: x, op: normOp(ninf), want: []float64{1}, wantMask: one},
		{name: "norm3", x: x, op: normOp(3), want: []float64{math.Cbrt(9)}, wantMask: one, rel: 1e-15},
		{name: "norm0.5", x: x, op: normOp(0.5), want: []float64{(1 + math.Sqrt2) * (1 + math.Sqrt2)}, wantMask: one, rel: 1e-15},
		{name: "norm-1", x: x, op: normOp(-1), want: []float64{2.0 / 3}, wantMask: one, rel: 1e-15},
		// log(e + e²) = 2 + log(1 + 1/e).
		{name: "logsumexp", x: x, op: LogSumExp[float64], want: []float64{2 + math.Log1p(math.Exp(-1))}, wantMask: one, rel: 1e-15},
	})
	lse := 2 + math.Log1p(math.Exp(-1))
	a, b := 1/(1+math.E), 1/(1+1/math.E) // e/(e+e²), e²/(e+e²)
	scans := []struct {
		name string
		f    func(*Tensor[float64]) (*Tensor[float64], error)
		want []float64
	}{
		{"cumsum", func(x *Tensor[float64]) (*Tensor[float64], error) { return Cumsum(x, 0, AccData) }, []float64{0, 1, 1, 3, 3}},
		{"cumprod", func(x *Tensor[float64]) (*Tensor[float64], error) { return Cumprod(x, 0, AccData) }, []float64{1, 1, 1, 2, 2}},
		{"softmax", func(x *Tensor[float64]) (*Tensor[float64], error) { return Softmax(x, 0, AccData) }, []float64{0, a, 0, b, 0}},
		{"softmin", func(x *Tensor[float64]) (*Tensor[float64], error) { return Softmin(x, 0, AccData) }, []float64{0, b, 0, a, 0}},
		{"log_softmax", func(x *Tensor[float64]) (*Tensor[float64], error) { return LogSoftmax(x, 0, AccData) }, []float64{ninf, 1 - lse, ninf, 2 - lse, ninf}},
		{"normalize", func(x *Tensor[float64]) (*Tensor[float64], error) { return Normalize(x, 2, 0, 1e-12, AccData) }, []float64{0, 1 / sqrt5, 0, 2 / sqrt5, 0}},
	}
	for _, c := range scans {
		t.Run(c.name, func(t *testing.T) {
			r, err := c.f(x)
			require.NoError(t, err)
			sameFloats(t, c.want, r.Data(), 1e-15)
		})
	}
}

func TestKeptSpecials(t *testing.T) {
	v := func(d ...float64) *Tensor[float64] {
		x, err := New(d, []int{len(d)}, nil, nil)
		require.NoError(t, err)
		return x
	}
	one := []bool{true}
	runReduceCases(t, []reduceCase{
		{name: "sum_inf", x: v(pinf, 1), op: Sum[float64], want: []float64{pinf}, wantMask: one},
		{name: "sum_inf_minus_inf", x: v(pinf, ninf), op: Sum[float64], want: []float64{nan64}, wantMask: one},
		{name: "mean_inf", x: v(pinf, 1), op: Mean[float64], want: []float64{pinf}, wantMask: one},
		{name: "prod_inf_zero", x: v(pinf, 0), op: Prod[float64], want: []float64{nan64}, wantMask: one},
		{name: "prod_inf_minus_inf", x: v(pinf, ninf), op: Prod[float64], want: []float64{ninf}, wantMask: one},
		{name: "amax_inf", x: v(1, pinf), op: Amax[float64], want: []float64{pinf}, wantMask: one},
		{name: "amin_minus_inf", x: v(3, ninf), op: Amin[float64], want: []float64{ninf}, wantMask: one},
		{name: "amax_all_minus_inf_kept", x: v(ninf, ninf), op: Amax[float64], want: []float64{ninf}, wantMask: one},
		{name: "argmax_all_minus_inf_kept", x: v(ninf, ninf), op: argOp(Argmax[float64]), want: []float64{0}, wantMask: one},
		{name: "argmax_inf", x: v(1, pinf, pinf), op: argOp(Argmax[float64]), want: []float64{1}, wantMask: one},
		{name: "var_inf", x: v(pinf, 1), op: varOp(0), want: []float64{nan64}, wantMask: one},
		{name: "logsumexp_inf", x: v(pinf, 1), op: LogSumExp[float64], want: []float64{pinf}, wantMask: one},
		{name: "logsumexp_all_minus_inf_kept", x: v(ninf, ninf), op: LogSumExp[float64], want: []float64{ninf}, wantMask: one},
		{name: "logsumexp_inf_minus_inf", x: v(pinf, ninf), op: LogSumExp[float64], want: []float64{pinf}, wantMask: one},
		{name: "norm2_inf", x: v(pinf, 1), op: normOp(2), want: []float64{pinf}, wantMask: one},
		{name: "norm-inf_inf", x: v(pinf, 1), op: normOp(ninf), want: []float64{1}, wantMask: one},
		{name: "norm0_inf", x: v(pinf, 0, 1), op: normOp(0), want: []float64{2}, wantMask: one},
		// A kept NaN: propagates through amax/amin/sum/norm, wins argmax/argmin,
		// is skipped by median, counts as nonzero for norm 0.
		{name: "amax_nan", x: v(1, nan64, 3, nan64), op: Amax[float64], want: []float64{nan64}, wantMask: one},
		{name: "amin_nan", x: v(1, nan64, 3, nan64), op: Amin[float64], want: []float64{nan64}, wantMask: one},
		{name: "argmax_nan", x: v(1, nan64, 3, nan64), op: argOp(Argmax[float64]), want: []float64{1}, wantMask: one},
		{name: "argmin_nan", x: v(1, nan64, 3, nan64), op: argOp(Argmin[float64]), want: []float64{1}, wantMask: one},
		{name: "median_skips_nan", x: v(1, nan64, 3, nan64), op: Median[float64], want: []float64{1}, wantMask: one},
		{name: "median_all_nan_kept", x: v(nan64, nan64), op: Median[float64], want: []float64{nan64}, wantMask: one},
		{name: "sum_nan", x: v(1, nan64), op: Sum[float64], want: []float64{nan64}, wantMask: one},
		{name: "norm0_nan", x: v(1, nan64, 3, nan64), op: normOp(0), want: []float64{4}, wantMask: one},
		{name: "norm+inf_nan", x: v(1, nan64), op: normOp(pinf), want: []float64{nan64}, wantMask: one},
		{name: "logsumexp_nan", x: v(1, nan64), op: LogSumExp[float64], want: []float64{nan64}, wantMask: one},
		// Lower median: ranks (n−1)/2 of sorted {1,2,3,4} → 2; of {5,1,3} → 3.
		{name: "median_even", x: v(4, 1, 3, 2), op: Median[float64], want: []float64{2}, wantMask: one},
		{name: "median_odd", x: v(5, 1, 3), op: Median[float64], want: []float64{3}, wantMask: one},
	})
	// Softmax over kept +Inf: NaN at kept positions, 0 at masked-out ones.
	x := mustNew(t, []float64{pinf, 1, 5}, []int{3}, []bool{true, true, false}, nil)
	r, err := Softmax(x, 0, AccData)
	require.NoError(t, err)
	sameFloats(t, []float64{nan64, nan64, 0}, r.Data(), 0)
	// Softmax of kept −Inf only: NaN (exp(−Inf − (−Inf))).
	r, err = Softmax(mustNew(t, []float64{ninf, ninf}, []int{2}, nil, nil), 0, AccData)
	require.NoError(t, err)
	sameFloats(t, []float64{nan64, nan64}, r.Data(), 0)
	// LogAddExp with infinities: log(e^∞ + e^1) = ∞, log(0 + 0) = −∞, −∞ ⊕ 3 = 3.
	a := mustNew(t, []float64{pinf, ninf, ninf}, []int{3}, nil, nil)
	b := mustNew(t, []float64{1, ninf, 3}, []int{3}, nil, nil)
	l, err := LogAddExp(a, b, AccData)
	require.NoError(t, err)
	sameFloats(t, []float64{pinf, ninf, 3}, l.Data(), 0)
}

// TestFullyMasked checks the documented value of every operation on fully
// masked slices (the package doc's table), for an all-masked tensor and for a
// dimension of size 0.
func TestFullyMasked(t *testing.T) {
	// Row 0 fully masked (holding NaN and Inf), row 1 kept.
	x := mustNew(t, []float64{nan64, pinf, ninf, 1, 2, 3}, []int{2, 3}, []bool{false, true}, []int{2, 1})
	o := Options{Dims: []int{1}}
	m := []bool{false, true}
	runReduceCases(t, []reduceCase{
		{name: "sum", x: x, o: o, op: Sum[float64], want: []float64{0, 6}, wantMask: m},
		{name: "prod", x: x, o: o, op: Prod[float64], want: []float64{1, 6}, wantMask: m},
		{name: "amax", x: x, o: o, op: Amax[float64], want: []float64{ninf, 3}, wantMask: m},
		{name: "amin", x: x, o: o, op: Amin[float64], want: []float64{pinf, 1}, wantMask: m},
		{name: "argmax", x: x, o: o, op: argOp(Argmax[float64]), want: []float64{-1, 2}, wantMask: m},
		{name: "argmin", x: x, o: o, op: argOp(Argmin[float64]), want: []float64{-1, 0}, wantMask: m},
		{name: "mean", x: x, o: o, op: Mean[float64], want: []float64{nan64, 2}, wantMask: m},
		{name: "median", x: x, o: o, op: Median[float64], want: []float64{nan64, 2}, wantMask: m},
		{name: "var", x: x, o: o, op: varOp(1), want: []float64{nan64, 1}, wantMask: m},
		{name: "std", x: x, o: o, op: stdOp(1), want: []float64{nan64, 1}, wantMask: m},
		{name: "norm2", x: x, o: o, op: normOp(2), want: []float64{0, math.Sqrt(14)}, wantMask: m},
		{name: "norm0", x: x, o: o, op: normOp(0), want: []float64{0, 3}, wantMask: m},
		{name: "norm+inf", x: x, o: o, op: normOp(pinf), want: []float64{0, 3}, wantMask: m},
		{name: "norm-inf", x: x, o: o, op: normOp(ninf), want: []float64{pinf, 1}, wantMask: m},
		{name: "norm-2", x: x, o: o, op: normOp(-2), want: []float64{pinf, 1 / math.Sqrt(1+0.25+1.0/9)}, wantMask: m, rel: 1e-15},
		{name: "logsumexp", x: x, o: o, op: LogSumExp[float64], want: []float64{ninf, 3 + math.Log(1+math.Exp(-1)+math.Exp(-2))}, wantMask: m, rel: 1e-15},
	})
	scans := []struct {
		name string
		f    func(*Tensor[float64]) (*Tensor[float64], error)
		want []float64 // row 0 only
	}{
		{"cumsum", func(x *Tensor[float64]) (*Tensor[float64], error) { return Cumsum(x, 1, AccData) }, []float64{0, 0, 0}},
		{"cumprod", func(x *Tensor[float64]) (*Tensor[float64], error) { return Cumprod(x, 1, AccData) }, []float64{1, 1, 1}},
		{"softmax", func(x *Tensor[float64]) (*Tensor[float64], error) { return Softmax(x, 1, AccData) }, []float64{nan64, nan64, nan64}},
		{"softmin", func(x *Tensor[float64]) (*Tensor[float64], error) { return Softmin(x, 1, AccData) }, []float64{nan64, nan64, nan64}},
		{"log_softmax", func(x *Tensor[float64]) (*Tensor[float64], error) { return LogSoftmax(x, 1, AccData) }, []float64{nan64, nan64, nan64}},
		{"normalize", func(x *Tensor[float64]) (*Tensor[float64], error) { return Normalize(x, 2, 1, 1e-12, AccData) }, []float64{0, 0, 0}},
		{"normalize-inf", func(x *Tensor[float64]) (*Tensor[float64], error) { return Normalize(x, ninf, 1, 1e-12, AccData) }, []float64{0, 0, 0}},
	}
	for _, c := range scans {
		t.Run(c.name, func(t *testing.T) {
			r, err := c.f(x)
			require.NoError(t, err)
			sameFloats(t, c.want, r.Data()[:3], 0)
			assert.Equal(t, []bool{false, false, false, true, true, true}, r.Mask())
		})
	}
	// Masked out in both operands: -Inf, mask false; in one: the other value.
	a := mustNew(t, []float64{nan64, 1, 2}, []int{3}, []bool{false, true, false}, nil)
	b := mustNew(t, []float64{pinf, nan64, 5}, []int{3}, []bool{false, false, true}, nil)
	l, err := LogAddExp(a, b, AccData)
	require.NoError(t, err)
	sameFloats(t, []float64{ninf, 1, 5}, l.Data(), 0)
	assert.Equal(t, []bool{false, true, true}, l.Mask())

	// A whole tensor masked out, reduced to a scalar.
	all := mustNew(t, []float64{nan64, 1}, []int{2}, []bool{false}, []int{1})
	s, err := Sum(all, Options{})
	require.NoError(t, err)
	assert.Equal(t, []float64{0}, s.Data())
	assert.Equal(t, []bool{false}, s.Mask())
	assert.Equal(t, []int{}, s.Shape())

	// A dimension of size 0: every slice is empty.
	empty := mustNew(t, nil, []int{2, 0}, nil, nil)
	runReduceCases(t, []reduceCase{
		{name: "empty_sum", x: empty, o: Options{Dims: []int{1}}, op: Sum[float64], want: []float64{0, 0}, wantMask: []bool{false, false}, wantShape: []int{2}},
		{name: "empty_amax", x: empty, o: Options{Dims: []int{1}}, op: Amax[float64], want: []float64{ninf, ninf}, wantMask: []bool{false, false}},
		{name: "empty_mean", x: empty, o: Options{Dims: []int{1}}, op: Mean[float64], want: []float64{nan64, nan64}, wantMask: []bool{false, false}},
		{name: "empty_argmax", x: empty, o: Options{Dims: []int{1}}, op: argOp(Argmax[float64]), want: []float64{-1, -1}, wantMask: []bool{false, false}},
		{name: "empty_keep", x: empty, o: Options{Dims: []int{0}}, op: Sum[float64], want: []float64{}, wantMask: []bool{}, wantShape: []int{0}},
	})
	cs, err := Cumsum(empty, 1, AccData)
	require.NoError(t, err)
	assert.Empty(t, cs.Data())
}

func TestVarianceCorrection(t *testing.T) {
	// {1,2,3,4}: mean 2.5, squared deviations 2.25+0.25+0.25+2.25 = 5.
	x := mustNew(t, []float64{1, 2, 3, 4, 99}, []int{5}, []bool{true, true, true, true, false}, nil)
	one := []bool{true}
	single := mustNew(t, []float64{7, 8}, []int{2}, []bool{true, false}, nil)
	runReduceCases(t, []reduceCase{
		{name: "c0", x: x, op: varOp(0), want: []float64{1.25}, wantMask: one},
		{name: "c1", x: x, op: varOp(1), want: []float64{5.0 / 3}, wantMask: one, rel: 1e-15},
		{name: "c2", x: x, op: varOp(2), want: []float64{2.5}, wantMask: one},
		{name: "c4_divides_by_zero", x: x, op: varOp(4), want: []float64{pinf}, wantMask: one},
		{name: "c9_clamped", x: x, op: varOp(9), want: []float64{pinf}, wantMask: one},
		{name: "single_c0", x: single, op: varOp(0), want: []float64{0}, wantMask: one},
		{name: "single_c1", x: single, op: varOp(1), want: []float64{nan64}, wantMask: one},
		{name: "std_c1", x: x, op: stdOp(1), want: []float64{math.Sqrt(5.0 / 3)}, wantMask: one, rel: 1e-15},
	})
}

func TestAccFloat64(t *testing.T) {
	// 1 + 2^-24 + 2^-24: in float32 each addition of 2^-24 to 1 is a tie that
	// rounds back to 1; in float64 the sum is 1 + 2^-23, a float32.
	tiny := float32(math.Ldexp(1, -24))
	x, err := New([]float32{1, tiny, tiny}, []int{3}, nil, nil)
	require.NoError(t, err)
	s, err := Sum(x, Options{})
	require.NoError(t, err)
	assert.Equal(t, []float32{1}, s.Data())
	s, err = Sum(x, Options{Acc: AccFloat64})
	require.NoError(t, err)
	assert.Equal(t, []float32{1 + 2*tiny}, s.Data())
	c, err := Cumsum(x, 0, AccData)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 1, 1}, c.Data())
	c, err = Cumsum(x, 0, AccFloat64)
	require.NoError(t, err)
	// 1 + 2^-24 rounds to 1 (tie to even) when stored; 1 + 2^-23 is exact.
	assert.Equal(t, []float32{1, 1, 1 + 2*tiny}, c.Data())
	_, err = Sum(x, Options{Acc: Acc(7)})
	assert.ErrorIs(t, err, ErrArg)
	_, err = Cumsum(x, 0, Acc(-1))
	assert.ErrorIs(t, err, ErrArg)
	assert.Equal(t, "float64", AccFloat64.String())
	assert.Equal(t, "data", AccData.String())
	assert.Equal(t, "Acc(7)", Acc(7).String())
}

func TestScalarAndDims(t *testing.T) {
	s := mustNew(t, []float64{5}, nil, []bool{true}, nil)
	for _, dims := range [][]int{nil, {0}, {-1}} {
		r, err := Sum(s, Options{Dims: dims})
		require.NoError(t, err)
		assert.Equal(t, []float64{5}, r.Data())
		assert.Equal(t, []int{}, r.Shape())
	}
	_, err := Sum(s, Options{Dims: []int{1}})
	assert.ErrorIs(t, err, ErrDim)
	c, err := Cumsum(s, 0, AccData)
	require.NoError(t, err)
	assert.Equal(t, []float64{5}, c.Data())

	x := mustNew(t, make([]float64, 24), []int{2, 3, 4}, nil, nil)
	r, err := Sum(x, Options{Dims: []int{2, 0}, KeepDim: true})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 3, 1}, r.Shape())
	r, err = Sum(x, Options{Dims: []int{-2}})
	require.NoError(t, err)
	assert.Equal(t, []int{2, 4}, r.Shape())
	for _, dims := range [][]int{{3}, {-4}, {0, 0}, {1, -2}} {
		_, err = Sum(x, Options{Dims: dims})
		assert.ErrorIs(t, err, ErrDim, "%v", dims)
		var e *Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, "sum", e.Op)
		assert.Equal(t, "dims", e.Arg)
	}
	_, err = Softmax(x, 3, AccData)
	assert.ErrorIs(t, err, ErrDim)
}

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		data   []float64
		shape  []int
		mask   []bool
		mshape []int
		kind   error
	}{
		{"data length", make([]float64, 5), []int{2, 3}, nil, nil, ErrShape},
		{"negative size", nil, []int{-1}, nil, nil, ErrShape},
		{"mask length", make([]float64, 6), []int{2, 3}, make([]bool, 5), nil, ErrShape},
		{"mask rank", make([]float64, 6), []int{2, 3}, make([]bool, 6), []int{1, 2, 3}, ErrShape},
		{"mask not broadcastable", make([]float64, 6), []int{2, 3}, make([]bool, 2), []int{2}, ErrShape},
		{"mask length for its shape", make([]float64, 6), []int{2, 3}, make([]bool, 2), []int{3}, ErrShape},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.data, c.shape, c.mask, c.mshape)
			require.ErrorIs(t, err, c.kind)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "New", e.Op)
			assert.Contains(t, err.Error(), "masked: New: ")
		})
	}
	var zeroT Tensor[float32]
	_, err := Sum(&zeroT, Options{})
	assert.ErrorIs(t, err, ErrShape)
	_, err = Norm(&zeroT, pinf, Options{})
	assert.ErrorIs(t, err, ErrShape)
	_, err = Cumsum(&zeroT, 0, AccData)
	assert.ErrorIs(t, err, ErrShape)
	_, err = LogAddExp(&zeroT, &zeroT, AccData)
	assert.ErrorIs(t, err, ErrShape)
	var zeroCOO COO[float32]
	s, err := Sum(&zeroCOO, Options{})
	require.NoError(t, err)
	assert.Equal(t, []bool{false}, s.Mask())
	var zeroCSR CSR[float32]
	_, err = Softmax(&zeroCSR, 0, AccData)
	assert.ErrorIs(t, err, ErrShape)
	var nilT *Tensor[float64]
	_, err = Sum[float64](nilT, Options{})
	assert.ErrorIs(t, err, ErrArg)
	_, err = Sum[float64](nil, Options{})
	assert.ErrorIs(t, err, ErrArg)
	_, err = Softmax(nilT, 0, AccData)
	assert.ErrorIs(t, err, ErrArg)
	_, err = Norm(mustNew(t, []float64{1}, []int{1}, nil, nil), nan64, Options{})
	assert.ErrorIs(t, err, ErrArg)
	a := mustNew(t, []float64{1, 2}, []int{2}, nil, nil)
	_, err = LogAddExp(a, mustNew(t, []float64{1, 2}, []int{1, 2}, nil, nil), AccData)
	assert.ErrorIs(t, err, ErrShape)
	assert.True(t, errors.Is(err, ErrShape))
}

func TestTensorAccessors(t *testing.T) {
	x := mustNew(t, []float64{1, 2, 3, 4, 5, 6}, []int{2, 3}, []bool{true, false, true}, []int{3})
	assert.Equal(t, []int{2, 3}, x.Shape())
	assert.Equal(t, 6, x.Len())
	assert.Equal(t, []bool{true, false, true, true, false, true}, x.Mask())
	v, keep, ok := x.At(1, 1)
	assert.Equal(t, 5.0, v)
	assert.False(t, keep)
	assert.True(t, ok)
	_, _, ok = x.At(2, 0)
	assert.False(t, ok)
	_, _, ok = x.At(0)
	assert.False(t, ok)
	assert.Equal(t, "[[1 -- 3] [4 -- 6]]", x.String())
	assert.Equal(t, "7", mustNew(t, []float64{7}, nil, nil, nil).String())
	// The shape is copied, the data shared.
	x.Shape()[0] = 9
	assert.Equal(t, []int{2, 3}, x.Shape())

	f32, err := New([]float32{0.1}, []int{1}, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "[0.1]", f32.String())

	assert.True(t, IsTensor(x))
	assert.True(t, IsTensor(*x))
	assert.True(t, IsTensor(f32))
	assert.True(t, IsTensor(x.ToCOO()))
	csr, err := x.ToCSR()
	require.NoError(t, err)
	assert.True(t, IsTensor(csr))
	assert.False(t, IsTensor([]float64{1}))
	assert.False(t, IsTensor(nil))
	assert.False(t, IsTensor(3.0))

	ix, err := Argmax(x, Options{Dims: []int{1}})
	require.NoError(t, err)
	assert.Equal(t, "[2 2]", ix.String())
	assert.Equal(t, []int{2}, ix.Shape())
}
