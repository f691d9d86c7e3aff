package sparsity

import (
	"fmt"
	"slices"

	"github.com/tensorcast-go/tensorcast/mask"
)

// Storage of an N:M tensor: its kept values (the sparse axis shrinks by M/N)
// plus the mask, either as packed bits or as per-group index metadata.

// ValuesShape returns the shape of the kept values of an N:M tensor of the
// given shape: the axis length times N/M.
func ValuesShape(shape []int, axis int, p Pattern) ([]int, error) {
	g, err := splitAxis("values shape", shape, axis, p)
	if err != nil {
		return nil, err
	}
	return g.valuesShape(p), nil
}

func (g geom) valuesShape(p Pattern) []int {
	s := slices.Clone(g.shape)
	s[g.axis] = g.length / p.M * p.N
	return s
}

// checkMask checks that m has shape g.shape and is N:M along g.axis.
func checkMask(op string, g geom, m *mask.Mask, p Pattern) error {
	if !slices.Equal(m.Shape(), g.shape) {
		return &ShapeError{Op: op, Shape: slices.Clone(g.shape), Reason: fmt.Sprintf("the mask's shape is %v", m.Shape())}
	}
	return Check(m, g.axis, p)
}

// Compress returns the kept values of x, a tensor of the given shape pruned
// to p along axis with mask m (which must be N:M there: else a *GroupError):
// a tensor of shape ValuesShape(shape, axis, p) in row-major order, whose
// index along axis runs over the kept elements of each group in increasing
// position (group g's k-th kept value is at g·N + k). Along the last axis
// this is the kept values of each row, in order. Values are copied bit for
// bit.
func Compress(x []float32, shape []int, axis int, p Pattern, m *mask.Mask) ([]float32, error) {
	g, err := splitAxis("compress", shape, axis, p)
	if err == nil {
		err = g.checkLen("compress", "x", x)
	}
	if err == nil {
		err = checkMask("compress", g, m, p)
	}
	if err != nil {
		return nil, err
	}
	out := make([]float32, g.n/p.M*p.N)
	if g.inner == 1 {
		_, err := m.Compact(out, x)
		return out, err
	}
	g.walk(p, m, func(dense, packed int) { out[packed] = x[dense] })
	return out, nil
}

// Expand is the inverse of Compress: the dense tensor of the given shape with
// values at the kept positions of m and +0 everywhere else. values must hold
// as many floats as Compress returns (else a *ShapeError).
func Expand(values []float32, shape []int, axis int, p Pattern, m *mask.Mask) ([]float32, error) {
	g, err := splitAxis("expand", shape, axis, p)
	if err == nil {
		err = checkMask("expand", g, m, p)
	}
	if err != nil {
		return nil, err
	}
	if want := g.n / p.M * p.N; len(values) != want {
		return nil, &ShapeError{Op: "expand", Shape: slices.Clone(g.shape), Reason: fmt.Sprintf("%d values for %d kept elements", len(values), want)}
	}
	out := make([]float32, g.n)
	if g.inner == 1 {
		_, err := m.Expand(out, values)
		return out, err
	}
	g.walk(p, m, func(dense, packed int) { out[dense] = values[packed] })
	return out, nil
}

// walk calls f with the dense and the packed offset of every kept element of
// the N:M mask m, group by group.
func (g geom) walk(p Pattern, m *mask.Mask, f func(dense, packed int)) {
	lc := g.length / p.M * p.N
	for o := 0; o < g.outer; o++ {
		for a, ac := 0, 0; a < g.length; a, ac = a+p.M, ac+p.N {
			for i := 0; i < g.inner; i++ {
				k := 0
				for t := 0; t < p.M; t++ {
					d := (o*g.length+a+t)*g.inner + i
					if m.Get(d) {
						f(d, (o*lc+ac+k)*g.inner+i)
						k++
					}
				}
			}
		}
	}
}

// rowsOf returns the number of rows and the row length of a tensor whose rows
// run along its last axis (a 1-D tensor is one row).
func rowsOf(shape []int) (rows, cols int) {
	rows, cols = 1, shape[len(shape)-1]
	for _, d := range shape[:len(shape)-1] {
		rows *= d
	}
	return rows, cols
}

// PackRows returns m's bits row by row, each row (a run of the last axis)
// starting a new byte: ceil(cols/8) bytes per row, element 8j+i of a row in
// bit i of its byte j, the unused high bits of a row's last byte clear. This
// is numpy.packbits(m, axis=-1, bitorder="little"), the bitmask of
// compressed-tensors and TensorCast's compressed mask.
func PackRows(m *mask.Mask) []byte {
	shape := m.Shape()
	if len(shape) == 0 {
		shape = []int{1}
	}
	rows, cols := rowsOf(shape)
	if cols%8 == 0 {
		return m.Bytes()
	}
	stride := (cols + 7) / 8
	out := make([]byte, rows*stride)
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			if m.Get(r*cols + c) {
				out[r*stride+c>>3] |= 1 << (c & 7)
			}
		}
	}
	return out
}

