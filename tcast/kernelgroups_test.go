package tcast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/dtype"
)

// The integer-group datatypes and the family each must take: the registry's
// int and uint groups, channels and tensor scales, and TensorCast's
// letter-coded ones whose scale is float16 or float32 (int8 zero points
// under uint8 data included).
var groupDatatypes = []struct {
	name string
	kind kernelKind
}{
	{"int8_g32", kernelIntSym}, {"int8_g64", kernelIntSym}, {"int8_g128", kernelIntSym},
	{"int4_g32", kernelIntSym}, {"int4_g64", kernelIntSym}, {"int4_g128", kernelIntSym},
	{"int8_channel", kernelIntSym}, {"int4_channel", kernelIntSym},
	{"int8_F", kernelIntSym}, {"int8_f", kernelIntSym}, {"int8_fc", kernelIntSym}, {"int4_Fc", kernelIntSym},
	{"uint8_g32", kernelIntAsym}, {"uint8_g128", kernelIntAsym}, {"uint4_g32", kernelIntAsym},
	{"uint4_g64", kernelIntAsym}, {"uint4_g128", kernelIntAsym},
	{"uint8_channel", kernelIntAsym}, {"uint4_channel", kernelIntAsym},
	{"uint8_Fi", kernelIntAsym}, {"uint8_Fic", kernelIntAsym}, {"uint4_fic", kernelIntAsym},
	{"fp8e4_tensor", kernelFP8}, {"fp8e4_channel", kernelFP8}, {"fp8e4_block128", kernelFP8},
	{"fp8_F", kernelFP8}, {"fp8_Fc", kernelFP8}, {"fp8F32s", kernelFP8}, {"e4m3fn_float32_t64", kernelFP8},
	{"e4m3fn_float32_t16_t32", kernelFP8},
}

// groupEdgeInput returns n floats in runs that sit on the edges of integer
// group quantization: NaN and ±Inf, all-zero runs with −0, float32
// subnormals, one-sided runs, values near the float32 maximum (float16
// scales saturate, ranges overflow), halves of integers times powers of two
// (ties of x/s), and ordinary weights at many scales.
func groupEdgeInput(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := 0; i < n; {
		v := x[i:min(n, i+1+r.IntN(100))]
		i += len(v)
		switch r.IntN(9) {
		case 0:
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			v[r.IntN(len(v))] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.IntN(3)]
		case 1:
			for j := range v {
				if r.IntN(3) == 0 {
					v[j] = float32(math.Copysign(0, -1))
				}
			}
		case 2:
			for j := range v {
				v[j] = math.Float32frombits(r.Uint32N(0x800000) | r.Uint32()&0x80000000)
			}
		case 3:
			s := float32(1 - 2*r.IntN(2))
			for j := range v {
				v[j] = s * float32(r.Float64()*math.Ldexp(1, r.IntN(20)-10))
			}
		case 4:
			for j := range v {
				v[j] = float32(r.NormFloat64() * 1e38)
			}
		case 5:
			p := float32(math.Ldexp(1, r.IntN(40)-20))
			for j := range v {
				v[j] = float32(r.IntN(255)-127) / 2 * p
			}
		default:
			e := r.IntN(100) - 50
			for j := range v {
				v[j] = float32(math.Ldexp(r.NormFloat64(), e))
			}
		}
	}
	return x
}

// TestGroupKernelPathEqualsReference casts edge and random tensors of many
// shapes to every integer-group datatype through the kernels and through the
// block-by-block path, in every form, and compares every part and value bit
// for bit; then Decompress through both, of those casts and of random codes,
// scales and zero points.
func TestGroupKernelPathEqualsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	shapes := [][]int{{8, 256}, {3, 200}, {4, 130}, {5, 33}, {2, 3, 128}, {1000}, {7}, {}, {0, 64}, {64, 0}, {2, 4100},
		{130, 300}, {2, 40, 70}, {256, 128}}
	for _, gd := range groupDatatypes {
		dt := MustLookup(gd.name)
		for _, shape := range shapes {
			n, _ := product(shape)
			x := groupEdgeInput(r, n)
			for _, form := range []Form{Virtual, Actual, Compressed} {
				msg := fmt.Sprintf("%s %v %s", gd.name, shape, form)
				opts := DefaultOptions()
				opts.Form = form
				c, err := newCaster(x, shape, dt, opts)
				if err != nil && len(dt.Spec().Tiles) == 2 && len(shape) < 2 {
					continue // a 2-D tile needs a matrix
				}
				require.NoError(t, err, msg)
				require.Equal(t, gd.kind, c.groupKernel().kind, msg)
				castBothPaths(t, r, x, shape, dt, &opts, msg)
			}
		}
	}
}

