package sparsity

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/mask"
)

// Example A, 2:4 on a 2×8 matrix, worked by hand:
//
//	row 0: 0.1 −0.9 0.5 0.2 | 3 −4 0 1   keeps columns 1,2 | 4,5
//	row 1: 1 0 0 2 | 0 5 6 0             keeps columns 0,3 | 5,6
//
// Mask bytes: row 0 bits 1,2,4,5 = 0x36; row 1 bits 0,3,5,6 = 0x69.
// Indices: row 0 (1,2)(0,1) → nibbles 0b1001, 0b0100 → 0x49; row 1 (0,3)(1,2)
// → 0b1100, 0b1001 → 0x9c.
var (
	exA      = []float32{0.1, -0.9, 0.5, 0.2, 3, -4, 0, 1, 1, 0, 0, 2, 0, 5, 6, 0}
	exAShape = []int{2, 8}
	exAVals  = []float32{-0.9, 0.5, 3, -4, 1, 2, 5, 6}
	exAMask  = []byte{0x36, 0x69}
	exAMeta  = []byte{0x49, 0x9c}
)

func TestStorageExampleA(t *testing.T) {
	m, err := Magnitude(exA, exAShape, -1, P24)
	require.NoError(t, err)
	assert.Equal(t, exAMask, m.Bytes())
	assert.Equal(t, exAMask, PackRows(m))

	vals, err := Compress(exA, exAShape, -1, P24, m)
	require.NoError(t, err)
	assert.Equal(t, exAVals, vals)
	vs, err := ValuesShape(exAShape, -1, P24)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 4}, vs)

	meta, err := EncodeIndices(m, -1, P24)
	require.NoError(t, err)
	assert.Equal(t, exAMeta, meta)

	back, err := DecodeIndices(exAMeta, exAShape, -1, P24)
	require.NoError(t, err)
	assert.True(t, back.Equal(m))
	dense, err := Expand(exAVals, exAShape, -1, P24, back)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, -0.9, 0.5, 0, 3, -4, 0, 0, 1, 0, 0, 2, 0, 5, 6, 0}, dense)
}

// Example B, 2:4 on a 2×12 matrix: rows are not whole bytes.
//
//	row 0 keeps (0,1)(2,3)(0,3): columns 0,1,6,7,8,11 → bytes 0xc3, 0x09
//	row 1 keeps (1,2)(0,2)(1,3): columns 1,2,4,6,9,11 → bytes 0x56, 0x0a
//
// Indices, 6 per row (12 bits, 2 bytes): row 0 nibbles 0x4, 0xe, 0xc → 0xe4,
// 0x0c; row 1 nibbles 0x9, 0x8, 0xd → 0x89, 0x0d.
func TestStorageExampleB(t *testing.T) {
	keep := []bool{
		true, true, false, false, false, false, true, true, true, false, false, true,
		false, true, true, false, true, false, true, false, false, true, false, true,
	}
	m, err := mask.FromBools([]int{2, 12}, keep)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xc3, 0x09, 0x56, 0x0a}, PackRows(m))
	meta, err := EncodeIndices(m, 1, P24)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xe4, 0x0c, 0x89, 0x0d}, meta)

	back, err := UnpackRows([]byte{0xc3, 0x09, 0x56, 0x0a}, []int{2, 12})
	require.NoError(t, err)
	assert.True(t, back.Equal(m))
	back, err = DecodeIndices(meta, []int{2, 12}, 1, P24)
	require.NoError(t, err)
	assert.True(t, back.Equal(m))

	// A set padding bit, a short buffer, decreasing indices.
	_, err = UnpackRows([]byte{0xc3, 0x19, 0x56, 0x0a}, []int{2, 12})
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 1, de.Offset)
	_, err = UnpackRows([]byte{0xc3, 0x09, 0x56}, []int{2, 12})
	require.ErrorIs(t, err, ErrShape)
	_, err = DecodeIndices([]byte{0xe4, 0x0c, 0x89, 0x1d}, []int{2, 12}, 1, P24)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 3, de.Offset)
	_, err = DecodeIndices([]byte{0xe4, 0x0c, 0x86, 0x0d}, []int{2, 12}, 1, P24) // (2,1)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 2, de.Offset)
	_, err = DecodeIndices([]byte{0xe4, 0x0c, 0x8a, 0x0d}, []int{2, 12}, 1, P24) // (2,2)
	require.ErrorIs(t, err, ErrDecode)
	_, err = DecodeIndices(meta[:3], []int{2, 12}, 1, P24)
	require.ErrorIs(t, err, ErrShape)
}

