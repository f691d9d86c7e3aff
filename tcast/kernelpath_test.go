package tcast

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/scale"
)

// The kernel datatypes and the family each must take.
// The block sizes of OCP MX and NVFP4.
const mxBlock, nvfp4Block = 32, 16

var kernelDatatypes = []struct {
	name string
	kind kernelKind
}{
	{"mxfp4", kernelMXFP4}, {"mxfp8e4", kernelMXFP8}, {"mxint8", kernelMXINT8}, {"nvfp4", kernelNVFP4},
	{"mxfp8e5", kernelMXFP8E5M2}, {"mxfp6e2", kernelMXFP6E2M3}, {"mxfp6e3", kernelMXFP6E3M2},
}

// edgeBlocks returns the blocks of block elements that sit on every edge the
// kernels must get right, for an element format whose largest normal
// exponent is emax: ties between neighbouring codes at several scales, the
// top binade (saturation), amaxes one ulp below and at a power of two, −0,
// all-zero blocks, float32 subnormals (alone, so the scale clamps to code
// 0, and among normal values), the largest float32 values, NaN and ±Inf.
func edgeBlocks(r *rand.Rand, block int, ties []float32) [][]float32 {
	var out [][]float32
	pad := func(xs ...float32) []float32 {
		b := make([]float32, block)
		copy(b, xs)
		return b
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, e := range []int{-140, -130, -127, -126, -125, -100, -3, 0, 1, 7, 100, 120, 125, 126, 127} {
		p := float32(math.Ldexp(1, e))
		// Ties and the values either side of them, scaled by p.
		var xs []float32
		for _, tv := range ties {
			v := tv * p
			xs = append(xs, v, -v, math.Nextafter32(v, 0), math.Nextafter32(v, inf), -math.Nextafter32(v, inf))
		}
		for lo := 0; lo < len(xs); lo += block {
			b := pad(xs[lo:min(lo+block, len(xs))]...)
			if !isNonFinite(p * 8) {
				b[block-1] = p * 4 // fix the block's binade so the ties keep their scale
			}
			out = append(out, b)
		}
		// amax one ulp below, at, and one ulp above a power of two.
		out = append(out,
			pad(math.Nextafter32(2*p, 0), p/3, -p/7),
			pad(2*p, -p/3, p/5),
			pad(-math.Nextafter32(2*p, inf), p/3),
		)
	}
	// The top binade of float32 (saturating elements, the largest scales).
	maxF := float32(math.MaxFloat32)
	out = append(out, pad(maxF, -maxF, maxF/2, maxF/3, math.Nextafter32(maxF, 0)))
	// Zeros, −0, subnormals.
	sub := func(m uint32) float32 { return math.Float32frombits(m) }
	out = append(out,
		pad(),
		pad(float32(math.Copysign(0, -1))),
		pad(float32(math.Copysign(0, -1)), 0, float32(math.Copysign(0, -1))),
		pad(sub(1), -sub(1), sub(0x7fffff), sub(0x400000), -sub(0x200001)),
		pad(sub(0x7fffff), math.Float32frombits(0x00800000), -sub(3)),
		pad(1, sub(5), -sub(0x7fffff), float32(math.Copysign(0, -1))),
		pad(1e-30, sub(0x12345), -1e-35),
	)
	// NaN and ±Inf, alone and among values.
	out = append(out, pad(nan), pad(1, -inf, 2), pad(inf), pad(3, float32(math.Copysign(math.NaN(), -1)), -4), pad(-inf, nan))
	// Random blocks over a wide range of exponents.
	for range 40 {
		b := randomInput(r, block, r.IntN(3) == 0)
		e := r.IntN(260) - 140
		for i := range b {
			b[i] = float32(math.Ldexp(float64(b[i]), e))
		}
		out = append(out, b)
	}
	return out
}

// nvfp4TieBlocks returns NVFP4 blocks whose block multiplier d is known
// exactly, so that elements can sit on the E2M1 ties of x / d: the first
// block's amax 2688·2^e makes the tensor scale s_t = 2^e, and a block whose
// amax is 6·s·s_t, for a UE4M3 value s, gets s_b = s and d = s·s_t. Every
// UE4M3 code from 1 to 0x7E is used once, with the ties of kernelTies, and
// the floats either side of them, scaled by d.
func nvfp4TieBlocks(e int) []float32 {
	st := float32(math.Ldexp(1, e))
	x := make([]float32, nvfp4Block)
	x[0] = 2688 * st
	ties := kernelTies(kernelNVFP4)[:7]
	for code := uint32(1); code <= 0x7e; code++ {
		d := fmtUE4M3.Decode(code) * st
		b := []float32{6 * d, -6 * d}
		for _, tv := range ties {
			v := tv * d // exact: at most 3 + 4 significant bits
			b = append(b, v, math.Nextafter32(v, 0), -math.Nextafter32(v, float32(math.Inf(1))))
		}
		for lo := 2; lo < len(b); lo += nvfp4Block - 2 {
			blk := make([]float32, nvfp4Block)
			copy(blk, b[:2])
			copy(blk[2:], b[lo:min(lo+nvfp4Block-2, len(b))])
			x = append(x, blk...)
		}
	}
	if len(x)%32 != 0 {
		x = append(x, make([]float32, nvfp4Block)...) // whole rows of 32
	}
	return x
}

// kernelTies returns the element values at which rounding ties in the
// element format of kind k, relative to a scale of 1: the midpoints between
// neighbouring magnitudes and around the largest one.
func kernelTies(k kernelKind) []float32 {
	// The midpoints between neighbouring magnitudes of an element float
	// format, and values at and beyond its largest one.
	floatTies := func(f *dtype.Format, beyond ...float32) []float32 {
		var t []float32
		for c := uint32(0); c < f.MaxCode(); c++ {
			a, b := f.Decode(c), f.Decode(c+1)
			t = append(t, (a+b)/2)
		}
		return append(t, beyond...)
	}
	switch k {
	case kernelMXFP8:
		return floatTies(fmtE4M3FN, 448, 464, 480, 500)
	case kernelMXFP8E5M2:
		// 61440 is the tie between 57344 and 65536, past the largest.
		return floatTies(fmtE5M2, 57344, 61440, 65000)
	case kernelMXFP6E2M3:
		return floatTies(fmtE2M3, 7.5, 7.75, 7.9)
	case kernelMXFP6E3M2:
		return floatTies(fmtE3M2, 28, 30, 31.5)
	case kernelMXINT8:
		var t []float32
		for q := 0; q < 128; q++ {
			t = append(t, (float32(q)+0.5)/64)
		}
		return t
	}
	// E2M1 (MXFP4, and NVFP4 relative to its block multiplier).
	return []float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 6, 7, 7.5}
}

