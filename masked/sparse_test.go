package masked

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCOOBasics(t *testing.T) {
	// [[0, 5, --], [7, --, 9]] with (0,0) specified-and-kept 0, (1,1)
	// specified but masked out, (0,2) unspecified; entries out of order.
	c, err := NewCOO([]int{2, 3},
		[][]int{{1, 0, 1, 0, 1}, {2, 1, 0, 0, 1}},
		[]float64{9, 5, 7, 0, 100}, []bool{true, true, true, true, false})
	require.NoError(t, err)
	assert.Equal(t, 5, c.NNZ())
	assert.Equal(t, []int{2, 3}, c.Shape())
	assert.Equal(t, [][]int{{0, 0, 1, 1, 1}, {0, 1, 0, 1, 2}}, c.Indices())
	assert.Equal(t, []float64{0, 5, 7, 100, 9}, c.Values())
	assert.Equal(t, []bool{true, true, true, false, true}, c.Mask())
	d := c.ToDense()
	assert.Equal(t, []float64{0, 5, 0, 7, 100, 9}, d.Data())
	assert.Equal(t, []bool{true, true, false, true, false, true}, d.Mask())
	assert.Equal(t, "[[0 5 --] [7 -- 9]]", d.String())

	s, err := Sum(c, Options{Dims: []int{1}})
	require.NoError(t, err)
	assert.Equal(t, []float64{5, 16}, s.Data())
	assert.Equal(t, []bool{true, true}, s.Mask())
	a, err := Argmax(c, Options{Dims: []int{0}})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 0, 1}, a.Data())

	// Dense → COO keeps the kept elements only.
	back := d.ToCOO()
	assert.Equal(t, 4, back.NNZ())
	assert.Equal(t, []float64{0, 5, 7, 9}, back.Values())
	assert.Equal(t, d.Data()[:4], back.ToDense().Data()[:4])

	csr, err := c.ToCSR()
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 5}, csr.CrowIndices())
	assert.Equal(t, []int{0, 1, 0, 1, 2}, csr.ColIndices())
	assert.Equal(t, c.Values(), csr.Values())
	assert.Equal(t, c.Mask(), csr.Mask())
	assert.Equal(t, d.Data(), csr.ToDense().Data())
	assert.Equal(t, c.Indices(), csr.ToCOO().Indices())

	// A nil mask keeps every specified entry; a rank-3 COO.
	c3, err := NewCOO([]int{2, 2, 2}, [][]int{{1}, {0}, {1}}, []float64{4}, nil)
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, c3.Mask())
	_, err = c3.ToCSR()
	assert.ErrorIs(t, err, ErrShape)
	m, err := Amax(c3, Options{Dims: []int{0, 2}})
	require.NoError(t, err)
	assert.Equal(t, []float64{4, math.Inf(-1)}, m.Data())
	assert.Equal(t, []bool{true, false}, m.Mask())
}

func TestCSRBasics(t *testing.T) {
	// Row 0: columns 2, 0 (out of order); row 1: empty; row 2: column 1 masked out.
	c, err := NewCSR([]int{3, 3}, []int{0, 2, 2, 3}, []int{2, 0, 1}, []float32{3, 1, 8}, []bool{true, true, false})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 2, 3}, c.CrowIndices())
	assert.Equal(t, []int{0, 2, 1}, c.ColIndices())
	assert.Equal(t, []float32{1, 3, 8}, c.Values())
	assert.Equal(t, []bool{true, true, false}, c.Mask())
	assert.Equal(t, 3, c.NNZ())
	assert.Equal(t, []int{3, 3}, c.Shape())
	s, err := Sum(c, Options{Dims: []int{1}, KeepDim: true})
	require.NoError(t, err)
	assert.Equal(t, []float32{4, 0, 0}, s.Data())
	assert.Equal(t, []bool{true, false, false}, s.Mask())
	assert.Equal(t, []int{3, 1}, s.Shape())
	sm, err := Softmax(c, 1, AccData)
	require.NoError(t, err)
	// Row 0 kept {1, 3}: e/(e+e³) and e³/(e+e³); the masked-out entry of row 2 is NaN
	// (a fully masked line).
	sameFloats(t, []float64{1 / (1 + math.Exp(2)), 1 / (1 + math.Exp(-2)), nan64}, sm.Values(), 1e-7)
	assert.Equal(t, c.CrowIndices(), sm.CrowIndices())
	assert.Equal(t, c.ColIndices(), sm.ColIndices())

	d, err := New([]float32{1, 0, 2, 0}, []int{2, 2}, []bool{true, false, true, true}, nil)
	require.NoError(t, err)
	dc, err := d.ToCSR()
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 3}, dc.CrowIndices())
	assert.Equal(t, []int{0, 0, 1}, dc.ColIndices())
	assert.Equal(t, []float32{1, 2, 0}, dc.Values())
	_, err = mustNew(t, []float64{1}, []int{1}, nil, nil).ToCSR()
	assert.ErrorIs(t, err, ErrShape)
}

