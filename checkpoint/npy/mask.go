package npy

import (
	"errors"
	"fmt"
	"io"

	"github.com/tensorcast-go/tensorcast/mask"
)

// Masks in .npy files: a bool or uint8 array of the mask's shape, one element
// per flag, as NumPy saves a boolean mask (numpy.save(f, a)) or a 0/1 uint8
// one. Package mask holds the packed bits; the .npy side lives here, the
// layer above it.

// ErrNotMask is wrapped by the errors of arrays that cannot be a mask: a
// dtype other than bool and uint8, or Fortran order in more than one
// dimension.
var ErrNotMask = errors.New("npy: not a mask array (want a C-ordered bool or uint8 array)")

// Mask returns the array as a mask of its shape. It must be a bool or a uint8
// array in C order (Fortran order is accepted for rank 0 and 1, where it is
// the same); a nonzero element is true (keep), as numpy's astype(bool) reads
// it. Other arrays are an error wrapping ErrNotMask.
func (a *Array) Mask() (*mask.Mask, error) {
	switch {
	case a.DType != Bool && a.DType != Uint8:
		return nil, fmt.Errorf("%s array: %w", a.DType, ErrNotMask)
	case a.Fortran && len(a.Shape) > 1:
		return nil, fmt.Errorf("Fortran-order array of shape %v: %w", a.Shape, ErrNotMask)
	}
	keep := make([]bool, len(a.Data))
	for i, b := range a.Data {
		keep[i] = b != 0
	}
	return mask.FromBools(a.Shape, keep)
}

// ReadMask decodes a .npy file holding a mask (see [Array.Mask]) from r.
// Every error is a *FormatError; one for an array that is no mask wraps
// ErrNotMask.
func ReadMask(r io.Reader) (*mask.Mask, error) {
	a, err := Read(r)
	if err != nil {
		return nil, err
	}
	m, err := a.Mask()
	if err != nil {
		return nil, errAt(0, err, "header")
	}
	return m, nil
}

// ReadMaskFile decodes the .npy mask file at path, as ReadMask does, with
// the path in its *FormatError.
func ReadMaskFile(path string) (*mask.Mask, error) {
	a, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := a.Mask()
	if err != nil {
		e := errAt(0, err, "header")
		e.Path = path
		return nil, e
	}
	return m, nil
}

// WriteMask writes m to w as a C-ordered array of its shape and dtype dt,
// which must be Bool or Uint8: one byte per element, 1 for true and 0 for
// false, the bytes numpy.save writes for the same boolean array (as bool) or
// for a.astype(numpy.uint8).
func WriteMask(w io.Writer, dt DType, m *mask.Mask) error {
	if dt != Bool && dt != Uint8 {
		return fmt.Errorf("npy: write mask as %v: %w", dt, ErrNotMask)
	}
	return Write(w, dt, m.Shape(), m.Flags())
}
