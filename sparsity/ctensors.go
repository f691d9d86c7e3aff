package sparsity

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/tensorcast-go/tensorcast/mask"
)

// The two sparse formats of vLLM's compressed-tensors library, for 2-D
// weights [rows, cols]: "sparse-bitmask" (unstructured) and
// "sparse-24-bitmask" (2:4). Both pack their mask as numpy.packbits(mask,
// axis=-1, bitorder="little"): ceil(cols/8) bytes per row, LSB first
// ([PackRows]). The checkpoint layer stores the fields as the tensors
// <name>.shape, .compressed, .bitmask (and .row_offsets).

// SparseBitmask is compressed-tensors' sparse-bitmask form of a matrix: its
// non-zero values in row-major order, a bitmask of where they are, and where
// each row's values start.
type SparseBitmask struct {
	Shape      [2]int    // rows, cols of the dense matrix
	Compressed []float32 // the values x != 0, row-major
	Bitmask    []byte    // rows × ceil(cols/8), LSB first: set where x != 0
	RowOffsets []int64   // rows entries: the index in Compressed of each row's first value
}

// NewSparseBitmask returns the sparse-bitmask form of x, a matrix of the
// given shape. As in compressed-tensors, the mask is x != 0: zeros (−0
// included) are not stored and expand to +0; NaN is stored.
func NewSparseBitmask(x []float32, shape []int) (*SparseBitmask, error) {
	if err := matrixShape("sparse-bitmask", shape); err != nil {
		return nil, err
	}
	g, err := splitAxis("sparse-bitmask", shape, -1, Pattern{})
	if err == nil {
		err = g.checkLen("sparse-bitmask", "x", x)
	}
	if err != nil {
		return nil, err
	}
	rows, cols := shape[0], shape[1]
	s := &SparseBitmask{Shape: [2]int{rows, cols}, RowOffsets: make([]int64, rows)}
	keep := make([]bool, len(x))
	for i, v := range x {
		keep[i] = v != 0
	}
	m, err := mask.FromBools(shape, keep)
	if err != nil {
		return nil, err
	}
	s.Bitmask = PackRows(m)
	s.Compressed = make([]float32, 0, m.Count())
	for r := 0; r < rows; r++ {
		s.RowOffsets[r] = int64(len(s.Compressed))
		for _, v := range x[r*cols : r*cols+cols] {
			if v != 0 {
				s.Compressed = append(s.Compressed, v)
			}
		}
	}
	return s, nil
}

func matrixShape(op string, shape []int) error {
	if len(shape) != 2 {
		return &ShapeError{Op: op, Shape: slices.Clone(shape), Reason: "the format holds matrices (rank 2) only"}
	}
	return nil
}

// Mask returns the keep mask the bitmask holds, after checking every field:
// the bitmask's length and padding bits, that RowOffsets has one entry per
// row and each is the number of kept elements in the rows before it, and
// that Compressed holds one value per kept element. A bad field is a
// *DecodeError (or a *ShapeError for a bad Shape or length).
func (s *SparseBitmask) Mask() (*mask.Mask, error) {
	return CheckSparseBitmask(s.Shape, s.Bitmask, s.RowOffsets, len(s.Compressed))
}

// CheckSparseBitmask checks the fields of a sparse-bitmask matrix of the
// given shape whose compressed values (of any type) number values, as
// [SparseBitmask.Mask] does, and returns the mask its bitmask holds.
func CheckSparseBitmask(shape [2]int, bitmask []byte, rowOffsets []int64, values int) (*mask.Mask, error) {
	sh := shape[:]
	if err := boundedShape("sparse-bitmask", sh, len(bitmask)); err != nil {
		return nil, err
	}
	m, err := UnpackRows(bitmask, sh)
	if err != nil {
		return nil, err
	}
	rows, cols := shape[0], shape[1]
	if len(rowOffsets) != rows {
		return nil, &ShapeError{Op: "sparse-bitmask", Shape: slices.Clone(sh), Reason: fmt.Sprintf("%d row offsets for %d rows", len(rowOffsets), rows)}
	}
	stride := (cols + 7) / 8
	total := int64(0)
	for r := 0; r < rows; r++ {
		if rowOffsets[r] != total {
			return nil, &DecodeError{Format: "row offsets", Offset: r, Value: rowOffsets[r],
				Reason: fmt.Sprintf("row %d starts at value %d after %d kept values in the rows before it", r, rowOffsets[r], total)}
		}
		for _, b := range bitmask[r*stride : r*stride+stride] {
			total += int64(bits.OnesCount8(b))
		}
	}
	if total != int64(values) {
		return nil, &ShapeError{Op: "sparse-bitmask", Shape: slices.Clone(sh), Reason: fmt.Sprintf("%d compressed values for %d set bits", values, total)}
	}
	return m, nil
}

