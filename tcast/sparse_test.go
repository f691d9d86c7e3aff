package tcast

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/sparsity"
)

func bits32(x []float32) []uint32 {
	b := make([]uint32, len(x))
	for i, v := range x {
		b[i] = math.Float32bits(v)
	}
	return b
}

// TestSparseG11 is TensorCast's sparsity golden G11 (docs/TENSORCAST.md) with
// the signs its implementation loses restored, through a datatype whose
// cast is exact: float32 elements under a power-of-two scale, one tile.
func TestSparseG11(t *testing.T) {
	x := []float32{0.1, -0.9, 0.5, 0.2, 3, -4, 0, 1}
	for _, c := range []struct {
		dt   string
		want []float32
		mask byte
	}{
		{"float32_e8m0_t4n2m4", []float32{0, -0.9, 0.5, 0, 3, -4, 0, 0}, 0x36},
		{"float32_e8m0_t4n1m4", []float32{0, -0.9, 0, 0, 0, -4, 0, 0}, 0x22},
	} {
		dt, err := Lookup(c.dt)
		require.NoError(t, err)
		v, err := Cast(x, []int{8}, dt, nil)
		require.NoError(t, err)
		assert.Equal(t, c.want, v.Values, c.dt)
		assert.Equal(t, []byte{c.mask}, v.Mask.Bytes())
		assert.Equal(t, []int{1}, v.Scale.Shape, "one tile of kept values covers all eight")
	}
}

// TestSparseTileCountsKept: a tile of T with N:M covers T·M/N elements of the
// dense tensor (docs/SPARSITY.md §6).
func TestSparseTileCountsKept(t *testing.T) {
	x := make([]float32, 2*128)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	for _, c := range []struct {
		dt    string
		scale []int
	}{
		{"e2m1_e8m0_t32n2m4", []int{2, 2}},   // 32 kept = 64 dense
		{"e2m1_e8m0_t32n4m8", []int{2, 2}},   // 32 kept = 64 dense
		{"e2m1_e8m0_t32n1m4", []int{2, 1}},   // 32 kept = 128 dense
		{"e2m1_e8m0_t16n2m4", []int{2, 4}},   // 16 kept = 32 dense
		{"e2m1_e8m0_t32n1m2", []int{2, 2}},   // 32 kept = 64 dense
		{"int8_float32_t0n2m4", []int{2, 1}}, // a channel is the whole row
	} {
		dt, err := Lookup(c.dt)
		require.NoError(t, err)
		a, err := Cast(x, []int{2, 128}, dt, &Options{Form: Actual})
		require.NoError(t, err, c.dt)
		assert.Equal(t, c.scale, a.Scale.Shape, c.dt)
	}
	// Along the first axis: 8 rows, tile 4 kept = 8 rows.
	dt, err := Lookup("e2m1_e8m0_t4n2m4")
	require.NoError(t, err)
	a, err := Cast(x[:48], []int{8, 6}, dt, &Options{Form: Actual, Axis: FirstAxis})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 6}, a.Scale.Shape)
	require.NoError(t, sparsity.Check(a.Mask, 0, sparsity.P24))
}

// TestSparseScaleFromKept: the scale comes from the largest kept magnitude,
// not from a pruned one. The mask drops 100; the kept 1, 2, 6, 7 have amax 7:
// OCP's exponent ⌊log2 7⌋ − 2 (E2M1's emax) = 0, E8M0 code 127. Elements
// 1, 2, 6 are exact; 7 saturates to 6.
func TestSparseScaleFromKept(t *testing.T) {
	x := []float32{100, 1, 2, 3, 4, 5, 6, 7}
	keep, err := mask.FromBools([]int{8}, []bool{false, true, true, false, false, false, true, true})
	require.NoError(t, err)
	dt, err := Lookup("e2m1_e8m0_t4n2m4")
	require.NoError(t, err)
	for _, o := range []Options{{Keep: keep}, {Pruning: sparsity.Options{Mask: keep}}} {
		o.Form = Actual
		a, err := Cast(x, []int{8}, dt, &o)
		require.NoError(t, err)
		assert.Equal(t, []byte{127}, a.Scale.Bytes)
		v, err := Decompress(a)
		require.NoError(t, err)
		assert.Equal(t, []float32{0, 1, 2, 0, 0, 0, 6, 6}, v)
	}
	// By magnitude 100 is kept and the exponent is ⌊log2 100⌋ − 2 = 4.
	a, err := Cast(x, []int{8}, dt, &Options{Form: Actual})
	require.NoError(t, err)
	assert.Equal(t, []byte{127 + 4}, a.Scale.Bytes)

	// Wanda norms can prune the largest weight too: norms 0.01 on index 0.
	norms := []float32{0.01, 1, 1, 1, 1, 1, 1, 1}
	a, err = Cast(x, []int{8}, dt, &Options{Form: Actual, Pruning: sparsity.Options{Norms: norms}})
	require.NoError(t, err)
	assert.False(t, a.Mask.Get(0))
	assert.Equal(t, []byte{127}, a.Scale.Bytes) // kept 2, 3 | 6, 7: amax 7

	// A given mask must be N:M; both ways of giving it at once are refused.
	bad, err := mask.FromBools([]int{8}, []bool{true, true, true, false, false, false, true, true})
	require.NoError(t, err)
	_, err = Cast(x, []int{8}, dt, &Options{Keep: bad})
	require.ErrorIs(t, err, sparsity.ErrNotNM)
	_, err = Cast(x, []int{8}, dt, &Options{Keep: keep, Pruning: sparsity.Options{Mask: keep}})
	require.Error(t, err)
	_, err = Cast(x, []int{8}, dt, &Options{Keep: keep, Pruning: sparsity.Options{Norms: norms}})
	require.Error(t, err)
	// The scaled axis must hold whole groups.
	_, err = Cast(x[:6], []int{6}, dt, nil)
	require.Error(t, err)
}