// tensorsEqual compares two tensors part by part, bytes and values bit for bit.
func tensorsEqual(t *testing.T, want, got *Tensor, msg string) {
	t.Helper()
	require.Equal(t, want.Form, got.Form, msg)
	require.Equal(t, want.Shape, got.Shape, msg)
	wp, gp := want.Parts(), got.Parts()
	require.Equal(t, len(wp), len(gp), msg)
	for i := range wp {
		w, g := wp[i], gp[i]
		require.Equal(t, w.Format, g.Format, "%s part %d", msg, i)
		require.Equal(t, w.Bits, g.Bits, "%s part %d", msg, i)
		require.Equal(t, w.Packed, g.Packed, "%s part %d", msg, i)
		require.Equal(t, w.Shape, g.Shape, "%s part %d", msg, i)
		if !slices.Equal(w.Bytes, g.Bytes) {
			j := 0
			for j < min(len(w.Bytes), len(g.Bytes)) && w.Bytes[j] == g.Bytes[j] {
				j++
			}
			t.Fatalf("%s part %d: byte %d differs (want % x, got % x)", msg, i, j,
				w.Bytes[j:min(j+8, len(w.Bytes))], g.Bytes[j:min(j+8, len(g.Bytes))])
		}
	}
	valuesEqual(t, want.Values, got.Values, msg)
}

// valuesEqual compares float32 slices bit for bit, NaN payloads included.
func valuesEqual(t *testing.T, want, got []float32, msg string) {
	t.Helper()
	require.Equal(t, len(want), len(got), msg)
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("%s: value %d: want %#08x (%v), got %#08x (%v)", msg, i,
				math.Float32bits(want[i]), want[i], math.Float32bits(got[i]), got[i])
		}
	}
}

