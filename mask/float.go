package mask

import (
	"fmt"
	"slices"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// Operations on float32 slices of the mask's shape, in row-major order.

// checkLen returns a *ShapeError unless every slice of xs holds Len() floats.
func (m *Mask) checkLen(op string, names []string, xs ...[]float32) error {
	for i, x := range xs {
		if len(x) != m.n {
			return &ShapeError{Op: op, Shape: m.Shape(), Reason: fmt.Sprintf("%s holds %d floats for %d elements", names[i], len(x), m.n)}
		}
	}
	return nil
}

// Select sets dst[i] to a[i] where element i of m is true and to b[i] where
// it is false (torch.where(m, a, b)), copying the float bits exactly. dst, a
// and b must each hold Len() floats (else a *ShapeError); dst may be a or b
// itself.
func (m *Mask) Select(dst, a, b []float32) error {
	if err := m.checkLen("select", []string{"dst", "a", "b"}, dst, a, b); err != nil {
		return err
	}
	kernels.BlendMasked(dst, a, b, m.bits)
	return nil
}

// Compact copies the elements of src where m is true, in order, to the front
// of dst and returns how many there are (Count()). src must hold Len() floats
// and dst at least Count() (else a *ShapeError).
func (m *Mask) Compact(dst, src []float32) (int, error) {
	if err := m.checkLen("compact", []string{"src"}, src); err != nil {
		return 0, err
	}
	if c := m.Count(); len(dst) < c {
		return 0, &ShapeError{Op: "compact", Shape: m.Shape(), Reason: fmt.Sprintf("dst holds %d floats for %d kept elements", len(dst), c)}
	}
	return kernels.SelectMasked(dst, src, m.bits), nil
}

// Expand is the inverse of Compact: dst[i] is the next float of src where
// element i of m is true and +0 where it is false. It returns how many floats
// of src it used (Count()). dst must hold Len() floats and src at least
// Count() (else a *ShapeError).
func (m *Mask) Expand(dst, src []float32) (int, error) {
	if err := m.checkLen("expand", []string{"dst"}, dst); err != nil {
		return 0, err
	}
	if c := m.Count(); len(src) < c {
		return 0, &ShapeError{Op: "expand", Shape: m.Shape(), Reason: fmt.Sprintf("src holds %d floats for %d kept elements", len(src), c)}
	}
	return kernels.ExpandMasked(dst, src, m.bits), nil
}

// Apply sets to +0, in place, the entries of x where m is false. x is a
// tensor of the given shape: the mask's own shape, or the mask's shape with
// one extra trailing dimension (each element of m then covers a run of that
// many consecutive entries, as a [B,L] padding mask covers the hidden vector
// of each token of a [B,L,D] tensor). Another shape, or len(x) other than the
// shape's element count, is a *ShapeError.
func (m *Mask) Apply(x []float32, shape []int) error {
	inner, err := m.applyInner(shape)
	if err != nil {
		return err
	}
	if want := m.n * inner; len(x) != want {
		return &ShapeError{Op: "apply", Shape: m.Shape(), Other: slices.Clone(shape), Reason: fmt.Sprintf("x holds %d floats for %d elements", len(x), want)}
	}
	if inner == 1 {
		kernels.ZeroMasked(x, x, m.bits)
		return nil
	}
	for lo := m.NextClear(0); lo >= 0; {
		hi := m.NextSet(lo)
		if hi < 0 {
			hi = m.n
		}
		clear(x[lo*inner : hi*inner])
		if hi == m.n {
			break
		}
		lo = m.NextClear(hi)
	}
	return nil
}

// applyInner returns the size of the trailing dimension shape adds to the
// mask's shape (1 when it is the mask's shape), or a *ShapeError.
func (m *Mask) applyInner(shape []int) (int, error) {
	own := m.Shape()
	switch {
	case slices.Equal(shape, own):
		return 1, nil
	case len(shape) == len(own)+1 && slices.Equal(shape[:len(own)], own) && shape[len(own)] >= 0:
		if _, err := size("apply", shape); err != nil {
			return 0, err
		}
		return shape[len(own)], nil
	}
	return 0, &ShapeError{Op: "apply", Shape: own, Other: slices.Clone(shape),
		Reason: "the tensor's shape must be the mask's or the mask's with one more trailing dimension"}
}
