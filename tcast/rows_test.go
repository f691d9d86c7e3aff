package tcast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/scale"
)

// rowSplit casts x through rc a chunk of chunk rows at a time, the chunks
// dealt round robin to workers goroutines, each with its own scratch; a
// tensor scale's amax is gathered the same way first. It returns the tensor
// and the dequantized values CastRows wrote.
func rowSplit(t *testing.T, rc *RowCaster, x []float32, chunk, workers int) (*Tensor, []float32) {
	t.Helper()
	out := rc.NewTensor()
	deq := make([]float32, len(x))
	rows, n := rc.Rows(), rc.RowLen()
	var ranges [][2]int
	for r0 := 0; r0 < rows; r0 += chunk {
		ranges = append(ranges, [2]int{r0, min(r0+chunk, rows)})
	}
	if len(ranges) == 0 {
		ranges = [][2]int{{0, rows}} // no elements: one call, from row 0
	}
	each := func(f func(w int, rg [2]int)) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(ranges); i += workers {
					f(w, ranges[i])
				}
			}()
		}
		wg.Wait()
	}
	if rc.NeedsAmax() {
		parts := make([]Amax, workers)
		each(func(w int, rg [2]int) { parts[w].Add(x[rg[0]*n : rg[1]*n]) })
		var a Amax
		for _, p := range parts {
			a.Merge(p)
		}
		rc.SetAmax(a)
	}
	errs := make([]error, workers)
	scratch := make([]RowScratch, workers)
	each(func(w int, rg [2]int) {
		lo, hi := rg[0]*n, rg[1]*n
		if err := rc.CastRows(out, x[lo:hi], rg[0], deq[lo:hi], &scratch[w]); err != nil && errs[w] == nil {
			errs[w] = err
		}
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, rc.Finish(out))
	return out, deq
}

// rowInput is a tensor of n elements with the edges the kernels must get
// right in some rows (NaN, ±Inf, −0, subnormals, huge values, all-zero
// blocks) and ordinary values in others.
func rowInput(r *rand.Rand, n int, specials bool) []float32 {
	x := randomInput(r, n, specials)
	if !specials {
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
	}
	return x
}

// TestRowCasterEqualsCast casts tensors row range by row range, in chunks
// that are and are not divisors of the row count, on more workers than
// rows, in every form, and compares every part, value and dequantized value
// bit for bit with Cast of the whole tensor: the kernel datatypes split,
// other datatypes and options through the whole-tensor fallback.
func TestRowCasterEqualsCast(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	type tc struct {
		dt   string
		opts Options
		// kernel: the kernels cast it when the scaled axis is the last and
		// holds whole blocks.
		kernel bool
	}
	keepAll, err := mask.Full([]int{1}, true) // broadcasts to every shape
	require.NoError(t, err)
	cases := []tc{
		{"mxfp4", Options{}, true},
		{"mxfp8e4", Options{}, true},
		{"mxint8", Options{}, true},
		{"nvfp4", Options{}, true},
		{"nvfp4", Options{Mode: scale.Ceil}, true},  // NVFP4's float scales ignore the mode
		{"mxfp4", Options{ScaleSearch: true}, true}, // the fused search kernels
		{"nvfp4", Options{ScaleSearch: true}, true},
		{"mxfp4", Options{Mode: scale.Ceil}, false},
		{"mxfp4", Options{Rounding: dtype.RoundStochastic, Seed: 7}, false},
		{"mxfp4", Options{Axis: FirstAxis}, true}, // a kernel only when the first axis is the last
		{"nvfp4", Options{PowerOfTwoScales: true}, false},
		{"mxfp4", Options{Keep: keepAll}, false}, // a keep mask casts whole
		{"mxfp6e2", Options{}, true},
		{"mxfp6e3", Options{}, true},
		{"mxfp8e5", Options{}, true},
		{"int4_g128", Options{}, false},
		{"fp8e4_tensor", Options{}, false},
		{"float16", Options{}, false},
	}
	shapes := [][]int{{1, 32}, {1, 64}, {5, 96}, {3, 4, 64}, {37, 128}, {0, 32}, {256}}
	for _, c := range cases {
		dt := MustLookup(c.dt)
		for _, shape := range shapes {
			n, _ := product(shape)
			for _, specials := range []bool{false, true} {
				x := rowInput(r, n, specials)
				for _, form := range []Form{Virtual, Actual, Compressed} {
					o := c.opts
					o.Form = form
					name := fmt.Sprintf("%s %+v %v specials=%v %s", c.dt, c.opts, shape, specials, form)
					want, err := Cast(x, shape, dt, &o)
					if err != nil {
						continue // a shape the datatype does not take
					}
					wantDeq := want.Values
					if form != Virtual {
						wantDeq, err = Decompress(want)
						require.NoError(t, err, name)
					}
					rc, err := NewRowCaster(shape, dt, &o)
					require.NoError(t, err, name)
					block := 32
					if c.dt == "nvfp4" {
						block = 16
					}
					lastAxis := o.Axis != FirstAxis || len(shape) == 1
					kernel := c.kernel && lastAxis && shape[len(shape)-1]%block == 0
					require.Equal(t, kernel, rc.Kernel(), name)
					splits := [][2]int{{rc.Rows(), 1}}
					if rc.Kernel() {
						splits = append(splits, [2]int{1, 1}, [2]int{1, 3}, [2]int{2, 2}, [2]int{3, 2}, [2]int{7, 4}, [2]int{1, rc.Rows() + 3})
					}
					for _, sp := range splits {
						msg := fmt.Sprintf("%s: chunks of %d rows on %d workers", name, sp[0], sp[1])
						got, deq := rowSplit(t, rc, x, max(sp[0], 1), sp[1])
						tensorsEqual(t, want, got, msg)
						valuesEqual(t, wantDeq, deq, msg+" (dequantized)")
					}
				}
			}
		}
	}
}