// TestKernelPathEqualsReference casts every edge block, and random tensors
// of several shapes, through the kernels and through the block-by-block path,
// in every form, and compares every part and value bit for bit; then the
// kernels' Decompress against the reference one, of those casts and of random
// codes and scales (every scale code, NaN element codes).
func TestKernelPathEqualsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, kd := range kernelDatatypes {
		dt := MustLookup(kd.name)
		k, block := kernelKindOf(dt)
		require.Equal(t, kd.kind, k, kd.name)
		var x []float32
		for _, b := range edgeBlocks(r, block, kernelTies(k)) {
			x = append(x, b...)
		}
		rows := len(x) / (4 * block)
		x = x[:rows*4*block]
		big := randomInput(r, 3*4096, true)
		big[5000] = float32(math.NaN())
		inputs := []struct {
			x     []float32
			shape []int
		}{
			{x, []int{len(x)}},
			{x, []int{rows, 4 * block}},
			{x[:rows/2*2*block], []int{2, rows / 2, block}},
			{big, []int{3, 4096}},
			{big, []int{3, 2, 2048}},
			{nil, []int{0, block}},
			{[]float32{}, []int{block, 0}},
		}
		if k == kernelNVFP4 {
			for _, e := range []int{-20, 0, 9} {
				v := nvfp4TieBlocks(e)
				inputs = append(inputs, struct {
					x     []float32
					shape []int
				}{v, []int{len(v) / 32, 32}})
			}
		}
		for _, in := range inputs {
			for _, form := range []Form{Virtual, Actual, Compressed} {
				msg := fmt.Sprintf("%s %v %s", kd.name, in.shape, form)
				opts := DefaultOptions()
				opts.Form = form
				c, err := newCaster(orEmpty(in.x), in.shape, dt, opts)
				require.NoError(t, err, msg)
				require.Equal(t, kd.kind, c.kernel(), msg)
				castBothPaths(t, r, in.x, in.shape, dt, &opts, msg)
			}
		}
	}
}

// castBothPaths casts x through Cast (the kernels, where they apply) and
// through the block-by-block path with opts and compares every part bit for
// bit; for the Actual and Compressed forms it then compares Decompress of
// both paths, of the cast and of random codes, scales, zero points and
// tensor scale (every scale code, element NaNs, junk in the high nibble of
// Actual 4-bit codes), drawn from r.
func castBothPaths(t *testing.T, r *rand.Rand, x []float32, shape []int, dt *DataType, opts *Options, msg string) {
	t.Helper()
	want, err := cast(x, shape, dt, opts, false)
	require.NoError(t, err, msg)
	got, err := Cast(x, shape, dt, opts)
	require.NoError(t, err, msg)
	tensorsEqual(t, want, got, msg)
	if opts.Form == Virtual {
		return
	}
	wantV, err := decompress(want, false)
	require.NoError(t, err, msg)
	gotV, err := Decompress(got)
	require.NoError(t, err, msg)
	valuesEqual(t, wantV, gotV, msg+" decompress")
	for _, p := range []*Part{got.Data, got.Scale, got.Zero} {
		if p == nil {
			continue
		}
		for i := range p.Bytes {
			p.Bytes[i] = byte(r.Uint32())
		}
	}
	if got.TensorScale != nil {
		putCode(got.TensorScale, 0, math.Float32bits(float32(math.Ldexp(r.Float64(), r.IntN(60)-40))))
	}
	wantV, err = decompress(got, false)
	require.NoError(t, err, msg)
	gotV, err = Decompress(got)
	require.NoError(t, err, msg)
	valuesEqual(t, wantV, gotV, msg+" decompress of random codes")
}

func orEmpty(x []float32) []float32 {
	if x == nil {
		return []float32{}
	}
	return x
}