// UnpackRows is the inverse of PackRows: the mask of the given shape (rank ≥ 1)
// from its rows of packed bits. A length other than rows·ceil(cols/8) is a
// *ShapeError; a set padding bit after a row's last element a *DecodeError.
func UnpackRows(packed []byte, shape []int) (*mask.Mask, error) {
	g, err := splitAxis("unpack rows", shape, -1, Pattern{})
	if err != nil {
		return nil, err
	}
	rows, cols := rowsOf(g.shape)
	stride := (cols + 7) / 8
	if len(packed) != rows*stride {
		return nil, &ShapeError{Op: "unpack rows", Shape: slices.Clone(shape),
			Reason: fmt.Sprintf("%d bytes, want %d rows of %d", len(packed), rows, stride)}
	}
	if cols%8 == 0 {
		return mask.FromBytes(g.shape, packed)
	}
	bits := make([]byte, (g.n+7)/8)
	for r := 0; r < rows; r++ {
		last := packed[r*stride+stride-1]
		if last>>(cols&7) != 0 {
			return nil, &DecodeError{Format: "bitmask", Offset: r*stride + stride - 1, Value: int64(last),
				Reason: fmt.Sprintf("padding bits %d..7 after the %d elements of row %d are set", cols&7, cols, r)}
		}
		for c := 0; c < cols; c++ {
			if packed[r*stride+c>>3]>>(c&7)&1 != 0 {
				d := r*cols + c
				bits[d>>3] |= 1 << (d & 7)
			}
		}
	}
	return mask.FromBytes(g.shape, bits)
}

// EncodeIndices returns the index metadata of the N:M mask m (else a
// *GroupError): for every kept value, in the order Compress stores them,
// its position within its group (0..M−1) in IndexBits() = log2(M) bits,
// packed LSB first, each row of the values tensor (a run of its last axis)
// starting a new byte: ceil(cols·bits/8) bytes per row, cols the values'
// last dimension. For 2:4 along the last axis every group gives one nibble
// (first index in bits 1:0, second in bits 3:2), which is the metadata
// PyTorch's CUTLASS layout stores before reordering ([EncodeCUTLASS]).
func EncodeIndices(m *mask.Mask, axis int, p Pattern) ([]byte, error) {
	g, err := splitAxis("encode indices", m.Shape(), axis, p)
	if err == nil {
		err = Check(m, g.axis, p)
	}
	if err != nil {
		return nil, err
	}
	vs := g.valuesShape(p)
	rows, cols := rowsOf(vs)
	b := p.IndexBits()
	stride := (cols*b + 7) / 8
	out := make([]byte, rows*stride)
	g.walk(p, m, func(dense, packed int) {
		t := (dense / g.inner) % g.length % p.M // position within the group
		r, c := packed/cols, packed%cols
		bit := r*stride*8 + c*b
		out[bit>>3] |= byte(t << (bit & 7))
		if (bit&7)+b > 8 {
			out[bit>>3+1] |= byte(t >> (8 - bit&7))
		}
	})
	return out, nil
}

// DecodeIndices is the inverse of EncodeIndices: the mask of the given shape
// whose kept elements meta lists. meta must hold exactly rows·ceil(cols·bits/8)
// bytes for the values tensor (else a *ShapeError); the indices of each
// group must be strictly increasing and the padding bits clear (else a
// *DecodeError naming the byte).
func DecodeIndices(meta []byte, shape []int, axis int, p Pattern) (*mask.Mask, error) {
	g, err := splitAxis("decode indices", shape, axis, p)
	if err != nil {
		return nil, err
	}
	vs := g.valuesShape(p)
	rows, cols := rowsOf(vs)
	b := p.IndexBits()
	stride := (cols*b + 7) / 8
	if len(meta) != rows*stride {
		return nil, &ShapeError{Op: "decode indices", Shape: slices.Clone(shape),
			Reason: fmt.Sprintf("%d metadata bytes, want %d rows of %d", len(meta), rows, stride)}
	}
	if used := cols * b % 8; used != 0 {
		for r := 0; r < rows; r++ {
			if last := meta[r*stride+stride-1]; last>>used != 0 {
				return nil, &DecodeError{Format: "index metadata", Offset: r*stride + stride - 1, Value: int64(last),
					Reason: fmt.Sprintf("padding bits %d..7 of row %d are set", used, r)}
			}
		}
	}
	index := func(packed int) (int, int) {
		r, c := packed/cols, packed%cols
		bit := r*stride*8 + c*b
		v := int(meta[bit>>3]) >> (bit & 7)
		if (bit&7)+b > 8 {
			v |= int(meta[bit>>3+1]) << (8 - bit&7)
		}
		return v & (1<<b - 1), bit >> 3
	}
	bits := make([]byte, (g.n+7)/8)
	lc := g.length / p.M * p.N
	for o := 0; o < g.outer; o++ {
		for a, ac := 0, 0; a < g.length; a, ac = a+p.M, ac+p.N {
			for i := 0; i < g.inner; i++ {
				prev := -1
				for k := 0; k < p.N; k++ {
					t, off := index((o*lc+ac+k)*g.inner + i)
					if t <= prev {
						return nil, &DecodeError{Format: "index metadata", Offset: off, Value: int64(meta[off]),
							Reason: fmt.Sprintf("index %d of a %v group follows index %d: indices must increase", t, p, prev)}
					}
					prev = t
					d := (o*g.length+a+t)*g.inner + i
					bits[d>>3] |= 1 << (d & 7)
				}
			}
		}
	}
	return mask.FromBytes(g.shape, bits)
}

// ForEachKept calls fn with the row-major offset of every kept element of the
// N:M mask m (else a *GroupError) in the tensor and in its values tensor (the
// layout of Compress), group by group. It lets a caller compress or expand
// data of any element type, such as quantized codes.
func ForEachKept(m *mask.Mask, axis int, p Pattern, fn func(dense, packed int)) error {
	g, err := splitAxis("for each kept", m.Shape(), axis, p)
	if err == nil {
		err = Check(m, g.axis, p)
	}
	if err != nil {
		return err
	}
	if g.inner == 1 {
		k := 0
		for i := m.NextSet(0); i >= 0; i = m.NextSet(i + 1) {
			fn(i, k)
			k++
		}
		return nil
	}
	g.walk(p, m, fn)
	return nil
}