// Example C, 4:8 on one row of 16: group 0 magnitudes 8 2 7 1 6 3 5 4 keep
// 0,2,4,6 (0x55); group 1 = 1..8 keeps 4..7 (0xf0). Indices 0,2,4,6,4,5,6,7
// in 3 bits each, LSB first: 0 | 2<<3 | 4<<6 | 6<<9 | 4<<12 | 5<<15 | 6<<18
// | 7<<21 = 0xfacd10 → bytes 0x10, 0xcd, 0xfa.
func TestStorageExample48(t *testing.T) {
	x := []float32{8, -2, 7, 1, -6, 3, 5, -4, 1, 2, 3, 4, 5, 6, 7, 8}
	m, err := Magnitude(x, []int{16}, 0, P48)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x55, 0xf0}, PackRows(m))
	vals, err := Compress(x, []int{16}, 0, P48, m)
	require.NoError(t, err)
	assert.Equal(t, []float32{8, 7, -6, 5, 5, 6, 7, 8}, vals)
	meta, err := EncodeIndices(m, 0, P48)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x10, 0xcd, 0xfa}, meta)
	back, err := DecodeIndices(meta, []int{16}, 0, P48)
	require.NoError(t, err)
	assert.True(t, back.Equal(m))
}

// TestStorageAxis0 compresses a 4×2 tensor 2:4 down its columns by hand.
func TestStorageAxis0(t *testing.T) {
	x := []float32{1, -8, 4, 7, -3, 6, 2, 5} // column 0: 1 4 −3 2; column 1: −8 7 6 5
	m, err := Magnitude(x, []int{4, 2}, 0, P24)
	require.NoError(t, err)
	// Column 0 keeps rows 1,2; column 1 keeps rows 0,1.
	assert.Equal(t, []bool{false, true, true, true, true, false, false, false}, m.Bools())
	vals, err := Compress(x, []int{4, 2}, 0, P24, m)
	require.NoError(t, err)
	// Values [2, 2]: row k holds each column's k-th kept value.
	assert.Equal(t, []float32{4, -8, -3, 7}, vals)
	meta, err := EncodeIndices(m, 0, P24)
	require.NoError(t, err)
	// Values rows are [4, −8] (indices 1, 0) and [−3, 7] (indices 2, 1):
	// row 0 = 1 | 0<<2 = 0x01, row 1 = 2 | 1<<2 = 0x06.
	assert.Equal(t, []byte{0x01, 0x06}, meta)
	back, err := DecodeIndices(meta, []int{4, 2}, 0, P24)
	require.NoError(t, err)
	assert.True(t, back.Equal(m))
	dense, err := Expand(vals, []int{4, 2}, 0, P24, m)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, -8, 4, 7, -3, 0, 0, 0}, dense)
}

// TestRoundTrips: compress then expand gives the pruned tensor bit for bit
// (−0 and NaN payloads included), indices and row bits decode to the mask,
// for every pattern, several shapes and axes.
func TestRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, p := range []Pattern{P12, P24, {1, 4}, {3, 4}, P48, {3, 8}, {5, 16}, {15, 16}} {
		for _, shape := range [][]int{{p.M}, {3, 2 * p.M}, {2 * p.M, 3}, {2, p.M, 5}} {
			n := 1
			for _, d := range shape {
				n *= d
			}
			x := make([]float32, n)
			for i := range x {
				switch r.IntN(6) {
				case 0:
					x[i] = float32(math.Copysign(0, -1))
				case 1:
					x[i] = math.Float32frombits(0x7fc00001 | r.Uint32()&0x803ff000) // NaN with a payload
				default:
					x[i] = float32(r.NormFloat64())
				}
			}
			for axis := range shape {
				if shape[axis]%p.M != 0 {
					continue
				}
				pruned, m, err := Prune(x, shape, axis, p, Options{})
				require.NoError(t, err)
				vals, err := Compress(x, shape, axis, p, m)
				require.NoError(t, err)
				dense, err := Expand(vals, shape, axis, p, m)
				require.NoError(t, err)
				require.Equal(t, bitsOf(pruned), bitsOf(dense), "%v %v axis %d", p, shape, axis)
				meta, err := EncodeIndices(m, axis, p)
				require.NoError(t, err)
				back, err := DecodeIndices(meta, shape, axis, p)
				require.NoError(t, err)
				require.True(t, back.Equal(m))
				back, err = UnpackRows(PackRows(m), shape)
				require.NoError(t, err)
				require.True(t, back.Equal(m))
			}
		}
	}
}