// TestKernelsEqualReference calls the kernels themselves on the edge blocks
// and compares them with the reference cast of a 1-D tensor (packed codes,
// scales) and its reference decompression.
func TestKernelsEqualReference(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, kd := range kernelDatatypes {
		dt := MustLookup(kd.name)
		k, block := kernelKindOf(dt)
		var x []float32
		for _, b := range edgeBlocks(r, block, kernelTies(k)) {
			x = append(x, b...)
		}
		opts := DefaultOptions()
		opts.Form = Compressed
		ref, err := cast(x, []int{len(x)}, dt, &opts, false)
		require.NoError(t, err)
		codes := make([]byte, packedLen(k, len(x)))
		scales := make([]byte, len(x)/block)
		var tensorMul float32 = 1
		if k == kernelNVFP4 {
			tensorMul = math.Float32frombits(uint32(getCode(ref.TensorScale, 0)))
		}
		quantKernel(k, codes, scales, x, tensorMul)
		assert.Equal(t, ref.Data.Bytes, codes, kd.name)
		assert.Equal(t, ref.Scale.Bytes, scales, kd.name)
		want, err := decompress(ref, false)
		require.NoError(t, err)
		got := make([]float32, len(x))
		dequantKernel(k, got, codes, scales, tensorMul)
		valuesEqual(t, want, got, kd.name)
	}
}

// gateCase is a cast of x that the kernels do not implement.
type gateCase struct {
	name  string
	dt    string
	shape []int
	opts  Options
}

// checkGates checks, for each case, that kernel (the choice of a family of
// kernels) picks none, and that Cast, in Virtual and Compressed form, gives
// the tensor of the block-by-block path.
func checkGates(t *testing.T, x []float32, kernel func(*caster) kernelKind, tests []gateCase) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dt := MustLookup(tc.dt)
			c, err := newCaster(x, tc.shape, dt, tc.opts)
			require.NoError(t, err)
			assert.Equal(t, noKernel, kernel(c))
			for _, form := range []Form{Virtual, Compressed} {
				o := tc.opts
				o.Form = form
				want, err := cast(x, tc.shape, dt, &o, false)
				require.NoError(t, err)
				got, err := Cast(x, tc.shape, dt, &o)
				require.NoError(t, err)
				tensorsEqual(t, want, got, tc.name)
			}
		})
	}
}

// TestKernelPathGates checks that casts the kernels do not implement take the
// block-by-block path, and still agree with it.
func TestKernelPathGates(t *testing.T) {
	x := randomInput(rand.New(rand.NewPCG(25, 26)), 4*96, true)
	keep := make([]bool, len(x))
	for i := range keep {
		keep[i] = i%3 != 0
	}
	checkGates(t, x, func(c *caster) kernelKind { return c.kernel() }, []gateCase{
		{"row not a whole number of blocks", "mxfp4", []int{8, 48}, Options{}},
		{"first axis", "mxfp4", []int{96, 4}, Options{Axis: FirstAxis}},
		{"ceil scales", "mxfp4", []int{4, 96}, Options{Mode: scale.Ceil}},
		{"ties away", "mxfp8e4", []int{4, 96}, Options{Rounding: dtype.RoundAway}},
		{"stochastic", "mxfp4", []int{4, 96}, Options{Rounding: dtype.RoundStochastic, Seed: 3}},
		{"full range", "mxint8", []int{4, 96}, Options{FullRange: true}},
		{"power-of-two scales", "nvfp4", []int{4, 96}, Options{PowerOfTwoScales: true}},
		{"blocks of 16", "mxfp4t16", []int{4, 96}, Options{}},
		{"2-D tiles", "mxfp4s", []int{12, 32}, Options{}},
	})
	// A keep mask keeps the kernels (castKernel zeroes the dropped elements
	// first); TestKernelPathKeepMask compares the two paths.
	c, err := newCaster(x, []int{4, 96}, MustLookup("nvfp4"), Options{Keep: keepMask(t, []int{4, 96}, keep)})
	require.NoError(t, err)
	assert.Equal(t, kernelNVFP4, c.kernel())
	// Power-of-two scales do not change exponent scales: MX keeps the kernels.
	c, err = newCaster(x, []int{4, 96}, MustLookup("mxfp4"), Options{PowerOfTwoScales: true})
	require.NoError(t, err)
	assert.Equal(t, kernelMXFP4, c.kernel())
}

