package tcast

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/mask"
)

// TestKeepHandDerived casts one MXFP4 block whose largest value is masked
// out: the scale comes from the kept values (amax 3: floor(log2 3) − 2 = −1,
// E8M0 code 126), 3/2^-1 = 6 is code 0x7, 0.5/2^-1 = 1 is code 0x2, and the
// dropped elements are stored as code 0.
func TestKeepHandDerived(t *testing.T) {
	x := make([]float32, 32)
	x[0], x[1], x[2], x[3] = 1e6, 3, 0.5, -8
	keep := make([]bool, 32)
	for i := range keep {
		keep[i] = true
	}
	keep[0], keep[3] = false, false
	for _, stream := range []bool{true, false} {
		act, err := castPath(x, []int{1, 32}, MustLookup("mxfp4"), &Options{Form: Actual, Keep: keepMask(t, []int{1, 32}, keep)}, true, stream)
		require.NoError(t, err)
		assert.Equal(t, []byte{126}, act.Scale.Bytes)
		assert.Equal(t, []byte{0, 7, 2, 0}, act.Data.Bytes[:4])
		assert.Equal(t, 30, act.Mask.Count())
	}
}

// TestKeepUnscaled checks that an unscaled datatype stores zero at the
// dropped elements too (+0: code 0 for bfloat16 0x0000, float32 0x00000000),
// on both paths and in every form, and keeps the mask.
func TestKeepUnscaled(t *testing.T) {
	x := []float32{1.5, -2, 3, -0.25, 7, 1e-3, -1e9, 4}
	keep := []bool{true, false, true, false, false, true, true, false}
	m := keepMask(t, []int{2, 4}, keep)
	for _, name := range []string{"bfloat16", "float16", "float32", "float8_e4m3fn"} {
		for _, stream := range []bool{true, false} {
			act, err := castPath(x, []int{2, 4}, MustLookup(name), &Options{Form: Actual, Keep: m}, true, stream)
			require.NoError(t, err, name)
			require.True(t, m.Equal(act.Mask), name)
			codes, err := act.Data.Codes()
			require.NoError(t, err)
			virt, err := castPath(x, []int{2, 4}, MustLookup(name), &Options{Keep: m}, true, stream)
			require.NoError(t, err)
			for i, k := range keep {
				if !k {
					assert.Zero(t, codes[i], "%s stream=%v: dropped element %d", name, stream, i)
					assert.Equal(t, uint32(0), math.Float32bits(virt.Values[i]), "%s: +0", name)
				} else {
					assert.NotZero(t, codes[i], "%s: kept element %d", name, i)
				}
			}
		}
	}
}

// TestKeepBroadcast checks that a keep mask broadcasts to the input (a
// per-row [4,1] mask, a per-column [64] one) and gives the cast of the
// explicit full mask, which the tensor holds.
func TestKeepBroadcast(t *testing.T) {
	x := randomInput(rand.New(rand.NewPCG(31, 32)), 4*64, true)
	shape := []int{4, 64}
	rows := keepMask(t, []int{4, 1}, []bool{true, false, true, true})
	cols := make([]bool, 64)
	for i := range cols {
		cols[i] = i%5 != 0
	}
	colMask := keepMask(t, []int{64}, cols)
	for _, m := range []*mask.Mask{rows, colMask} {
		full, err := m.Broadcast(shape)
		require.NoError(t, err)
		for _, name := range []string{"mxfp4", "nvfp4", "uint4_g32", "mx6", "mxfp4s"} {
			dt := MustLookup(name)
			got, err := Cast(x, shape, dt, &Options{Form: Actual, Keep: m})
			require.NoError(t, err, name)
			want, err := Cast(x, shape, dt, &Options{Form: Actual, Keep: full})
			require.NoError(t, err, name)
			assert.True(t, full.Equal(got.Mask), name)
			gp, wp := got.Parts(), want.Parts()
			require.Len(t, gp, len(wp))
			for i := range gp {
				assert.Equal(t, wp[i].Bytes, gp[i].Bytes, "%s %s", name, gp[i].Name)
			}
		}
	}
	// A rank-0 input takes a mask of shape [] or [1].
	for _, s := range [][]int{{}, {1}} {
		m, err := mask.Full(s, false)
		require.NoError(t, err)
		act, err := Cast([]float32{5}, []int{}, MustLookup("mxfp4"), &Options{Form: Actual, Keep: m})
		require.NoError(t, err)
		assert.Equal(t, []int{1}, act.Mask.Shape())
		assert.Equal(t, []byte{0}, act.Data.Bytes)
	}
	_, err := Cast(x, shape, MustLookup("mxfp4"), &Options{Keep: keepMask(t, []int{3}, []bool{true, true, true})})
	require.Error(t, err)
	assert.True(t, errors.Is(err, mask.ErrShape))
	assert.Contains(t, err.Error(), "keep mask")
}

