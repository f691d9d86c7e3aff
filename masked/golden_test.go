package masked

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

//go:generate /usr/bin/python3 testdata/gen_golden.py

// The golden files hold cases computed by torch.masked (PyTorch 1.13) with
// testdata/gen_golden.py; see the script for how the cases are drawn and where
// the expected values come from plain torch instead.
//
// Comparison rules:
//   - the output shape and the output mask must be equal;
//   - values where the output mask is true must be equal (NaN matching NaN) —
//     exactly for the selections (amax, amin, argmax, argmin, median, norm of
//     order 0 or ±Inf) and wherever the data kind makes the arithmetic exact
//     (int/pow2 data for sum, mean, cumsum and norm of order 1; pow2 for prod and
//     cumprod), within the tolerance below otherwise, since torch's summation
//     order and its float32 exp/log/pow differ from ours;
//   - values where the output mask is false are compared too where torch
//     defines them the way this package documents: the identities and NaNs of
//     the reductions (not argmax/argmin, where torch returns an arbitrary 0),
//     the running values of cumsum/cumprod, normalize's zeros, logaddexp's
//     -Inf; for softmax, softmin and log_softmax where torch's value is not
//     NaN (torch spreads a NaN line sum over the masked-out positions too; this
//     package keeps them at 0 / -Inf).
//
// Tolerance (not exact cases): |got − want| ≤ rtol·|want| + atol·scale, with
// scale the largest finite |x| among the case's kept inputs (at least 1);
// float32 results: rtol = 5e-7 (about 4 float32 ulps); float64 results: 2e-15
// (about 9 float64 ulps). With AccFloat64 on float32 data the result is
// rounded to float32 once, so the float32 tolerance applies. The largest
// errors seen on the committed cases are about 1.5 ulps (prod, norm, var).
const (
	rtol32 = 5e-7
	rtol64 = 2e-15
)

// jfloat reads a JSON number or "NaN", "Inf", "-Inf".
type jfloat float64

func (f *jfloat) UnmarshalJSON(b []byte) error {
	switch s := string(b); s {
	case `"NaN"`:
		*f = jfloat(math.NaN())
	case `"Inf"`:
		*f = jfloat(math.Inf(1))
	case `"-Inf"`:
		*f = jfloat(math.Inf(-1))
	default:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		*f = jfloat(v)
	}
	return nil
}

type goldenCase struct {
	Op         string   `json:"op"`
	Dtype      string   `json:"dtype"`
	Kind       string   `json:"kind"`
	Specials   bool     `json:"specials"`
	Shape      []int    `json:"shape"`
	Data       []jfloat `json:"data"`
	MaskShape  []int    `json:"mask_shape"`
	Mask       []int    `json:"mask"`
	Data2      []jfloat `json:"data2"`
	Mask2Shape []int    `json:"mask2_shape"`
	Mask2      []int    `json:"mask2"`
	Acc        *string  `json:"acc"`
	Dims       []int    `json:"dims"`
	KeepDim    bool     `json:"keepdim"`
	Ord        *jfloat  `json:"ord"`
	Correction int      `json:"correction"`
	Eps        float64  `json:"eps"`
	Dim        int      `json:"dim"`
	OutShape   []int    `json:"out_shape"`
	Out        []jfloat `json:"out"`
	OutMask    []int    `json:"out_mask"`
	Source     string   `json:"source"`
}

var goldenOps = []string{
	"sum", "prod", "mean", "amax", "amin", "argmax", "argmin", "median", "var", "std", "norm",
	"logsumexp", "cumsum", "cumprod", "softmax", "log_softmax", "softmin", "normalize", "logaddexp",
}

func loadGolden(t *testing.T, op string) []goldenCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", op+".json"))
	require.NoError(t, err)
	var cases []goldenCase
	require.NoError(t, json.Unmarshal(b, &cases))
	require.NotEmpty(t, cases)
	return cases
}

func TestGolden(t *testing.T) {
	for _, op := range goldenOps {
		t.Run(op, func(t *testing.T) {
			for i, c := range loadGolden(t, op) {
				name := fmt.Sprintf("%d_%s_%s", i, c.Dtype, c.Kind)
				t.Run(name, func(t *testing.T) {
					require.Equal(t, op, c.Op)
					switch c.Dtype {
					case "float32":
						checkGolden[float32](t, c)
					case "float64":
						checkGolden[float64](t, c)
					default:
						t.Fatalf("dtype %q", c.Dtype)
					}
				})
			}
		})
	}
}

func bools(v []int) []bool {
	if v == nil {
		return nil
	}
	b := make([]bool, len(v))
	for i, x := range v {
		b[i] = x != 0
	}
	return b
}

func floats[T Float](v []jfloat) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}

