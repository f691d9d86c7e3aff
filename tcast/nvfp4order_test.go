package tcast

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/dtype"
)

// TestNVFP4DecodeOrder decodes a hand-built NVFP4 tensor and checks the order
// of the two multiplications that docs/NUMERICS.md §7 and docs/FORMAT.md
// state: value = element × float32(block scale × tensor scale), each product
// rounded to float32 (nearest, ties to even).
//
// The tensor: 16 elements in one block, block scale code 0x3C (UE4M3
// 0.0111.100 = 1.5 · 2^(7−7) = 1.5), tensor scale 0x3F800001 = 1 + 2^−23.
//
//	d = float32(1.5 · (1 + 2^−23)) = float32(1.5 + 1.5·2^−23)
//	  ulp(1.5) = 2^−23, so 1.5·2^−23 is a tie between 1.5 + 2^−23 (odd last
//	  bit) and 1.5 + 2^−22 (even): d = 1.5 + 2^−22 = 0x3FC00002.
//	element 1.5 (code 0x3): 1.5·d = 2.25 + 1.5·2^−22; ulp(2.25) = 2^−22, a
//	  tie between 2.25 + 2^−22 (odd) and 2.25 + 2^−21 (even): 0x40100002.
//	element 6 (code 0x7): 6·d = 9 + 6·2^−22 = 9 + 1.5·2^−20; ulp(9) = 2^−20,
//	  a tie again, to the even 9 + 2^−19: 0x41100002.
//	element 1 (code 0x2): d itself, 0x3FC00002.
//	element −1.5 (code 0xB): −(2.25 + 2^−21) = 0xC0100002.
//	element 0.5 (code 0x1): 0.5·d = 0.75 + 2^−23, exact: 0x3F400002.
//
// The other order, (element × block scale) × tensor scale, multiplies the
// exact 2.25 by 1 + 2^−23: 2.25 + 2.25·2^−23 = 2.25 + 1.125 ulp, which rounds
// to 2.25 + 2^−22 = 0x40100001; for 6, 9 + 1.125·2^−20 → 0x41100001. Those two
// elements tell the orders apart; for 1 and 0.5 (powers of two) they agree.
func TestNVFP4DecodeOrder(t *testing.T) {
	codes := []byte{0x3, 0x7, 0x2, 0xB, 0x1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x8}
	want := []uint32{0x40100002, 0x41100002, 0x3FC00002, 0xC0100002, 0x3F400002, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80000000}
	// The other order, per element, where it differs.
	otherOrder := map[int]uint32{0: 0x40100001, 1: 0x41100001, 3: 0xC0100001}

	dt := MustLookup("nvfp4")
	ts := binary.LittleEndian.AppendUint32(nil, 0x3F800001)
	a := &Tensor{DataType: dt, Form: Actual, Shape: []int{1, 16}, Axis: 1,
		Data:        &Part{Format: dt.Elem(), Bits: 4, Shape: []int{1, 16}, Bytes: codes},
		Scale:       &Part{Format: dt.Spec().Scale, Bits: 8, Shape: []int{1, 1}, Bytes: []byte{0x3C}},
		TensorScale: &Part{Format: dt.Spec().TensorScale, Bits: 32, Shape: []int{1}, Bytes: ts},
	}
	require.Equal(t, float32(1.5), dt.Spec().Scale.Decode(0x3C), "UE4M3 0x3C")
	c, err := Compress(a)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		t    *Tensor
	}{{"actual", a}, {"compressed", c}} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Decompress(tc.t)
			require.NoError(t, err)
			require.Len(t, v, 16)
			for i, w := range want {
				assert.Equal(t, w, math.Float32bits(v[i]), "element %d", i)
				if o, ok := otherOrder[i]; ok {
					assert.NotEqual(t, o, math.Float32bits(v[i]), "element %d must not be decoded in the other order", i)
				}
			}
		})
	}

	// The same two orders computed here in float32 from the decoded parts.
	e2m1 := dtype.MustParse("e2m1")
	sb, st := float32(1.5), math.Float32frombits(0x3F800001)
	for i, w := range want {
		e := e2m1.Decode(uint32(codes[i]))
		assert.Equal(t, w, math.Float32bits(e*float32(sb*st)), "stated order, element %d", i)
		if o, ok := otherOrder[i]; ok {
			assert.Equal(t, o, math.Float32bits(float32(e*sb)*st), "other order, element %d", i)
		}
	}
}
