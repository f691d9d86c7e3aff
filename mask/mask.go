package mask

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// Mask is a boolean array of any rank, one bit per element in row-major order,
// LSB first (element 8k+i is bit i of byte k), a set bit meaning keep. Make
// one with [New], [Full], [FromBools], [FromFlags] or [FromBytes]; the zero
// Mask is empty, of shape [0].
//
// Methods that return a mask return a new one and leave their operands alone;
// Set, SetAt and SetRange change the mask in place. A Mask is not safe for
// concurrent use while it is being changed; share one through a [Buffer].
type Mask struct {
	shape []int  // nil only in the zero Mask
	n     int    // product of shape
	bits  []byte // kernels.PackedLen(n, 1) bytes; the bits past n are clear
}

// New returns a mask of the given shape with every element false (dropped).
// A shape with a negative dimension or too many elements is a *ShapeError.
func New(shape []int) (*Mask, error) { return newMask("new", shape) }

func newMask(op string, shape []int) (*Mask, error) {
	n, err := size(op, shape)
	if err != nil {
		return nil, err
	}
	return &Mask{shape: append([]int{}, shape...), n: n, bits: make([]byte, kernels.PackedLen(n, 1))}, nil
}

// Full returns a mask of the given shape with every element keep.
func Full(shape []int, keep bool) (*Mask, error) {
	m, err := newMask("full", shape)
	if err == nil && keep {
		setRange(m.bits, 0, m.n, true)
	}
	return m, err
}

// FromBools returns the mask of the given shape whose elements are keep, in
// row-major order. len(keep) must be the number of elements of shape.
func FromBools(shape []int, keep []bool) (*Mask, error) {
	m, err := newMask("from bools", shape)
	if err != nil {
		return nil, err
	}
	if len(keep) != m.n {
		return nil, &ShapeError{Op: "from bools", Shape: m.Shape(), Reason: fmt.Sprintf("%d flags for %d elements", len(keep), m.n)}
	}
	kernels.PackMask(m.bits, keep)
	return m, nil
}

// FromFlags returns the mask of the given shape whose elements are flags, one
// byte per element: 0 (false) or 1 (true), as the payload of a NumPy bool or
// uint8 array holds them. Another byte value is a *DecodeError at its offset;
// a length other than the number of elements a *ShapeError.
func FromFlags(shape []int, flags []byte) (*Mask, error) {
	m, err := newMask("from flags", shape)
	if err != nil {
		return nil, err
	}
	if len(flags) != m.n {
		return nil, &ShapeError{Op: "from flags", Shape: m.Shape(), Reason: fmt.Sprintf("%d flag bytes for %d elements", len(flags), m.n)}
	}
	for i, b := range flags {
		if b > 1 {
			return nil, &DecodeError{Offset: i, Value: b, Reason: "a flag byte must be 0 or 1"}
		}
	}
	kernels.PackBits(m.bits, flags, 1)
	return m, nil
}

// FromBytes returns the mask of the given shape held in packed, its bits LSB
// first (the form [Mask.Bytes] returns and numpy.packbits(a,
// bitorder="little") makes). packed must hold exactly ceil(n/8) bytes for n
// elements (else a *ShapeError), and the padding bits after the last element
// must be clear (else a *DecodeError). The bytes are copied.
func FromBytes(shape []int, packed []byte) (*Mask, error) {
	m, err := newMask("from bytes", shape)
	if err != nil {
		return nil, err
	}
	if len(packed) != len(m.bits) {
		return nil, &ShapeError{Op: "from bytes", Shape: m.Shape(),
			Reason: fmt.Sprintf("%d bytes, want %d for %d elements", len(packed), len(m.bits), m.n)}
	}
	if r := m.n & 7; r != 0 {
		if last := packed[len(packed)-1]; last>>r != 0 {
			return nil, &DecodeError{Offset: len(packed) - 1, Value: last,
				Reason: fmt.Sprintf("padding bits %d..7 of the last byte are set", r)}
		}
	}
	copy(m.bits, packed)
	return m, nil
}