// runGolden runs the case's operation and returns its shape, values (as
// float64) and mask.
func runGolden[T Float](t *testing.T, c goldenCase) ([]int, []float64, []bool) {
	t.Helper()
	x, err := New(floats[T](c.Data), c.Shape, bools(c.Mask), c.MaskShape)
	require.NoError(t, err)
	acc := AccData
	if c.Acc != nil {
		require.Equal(t, "float64", *c.Acc)
		acc = AccFloat64
	}
	o := Options{Dims: c.Dims, KeepDim: c.KeepDim, Acc: acc}
	var r *Tensor[T]
	switch c.Op {
	case "sum":
		r, err = Sum(x, o)
	case "prod":
		r, err = Prod(x, o)
	case "mean":
		r, err = Mean(x, o)
	case "amax":
		r, err = Amax(x, o)
	case "amin":
		r, err = Amin(x, o)
	case "median":
		r, err = Median(x, o)
	case "var":
		r, err = Var(x, c.Correction, o)
	case "std":
		r, err = Std(x, c.Correction, o)
	case "norm":
		r, err = Norm(x, float64(*c.Ord), o)
	case "logsumexp":
		r, err = LogSumExp(x, o)
	case "argmax", "argmin":
		f := Argmax[T]
		if c.Op == "argmin" {
			f = Argmin[T]
		}
		ix, err := f(x, o)
		require.NoError(t, err)
		vals := make([]float64, len(ix.Data()))
		for i, v := range ix.Data() {
			vals[i] = float64(v)
		}
		return ix.Shape(), vals, ix.Mask()
	case "cumsum":
		r, err = Cumsum(x, c.Dim, acc)
	case "cumprod":
		r, err = Cumprod(x, c.Dim, acc)
	case "softmax":
		r, err = Softmax(x, c.Dim, acc)
	case "log_softmax":
		r, err = LogSoftmax(x, c.Dim, acc)
	case "softmin":
		r, err = Softmin(x, c.Dim, acc)
	case "normalize":
		r, err = Normalize(x, float64(*c.Ord), c.Dim, c.Eps, acc)
	case "logaddexp":
		var y *Tensor[T]
		y, err = New(floats[T](c.Data2), c.Shape, bools(c.Mask2), c.Mask2Shape)
		require.NoError(t, err)
		r, err = LogAddExp(x, y, acc)
	default:
		t.Fatalf("op %q", c.Op)
	}
	require.NoError(t, err)
	vals := make([]float64, r.Len())
	for i, v := range r.Data() {
		vals[i] = float64(v)
	}
	return r.Shape(), vals, r.Mask()
}

// goldenExact reports whether the case must match exactly.
func goldenExact(c goldenCase) bool {
	exactData := c.Kind == "int" || c.Kind == "pow2" || c.Kind == "fixed:docs"
	switch c.Op {
	case "amax", "amin", "argmax", "argmin", "median":
		return true
	case "norm":
		o := float64(*c.Ord)
		return o == 0 || math.IsInf(o, 0) || (o == 1 && exactData)
	case "sum", "mean", "cumsum":
		return exactData
	case "prod", "cumprod":
		return c.Kind == "pow2" || c.Kind == "fixed:docs"
	}
	return false
}

// compareMaskedOut reports whether the value at a masked-out output position
// is compared, want being torch's value there.
func compareMaskedOut(op string, want float64) bool {
	switch op {
	case "argmax", "argmin":
		return false
	case "softmax", "softmin", "log_softmax":
		return !math.IsNaN(want)
	}
	return true
}

func checkGolden[T Float](t *testing.T, c goldenCase) {
	shape, got, gotMask := runGolden[T](t, c)
	if len(shape) == 0 {
		shape = []int{}
	}
	require.Equal(t, c.OutShape, shape, "shape (%s)", c.Source)
	require.Equal(t, bools(c.OutMask), gotMask, "output mask (%s)", c.Source)
	require.Len(t, got, len(c.Out))
	exact := goldenExact(c)
	rtol := rtol32
	if _, is64 := any(T(0)).(float64); is64 {
		rtol = rtol64
	}
	scale := 1.0
	inMask, err := broadcastMask("test", bools(c.Mask), c.MaskShape, c.Shape)
	require.NoError(t, err)
	for i, v := range c.Data {
		if inMask[i] && !math.IsInf(float64(v), 0) && !math.IsNaN(float64(v)) {
			scale = max(scale, math.Abs(float64(v)))
		}
	}
	var bad []string
	for i := range got {
		want := float64(T(c.Out[i])) // torch's float64 result (acc float64) rounded to T
		if !gotMask[i] && !compareMaskedOut(c.Op, want) {
			continue
		}
		if !closeTo(got[i], want, exact, rtol, scale) {
			bad = append(bad, fmt.Sprintf("[%d] got %v want %v (mask %v)", i, got[i], want, gotMask[i]))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%s dims=%v keepdim=%v dim=%d ord=%v acc=%v shape=%v mask shape=%v (%s):\n%s",
			c.Op, c.Dims, c.KeepDim, c.Dim, c.Ord, c.Acc, c.Shape, c.MaskShape, c.Source, strings.Join(bad, "\n"))
	}
}

func closeTo(got, want float64, exact bool, rtol, scale float64) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	if got == want {
		return true
	}
	if exact || math.IsInf(want, 0) || math.IsInf(got, 0) {
		return false
	}
	return math.Abs(got-want) <= rtol*math.Abs(want)+rtol*scale
}

// TestGoldenCoverage checks that every operation has golden cases with
// broadcast masks, fully masked outputs, special values in kept and masked-out
// positions, both dtypes and both accumulation types where they matter.
func TestGoldenCoverage(t *testing.T) {
	for _, op := range goldenOps {
		cases := loadGolden(t, op)
		var broadcast, fullyMasked, specials, f32, f64, acc64, keepdim bool
		for _, c := range cases {
			broadcast = broadcast || !slices.Equal(c.MaskShape, c.Shape)
			fullyMasked = fullyMasked || slices.Contains(c.OutMask, 0)
			specials = specials || c.Specials
			f32 = f32 || c.Dtype == "float32"
			f64 = f64 || c.Dtype == "float64"
			acc64 = acc64 || c.Acc != nil
			keepdim = keepdim || c.KeepDim
		}
		require.True(t, broadcast && fullyMasked && specials && f32 && f64, op)
		if op != "amax" && op != "amin" && op != "argmax" && op != "argmin" && op != "median" {
			require.True(t, acc64, "%s: no AccFloat64 case", op)
		}
	}
}