// TestGroupKernelPathGates checks that casts the integer-group kernels do not
// implement take the block-by-block path, and still agree with it.
func TestGroupKernelPathGates(t *testing.T) {
	x := randomInput(rand.New(rand.NewPCG(53, 54)), 4*128, true)
	keep := make([]bool, len(x))
	for i := range keep {
		keep[i] = i%5 != 0
	}
	checkGates(t, x, func(c *caster) kernelKind { return c.groupKernel().kind }, []gateCase{
		{"first axis", "int8_g32", []int{128, 4}, Options{Axis: FirstAxis}},
		{"ties away", "int4_g32", []int{4, 128}, Options{Rounding: dtype.RoundAway}},
		{"stochastic", "uint4_g32", []int{4, 128}, Options{Rounding: dtype.RoundStochastic, Seed: 5}},
		{"keep mask", "uint8_g32", []int{4, 128}, Options{Keep: keepMask(t, []int{4, 128}, keep)}},
		{"full range", "int8_g32", []int{4, 128}, Options{FullRange: true}},
		{"power-of-two scales", "int4_g128", []int{4, 128}, Options{PowerOfTwoScales: true}},
		{"bfloat16 scale", "int8_b", []int{4, 128}, Options{}},
		{"e4m3 scale", "int4_nc", []int{4, 128}, Options{}},
		{"float zero point", "uint8_FFc", []int{4, 128}, Options{}},
		{"int4 zero point", "uint4_f12i432", []int{4, 128}, Options{}},
		{"fp8 first axis", "fp8e4_channel", []int{128, 4}, Options{Axis: FirstAxis}},
		{"fp8 tiles on the first axes", "fp8F32s", []int{64, 8}, Options{Axis: FirstAxis}},
		{"fp8 float16 scale", "fp8f32s", []int{32, 16}, Options{}},
		{"fp8 e5m2", "fp8e5_channel", []int{4, 128}, Options{}},
		{"fp8 power-of-two scales", "fp8e4_block128", []int{4, 128}, Options{PowerOfTwoScales: true}},
		{"fp8 stochastic", "fp8e4_tensor", []int{4, 128}, Options{Rounding: dtype.RoundStochastic, Seed: 9}},
	})
	// Asymmetric datatypes ignore FullRange and PowerOfTwoScales: they keep
	// the kernels.
	c, err := newCaster(x, []int{4, 128}, MustLookup("uint4_g32"), Options{FullRange: true, PowerOfTwoScales: true})
	require.NoError(t, err)
	assert.Equal(t, kernelIntAsym, c.groupKernel().kind)
}

// TestGroupKernelWorkedExample checks one int4_g32 row by hand: amax 14 in
// the first group gives the float16 scale 2 (0x4000) and codes x/2 rounded
// to nearest even (13 → 6, 5 → 2, −3 → −2); the second group is all zero,
// scale 1 (0x3c00). The compressed codes are nibbles, element 2k low.
func TestGroupKernelWorkedExample(t *testing.T) {
	x := make([]float32, 64)
	copy(x, []float32{14, 13, 5, -3})
	opts := Options{Form: Compressed}
	got, err := Cast(x, []int{64}, MustLookup("int4_g32"), &opts)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x67, 0xe2}, got.Data.Bytes[:2])
	assert.Equal(t, []byte{0x00, 0x40, 0x00, 0x3c}, got.Scale.Bytes)
	v, err := Decompress(got)
	require.NoError(t, err)
	assert.Equal(t, []float32{14, 12, 4, -4}, v[:4])
}