// TestRowCasterPacked checks CastRowsPacked against the Compressed form of
// Cast, chunk by chunk into buffers of the chunk's size.
func TestRowCasterPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, kd := range kernelDatatypes {
		dt := MustLookup(kd.name)
		shape := []int{11, 64}
		x := rowInput(r, 11*64, true)
		want, err := Cast(x, shape, dt, &Options{Form: Compressed})
		require.NoError(t, err)
		wantDeq, err := Decompress(want)
		require.NoError(t, err)
		rc, err := NewRowCaster(shape, dt, &Options{Form: Compressed})
		require.NoError(t, err)
		if rc.NeedsAmax() {
			var a Amax
			a.Add(x[:5*64])
			var b Amax
			b.Add(x[5*64:])
			b.Merge(a)
			rc.SetAmax(b)
		}
		for r0 := 0; r0 < 11; r0 += 4 {
			r1 := min(r0+4, 11)
			data := make([]byte, rc.DataBytes(r1-r0))
			sc := make([]byte, rc.ScaleBytes(r1-r0))
			deq := make([]float32, (r1-r0)*64)
			require.NoError(t, rc.CastRowsPacked(data, sc, x[r0*64:r1*64], deq), kd.name)
			assert.Equal(t, want.Data.Bytes[rc.DataBytes(r0):rc.DataBytes(r1)], data, kd.name)
			assert.Equal(t, want.Scale.Bytes[rc.ScaleBytes(r0):rc.ScaleBytes(r1)], sc, kd.name)
			valuesEqual(t, wantDeq[r0*64:r1*64], deq, kd.name)
		}
	}
}

// TestRowCasterErrors checks that misuse is an error, never a panic.
func TestRowCasterErrors(t *testing.T) {
	mx, nv := MustLookup("mxfp4"), MustLookup("nvfp4")
	x := make([]float32, 4*64)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	rc, err := NewRowCaster([]int{4, 64}, mx, &Options{Form: Compressed})
	require.NoError(t, err)
	out := rc.NewTensor()
	for _, c := range []struct {
		name string
		x    []float32
		r0   int
		deq  []float32
		t    *Tensor
	}{
		{"not whole rows", x[:70], 0, nil, out},
		{"past the end", x[:128], 3, nil, out},
		{"negative row", x[:64], -1, nil, out},
		{"short deq", x[:64], 0, make([]float32, 3), out},
		{"nil tensor", x[:64], 0, nil, nil},
		{"wrong form", x[:64], 0, nil, &Tensor{Form: Actual}},
		{"short data part", x[:64], 0, nil, &Tensor{Form: Compressed, Data: &Part{}, Scale: &Part{Bytes: make([]byte, 8)}}},
	} {
		assert.Error(t, rc.CastRows(c.t, c.x, c.r0, c.deq, nil), c.name)
	}
	assert.Error(t, rc.CastRowsPacked(make([]byte, 3), make([]byte, 2), x[:64], nil), "short data")

	// NVFP4 needs the amax first.
	rn, err := NewRowCaster([]int{4, 64}, nv, &Options{Form: Compressed})
	require.NoError(t, err)
	require.True(t, rn.NeedsAmax())
	assert.ErrorContains(t, rn.CastRows(rn.NewTensor(), x[:64], 0, nil, nil), "SetAmax")
	assert.ErrorContains(t, rn.Finish(rn.NewTensor()), "SetAmax")

	// The fallback casts only the whole tensor.
	rf, err := NewRowCaster([]int{4, 64}, mx, &Options{Form: Compressed, Mode: scale.Ceil})
	require.NoError(t, err)
	require.False(t, rf.Kernel())
	assert.ErrorContains(t, rf.CastRows(rf.NewTensor(), x[:64], 0, nil, nil), "all at once")
	assert.Error(t, rf.CastRowsPacked(make([]byte, 32), make([]byte, 2), x[:64], nil))
	require.NoError(t, rf.CastRows(rf.NewTensor(), x, 0, nil, nil))

	keep, err := mask.New([]int{3})
	require.NoError(t, err)
	_, err = NewRowCaster([]int{4, 64}, mx, &Options{Keep: keep})
	assert.ErrorIs(t, err, mask.ErrShape, "a [3] mask does not broadcast to [4 64]")
	_, err = NewRowCaster([]int{4, -1}, mx, nil)
	assert.Error(t, err)
}

// TestAmax checks Amax against the tensor scale Cast picks, with NaN and
// Inf in some pieces.
func TestAmax(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	var a Amax
	assert.Equal(t, float32(0), a.value(), "the zero value")
	a.Add([]float32{1, -3, 2})
	var b Amax
	b.Add([]float32{nan, -2.5, inf})
	a.Merge(b)
	assert.Equal(t, float32(3), a.value(), "the largest finite magnitude when a NaN or Inf is present")
	var c Amax
	c.Add([]float32{-7})
	c.Merge(Amax{})
	assert.Equal(t, float32(7), c.value())
	var d Amax
	d.Add([]float32{nan, inf})
	assert.Equal(t, float32(0), d.value(), "no finite value")
}
