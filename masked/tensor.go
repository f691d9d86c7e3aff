package masked

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tensorcast-go/tensorcast/internal/shape"
	"github.com/tensorcast-go/tensorcast/mask"
)

// Float is the element type of masked data: float32 or float64 (or a type
// defined on one of them).
type Float interface{ ~float32 | ~float64 }

// Acc selects the type a reduction accumulates in. The zero value accumulates
// in the data's own type, as torch.masked does without a dtype argument.
type Acc int

const (
	// AccData accumulates in the element type of the data.
	AccData Acc = iota
	// AccFloat64 accumulates in float64 (torch's dtype=torch.float64); the
	// result is rounded to the data's type once at the end.
	AccFloat64
)

// String returns "data" or "float64".
func (a Acc) String() string {
	switch a {
	case AccData:
		return "data"
	case AccFloat64:
		return "float64"
	}
	return "Acc(" + strconv.Itoa(int(a)) + ")"
}

// Errors a masked operation wraps (test them with errors.Is); the error itself
// is an *Error naming the operation and the argument.
var (
	// ErrShape: a shape is invalid, or two shapes do not match or broadcast.
	ErrShape = errors.New("shape mismatch")
	// ErrDim: a dimension is out of range or repeated.
	ErrDim = errors.New("bad dimension")
	// ErrIndex: sparse indices are out of range, repeated or malformed.
	ErrIndex = errors.New("bad sparse index")
	// ErrArg: another argument is invalid (an unknown Acc, for instance).
	ErrArg = errors.New("bad argument")
)

// Error is the error of a masked operation called with bad arguments.
type Error struct {
	Op     string // the operation: "New", "sum", "NewCOO", ...
	Arg    string // the offending argument: "mask", "dims", "indices", ...
	Reason string // what is wrong with it
	Err    error  // ErrShape, ErrDim, ErrIndex or ErrArg
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("masked: %s: %s: %s", e.Op, e.Arg, e.Reason)
}

// Unwrap returns the kind of error (ErrShape, ErrDim, ErrIndex or ErrArg).
func (e *Error) Unwrap() error { return e.Err }

func errorf(kind error, op, arg, format string, a ...any) *Error {
	return &Error{Op: op, Arg: arg, Reason: fmt.Sprintf(format, a...), Err: kind}
}

// Tensor is a dense masked tensor: data of any rank in row-major order and a
// mask of the same shape, true where an element counts ("specified" in
// torch.masked's words) and false where it is masked out. It is the counterpart
// of torch.masked.MaskedTensor with strided layout; COO and CSR hold the
// sparse layouts.
//
// The values of masked-out elements are never read by the operations of this
// package: they may hold anything, NaN included.
type Tensor[T Float] struct {
	shape []int
	data  []T
	mask  []bool
}

// New returns a masked tensor of the given shape over data (row-major, length
// the product of shape; a nil or empty shape is a scalar holding one element).
// The mask has maskShape, which must broadcast to shape: it has at most as many
// dimensions, and each of its dimensions, aligned from the right, is 1 or
// equal to shape's (so [3,1,1] and [5] both broadcast to [3,4,5]). A nil
// maskShape means shape itself; a nil mask keeps every element.
//
// New keeps data without copying it (the tensor shares it with the caller);
// the mask is copied when it must be broadcast and kept as given otherwise.
func New[T Float](data []T, shape []int, mask []bool, maskShape []int) (*Tensor[T], error) {
	const op = "New"
	n, err := numel(op, "shape", shape)
	if err != nil {
		return nil, err
	}
	if len(data) != n {
		return nil, errorf(ErrShape, op, "data", "%d values for shape %v (%d elements)", len(data), shape, n)
	}
	if maskShape == nil {
		maskShape = shape
	}
	m, err := broadcastMask(op, mask, maskShape, shape)
	if err != nil {
		return nil, err
	}
	return &Tensor[T]{shape: slices.Clone(shape), data: data, mask: m}, nil
}

// FromMask is New with the mask given as a bit mask (package mask), which
// broadcasts to shape as New's does; a nil m keeps every element.
func FromMask[T Float](data []T, shape []int, m *mask.Mask) (*Tensor[T], error) {
	if m == nil {
		return New(data, shape, nil, nil)
	}
	if b, err := m.Broadcast(shape); err == nil {
		m = b // stretched as bits; New reports a mask that does not fit
	}
	return New(data, shape, m.Bools(), m.Shape())
}

// BitMask returns the tensor's mask as a bit mask of its shape.
func (t *Tensor[T]) BitMask() *mask.Mask {
	m, err := mask.FromBools(t.shape, t.mask)
	if err != nil {
		panic("masked: " + err.Error()) // the mask always has the tensor's shape
	}
	return m
}

// Shape returns a copy of the tensor's shape.
func (t *Tensor[T]) Shape() []int { return slices.Clone(t.shape) }

