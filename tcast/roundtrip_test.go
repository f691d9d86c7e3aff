package tcast

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/scale"
)

// randomInput returns n values mixing ordinary weights with the hard cases: zeros
// of both signs, float32 subnormals, huge values, NaN and ±Inf, and a run of
// zeros long enough to make all-zero blocks.
func randomInput(r *rand.Rand, n int, specials bool) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch k := r.IntN(40); {
		case !specials || k >= 8:
			x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(8)-4)))
		case k == 0:
			x[i] = 0
		case k == 1:
			x[i] = float32(math.Copysign(0, -1))
		case k == 2:
			x[i] = math.Float32frombits(r.Uint32N(0x007fffff) + 1) // subnormal
		case k == 3:
			x[i] = float32(r.NormFloat64() * 1e37)
		case k == 4 && r.IntN(4) == 0:
			x[i] = float32(math.NaN())
		case k == 5 && r.IntN(4) == 0:
			x[i] = float32(math.Inf(1 - 2*r.IntN(2)))
		default:
			x[i] = float32(r.NormFloat64() * 1e-3)
		}
	}
	if specials && n > 80 {
		for i := 40; i < 80; i++ {
			x[i] = 0
		}
	}
	return x
}

func sameBits(a, b []float32) (int, bool) {
	if len(a) != len(b) {
		return -1, false
	}
	for i := range a {
		if a[i] != a[i] && b[i] != b[i] {
			continue
		}
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i, false
		}
	}
	return 0, true
}

// TestRoundTripLaw checks Decompress(Compress(Cast(x, Actual))) == Cast(x,
// Virtual) bit for bit, for every registered datatype, on shapes that are not a
// tile multiple, along different axes, with and without special values, masks
// and stochastic rounding.
func TestRoundTripLaw(t *testing.T) {
	cases := []struct {
		shape []int
		axis  int
	}{
		{[]int{5, 70}, -1},
		{[]int{70, 5}, FirstAxis},
		{[]int{3, 37, 9}, 1},
		{[]int{2, 130, 3}, 1},
		{[]int{131}, FirstAxis},
		{[]int{}, 0},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range Registered() {
		for ci, c := range cases {
			if len(c.shape) < 2 && dt.spec != nil && dt.spec.Is2D() {
				continue
			}
			n, _ := product(c.shape)
			x := randomInput(r, n, ci%2 == 0)
			opts := DefaultOptions()
			opts.Axis = c.axis
			opts.Mode = scale.Modes()[ci%len(scale.Modes())]
			if ci == 2 {
				keep := make([]bool, n)
				for i := range keep {
					keep[i] = r.IntN(3) != 0
				}
				opts.Keep = keepMask(t, c.shape, keep)
			}
			if ci == 3 {
				opts.Rounding, opts.Seed = 3, 99 // stochastic
			}
			v, err := Cast(x, c.shape, dt, &opts)
			require.NoError(t, err, "%s %v", dt.name, c.shape)
			opts.Form = Compressed
			comp, err := Cast(x, c.shape, dt, &opts)
			require.NoError(t, err, "%s %v", dt.name, c.shape)
			got, err := Decompress(comp)
			require.NoError(t, err, "%s %v", dt.name, c.shape)
			if i, ok := sameBits(v.Values, got); !ok {
				t.Errorf("%s shape %v axis %d: element %d: virtual %v, decompressed %v (input %v)",
					dt.name, c.shape, c.axis, i, v.Values[i], got[i], x[i])
			}
			// Expand undoes Compress byte for byte.
			opts.Form = Actual
			act, err := Cast(x, c.shape, dt, &opts)
			require.NoError(t, err)
			exp, err := Expand(comp)
			require.NoError(t, err)
			for _, p := range act.Parts() {
				q := exp.Parts()
				found := false
				for _, e := range q {
					if e.Name == p.Name {
						found = true
						assert.Equal(t, p.Bytes, e.Bytes, "%s %s part", dt.name, p.Name)
					}
				}
				assert.True(t, found, "%s: part %s lost", dt.name, p.Name)
			}
		}
	}
}

// TestMXReference checks exponent-scaled casts against a direct float64
// restatement of the OCP rule: k = floor(log2 amax) − emax by math.Frexp, the
// E8M0 clamp, then each element rounded alone.
func TestMXReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, name := range []string{"mxfp8e4", "mxfp8e5", "mxfp6e3", "mxfp6e2", "mxfp4e2", "mxint8", "mxint4", "bfp16", "mxfp4t16"} {
		dt := MustLookup(name)
		tile := dt.spec.Tiles[0].Size
		for trial := 0; trial < 200; trial++ {
			x := randomInput(r, tile, false)
			// Scale the block over a wide exponent range.
			e := r.IntN(200) - 140
			for i := range x {
				x[i] = float32(math.Ldexp(float64(x[i]), e))
			}
			v, err := Cast(x, []int{tile}, dt, nil)
			require.NoError(t, err)
			amax := 0.0
			for _, xi := range x {
				amax = math.Max(amax, math.Abs(float64(xi)))
			}
			k := -127
			if amax > 0 {
				_, fe := math.Frexp(amax) // amax = f·2^fe, f ∈ [0.5, 1)
				k = max(fe-1-dt.elem.Emax(), -127)
			}
			for i, xi := range x {
				q := dt.elem.Decode(dt.elem.Encode(float32(float64(xi) / math.Ldexp(1, k))))
				want := float32(float64(q) * math.Ldexp(1, k))
				if math.Float32bits(want) != math.Float32bits(v.Values[i]) {
					t.Fatalf("%s trial %d element %d: x=%v k=%d want %v got %v", name, trial, i, xi, k, want, v.Values[i])
				}
			}
		}
	}
}