// Shape returns a copy of the mask's shape.
func (m *Mask) Shape() []int {
	if m.shape == nil {
		return []int{0}
	}
	return slices.Clone(m.shape)
}

// Rank returns the number of dimensions.
func (m *Mask) Rank() int { return len(m.Shape()) }

// Len returns the number of elements (1 for rank 0).
func (m *Mask) Len() int { return m.n }

// Bytes returns a copy of the packed bits: ceil(Len()/8) bytes, element 8k+i
// in bit i of byte k, the padding bits of the last byte clear.
func (m *Mask) Bytes() []byte { return slices.Clone(m.bits) }

// Bools returns the elements, one bool each, in row-major order.
func (m *Mask) Bools() []bool {
	out := make([]bool, m.n)
	kernels.UnpackMask(out, m.bits)
	return out
}

// Flags returns the elements as one byte each, 1 for true and 0 for false (the
// payload of a NumPy bool array of the mask's shape).
func (m *Mask) Flags() []byte {
	out := make([]byte, m.n)
	kernels.UnpackBits(out, m.bits, 1)
	return out
}

// Clone returns an independent copy of m.
func (m *Mask) Clone() *Mask {
	return &Mask{shape: slices.Clone(m.shape), n: m.n, bits: slices.Clone(m.bits)}
}

// Equal reports whether m and o have the same shape and the same elements.
func (m *Mask) Equal(o *Mask) bool {
	return slices.Equal(m.Shape(), o.Shape()) && string(m.bits) == string(o.bits)
}