func bitsOf(x []float32) []uint32 {
	b := make([]uint32, len(x))
	for i, v := range x {
		b[i] = math.Float32bits(v)
	}
	return b
}

func TestStorageErrors(t *testing.T) {
	m, err := Magnitude(exA, exAShape, -1, P24)
	require.NoError(t, err)
	_, err = Compress(exA, exAShape, -1, P48, m) // 2:4 mask is 4:8 too, fine
	require.NoError(t, err)
	_, err = Compress(exA, exAShape, -1, Pattern{1, 4}, m)
	require.ErrorIs(t, err, ErrNotNM)
	_, err = Compress(exA[:8], exAShape, -1, P24, m)
	require.ErrorIs(t, err, ErrShape)
	_, err = Compress(exA, []int{16}, -1, P24, m)
	require.ErrorIs(t, err, ErrShape)
	_, err = Expand(exAVals[:7], exAShape, -1, P24, m)
	require.ErrorIs(t, err, ErrShape)
	_, err = EncodeIndices(m, -1, Pattern{1, 4})
	require.ErrorIs(t, err, ErrNotNM)
	_, err = ValuesShape(exAShape, 0, P24)
	require.ErrorIs(t, err, ErrShape)
}

// The CUTLASS metadata vectors: groups {0,1},{0,2},{1,3},{2,3} give nibbles
// 0x4, 0x8, 0xd, 0xe, the int16 word 0xed84, bytes 0x84, 0xed.
func TestCUTLASSPlain(t *testing.T) {
	keep := []bool{
		true, true, false, false, true, false, true, false,
		false, true, false, true, false, false, true, true,
	}
	m, err := mask.FromBools([]int{1, 16}, keep)
	require.NoError(t, err)
	meta, err := EncodeCUTLASS(m, CUTLASSHalf, false)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x84, 0xed}, meta)
	back, err := DecodeCUTLASS(meta, 1, 16, CUTLASSHalf, false)
	require.NoError(t, err)
	assert.True(t, back.Equal(m))

	// Either index order decodes (older PyTorch encoders), 0b0001 = (1,0).
	back, err = DecodeCUTLASS([]byte{0x81, 0xed}, 1, 16, CUTLASSHalf, false)
	require.NoError(t, err)
	assert.True(t, back.Equal(m))
	// A nibble naming one column twice: 0b0101 = (1,1).
	_, err = DecodeCUTLASS([]byte{0x84, 0xe5}, 1, 16, CUTLASSHalf, false)
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 1, de.Offset)
	assert.Equal(t, int64(0xe5), de.Value)

	// int8: one int32 word per 32 columns, the same nibbles.
	m32, err := mask.FromBools([]int{1, 32}, append(slices.Clone(keep), keep...))
	require.NoError(t, err)
	meta, err = EncodeCUTLASS(m32, CUTLASSInt8, false)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x84, 0xed, 0x84, 0xed}, meta)
	_, err = EncodeCUTLASS(m, CUTLASSInt8, false) // 16 columns: not a word
	require.ErrorIs(t, err, ErrShape)

	// float32, 1:2: pairs keep first, second, second, first, first, first,
	// second, second → nibbles 4 e e 4 4 4 e e → bytes 0xe4, 0x4e, 0x44, 0xee.
	pk := []bool{
		true, false, false, true, false, true, true, false,
		true, false, true, false, false, true, false, true,
	}
	mf, err := mask.FromBools([]int{1, 16}, pk)
	require.NoError(t, err)
	meta, err = EncodeCUTLASS(mf, CUTLASSFloat32, false)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xe4, 0x4e, 0x44, 0xee}, meta)
	back, err = DecodeCUTLASS(meta, 1, 16, CUTLASSFloat32, false)
	require.NoError(t, err)
	assert.True(t, back.Equal(mf))
	_, err = DecodeCUTLASS([]byte{0xe4, 0x4e, 0x48, 0xee}, 1, 16, CUTLASSFloat32, false)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 2, de.Offset)
	_, err = EncodeCUTLASS(m, CUTLASSFloat32, false) // 2:4, not 1:2
	require.ErrorIs(t, err, ErrNotNM)
	_, err = DecodeCUTLASS(meta[:3], 1, 16, CUTLASSFloat32, false)
	require.ErrorIs(t, err, ErrShape)
}