func TestSparseErrors(t *testing.T) {
	for _, c := range []struct {
		name    string
		shape   []int
		indices [][]int
		values  []float64
		mask    []bool
		kind    error
	}{
		{"rows", []int{2, 2}, [][]int{{0}}, []float64{1}, nil, ErrIndex},
		{"row length", []int{2, 2}, [][]int{{0}, {0, 1}}, []float64{1}, nil, ErrIndex},
		{"out of range", []int{2, 2}, [][]int{{0}, {2}}, []float64{1}, nil, ErrIndex},
		{"negative", []int{2, 2}, [][]int{{-1}, {0}}, []float64{1}, nil, ErrIndex},
		{"repeat", []int{2, 2}, [][]int{{1, 0, 1}, {1, 0, 1}}, []float64{1, 2, 3}, nil, ErrIndex},
		{"mask length", []int{2}, [][]int{{0}}, []float64{1}, []bool{true, true}, ErrShape},
		{"shape", []int{-2}, [][]int{{0}}, []float64{1}, nil, ErrShape},
		{"scalar", nil, [][]int{}, []float64{1, 2}, nil, ErrIndex},
	} {
		t.Run("COO "+c.name, func(t *testing.T) {
			_, err := NewCOO(c.shape, c.indices, c.values, c.mask)
			require.ErrorIs(t, err, c.kind)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "NewCOO", e.Op)
		})
	}
	for _, c := range []struct {
		name   string
		shape  []int
		crow   []int
		col    []int
		values []float64
		mask   []bool
		kind   error
	}{
		{"rank", []int{4}, []int{0, 0}, nil, nil, nil, ErrShape},
		{"crow length", []int{2, 2}, []int{0, 1}, []int{0}, []float64{1}, nil, ErrIndex},
		{"crow start", []int{2, 2}, []int{1, 1, 1}, []int{0}, []float64{1}, nil, ErrIndex},
		{"crow end", []int{2, 2}, []int{0, 1, 2}, []int{0}, []float64{1}, nil, ErrIndex},
		{"crow order", []int{2, 2}, []int{0, 2, 1}, []int{0}, []float64{1}, nil, ErrIndex},
		{"col range", []int{2, 2}, []int{0, 1, 1}, []int{2}, []float64{1}, nil, ErrIndex},
		{"col length", []int{2, 2}, []int{0, 1, 1}, []int{0, 1}, []float64{1}, nil, ErrIndex},
		{"col repeat", []int{2, 2}, []int{0, 2, 2}, []int{1, 1}, []float64{1, 2}, nil, ErrIndex},
		{"mask", []int{2, 2}, []int{0, 1, 1}, []int{0}, []float64{1}, []bool{}, ErrShape},
	} {
		t.Run("CSR "+c.name, func(t *testing.T) {
			_, err := NewCSR(c.shape, c.crow, c.col, c.values, c.mask)
			require.ErrorIs(t, err, c.kind)
		})
	}
	coo, err := NewCOO([]int{2}, [][]int{{0}}, []float64{1}, nil)
	require.NoError(t, err)
	csr, err := NewCSR([]int{1, 2}, []int{0, 1}, []int{0}, []float64{1}, nil)
	require.NoError(t, err)
	_, err = LogAddExp[float64, Input[float64]](coo, csr, AccData)
	assert.ErrorIs(t, err, ErrShape)
	csr2, err := coo.ToDense().ToCOO().ToDense().ToCSR()
	assert.Nil(t, csr2)
	assert.ErrorIs(t, err, ErrShape)
	_, err = LogAddExp[float64, Input[float64]](coo, mustNew(t, []float64{1, 2}, []int{2}, nil, nil), AccData)
	assert.ErrorIs(t, err, ErrArg)
	var nilCOO *COO[float64]
	_, err = Sum(nilCOO, Options{})
	assert.ErrorIs(t, err, ErrArg)
}