// TestStreamedEqualsBlockwise compares the streamed cast of contiguous blocks
// with the block-by-block path on tensors larger than the streaming buffer,
// with one huge block (tensor scaling), blocks of 32 and 16, channels, rows
// that are no whole number of blocks, and a NaN and an all-zero run inside;
// without a mask, with an all-true one, and with a random one (whose block
// amaxes the streamed path takes from kernels.AbsMaxBlocksMasked row by row).
func TestStreamedEqualsBlockwise(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, name := range []string{"fp8e4_tensor", "fp8e4_channel", "mxfp4", "nvfp4", "int4_g128", "e4m3fn", "bfloat16", "mxint8"} {
		for _, shape := range [][]int{{3, 40000}, {7, 10005}, {70005}} {
			n, _ := product(shape)
			x := randomInput(r, n, true)
			x[n/2+1] = float32(math.NaN())
			clear(x[100:164])
			dt := MustLookup(name)
			all := make([]bool, n)
			some := make([]bool, n)
			for i := range all {
				all[i], some[i] = true, r.IntN(4) != 0
			}
			clear(some[1000:1100]) // whole blocks dropped
			for _, keep := range [][]bool{nil, all, some} {
				for _, form := range []Form{Virtual, Actual} {
					opts := DefaultOptions()
					opts.Form = form
					if keep != nil {
						opts.Keep = keepMask(t, shape, keep)
					}
					fast, err := castPath(x, shape, dt, &opts, true, true)
					require.NoError(t, err)
					slow, err := castPath(x, shape, dt, &opts, false, false)
					require.NoError(t, err)
					if i, ok := sameBits(fast.Values, slow.Values); !ok {
						t.Fatalf("%s %v: element %d: streamed %v, blockwise %v", name, shape, i, fast.Values[i], slow.Values[i])
					}
					fp, sp := fast.Parts(), slow.Parts()
					require.Equal(t, len(sp), len(fp))
					for i := range fp {
						require.Equal(t, sp[i].Name, fp[i].Name)
						require.True(t, bytes.Equal(sp[i].Bytes, fp[i].Bytes), "%s %v %s part", name, shape, fp[i].Name)
					}
				}
			}
		}
	}
}

