package tcast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/mask"

	"github.com/stretchr/testify/require"
)

// searchFastTypes are the datatypes whose element format has a one-pass
// candidate error (setSearchFast): E2M1 under E8M0 and UE4M3 scales, E4M3
// under E8M0 and float32 scales, integers under E8M0 and float16 scales.
var searchFastTypes = []string{"mxfp4", "nvfp4", "mxfp8e4", "fp8e4_block128", "fp8e4_channel", "mxint8",
	"int4_g128", "int8_g32", "int4_channel"}

// searchEdgeInput returns rows of 256 values meant to sit on the element
// grids' rounding boundaries at every candidate scale: the E2M1, E4M3 and
// integer ties and their neighbours (one ulp either side) times powers of
// two, blocks whose amax is exactly a power of two or just below, tiny
// (subnormal) and huge blocks, and blocks where one element is far above
// the rest.
func searchEdgeInput(r *rand.Rand, rows int) []float32 {
	const cols = 256
	x := make([]float32, rows*cols)
	ties := []float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 6, 0.5, 1, 4, 448, 464, 240, 0.5 / 64, 1.5, 6.5, 7.5, 126.5, 127.5}
	for i := range rows {
		row := x[i*cols : (i+1)*cols]
		e := r.IntN(60) - 30
		switch i % 6 {
		case 0, 1: // ties and their neighbours at scale 2^e
			for j := range row {
				v := ties[r.IntN(len(ties))] * float32(math.Ldexp(1, e+r.IntN(3)-1))
				switch r.IntN(3) {
				case 0:
					v = math.Nextafter32(v, 0)
				case 1:
					v = math.Nextafter32(v, float32(math.Inf(1)))
				}
				if r.IntN(2) == 0 {
					v = -v
				}
				row[j] = v
			}
		case 2: // gaussian times 2^e, amax forced to a power of two
			for j := range row {
				row[j] = float32(r.NormFloat64() * math.Ldexp(1, e))
			}
			for j := 0; j < cols; j += 16 {
				row[j+r.IntN(16)] = float32(math.Ldexp(1, e+2))
			}
		case 3: // subnormal and near-underflow blocks
			for j := range row {
				row[j] = float32(r.NormFloat64() * math.Ldexp(1, -128-r.IntN(20)))
			}
		case 4: // huge blocks
			for j := range row {
				row[j] = float32(r.NormFloat64() * math.Ldexp(1, 100+r.IntN(27)))
			}
		default: // one outlier per block of 16
			for j := range row {
				row[j] = float32(r.NormFloat64() * 0.01)
			}
			for j := 0; j < cols; j += 16 {
				row[j+r.IntN(16)] = float32(r.NormFloat64() * 100)
			}
		}
	}
	return x
}

// TestScaleSearchFastEqualsGeneral: the one-pass candidate errors pick the
// same scales, so the casts are byte-identical to the general path's
// (encode, decode, sum), on random, edge and fixture tensors, with and
// without importance weights and keep masks.
func TestScaleSearchFastEqualsGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 5))
	const rows = 48
	shape := []int{rows, 256}
	gauss := make([]float32, rows*256)
	for i := range gauss {
		gauss[i] = float32(r.NormFloat64())
	}
	inputs := []searchInput{
		{"gauss", shape, gauss},
		{"edges", shape, searchEdgeInput(r, rows)},
	}
	for _, in := range searchInputs(t) {
		if in.name == "edge" || in.name == "heavy" || len(in.x) <= 1<<16 {
			inputs = append(inputs, in)
		}
	}
	keep := make([]bool, rows*256)
	for i := range keep {
		keep[i] = r.IntN(4) != 0
	}
	km, err := mask.FromBools(shape, keep)
	require.NoError(t, err)
	w := make([]float32, 256)
	for i := range w {
		w[i] = float32(r.ExpFloat64())
	}
	w[3] = 0
	for _, name := range searchFastTypes {
		dt := MustLookup(name)
		for _, in := range inputs {
			opts := []Options{{ScaleSearch: true}}
			if in.shape[len(in.shape)-1] == 256 {
				opts = append(opts, Options{ScaleSearch: true, Importance: w})
			}
			if len(in.x) == len(keep) {
				opts = append(opts, Options{ScaleSearch: true, Keep: km})
			}
			for k, o := range opts {
				o.Form = Actual
				c, err := newCaster(in.x, in.shape, dt, o)
				require.NoError(t, err)
				require.NotNil(t, c.ssFast, "%s: no fast path", name)
				fast, err := castPath(in.x, in.shape, dt, &o, true, true)
				require.NoError(t, err)
				gen := castGeneral(t, in.x, in.shape, dt, &o)
				requireSameParts(t, gen, fast, fmt.Sprintf("%s %s options %d", name, in.name, k))
			}
		}
	}
}

// TestScaleSearchFastScope: the one-pass error stands aside where it would
// not compute what the general path computes.
func TestScaleSearchFastScope(t *testing.T) {
	x := make([]float32, 256)
	for _, tc := range []struct {
		name string
		o    Options
		fast bool
	}{
		{"mxfp4", Options{ScaleSearch: true}, true},
		{"mxfp4", Options{ScaleSearch: true, Rounding: kernels.RoundStochastic}, false},
		{"mxfp4", Options{ScaleSearch: true, FullRange: true}, false},
		{"mxfp6e2", Options{ScaleSearch: true}, false},
		{"mxint8", Options{ScaleSearch: true, FullRange: true}, true},
		{"mxfp4", Options{}, false},
	} {
		c, err := newCaster(x, []int{1, 256}, MustLookup(tc.name), tc.o)
		require.NoError(t, err)
		require.Equal(t, tc.fast, c.ssFast != nil, "%s %+v", tc.name, tc.o)
	}
}