// randomSparse draws a random masked tensor and, independently, its sparse
// form: every kept element is specified, some masked-out ones are specified
// too (with their mask bit false and a NaN or Inf value), the rest are
// unspecified. The dense tensor has 0 and false where nothing is specified.
// Entries are listed in shuffled order.
func randomSparse(rng *rand.Rand, shape []int) (dense *Tensor[float64], idx [][]int, vals []float64, mask []bool) {
	n := 1
	for _, s := range shape {
		n *= s
	}
	data := make([]float64, n)
	dmask := make([]bool, n)
	var ents []int
	for i := range data {
		switch u := rng.IntN(10); {
		case u < 5: // kept
			data[i] = float64(rng.IntN(33)-16) / 2
			dmask[i] = true
			ents = append(ents, i)
		case u < 7: // specified, masked out
			ents = append(ents, -1-i)
		}
	}
	rng.Shuffle(len(ents), func(a, b int) { ents[a], ents[b] = ents[b], ents[a] })
	idx = make([][]int, len(shape))
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 123}
	for _, e := range ents {
		i, kept := e, true
		if e < 0 {
			i, kept = -1-e, false
		}
		rem := i
		coord := make([]int, len(shape))
		for d := len(shape) - 1; d >= 0; d-- {
			coord[d] = rem % shape[d]
			rem /= shape[d]
		}
		for d := range shape {
			idx[d] = append(idx[d], coord[d])
		}
		if kept {
			vals = append(vals, data[i])
		} else {
			vals = append(vals, specials[rng.IntN(len(specials))])
		}
		mask = append(mask, kept)
	}
	dense = &Tensor[float64]{shape: slices.Clone(shape), data: data, mask: dmask}
	return dense, idx, vals, mask
}

// sparseOps are the reductions compared between sparse and dense inputs, with
// their tolerance (0: exact; the sums of half-integers are exact whatever the
// order, the others round differently when fewer elements reach the kernel).
var sparseOps = []struct {
	name string
	rel  float64
	f    func(Input[float64], Options) (*Tensor[float64], error)
}{
	{"sum", 0, Sum[float64]},
	{"prod", 1e-14, Prod[float64]},
	{"mean", 0, Mean[float64]},
	{"amax", 0, Amax[float64]},
	{"amin", 0, Amin[float64]},
	{"argmax", 0, argOp(Argmax[float64])},
	{"argmin", 0, argOp(Argmin[float64])},
	{"median", 0, Median[float64]},
	{"var", 1e-13, varOp(1)},
	{"std", 1e-13, stdOp(0)},
	{"norm2", 1e-14, normOp(2)},
	{"norm-inf", 0, normOp(math.Inf(-1))},
	{"norm0.5", 1e-13, normOp(0.5)},
	{"logsumexp", 1e-14, LogSumExp[float64]},
}

type sparseScan struct {
	name string
	rel  float64
	f    func(Input[float64], int) (Input[float64], error)
}

var sparseScans = []sparseScan{
	{"cumsum", 0, func(x Input[float64], d int) (Input[float64], error) { return Cumsum(x, d, AccData) }},
	{"cumprod", 1e-14, func(x Input[float64], d int) (Input[float64], error) { return Cumprod(x, d, AccData) }},
	{"softmax", 1e-14, func(x Input[float64], d int) (Input[float64], error) { return Softmax(x, d, AccData) }},
	{"log_softmax", 1e-14, func(x Input[float64], d int) (Input[float64], error) { return LogSoftmax(x, d, AccData) }},
	{"softmin", 1e-14, func(x Input[float64], d int) (Input[float64], error) { return Softmin(x, d, AccData) }},
	{"normalize", 1e-14, func(x Input[float64], d int) (Input[float64], error) { return Normalize(x, 3, d, 1e-12, AccData) }},
}