// firstDiff returns the first element where m and o (of equal length)
// differ, or -1.
func (m *Mask) firstDiff(o *Mask) int {
	for k := 0; k < len(m.bits); k += 8 {
		if w := load64(m.bits, k) ^ load64(o.bits, k); w != 0 {
			return 8*k + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// Get returns element i in row-major order. It panics when i is not in
// [0, Len()), as a slice index would.
func (m *Mask) Get(i int) bool {
	m.check(i)
	return getBit(m.bits, i)
}

// Set sets element i in row-major order to keep. It panics when i is not in
// [0, Len()).
func (m *Mask) Set(i int, keep bool) {
	m.check(i)
	setBit(m.bits, i, keep)
}

func (m *Mask) check(i int) {
	if uint(i) >= uint(m.n) {
		panic(fmt.Sprintf("mask: index %d out of range [0, %d)", i, m.n))
	}
}

// Index returns the row-major offset of the element at idx (one index per
// dimension), or a *ShapeError when idx has the wrong length or an index is
// out of range.
func (m *Mask) Index(idx ...int) (int, error) {
	shape := m.Shape()
	if len(idx) != len(shape) {
		return 0, &ShapeError{Op: "index", Shape: shape, Reason: fmt.Sprintf("%d indices for rank %d", len(idx), len(shape))}
	}
	off := 0
	for d, i := range idx {
		if i < 0 || i >= shape[d] {
			return 0, &ShapeError{Op: "index", Shape: shape, Reason: fmt.Sprintf("index %d out of range [0, %d) in dimension %d", i, shape[d], d)}
		}
		off = off*shape[d] + i
	}
	return off, nil
}

// At returns the element at idx, one index per dimension. It panics on an
// index out of range or the wrong number of indices; see [Mask.Index].
func (m *Mask) At(idx ...int) bool {
	i, err := m.Index(idx...)
	if err != nil {
		panic(err.Error())
	}
	return getBit(m.bits, i)
}

// SetAt sets the element at idx, one index per dimension, to keep. It panics
// as At does.
func (m *Mask) SetAt(keep bool, idx ...int) {
	i, err := m.Index(idx...)
	if err != nil {
		panic(err.Error())
	}
	setBit(m.bits, i, keep)
}

// SetRange sets the elements lo..hi-1 in row-major order to keep. It panics
// unless 0 ≤ lo ≤ hi ≤ Len().
func (m *Mask) SetRange(lo, hi int, keep bool) {
	m.checkRange(lo, hi)
	setRange(m.bits, lo, hi, keep)
}

// CountRange returns the number of true elements among lo..hi-1 in row-major
// order. It panics unless 0 ≤ lo ≤ hi ≤ Len().
func (m *Mask) CountRange(lo, hi int) int {
	m.checkRange(lo, hi)
	return countRange(m.bits, lo, hi)
}

func (m *Mask) checkRange(lo, hi int) {
	if lo < 0 || lo > hi || hi > m.n {
		panic(fmt.Sprintf("mask: range [%d, %d) out of [0, %d)", lo, hi, m.n))
	}
}

// Count returns the number of true elements (a popcount).
func (m *Mask) Count() int { return kernels.CountMask(m.bits, m.n) }

// Any reports whether some element is true (false for an empty mask).
func (m *Mask) Any() bool {
	for k := 0; k < len(m.bits); k += 8 {
		if load64(m.bits, k) != 0 {
			return true
		}
	}
	return false
}

// All reports whether every element is true (true for an empty mask).
func (m *Mask) All() bool {
	full := m.n >> 3
	k := 0
	for ; k+8 <= full; k += 8 {
		if binary.LittleEndian.Uint64(m.bits[k:]) != ^uint64(0) {
			return false
		}
	}
	for ; k < full; k++ {
		if m.bits[k] != 0xff {
			return false
		}
	}
	if r := m.n & 7; r != 0 {
		return m.bits[full] == 1<<r-1
	}
	return true
}

// FirstSet returns the row-major index of the first true element, or -1 when
// there is none.
func (m *Mask) FirstSet() int { return nextBit(m.bits, 0, m.n, true) }

// NextSet returns the index of the first true element at or after i, or -1.
func (m *Mask) NextSet(i int) int { return nextBit(m.bits, i, m.n, true) }

// NextClear returns the index of the first false element at or after i, or
// -1.
func (m *Mask) NextClear(i int) int { return nextBit(m.bits, i, m.n, false) }

// Reshape returns a copy of m with another shape of the same number of
// elements.
func (m *Mask) Reshape(shape []int) (*Mask, error) {
	n, err := size("reshape", shape)
	if err != nil {
		return nil, err
	}
	if n != m.n {
		return nil, &ShapeError{Op: "reshape", Shape: m.Shape(), Other: slices.Clone(shape),
			Reason: fmt.Sprintf("%d elements, not %d", m.n, n)}
	}
	return &Mask{shape: append([]int{}, shape...), n: n, bits: slices.Clone(m.bits)}, nil
}

// Broadcast returns m stretched to shape under NumPy's rules: m's shape,
// aligned at the last dimension and padded with leading ones, must have in
// each dimension the target's size or 1 (a [3,1,1] or a [5] mask broadcast to
// [3,4,5]). Shapes that do not broadcast are a *ShapeError.
func (m *Mask) Broadcast(shape []int) (*Mask, error) {
	if _, err := size("broadcast", shape); err != nil {
		return nil, err
	}
	from, err := broadcastTo("broadcast", m.Shape(), shape)
	if err != nil {
		return nil, err
	}
	out, err := newMask("broadcast", shape)
	if err != nil {
		return nil, err
	}
	if out.n == 0 {
		return out, nil
	}
	if slices.Equal(from, shape) {
		copy(out.bits, m.bits)
		return out, nil
	}
	rank := len(shape)
	b := bcast{dst: out.bits, src: m.bits, to: shape,
		tsize: make([]int, rank+1), sstride: make([]int, rank), eq: make([]bool, rank+1), one: make([]bool, rank+1)}
	b.tsize[rank], b.eq[rank], b.one[rank] = 1, true, true
	st := 1
	for d := rank - 1; d >= 0; d-- {
		b.tsize[d] = b.tsize[d+1] * shape[d]
		if from[d] != 1 {
			b.sstride[d] = st
		}
		st *= from[d]
		b.eq[d] = b.eq[d+1] && from[d] == shape[d]
		b.one[d] = b.one[d+1] && from[d] == 1
	}
	b.run(0, 0, 0)
	return out, nil
}

// bcast copies a mask into a broadcast of it, one run of bits at a time.
type bcast struct {
	dst, src []byte
	to       []int
	tsize    []int  // tsize[d]: elements of the target from dimension d on
	sstride  []int  // the source's stride in dimension d, 0 where it stretches
	eq, one  []bool // from dimension d on, the source equals the target / is all ones
}

func (b *bcast) run(d, doff, soff int) {
	switch {
	case b.eq[d]:
		copyBits(b.dst, doff, b.src, soff, b.tsize[d])
	case b.one[d]:
		if getBit(b.src, soff) {
			setRange(b.dst, doff, doff+b.tsize[d], true)
		}
	default:
		for i := range b.to[d] {
			b.run(d+1, doff+i*b.tsize[d+1], soff+i*b.sstride[d])
		}
	}
}

// The binary operations.
const (
	opAnd = iota
	opOr
	opXor
	opAndNot
)

var opNames = [...]string{opAnd: "and", opOr: "or", opXor: "xor", opAndNot: "and not"}

// And returns the element-wise m && o, broadcast to the shape both
// broadcast to (see [BroadcastShapes]).
func (m *Mask) And(o *Mask) (*Mask, error) { return m.combine(o, opAnd) }

// Or returns the element-wise m || o, broadcast as And is.
func (m *Mask) Or(o *Mask) (*Mask, error) { return m.combine(o, opOr) }

// Xor returns the element-wise m != o, broadcast as And is.
func (m *Mask) Xor(o *Mask) (*Mask, error) { return m.combine(o, opXor) }

// AndNot returns the element-wise m && !o, broadcast as And is.
func (m *Mask) AndNot(o *Mask) (*Mask, error) { return m.combine(o, opAndNot) }

func (m *Mask) combine(o *Mask, op int) (*Mask, error) {
	shape, err := BroadcastShapes(m.Shape(), o.Shape())
	if err != nil {
		se := err.(*ShapeError)
		se.Op = opNames[op]
		return nil, se
	}
	a, err := m.Broadcast(shape)
	if err != nil {
		return nil, err
	}
	b, err := o.Broadcast(shape)
	if err != nil {
		return nil, err
	}
	x, y := a.bits, b.bits
	k := 0
	for ; k+8 <= len(x); k += 8 {
		u, v := binary.LittleEndian.Uint64(x[k:]), binary.LittleEndian.Uint64(y[k:])
		binary.LittleEndian.PutUint64(x[k:], apply64(op, u, v))
	}
	for ; k < len(x); k++ {
		x[k] = byte(apply64(op, uint64(x[k]), uint64(y[k])))
	}
	return a, nil // padding bits stay clear: every op maps (0, 0) to 0
}

func apply64(op int, u, v uint64) uint64 {
	switch op {
	case opAnd:
		return u & v
	case opOr:
		return u | v
	case opXor:
		return u ^ v
	}
	return u &^ v
}

// Not returns the element-wise negation of m.
func (m *Mask) Not() *Mask {
	out := m.Clone()
	for k := range out.bits {
		out.bits[k] = ^out.bits[k]
	}
	if r := m.n & 7; r != 0 {
		out.bits[len(out.bits)-1] &= 1<<r - 1
	}
	return out
}

// String returns the elements as nested lists of 0 and 1, as NumPy prints an
// array: "[[1 0 1] [0 1 1]]" for a 2×3 mask, "1" for rank 0.
func (m *Mask) String() string {
	shape := m.Shape()
	var sb strings.Builder
	var rec func(d, off int)
	rec = func(d, off int) {
		if d == len(shape) {
			sb.WriteByte('0' + m.bits[off>>3]>>(off&7)&1)
			return
		}
		inner := 1
		for _, s := range shape[d+1:] {
			inner *= s
		}
		sb.WriteByte('[')
		for i := range shape[d] {
			if i > 0 {
				sb.WriteByte(' ')
			}
			rec(d+1, off+i*inner)
		}
		sb.WriteByte(']')
	}
	rec(0, 0)
	return sb.String()
}