// TestMaskParts checks the mask as a part in each form, its conversion back,
// and that Compress, Expand and Validate carry and check it.
func TestMaskParts(t *testing.T) {
	keep := []bool{true, false, true, true, false, false, false, false, true, true}
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	act, err := Cast(x, []int{10}, MustLookup("mxfp4"), &Options{Form: Actual, Keep: keepMask(t, []int{10}, keep)})
	require.NoError(t, err)
	part := func(tt *Tensor) *Part {
		for _, p := range tt.Parts() {
			if p.Name == "mask" {
				return p.Part
			}
		}
		return nil
	}
	ap := part(act)
	require.NotNil(t, ap)
	assert.Equal(t, []byte{1, 0, 1, 1, 0, 0, 0, 0, 1, 1}, ap.Bytes)
	assert.False(t, ap.Packed)
	assert.Equal(t, "uint8", ap.Storage())
	comp, err := Compress(act)
	require.NoError(t, err)
	cp := part(comp)
	assert.Equal(t, []byte{0x0d, 0x03}, cp.Bytes)
	assert.Equal(t, "packed1", cp.Storage())
	for _, p := range []*Part{ap, cp} {
		m, err := p.Mask()
		require.NoError(t, err)
		assert.True(t, act.Mask.Equal(m))
	}
	exp, err := Expand(comp)
	require.NoError(t, err)
	assert.True(t, act.Mask.Equal(exp.Mask))
	comp.Mask.Set(0, false) // the forms hold copies
	assert.True(t, act.Mask.Get(0))
	// 10 codes of 4 bits, one E8M0 scale, 10 mask bits: 58 bits for 10 values.
	assert.InDelta(t, 5.8, act.BitsPerValue(), 1e-12)
	assert.InDelta(t, 5.8, comp.BitsPerValue(), 1e-12)

	bad := *act
	bad.Mask = keepMask(t, []int{2, 5}, keep)
	assert.ErrorContains(t, Validate(&bad), "mask has shape [2 5], want [10]")
	_, err = Compress(&bad)
	assert.Error(t, err)

	_, err = act.Data.Mask()
	assert.ErrorContains(t, err, "is no mask")
	_, err = (&Part{Bits: 2, Shape: []int{4}, Bytes: []byte{0}}).Mask()
	assert.ErrorContains(t, err, "2-bit entries")
	_, err = (&Part{Bits: 1, Shape: []int{10}, Packed: true, Bytes: []byte{0x0d, 0x07}}).Mask()
	assert.ErrorIs(t, err, mask.ErrDecode)
	_, err = (&Part{Bits: 1, Shape: []int{10}, Packed: true, Bytes: []byte{0x0d}}).Mask()
	assert.ErrorIs(t, err, mask.ErrShape)
	_, err = (&Part{Bits: 1, Shape: []int{3}, Bytes: []byte{0, 1, 2}}).Mask()
	assert.ErrorIs(t, err, mask.ErrDecode)
}