// Len returns the number of elements (the product of the shape).
func (t *Tensor[T]) Len() int { return len(t.data) }

// Data returns the data in row-major order; the slice is shared with the
// tensor, not a copy. Masked-out positions hold whatever the data held there
// (for results of this package: the value the operation documents).
func (t *Tensor[T]) Data() []T { return t.data }

// Mask returns the mask, broadcast to the tensor's shape, in row-major order;
// the slice is shared with the tensor, not a copy.
func (t *Tensor[T]) Mask() []bool { return t.mask }

// At returns the element at the given index (one coordinate per dimension) and
// its mask bit; ok is false for an index of the wrong length or out of range.
func (t *Tensor[T]) At(index ...int) (v T, keep, ok bool) {
	if len(index) != len(t.shape) {
		return 0, false, false
	}
	off := 0
	for d, i := range index {
		if i < 0 || i >= t.shape[d] {
			return 0, false, false
		}
		off = off*t.shape[d] + i
	}
	return t.data[off], t.mask[off], true
}

// String formats the tensor like torch's MaskedTensor: nested brackets with
// "--" in place of masked-out elements.
func (t *Tensor[T]) String() string {
	var b strings.Builder
	writeNested(&b, t.shape, func(i int) string {
		if !t.mask[i] {
			return "--"
		}
		return strconv.FormatFloat(float64(t.data[i]), 'g', -1, bitSize[T]())
	})
	return b.String()
}

// writeNested writes a row-major array of the given shape as nested brackets,
// elem(i) formatting element i.
func writeNested(b *strings.Builder, shape []int, elem func(i int) string) {
	if len(shape) == 0 {
		b.WriteString(elem(0))
		return
	}
	var rec func(d, off int)
	rec = func(d, off int) {
		b.WriteByte('[')
		for i := range shape[d] {
			if i > 0 {
				b.WriteByte(' ')
			}
			if d == len(shape)-1 {
				b.WriteString(elem(off + i))
			} else {
				inner := 1
				for _, s := range shape[d+1:] {
					inner *= s
				}
				rec(d+1, (off+i)*inner)
			}
		}
		b.WriteByte(']')
	}
	rec(0, 0)
}

// bitSize is 32 for float32-based types and 64 for float64-based ones.
func bitSize[T Float]() int {
	var x T
	return 8 * int(unsafe.Sizeof(x))
}

// IsTensor reports whether v is a masked tensor of this package (the
// counterpart of torch.masked.is_masked_tensor): a *Tensor, *COO or *CSR of
// float32 or float64, or a Tensor, COO or CSR value.
func IsTensor(v any) bool {
	switch v.(type) {
	case *Tensor[float32], *Tensor[float64], Tensor[float32], Tensor[float64],
		*COO[float32], *COO[float64], COO[float32], COO[float64],
		*CSR[float32], *CSR[float64], CSR[float32], CSR[float64]:
		return true
	}
	return false
}

// Input is what the reductions accept: a *Tensor, *COO or *CSR of the same
// element type. It is implemented by those types only.
type Input[T Float] interface {
	// entries gives the input's shape and, for a sparse input, its specified
	// entries as sorted flat offsets (sp is nil for a dense tensor).
	entries() (shape []int, dense *Tensor[T], sp *coords[T])
}

func (t *Tensor[T]) entries() ([]int, *Tensor[T], *coords[T]) {
	if t == nil {
		return nil, nil, nil
	}
	return t.shape, t, nil
}

// inputOf unpacks a reduction's input, rejecting nil ones and tensors whose
// data or mask do not fit their shape (a zero Tensor, for one).
func inputOf[T Float](op string, x Input[T]) ([]int, *Tensor[T], *coords[T], error) {
	if x == nil {
		return nil, nil, nil, errorf(ErrArg, op, "x", "nil input")
	}
	shape, dense, sp := x.entries()
	if dense == nil && sp == nil {
		return nil, nil, nil, errorf(ErrArg, op, "x", "nil input")
	}
	if dense != nil {
		n, err := numel(op, "x", shape)
		if err != nil {
			return nil, nil, nil, err
		}
		if len(dense.data) != n || len(dense.mask) != n {
			return nil, nil, nil, errorf(ErrShape, op, "x", "%d values and %d mask bits for shape %v (a zero Tensor?)", len(dense.data), len(dense.mask), shape)
		}
	}
	return shape, dense, sp, nil
}

// numel checks a shape (no negative sizes, no overflow) and returns its number
// of elements.
func numel(op, arg string, dims []int) (int, error) {
	n, neg, ok := shape.Elements(dims)
	switch {
	case neg >= 0:
		return 0, errorf(ErrShape, op, arg, "negative size in %v", dims)
	case !ok:
		return 0, errorf(ErrShape, op, arg, "%v has too many elements", dims)
	}
	return n, nil
}