// fuzzSeed returns the little-endian bytes of xs, a fuzz seed that
// fuzzFloats reads back.
func fuzzSeed(xs ...float32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// fuzzFloats reads the fuzzer's bytes as little-endian float32 values (a
// trailing partial value is dropped), padded with zeros to whole blocks of
// block.
func fuzzFloats(data []byte, block int) []float32 {
	x := make([]float32, (len(data)/4+block-1)/block*block)
	for i := range len(data) / 4 {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return x
}

// FuzzMXFP4 compares the kernels' MXFP4 codec (quantKernel, dequantKernel) with the
// reference cast and decompression on inputs made of the fuzzer's bytes (four
// per float32, padded with zeros to whole blocks), and the dequantizer alone
// on the same bytes read as codes and scales.
func FuzzMXFP4(f *testing.F) {
	f.Add(fuzzSeed(0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 7, -0.25))
	f.Add(fuzzSeed(float32(math.NaN()), 1))
	f.Add(fuzzSeed(math.Nextafter32(8, 0), 1e-40, -3))
	f.Add(fuzzSeed(math.MaxFloat32, 1e-45))
	f.Add([]byte{})
	dt := MustLookup("mxfp4")
	f.Fuzz(func(t *testing.T, data []byte) {
		x := fuzzFloats(data, mxBlock)
		n := len(x)
		opts := DefaultOptions()
		opts.Form = Compressed
		ref, err := cast(x, []int{n}, dt, &opts, false)
		if err != nil {
			t.Fatal(err)
		}
		codes, scales := make([]byte, n/2), make([]byte, n/mxBlock)
		quantKernel(kernelMXFP4, codes, scales, x, 1)
		if !slices.Equal(codes, ref.Data.Bytes) || !slices.Equal(scales, ref.Scale.Bytes) {
			t.Fatalf("quantize: codes % x scales % x, reference % x, % x", codes, scales, ref.Data.Bytes, ref.Scale.Bytes)
		}
		check := func(what string) {
			want, err := decompress(ref, false)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float32, n)
			dequantKernel(kernelMXFP4, got, ref.Data.Bytes, ref.Scale.Bytes, 1)
			for i := range want {
				if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
					t.Fatalf("%s: value %d: %#08x, reference %#08x", what, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
				}
			}
		}
		check("dequantize")
		// The input bytes as codes and scales.
		copy(ref.Data.Bytes, data)
		copy(ref.Scale.Bytes, data[min(len(data), len(ref.Data.Bytes)):])
		check("dequantize of raw bytes")
	})
}

// TestKernelPathKeepMask compares the kernel path with the block-by-block
// path for casts with a keep mask, for every kernel datatype in every form:
// random masks, a mask that drops whole blocks, a dropped NaN and Inf (which
// must not reach the scale), a kept NaN (a NaN block), a broadcast mask, and
// negative dropped values (stored as +0).
func TestKernelPathKeepMask(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	shape := []int{4, 64}
	x := randomInput(r, 4*64, false)
	x[1], x[2], x[3] = float32(math.NaN()), float32(math.Inf(-1)), -5 // row 0, block 0: dropped below
	x[70] = float32(math.NaN())                                       // row 1, block 0: kept
	keep := make([]bool, len(x))
	for i := range keep {
		keep[i] = r.IntN(3) > 0
	}
	keep[1], keep[2], keep[3], keep[70] = false, false, false, true
	for i := 128; i < 160; i++ {
		keep[i] = false // row 2, block 0: nothing kept
	}
	masks := map[string]*mask.Mask{"random": keepMask(t, shape, keep)}
	col, err := mask.FromBools([]int{4, 1}, []bool{true, false, true, true})
	require.NoError(t, err)
	masks["broadcast rows"] = col
	for _, kd := range kernelDatatypes {
		dt := MustLookup(kd.name)
		for name, m := range masks {
			for _, form := range []Form{Virtual, Actual, Compressed} {
				opts := Options{Form: form, Keep: m}
				c, err := newCaster(x, shape, dt, opts)
				require.NoError(t, err)
				require.NotEqual(t, noKernel, c.kernel(), kd.name)
				castBothPaths(t, r, x, shape, dt, &opts, fmt.Sprintf("%s %s %s", kd.name, name, form))
			}
		}
	}
}
