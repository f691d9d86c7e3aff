package sparsity

import (
	"fmt"

	shapeutil "github.com/tensorcast-go/tensorcast/internal/shape"

	"github.com/tensorcast-go/tensorcast/mask"
)

// The metadata of PyTorch's CUTLASS semi-structured layout (what
// torch.sparse.to_sparse_semi_structured keeps for the CUTLASS backend), for a
// matrix of rows × k with 2:4 sparsity along k (1:2 for float32). The values
// are the kept elements of each row in increasing column order, rows × k/2:
// what Compress returns along the last axis.
//
// Every group of four columns gives a nibble: bits 1:0 hold the column of its
// first kept element, bits 3:2 the column of its second (so 0b0100 keeps
// columns 0 and 1, 0b1110 keeps 2 and 3). Nibbles fill metadata words LSB
// first, group g of a word in bits 4g..4g+3: int16 words (four groups) for
// 16-bit values, int32 words (eight groups) for 8-bit ones, stored little
// endian. A float32 pair is described as if its 8 bytes were four 16-bit
// halves: 0b0100 when the pair keeps its first value, 0b1110 when it keeps its
// second; so a row of k float32 has k/8 int16 words.
//
// The plain form is the rows × words matrix row-major. The reordered form is
// the layout the kernels read (CUTLASS's ColumnMajorInterleaved<2>, as its
// host reorder_meta builds it): word (r, c) of the plain matrix moves to
//
//	r' = (r div G)·G + (r mod 8)·I + (r mod G) div 8    (G, I = 32, 4 for int16 words; 16, 2 for int32)
//	(r', c) swaps with its 2×2 neighbour: r' even and c odd → (r'+1, c−1); r' odd and c even → (r'−1, c+1)
//	offset = (c' div 2)·rows·2 + r'·2 + (c' mod 2)
//
// in a buffer of the same size.

// CUTLASSElem is the element type of the values, which fixes the pattern and
// the metadata word.
type CUTLASSElem int

const (
	// CUTLASSHalf: float16 or bfloat16 values, 2:4, int16 metadata words.
	CUTLASSHalf CUTLASSElem = iota
	// CUTLASSInt8: int8 (or other 8-bit) values, 2:4, int32 metadata words.
	CUTLASSInt8
	// CUTLASSFloat32: float32 values, 1:2, int16 metadata words.
	CUTLASSFloat32
)

func (e CUTLASSElem) String() string {
	switch e {
	case CUTLASSHalf:
		return "half"
	case CUTLASSInt8:
		return "int8"
	case CUTLASSFloat32:
		return "float32"
	}
	return fmt.Sprintf("CUTLASSElem(%d)", int(e))
}

// Pattern returns 2:4, or 1:2 for float32.
func (e CUTLASSElem) Pattern() Pattern {
	if e == CUTLASSFloat32 {
		return P12
	}
	return P24
}

// WordBytes returns the size of a metadata word: 2, or 4 for int8.
func (e CUTLASSElem) WordBytes() int {
	if e == CUTLASSInt8 {
		return 4
	}
	return 2
}

// cols returns the columns one metadata word describes.
func (e CUTLASSElem) cols() int {
	switch e {
	case CUTLASSInt8:
		return 32
	case CUTLASSFloat32:
		return 8
	}
	return 16
}

// CUTLASSMetaShape returns the shape of the metadata matrix in words,
// [rows, k/16] (half), [rows, k/32] (int8) or [rows, k/8] (float32), after
// checking the sizes the layout needs: k a multiple of 16 (32 for int8), and,
// for the reordered form, rows a multiple of 32 (16 for int8) and an even
// number of words per row. Another size is a *ShapeError.
func CUTLASSMetaShape(rows, k int, e CUTLASSElem, reordered bool) ([2]int, error) {
	bad := func(format string, args ...any) ([2]int, error) {
		return [2]int{}, &ShapeError{Op: "cutlass " + e.String(), Shape: []int{rows, k}, Reason: fmt.Sprintf(format, args...)}
	}
	if e < CUTLASSHalf || e > CUTLASSFloat32 {
		return bad("unknown element type %d", int(e))
	}
	unit := max(16, e.cols())
	switch {
	case rows < 0 || k < 0 || (rows > 0 && k > shapeutil.MaxElements/rows):
		return bad("bad matrix size")
	case k%unit != 0:
		return bad("k=%d is not a multiple of %d", k, unit)
	}
	words := k / e.cols()
	if reordered {
		g := 32
		if e == CUTLASSInt8 {
			g = 16
		}
		switch {
		case rows%g != 0:
			return bad("the reordered layout needs rows in multiples of %d, not %d", g, rows)
		case words%2 != 0:
			return bad("the reordered layout needs an even number of metadata words per row, not %d (k a multiple of %d)", words, 2*e.cols())
		}
	}
	return [2]int{rows, words}, nil
}

