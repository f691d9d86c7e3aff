package tcast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScaleSearchIntKernel: scale-searching casts of symmetric integer
// groups run through the IntSym codec's Search and give the bytes of the
// block-by-block search (encode, decode, sum in float64), for float16 and
// float32 scales, groups, channels and a whole-tensor scale, on rows of
// one group, rows whose last group is short, NaN, Inf, zero, tiny and huge
// groups, and the fixture's tensors.
func TestScaleSearchIntKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 9))
	var inputs []searchInput
	for _, shape := range [][]int{{5, 128}, {3, 200}, {1, 130}, {7, 1000}, {2, 3, 256}, {64, 256}} {
		n := 1
		for _, d := range shape {
			n *= d
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Ldexp(1, i/128%9-4))
			switch r.IntN(400) {
			case 0:
				x[i] = float32(math.NaN())
			case 1:
				x[i] = float32(math.Inf(1 - 2*r.IntN(2)))
			case 2:
				x[i] = 3e38
			case 3:
				x[i] = 1e-41
			}
		}
		for i := 0; i < min(n, 128); i++ {
			x[i] = 0 // an all-zero group
		}
		inputs = append(inputs, searchInput{"random", shape, x})
	}
	inputs = append(inputs, searchInput{"edges", []int{24, 256}, searchEdgeInput(r, 24)})
	for _, in := range searchInputs(t) {
		if len(in.x) <= 1<<17 {
			inputs = append(inputs, in)
		}
	}
	compared := 0
	for _, name := range []string{"int4_g128", "int8_g32", "int4_channel", "int4_float32_t64", "int8_float32_t128", "int8_float16"} {
		dt := MustLookup(name)
		for _, in := range inputs {
			o := Options{ScaleSearch: true, Form: Actual}
			c, err := newCaster(in.x, in.shape, dt, o)
			if err != nil {
				continue // a shape the datatype does not take
			}
			require.Equal(t, kernelIntSym, c.groupKernel().kind, "%s %s: not through the kernel", name, in.name)
			fast, err := castPath(in.x, in.shape, dt, &o, true, true)
			require.NoError(t, err)
			gen := castGeneral(t, in.x, in.shape, dt, &o)
			requireSameParts(t, gen, fast, fmt.Sprintf("%s %s %v", name, in.name, in.shape))
			compared++
		}
	}
	require.Greater(t, compared, 6*len(inputs)/2, "casts compared")
	t.Logf("%d casts compared", compared)
}