// TestScaleSearchKernelE2M1: scale-searching casts of mxfp4 and nvfp4 run
// through the fused kernels (the Search of the kernels' MXFP4 and NVFP4
// codecs) where rows are whole blocks, and give the general path's bytes:
// rows of one block, wide rows, blocks holding a NaN or an infinity,
// all-zero blocks, subnormal and huge blocks.
func TestScaleSearchKernelE2M1(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 77))
	var inputs []searchInput
	for _, shape := range [][]int{{5, 16}, {7, 32}, {3, 4096}, {2, 3, 64}, {48, 256}, {37, 100}, {1, 31}, {3, 1000}} {
		n := shape[0] * shape[len(shape)-1]
		if len(shape) == 3 {
			n *= shape[1]
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(9)-4))
		}
		for i := 0; i+16 <= n; i += 16 {
			switch r.IntN(12) {
			case 0:
				clear(x[i : i+16])
			case 1:
				x[i+r.IntN(16)] = float32(math.NaN())
			case 2:
				x[i+r.IntN(16)] = float32(math.Inf(2*r.IntN(2) - 1))
			case 3:
				for j := range 16 {
					x[i+j] = float32(math.Ldexp(r.NormFloat64(), -135))
				}
			case 4:
				for j := range 16 {
					x[i+j] = float32(math.Ldexp(r.NormFloat64(), 125))
				}
			}
		}
		inputs = append(inputs, searchInput{fmt.Sprint(shape), shape, x})
	}
	inputs = append(inputs, searchInput{"edges", []int{48, 256}, searchEdgeInput(r, 48)})
	for _, name := range []string{"mxfp4", "nvfp4"} {
		dt := MustLookup(name)
		for _, in := range inputs {
			for _, form := range []Form{Actual, Compressed, Virtual} {
				o := Options{ScaleSearch: true, Form: form}
				c, err := newCaster(in.x, in.shape, dt, o)
				require.NoError(t, err)
				if _, block := kernelKindOf(dt); form == Actual && in.shape[len(in.shape)-1]%block == 0 {
					require.NotEqual(t, noKernel, c.kernel(), "%s %s: no search kernel", name, in.name)
				}
				kern, err := castPath(in.x, in.shape, dt, &o, true, true)
				require.NoError(t, err)
				gen := castGeneral(t, in.x, in.shape, dt, &o)
				requireSameParts(t, gen, kern, fmt.Sprintf("%s %s form %v", name, in.name, form))
				if form == Virtual {
					require.Equal(t, len(gen.Values), len(kern.Values))
					for i, v := range gen.Values {
						require.Equal(t, math.Float32bits(v), math.Float32bits(kern.Values[i]), "%s %s value %d", name, in.name, i)
					}
				}
			}
		}
	}
}

// TestScaleSearchKernelE4M3: the fused E4M3 search kernels (the Search of
// the MXFP8 and E4M3 codecs) run for searching casts of MXFP8 and of e4m3fn
// with float32 scales and store the general path's bytes, on odd shapes,
// rows of one block, rows with NaN, Inf and all-zero blocks, and the
// fixture tensors.
func TestScaleSearchKernelE4M3(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 44))
	var inputs []searchInput
	for _, shape := range [][]int{{1, 32}, {3, 96}, {130, 300}, {5, 64}, {2, 3, 256}, {129, 128}} {
		n := 1
		for _, d := range shape {
			n *= d
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(9)-4))
		}
		inputs = append(inputs, searchInput{fmt.Sprint(shape), shape, x})
	}
	edge := searchEdgeInput(r, 48)
	edge[5] = float32(math.NaN())
	edge[256+40] = float32(math.Inf(-1))
	clear(edge[512 : 512+256])
	inputs = append(inputs, searchInput{"edges", []int{48, 256}, edge})
	for _, in := range searchInputs(t) {
		if len(in.x) <= 1<<16 {
			inputs = append(inputs, in)
		}
	}
	tested := 0
	for _, name := range []string{"mxfp8e4", "fp8e4_block128", "fp8e4_channel"} {
		dt := MustLookup(name)
		for _, in := range inputs {
			o := Options{ScaleSearch: true, Form: Actual}
			c, err := newCaster(in.x, in.shape, dt, o)
			if err != nil {
				continue // a shape the datatype does not take
			}
			if name == "mxfp8e4" && in.shape[len(in.shape)-1]%32 == 0 {
				require.Equal(t, kernelMXFP8, c.kernel(), "%s %s", name, in.name)
			} else if name != "mxfp8e4" {
				require.Equal(t, kernelFP8, c.groupKernel().kind, "%s %s", name, in.name)
			}
			fast, err := castPath(in.x, in.shape, dt, &o, true, true)
			require.NoError(t, err)
			gen := castGeneral(t, in.x, in.shape, dt, &o)
			requireSameParts(t, gen, fast, name+" "+in.name)
			tested++
		}
	}
	require.Greater(t, tested, 2*len(inputs))
}

// castGeneral is castPath(x, shape, dt, o, true, true) with the scale
// search taking candidateErr's general path (encode, decode, sum) for every
// element format (noSearchFast).
func castGeneral(t *testing.T, x []float32, shape []int, dt *DataType, o *Options) *Tensor {
	t.Helper()
	noSearchFast = true
	defer func() { noSearchFast = false }()
	gen, err := castPath(x, shape, dt, o, true, true)
	require.NoError(t, err)
	return gen
}

// requireSameParts requires got's parts to hold want's bytes; msg names the
// case.
func requireSameParts(t *testing.T, want, got *Tensor, msg string) {
	t.Helper()
	for i, p := range got.Parts() {
		require.Equal(t, want.Parts()[i].Bytes, p.Bytes, "%s part %s", msg, p.Name)
	}
}