// TestCUTLASSReorderOffsets checks the word moves against the published
// vector for int16 metadata, 32 rows, 2 words per row.
func TestCUTLASSReorderOffsets(t *testing.T) {
	for _, c := range [][3]int{
		{0, 0, 0}, {0, 1, 2}, {1, 0, 8}, {1, 1, 10}, {7, 0, 56},
		{8, 0, 1}, {8, 1, 3}, {16, 0, 4}, {24, 0, 5}, {31, 1, 63},
	} {
		assert.Equal(t, c[2], cutlassOffset(c[0], c[1], 32, CUTLASSHalf), "(%d,%d)", c[0], c[1])
	}
	// The moves are a permutation, for each word size and a few sizes.
	for _, e := range []CUTLASSElem{CUTLASSHalf, CUTLASSInt8} {
		for _, rows := range []int{32, 64} {
			for _, words := range []int{2, 4, 6} {
				seen := make([]bool, rows*words)
				for r := 0; r < rows; r++ {
					for c := 0; c < words; c++ {
						o := cutlassOffset(r, c, rows, e)
						require.False(t, seen[o])
						seen[o] = true
					}
				}
			}
		}
	}
}

// TestCUTLASSReordered: 32 rows × 32 columns of half, every group {2,3}
// (word 0xeeee) except word (8, 1), 0xed84; it moves to word 3 (bytes 6, 7).
func TestCUTLASSReordered(t *testing.T) {
	keep := make([]bool, 32*32)
	for r := 0; r < 32; r++ {
		for c := 0; c < 32; c++ {
			keep[r*32+c] = c%4 >= 2
		}
	}
	special := []bool{
		true, true, false, false, true, false, true, false,
		false, true, false, true, false, false, true, true,
	}
	copy(keep[8*32+16:], special)
	m, err := mask.FromBools([]int{32, 32}, keep)
	require.NoError(t, err)
	want := slices.Repeat([]byte{0xee}, 32*2*2)
	want[6], want[7] = 0x84, 0xed
	meta, err := EncodeCUTLASS(m, CUTLASSHalf, true)
	require.NoError(t, err)
	assert.Equal(t, want, meta)
	back, err := DecodeCUTLASS(meta, 32, 32, CUTLASSHalf, true)
	require.NoError(t, err)
	assert.True(t, back.Equal(m))
	// The error names the byte in the reordered buffer.
	meta[7] = 0x5d
	_, err = DecodeCUTLASS(meta, 32, 32, CUTLASSHalf, true)
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 7, de.Offset)

	// Sizes the reordered layout refuses.
	for _, c := range []struct {
		rows, k int
		e       CUTLASSElem
	}{{16, 32, CUTLASSHalf}, {32, 16, CUTLASSHalf}, {8, 64, CUTLASSInt8}, {16, 32, CUTLASSInt8}, {32, 8, CUTLASSFloat32}, {16, 16, CUTLASSFloat32}} {
		_, err := CUTLASSMetaShape(c.rows, c.k, c.e, true)
		require.ErrorIs(t, err, ErrShape, "%+v", c)
	}
	ms, err := CUTLASSMetaShape(16, 64, CUTLASSInt8, true)
	require.NoError(t, err)
	assert.Equal(t, [2]int{16, 2}, ms)
	ms, err = CUTLASSMetaShape(32, 16, CUTLASSFloat32, true)
	require.NoError(t, err)
	assert.Equal(t, [2]int{32, 2}, ms)
	_, err = CUTLASSMetaShape(32, 32, CUTLASSElem(7), false)
	require.ErrorIs(t, err, ErrShape)

	// Round trips for every element type in both forms on random masks.
	r := rand.New(rand.NewPCG(13, 14))
	for _, e := range []CUTLASSElem{CUTLASSHalf, CUTLASSInt8, CUTLASSFloat32} {
		for _, re := range []bool{false, true} {
			rows, k := 64, 128
			x := make([]float32, rows*k)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			m, err := Magnitude(x, []int{rows, k}, 1, e.Pattern())
			require.NoError(t, err)
			meta, err := EncodeCUTLASS(m, e, re)
			require.NoError(t, err)
			ms, err := CUTLASSMetaShape(rows, k, e, re)
			require.NoError(t, err)
			require.Len(t, meta, ms[0]*ms[1]*e.WordBytes())
			back, err := DecodeCUTLASS(meta, rows, k, e, re)
			require.NoError(t, err)
			require.True(t, back.Equal(m), "%v reordered=%v", e, re)
		}
	}
}