// TestZeroOptionsScaleLastAxis checks that the zero Options scale the last axis,
// as the command line does by default, and that FirstAxis names axis 0.
func TestZeroOptionsScaleLastAxis(t *testing.T) {
	x := make([]float32, 64*2)
	for i := range x {
		x[i] = float32(i%64) - 20 // rows differ along the last axis
	}
	dt := MustLookup("mxfp4")
	var zero Options
	zero.Form = Actual
	a, err := Cast(x, []int{2, 64}, dt, &zero)
	require.NoError(t, err)
	last := DefaultOptions()
	last.Form = Actual
	b, err := Cast(x, []int{2, 64}, dt, &last)
	require.NoError(t, err)
	assert.Equal(t, 1, a.Axis)
	assert.Equal(t, b.Scale.Bytes, a.Scale.Bytes)
	assert.Equal(t, []int{2, 2}, a.Scale.Shape)

	first := Options{Form: Actual, Axis: FirstAxis}
	c, err := Cast(make([]float32, 64*2), []int{64, 2}, dt, &first)
	require.NoError(t, err)
	assert.Equal(t, 0, c.Axis)
	assert.Equal(t, []int{2, 2}, c.Scale.Shape)

	for _, tc := range []struct{ axis, rank, want int }{
		{0, 3, 2}, {-1, 3, 2}, {FirstAxis, 3, 0}, {-3, 3, 0}, {1, 3, 1}, {2, 3, 2},
	} {
		got, ok := AxisIndex(tc.axis, tc.rank)
		assert.True(t, ok)
		assert.Equal(t, tc.want, got, "axis %d rank %d", tc.axis, tc.rank)
	}
	_, ok := AxisIndex(3, 3)
	assert.False(t, ok)
	_, ok = AxisIndex(-4, 3)
	assert.False(t, ok)
}

// TestPowerOfTwoScalesExact casts MXFP4 values (E2M1 codes times a power of two
// per 32-block) to NVFP4 and FP8 codes times power-of-two 128-blocks to
// float32-scaled FP8: with PowerOfTwoScales the casts are exact, while the
// default rules (amax/6 and amax/448 scales) are not.
func TestPowerOfTwoScalesExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	e2m1 := []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}
	x := make([]float32, 8*64)
	for b := 0; b < len(x)/32; b++ {
		k := r.IntN(12) - 6 // the block's power of two
		for i := range 32 {
			v := e2m1[r.IntN(len(e2m1))] * float32(math.Ldexp(1, k))
			if r.IntN(2) == 0 {
				v = -v
			}
			x[32*b+i] = v
		}
	}
	for _, tc := range []struct {
		dt    string
		input []float32
	}{
		{"nvfp4", x},
		{"mxfp4", x},
	} {
		dt := MustLookup(tc.dt)
		def, err := Cast(tc.input, []int{8, 64}, dt, nil)
		require.NoError(t, err)
		p2, err := Cast(tc.input, []int{8, 64}, dt, &Options{PowerOfTwoScales: true})
		require.NoError(t, err)
		assert.Equal(t, tc.input, p2.Values, "%s with power-of-two scales is exact", tc.dt)
		if tc.dt == "nvfp4" {
			assert.NotEqual(t, tc.input, def.Values, "the ModelOpt rule is not exact here")
		}
	}
	// FP8 E4M3 codes times a power of two per 128×128 block, to fp8e4_block128.
	e4m3 := dtype.MustParse("float8_e4m3fn")
	y := make([]float32, 128*256)
	for i := range y {
		blk := (i % 256) / 128
		code := uint32(r.IntN(0x7f)) // finite, any sign below
		v := e4m3.Decode(code) * float32(math.Ldexp(1, 3*blk-2))
		if r.IntN(2) == 0 {
			v = -v
		}
		y[i] = v
	}
	fp8 := MustLookup("fp8e4_block128")
	p2, err := Cast(y, []int{128, 256}, fp8, &Options{PowerOfTwoScales: true})
	require.NoError(t, err)
	assert.Equal(t, y, p2.Values, "fp8e4_block128 with power-of-two scales is exact")
}