// boundedShape refuses a matrix shape with a negative dimension, or one
// whose rows of packed bits could not fit n bytes (so that a shape read from
// a file cannot make a decoder allocate more than the bitmask it came with
// justifies): a *ShapeError.
func boundedShape(op string, shape []int, n int) error {
	rows, cols := shape[0], shape[1]
	switch {
	case rows < 0 || cols < 0:
		return &ShapeError{Op: op, Shape: slices.Clone(shape), Reason: "a negative dimension"}
	case cols == 0 && rows > 0:
		return &ShapeError{Op: op, Shape: slices.Clone(shape), Reason: "rows of no elements"}
	case rows > n, rows > 0 && (cols+7)/8 > n/max(rows, 1):
		return &ShapeError{Op: op, Shape: slices.Clone(shape), Reason: fmt.Sprintf("a bitmask of %d bytes cannot hold rows of this many elements", n)}
	}
	return nil
}

// Dense returns the matrix: the compressed values at the set bits, +0
// elsewhere. The fields are checked as Mask checks them.
func (s *SparseBitmask) Dense() ([]float32, error) {
	m, err := s.Mask()
	if err != nil {
		return nil, err
	}
	return denseOf(m, s.Compressed)
}

// Sparse24Bitmask is compressed-tensors' sparse-24-bitmask form of a 2:4
// matrix: exactly two values of every group of four consecutive columns, in
// column order (rows × cols/2), and the bitmask of where they are.
type Sparse24Bitmask struct {
	Shape      [2]int    // rows, cols of the dense matrix; cols a multiple of 4
	Compressed []float32 // rows × cols/2 kept values, row-major
	Bitmask    []byte    // rows × ceil(cols/8), LSB first
}

// NewSparse24Bitmask returns the sparse-24-bitmask form of x, a matrix of the
// given shape, with the 2:4 keep mask m, or, when m is nil, with the mask
// Magnitude gives along the rows (compressed-tensors' own choice: the two
// largest |x| of each group; its tie rule is torch.topk's, unspecified,
// where this one takes the lower column). Kept zeros are stored like any
// value: every group stores two.
func NewSparse24Bitmask(x []float32, shape []int, m *mask.Mask) (*Sparse24Bitmask, error) {
	if err := matrixShape("sparse-24-bitmask", shape); err != nil {
		return nil, err
	}
	var err error
	if m == nil {
		if m, err = Magnitude(x, shape, 1, P24); err != nil {
			return nil, err
		}
	}
	vals, err := Compress(x, shape, 1, P24, m)
	if err != nil {
		return nil, err
	}
	return &Sparse24Bitmask{Shape: [2]int{shape[0], shape[1]}, Compressed: vals, Bitmask: PackRows(m)}, nil
}

// Mask returns the keep mask the bitmask holds, after checking that it is 2:4
// along the rows (a *DecodeError naming the byte of the first bad group), that
// its length and padding fit Shape, and that Compressed holds rows·cols/2
// values (else a *ShapeError).
func (s *Sparse24Bitmask) Mask() (*mask.Mask, error) {
	return CheckSparse24Bitmask(s.Shape, s.Bitmask, len(s.Compressed))
}

// CheckSparse24Bitmask checks the fields of a sparse-24-bitmask matrix of the
// given shape whose compressed values (of any type) number values, as
// [Sparse24Bitmask.Mask] does, and returns the mask its bitmask holds.
func CheckSparse24Bitmask(shape [2]int, bitmask []byte, values int) (*mask.Mask, error) {
	sh := shape[:]
	if err := boundedShape("sparse-24-bitmask", sh, len(bitmask)); err != nil {
		return nil, err
	}
	if _, err := splitAxis("sparse-24-bitmask", sh, 1, P24); err != nil {
		return nil, err
	}
	m, err := UnpackRows(bitmask, sh)
	if err != nil {
		return nil, err
	}
	if err := Check(m, 1, P24); err != nil {
		var ge *GroupError
		if errors.As(err, &ge) {
			stride := (shape[1] + 7) / 8
			off := ge.Index[0]*stride + ge.Index[1]/8
			return nil, &DecodeError{Format: "sparse-24 bitmask", Offset: off, Value: int64(bitmask[off]),
				Reason: fmt.Sprintf("the group at row %d, column %d keeps %d of 4, not 2", ge.Index[0], ge.Index[1], ge.Kept)}
		}
		return nil, err
	}
	if want := shape[0] * shape[1] / 2; values != want {
		return nil, &ShapeError{Op: "sparse-24-bitmask", Shape: slices.Clone(sh), Reason: fmt.Sprintf("%d compressed values, want %d", values, want)}
	}
	return m, nil
}

// Dense returns the matrix: the compressed values at the kept positions, +0
// elsewhere. The fields are checked as Mask checks them.
func (s *Sparse24Bitmask) Dense() ([]float32, error) {
	m, err := s.Mask()
	if err != nil {
		return nil, err
	}
	return denseOf(m, s.Compressed)
}

// denseOf places values, in row-major order, at the kept positions of m (a
// mask whose count Mask checked against them), +0 elsewhere.
func denseOf(m *mask.Mask, values []float32) ([]float32, error) {
	out := make([]float32, m.Len())
	_, err := m.Expand(out, values)
	return out, err
}