// compressed-tensors: keep row 1,1,0,0,0,1,1,0 packs to 0x63.
func TestSparseBitmask(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	x := []float32{1, 2, 0, 0, 0, -3, 4, 0, 0, 0, negZero, 5, 0, 0, 0, 0}
	s, err := NewSparseBitmask(x, []int{2, 8})
	require.NoError(t, err)
	assert.Equal(t, [2]int{2, 8}, s.Shape)
	assert.Equal(t, []float32{1, 2, -3, 4, 5}, s.Compressed)
	assert.Equal(t, []byte{0x63, 0x08}, s.Bitmask)
	assert.Equal(t, []int64{0, 4}, s.RowOffsets)
	d, err := s.Dense()
	require.NoError(t, err)
	want := slices.Clone(x)
	want[10] = 0 // −0 is not stored: it comes back +0
	assert.Equal(t, bitsOf(want), bitsOf(d))

	// Three columns: one byte per row.
	s, err = NewSparseBitmask([]float32{0, 7, 0, 1, 1, 1}, []int{2, 3})
	require.NoError(t, err)
	assert.Equal(t, []byte{0x02, 0x07}, s.Bitmask)
	assert.Equal(t, []int64{0, 1}, s.RowOffsets)

	bad := *s
	bad.RowOffsets = []int64{0, 2}
	_, err = bad.Dense()
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 1, de.Offset)
	bad = *s
	bad.RowOffsets = []int64{0}
	_, err = bad.Dense()
	require.ErrorIs(t, err, ErrShape)
	bad = *s
	bad.Compressed = bad.Compressed[:3]
	_, err = bad.Dense()
	require.ErrorIs(t, err, ErrShape)
	bad = *s
	bad.Bitmask = []byte{0x0a, 0x07}
	_, err = bad.Dense()
	require.ErrorIs(t, err, ErrDecode)
	_, err = NewSparseBitmask(x, []int{16})
	require.ErrorIs(t, err, ErrShape)
}

func TestSparse24Bitmask(t *testing.T) {
	s, err := NewSparse24Bitmask(exA, exAShape, nil)
	require.NoError(t, err)
	assert.Equal(t, exAVals, s.Compressed)
	assert.Equal(t, exAMask, s.Bitmask)
	d, err := s.Dense()
	require.NoError(t, err)
	assert.Equal(t, []float32{0, -0.9, 0.5, 0, 3, -4, 0, 0, 1, 0, 0, 2, 0, 5, 6, 0}, d)

	// A given mask is used as is: row 0 keeps (0,1)(2,3) instead.
	m, err := UnpackRows([]byte{0xc3, 0x69}, exAShape)
	require.NoError(t, err)
	s2, err := NewSparse24Bitmask(exA, exAShape, m)
	require.NoError(t, err)
	assert.Equal(t, []float32{0.1, -0.9, 0, 1, 1, 2, 5, 6}, s2.Compressed)

	bad := *s
	bad.Bitmask = []byte{0x37, 0x69} // group 0 of row 0 keeps three
	_, err = bad.Dense()
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 0, de.Offset)
	bad = *s
	bad.Bitmask = []byte{0x36, 0x19} // group 1 of row 1 keeps one
	_, err = bad.Dense()
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 1, de.Offset)
	bad = *s
	bad.Compressed = bad.Compressed[1:]
	_, err = bad.Dense()
	require.ErrorIs(t, err, ErrShape)
	bad = *s
	bad.Shape = [2]int{2, 6}
	_, err = bad.Dense()
	require.ErrorIs(t, err, ErrShape)
	_, err = NewSparse24Bitmask(exA, []int{4, 4, 1}, nil)
	require.ErrorIs(t, err, ErrShape)
}