// denseOf returns the dense tensor of a sparse result.
func denseOf(t *testing.T, x Input[float64]) *Tensor[float64] {
	switch v := x.(type) {
	case *COO[float64]:
		return v.ToDense()
	case *CSR[float64]:
		return v.ToDense()
	case *Tensor[float64]:
		return v
	}
	t.Fatalf("type %T", x)
	return nil
}

// TestSparseMatchesDense: every reduction over COO and CSR inputs equals the
// same reduction over the dense equivalent, for every set of dimensions; the
// scans and normalizations equal the dense results at the specified entries.
func TestSparseMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial, shape := range [][]int{{7}, {4, 6}, {3, 1, 5}, {2, 3, 4}, {5, 5}, {1, 9}, {6, 1}} {
		dense, idx, vals, mask := randomSparse(rng, shape)
		coo, err := NewCOO(shape, idx, vals, mask)
		require.NoError(t, err)
		inputs := []Input[float64]{coo}
		if len(shape) == 2 {
			csr, err := coo.ToCSR()
			require.NoError(t, err)
			inputs = append(inputs, csr)
		}
		// The conversions agree with the independent dense form.
		assert.Equal(t, dense.Mask(), coo.ToDense().Mask())
		for i, k := range dense.Mask() {
			if k {
				require.Equal(t, dense.Data()[i], coo.ToDense().Data()[i])
			}
		}
		for _, in := range inputs {
			name := fmt.Sprintf("%d_%T", trial, in)
			for bits := 0; bits < 1<<len(shape); bits++ {
				var dims []int
				for d := range shape {
					if bits&(1<<d) != 0 {
						dims = append(dims, d)
					}
				}
				for _, keepdim := range []bool{false, true} {
					o := Options{Dims: dims, KeepDim: keepdim}
					for _, op := range sparseOps {
						want, err := op.f(dense, o)
						require.NoError(t, err)
						got, err := op.f(in, o)
						require.NoError(t, err)
						msg := fmt.Sprint(name, " ", op.name, " ", o)
						assert.Equal(t, want.Shape(), got.Shape(), msg)
						assert.Equal(t, want.Mask(), got.Mask(), msg)
						sameFloats(t, want.Data(), got.Data(), op.rel, msg)
					}
				}
			}
			for dim := range shape {
				for _, op := range sparseScans {
					want, err := op.f(dense, dim)
					require.NoError(t, err)
					got, err := op.f(in, dim)
					require.NoError(t, err)
					assert.IsType(t, in, got)
					gd, wd := denseOf(t, got), denseOf(t, want)
					msg := fmt.Sprint(name, " ", op.name, " dim ", dim)
					assert.Equal(t, wd.Mask(), gd.Mask(), msg)
					// Compare at the specified entries (kept or not).
					spec := make([]bool, len(wd.Data()))
					for e := range idx[0] {
						l := 0
						for d, s := range shape {
							l = l*s + idx[d][e]
						}
						spec[l] = true
					}
					var w, g []float64
					for i, s := range spec {
						if s {
							w = append(w, wd.Data()[i])
							g = append(g, gd.Data()[i])
						}
					}
					sameFloats(t, w, g, op.rel, msg)
				}
			}
		}
		// LogAddExp of two sparse tensors: the union of their entries, equal to
		// the dense LogAddExp there.
		dense2, idx2, vals2, mask2 := randomSparse(rng, shape)
		coo2, err := NewCOO(shape, idx2, vals2, mask2)
		require.NoError(t, err)
		want, err := LogAddExp(dense, dense2, AccData)
		require.NoError(t, err)
		got, err := LogAddExp(coo, coo2, AccData)
		require.NoError(t, err)
		gd := got.ToDense()
		assert.Equal(t, want.Mask(), gd.Mask())
		for i, k := range want.Mask() {
			if k {
				sameFloats(t, []float64{want.Data()[i]}, []float64{gd.Data()[i]}, 0)
			}
		}
		if len(shape) == 2 {
			c1, _ := coo.ToCSR()
			c2, _ := coo2.ToCSR()
			gotCSR, err := LogAddExp(c1, c2, AccData)
			require.NoError(t, err)
			assert.Equal(t, got.Values(), gotCSR.Values())
			assert.Equal(t, gd.Mask(), gotCSR.ToDense().Mask())
		}
	}
}