// sparseTypes pairs sparse datatypes with the dense datatype whose tile is
// the sparse tile in dense elements: a sparse cast must equal the masked cast
// of its dense twin with the same mask.
var sparseTypes = []struct{ sparse, dense string }{
	{"e2m1_e8m0_t32n2m4", "e2m1_e8m0_t64"},
	{"e4m3fn_e8m0_t32n2m4", "e4m3fn_e8m0_t64"},
	{"e2m1_e8m0_t32n4m8", "e2m1_e8m0_t64"},
	{"e2m1_e8m0_t32n1m4", "e2m1_e8m0_t128"},
	{"e2m1_e8m0_t16n1m2", "e2m1_e8m0_t32"},
	{"int8_e8m0_t32n2m4", "int8_e8m0_t64"},
	{"int8_float16_t16n2m4", "int8_float16_t32"},
	{"uint8_float16_int8_t16n2m4", "uint8_float16_int8_t32"},
	{"uint4_float16_float16_t32n2m4", "uint4_float16_float16_t64"},
	{"e2m1_multi_ue4m3_float32_t16n2m4", "e2m1_multi_ue4m3_float32_t32"},
	{"e2m1_e8m0_t16s2o1n1m2", "e2m1_e8m0_t32s4o1"},
	{"e2m1_e8m0_t32_t16n2m4", "e2m1_e8m0_t32_t32"},
	{"int8_float32_t0n2m4", "int8_float32_t0"},
	{"e4m3fn_float32_t0n3m4", "e4m3fn_float32_t0"},
}

// TestSparseRoundTrip is the round-trip law for every sparse datatype:
// Decompress of the Compressed and of the Actual cast equal the Values of the
// Virtual cast bit for bit; Compress and Expand move between Actual and
// Compressed exactly; pruned elements are +0; the compressed data holds N/M
// of the codes; and the values equal those of the dense twin cast with the
// same mask as Keep.
func TestSparseRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, st := range sparseTypes {
		sdt, err := Lookup(st.sparse)
		require.NoError(t, err, st.sparse)
		ddt, err := Lookup(st.dense)
		require.NoError(t, err, st.dense)
		p := sparsity.Pattern{N: sdt.Spec().SparseN, M: sdt.Spec().SparseM}
		for _, sh := range []struct {
			shape []int
			axis  int
		}{{[]int{4, 256}, -1}, {[]int{3, 2, 128}, -1}, {[]int{64, 6}, FirstAxis}, {[]int{2, 64, 3}, -2}, {[]int{3, 200}, -1}} {
			n := 1
			for _, d := range sh.shape {
				n *= d
			}
			if len(sdt.Spec().Tiles) == 2 && len(sh.shape) < 2 {
				continue
			}
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(12)-6))
			}
			x[r.IntN(n)] = float32(math.NaN()) // one NaN block
			name := st.sparse + " " + st.dense
			v, err := Cast(x, sh.shape, sdt, &Options{Axis: sh.axis})
			require.NoError(t, err, name)
			a, err := Cast(x, sh.shape, sdt, &Options{Axis: sh.axis, Form: Actual})
			require.NoError(t, err, name)
			c, err := Cast(x, sh.shape, sdt, &Options{Axis: sh.axis, Form: Compressed})
			require.NoError(t, err, name)
			require.True(t, v.Mask.Equal(a.Mask) && v.Mask.Equal(c.Mask))
			require.NoError(t, sparsity.Check(v.Mask, v.Axis, p))

			dc, err := Decompress(c)
			require.NoError(t, err)
			require.Equal(t, bits32(v.Values), bits32(dc), name)
			da, err := Decompress(a)
			require.NoError(t, err)
			require.Equal(t, bits32(v.Values), bits32(da), name)
			for i, k := range v.Mask.Bools() {
				if !k {
					require.Equal(t, uint32(0), math.Float32bits(v.Values[i]), "pruned element %d is +0", i)
				}
			}

			c2, err := Compress(a)
			require.NoError(t, err)
			require.Equal(t, c.Data, c2.Data)
			require.Equal(t, c.Scale, c2.Scale)
			a2, err := Expand(c)
			require.NoError(t, err)
			require.Equal(t, a.Data, a2.Data)
			vs, err := sparsity.ValuesShape(sh.shape, v.Axis, p)
			require.NoError(t, err)
			require.Equal(t, vs, c.Data.Shape)
			require.Equal(t, sh.shape, a.Data.Shape)

			// The dense twin with the same mask: equal values.
			w, err := Cast(x, sh.shape, ddt, &Options{Axis: sh.axis, Keep: v.Mask})
			require.NoError(t, err, name)
			want := slices.Clone(w.Values)
			_ = v.Mask.Apply(want, sh.shape) // a NaN block's pruned elements are 0 in the sparse cast
			require.Equal(t, bits32(want), bits32(v.Values), name)
			require.Equal(t, w.Scale.Bytes, v.Scale.Bytes, name)
		}
	}
}