// cutlassOffset returns where word (r, c) of the plain rows × words matrix
// goes in the reordered one.
func cutlassOffset(r, c, rows int, e CUTLASSElem) int {
	g, il := 32, 4
	if e == CUTLASSInt8 {
		g, il = 16, 2
	}
	rr := r/g*g + r%8*il + r%g/8
	switch {
	case rr%2 == 0 && c%2 == 1:
		rr, c = rr+1, c-1
	case rr%2 == 1 && c%2 == 0:
		rr, c = rr-1, c+1
	}
	return c/2*rows*2 + rr*2 + c%2
}

// EncodeCUTLASS returns the metadata of m, a rows × k keep mask that is 2:4
// along k (1:2 for float32; else a *GroupError), in the plain or the
// reordered form, as little-endian words: CUTLASSMetaShape words in all.
func EncodeCUTLASS(m *mask.Mask, e CUTLASSElem, reordered bool) ([]byte, error) {
	shape := m.Shape()
	if len(shape) != 2 {
		return nil, &ShapeError{Op: "cutlass " + e.String(), Shape: shape, Reason: "needs a matrix"}
	}
	ms, err := CUTLASSMetaShape(shape[0], shape[1], e, reordered)
	if err != nil {
		return nil, err
	}
	var plain []byte
	if e == CUTLASSFloat32 {
		if err := Check(m, 1, P12); err != nil {
			return nil, err
		}
		// A nibble per pair: 0x4 keeps the first, 0xE the second.
		plain = make([]byte, m.Len()/4)
		for i := 0; i < m.Len(); i += 2 {
			nib := byte(0x4)
			if m.Get(i + 1) {
				nib = 0xe
			}
			plain[i/4] |= nib << (i / 2 % 2 * 4)
		}
	} else if plain, err = EncodeIndices(m, 1, P24); err != nil {
		return nil, err
	}
	if !reordered {
		return plain, nil
	}
	return reorderCUTLASS(plain, ms[0], ms[1], e, false), nil
}

// reorderCUTLASS moves whole words between the plain and the reordered form
// (back = true: reordered to plain).
func reorderCUTLASS(src []byte, rows, words int, e CUTLASSElem, back bool) []byte {
	wb := e.WordBytes()
	out := make([]byte, len(src))
	for r := 0; r < rows; r++ {
		for c := 0; c < words; c++ {
			p, q := (r*words+c)*wb, cutlassOffset(r, c, rows, e)*wb
			if back {
				p, q = q, p
			}
			copy(out[q:q+wb], src[p:p+wb])
		}
	}
	return out
}

// DecodeCUTLASS is the inverse of EncodeCUTLASS: the rows × k keep mask that
// meta describes. meta must hold exactly the words CUTLASSMetaShape gives
// (else a *ShapeError). Every nibble must name two different columns, in
// either order (PyTorch's decoder scatters to both whatever their order; its
// encoders write 0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b1110), and for
// float32 be 0b0100 or 0b1110; another nibble is a *DecodeError naming its
// byte in meta.
func DecodeCUTLASS(meta []byte, rows, k int, e CUTLASSElem, reordered bool) (*mask.Mask, error) {
	ms, err := CUTLASSMetaShape(rows, k, e, reordered)
	if err != nil {
		return nil, err
	}
	want := ms[0] * ms[1] * e.WordBytes()
	if len(meta) != want {
		return nil, &ShapeError{Op: "cutlass " + e.String(), Shape: []int{rows, k},
			Reason: fmt.Sprintf("%d metadata bytes, want %d (%d×%d words of %d bytes)", len(meta), want, ms[0], ms[1], e.WordBytes())}
	}
	plain := meta
	if reordered {
		plain = reorderCUTLASS(meta, ms[0], ms[1], e, true)
	}
	// where returns the offset in meta of plain byte i, for errors.
	where := func(i int) int {
		if !reordered {
			return i
		}
		wb := e.WordBytes()
		w := i / wb
		return cutlassOffset(w/ms[1], w%ms[1], rows, e)*wb + i%wb
	}
	bits := make([]byte, (rows*k+7)/8)
	for i, b := range plain {
		for h := 0; h < 2; h++ {
			nib := b >> (4 * h) & 0xf
			i0, i1 := int(nib&3), int(nib>>2)
			g := 2*i + h // group of four columns (a pair, for float32)
			var keep byte
			switch {
			case e == CUTLASSFloat32 && nib == 0x4:
				keep = 0b01
			case e == CUTLASSFloat32 && nib == 0xe:
				keep = 0b10
			case e == CUTLASSFloat32:
				return nil, &DecodeError{Format: "cutlass float32 metadata", Offset: where(i), Value: int64(meta[where(i)]),
					Reason: fmt.Sprintf("nibble %#x of pair %d is neither 0x4 (first kept) nor 0xe (second kept)", nib, g)}
			case i0 == i1:
				return nil, &DecodeError{Format: "cutlass metadata", Offset: where(i), Value: int64(meta[where(i)]),
					Reason: fmt.Sprintf("nibble %#x of group %d names column %d twice", nib, g, i0)}
			default:
				keep = 1<<i0 | 1<<i1
			}
			width := 4
			if e == CUTLASSFloat32 {
				width = 2
			}
			d := g * width
			bits[d>>3] |= keep << (d & 7)
		}
	}
	return mask.FromBytes([]int{rows, k}, bits)
}