func TestSparseValidate(t *testing.T) {
	dt, err := Lookup("e2m1_e8m0_t32n2m4")
	require.NoError(t, err)
	x := make([]float32, 128)
	for i := range x {
		x[i] = float32(i%9) - 4
	}
	c, err := Cast(x, []int{2, 64}, dt, &Options{Form: Compressed})
	require.NoError(t, err)
	// 2 rows × 32 kept E2M1 codes = 32 bytes; 128 mask bits = 16 bytes;
	// scale shape [2, 1].
	assert.Len(t, c.Data.Bytes, 32)
	assert.Equal(t, []int{2, 32}, c.Data.Shape)
	assert.Equal(t, []int{2, 1}, c.Scale.Shape)
	parts := c.Parts()
	require.Equal(t, "mask", parts[len(parts)-1].Name)
	assert.Len(t, parts[len(parts)-1].Bytes, 16)
	// Data 4·64 + scale 2·8 + mask 128 bits over 128 elements.
	assert.Equal(t, (4.0*64+16+128)/128, c.BitsPerValue())
	assert.Equal(t, 3.125, dt.BitsPerValue()) // 4·½ + 1 + 8/64

	noMask := *c
	noMask.Mask = nil
	require.Error(t, Validate(&noMask))
	notNM := *c
	notNM.Mask = c.Mask.Not()
	notNM.Mask.Set(0, true)
	require.Error(t, Validate(&notNM))
	wrongData := *c
	d := *c.Data
	d.Shape = []int{2, 64}
	wrongData.Data = &d
	require.Error(t, Validate(&wrongData))

	desc, err := Describe([]int{2, 64}, dt, Compressed, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 32}, desc.Data.Shape)
}

func TestWithSparsity(t *testing.T) {
	for _, c := range []struct {
		dt, code string
		p        sparsity.Pattern
	}{
		{"mxfp4", "float4_e2m1fn_float8_e8m0fnu_t32n2m4", sparsity.P24},
		{"nvfp4", "float4_e2m1fn_multi_ue4m3_float32_t16n2m4", sparsity.P24},
		{"int8_channel", "int8_float32_t0n4m8", sparsity.P48},
		{"mxint8", "q1.6_float8_e8m0fnu_t32n1m2", sparsity.P12},
	} {
		dt, err := Lookup(c.dt)
		require.NoError(t, err)
		s, err := WithSparsity(dt, c.p)
		require.NoError(t, err, c.dt)
		assert.Equal(t, c.code, s.Code())
		again, err := WithSparsity(s, c.p)
		require.NoError(t, err)
		assert.Same(t, s, again)
		_, err = WithSparsity(s, sparsity.Pattern{N: 1, M: 4})
		require.Error(t, err)
	}
	for _, c := range []struct {
		dt string
		p  sparsity.Pattern
	}{
		{"bfloat16", sparsity.P24},              // unscaled
		{"fp8e4_tensor", sparsity.P24},          // one scale per tensor: no tile
		{"mxfp4", sparsity.Pattern{N: 3, M: 4}}, // 3 does not divide 32
		{"mxfp4", sparsity.Pattern{N: 2, M: 3}}, // not a pattern
		{"nvfp4", sparsity.Pattern{N: 2, M: 32}},
		{"nf4", sparsity.P24}, // a codebook datatype
		{"mxfi4", sparsity.P24},
	} {
		dt, err := Lookup(c.dt)
		if err != nil {
			continue
		}
		_, err = WithSparsity(dt, c.p)
		require.Error(t, err, "%s %v", c.dt, c.p)
		if dt.Codebook() != nil {
			assert.Contains(t, err.Error(), "codebook datatypes take no N:M sparsity")
		}
	}
}
