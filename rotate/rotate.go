// Package rotate applies orthonormal rotations to blocks of a tensor's
// values before they are cast, and undoes them after: the normalised
// Walsh–Hadamard rotation TensorCast calls incoherence processing (ICP).
//
// A rotation spreads an outlier over its block, so that the block's scale
// is set by its typical values rather than by one large one; since the
// matrix H = Hₙ/√n (Sylvester's Hadamard matrix of order n, normalised) is
// orthonormal and symmetric, H·H = I: the same transform undoes it, and the
// squared error of a cast is the same in both orientations.
//
// The transform runs in float64 and rounds each result to float32 once: see
// Rotation.Apply for the bound this gives.
package rotate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// Kind names a rotation.
type Kind string

// The rotations.
const (
	// None is no rotation (the zero Kind).
	None Kind = ""
	// Hadamard is the normalised Walsh–Hadamard (Sylvester) matrix.
	Hadamard Kind = "hadamard"
)

// MaxBlock is the largest block a rotation takes.
const MaxBlock = 1 << 16

// Rotation is a rotation of blocks of Block consecutive values along one
// axis. The zero value is no rotation; a Hadamard rotation with Block 0
// takes its block from the datatype it is cast to (see WithDefaultBlock).
type Rotation struct {
	Kind  Kind
	Block int
}

// ErrSyntax is matched by the error of Parse for a malformed rotation.
var ErrSyntax = errors.New("invalid rotation")

// Parse reads a rotation as String writes it:
// "hadamard" or "hadamard:BLOCK" (BLOCK a power of two from 2 to
// MaxBlock), or "" or "none" for no rotation.
func Parse(s string) (Rotation, error) {
	kind, block, hasBlock := strings.Cut(strings.TrimSpace(s), ":")
	switch strings.ToLower(kind) {
	case "", "none":
		if hasBlock {
			return Rotation{}, fmt.Errorf("%w %q: no rotation takes no block", ErrSyntax, s)
		}
		return Rotation{}, nil
	case string(Hadamard):
	default:
		return Rotation{}, fmt.Errorf("%w %q: want hadamard or hadamard:BLOCK", ErrSyntax, s)
	}
	r := Rotation{Kind: Hadamard}
	if !hasBlock {
		return r, nil
	}
	n, err := strconv.Atoi(block)
	if err != nil || !validBlock(n) {
		return Rotation{}, fmt.Errorf("%w %q: BLOCK must be a power of two from 2 to %d", ErrSyntax, s, MaxBlock)
	}
	r.Block = n
	return r, nil
}

func validBlock(n int) bool { return n >= 2 && n <= MaxBlock && n&(n-1) == 0 }

// String gives the rotation as Parse reads it: "hadamard:32", "hadamard"
// when the block is not chosen yet, "" for none.
func (r Rotation) String() string {
	switch {
	case r.Kind == None:
		return ""
	case r.Block == 0:
		return string(r.Kind)
	}
	return string(r.Kind) + ":" + strconv.Itoa(r.Block)
}

// IsZero reports no rotation.
func (r Rotation) IsZero() bool { return r.Kind == None }

// DefaultBlock is the block of a Hadamard rotation for a datatype scaled
// in no tiles along the rotated axis.
const DefaultBlock = 128

// WithDefaultBlock returns r with its block chosen when it has none: tile,
// the datatype's block along the rotated axis, when it is a power of two,
// else DefaultBlock when tile is 0 (tensor or channel scaling). A tile that
// is no power of two gives an error: name the block.
func (r Rotation) WithDefaultBlock(tile int) (Rotation, error) {
	if r.IsZero() || r.Block != 0 {
		return r, nil
	}
	switch {
	case tile == 0:
		r.Block = DefaultBlock
	case validBlock(tile):
		r.Block = tile
	default:
		return r, fmt.Errorf("the datatype's block of %d is not a power of two: name one, as hadamard:BLOCK", tile)
	}
	return r, nil
}

// LengthError reports an axis whose length is not a multiple of the
// rotation's block.
type LengthError struct {
	Rotation Rotation
	Axis     int // the rotated axis
	Length   int // its length
}

func (e *LengthError) Error() string {
	return fmt.Sprintf("%s rotates blocks of %d, and axis %d holds %d, not a multiple of it", e.Rotation, e.Rotation.Block, e.Axis, e.Length)
}

// Check reports whether r can rotate a tensor of the given shape along
// axis (an index): a *LengthError when the axis is not a multiple of the
// block.
func (r Rotation) Check(shape []int, axis int) error {
	if r.IsZero() {
		return nil
	}
	if r.Kind != Hadamard || !validBlock(r.Block) {
		return fmt.Errorf("%w: %q", ErrSyntax, r.String())
	}
	if axis < 0 || axis >= len(shape) {
		return fmt.Errorf("rotate: axis %d is out of range for shape %v", axis, shape)
	}
	if shape[axis]%r.Block != 0 {
		return &LengthError{Rotation: r, Axis: axis, Length: shape[axis]}
	}
	return nil
}

// Apply rotates x, a row-major tensor of the given shape, in place: every
// run of Block consecutive values along axis (an index) is multiplied by
// the normalised Hadamard matrix H of order Block. Since H·H = I, Apply
// also undoes itself.
//
// Each result is the float64 transform rounded once to float32. For a
// block x of n values (n ≤ MaxBlock), every result y_i of Apply differs
// from the exact (H·x)_i by at most 2⁻²⁴·|(H·x)_i| + 2⁻⁴⁸·‖x‖₂, and
// applying it twice gives back each x_i within
// 2⁻²⁴·(|x_i| + ‖x‖₂)·(1 + 2⁻¹²): the round trip is exact to float32
// rounding of the block's norm.
func (r Rotation) Apply(x []float32, shape []int, axis int) error {
	if err := r.Check(shape, axis); err != nil {
		return err
	}
	if r.IsZero() {
		return nil
	}
	outer, inner := 1, 1
	for i, d := range shape {
		switch {
		case i < axis:
			outer *= d
		case i > axis:
			inner *= d
		}
	}
	n := shape[axis]
	if outer*n*inner != len(x) {
		return fmt.Errorf("rotate: %d values for shape %v", len(x), shape)
	}
	if inner == 1 {
		// The blocks are runs of consecutive values.
		var s Scratch
		r.Rows(x, x, &s)
		return nil
	}
	// Each block is gathered into a row of its own, rotated by Rows and
	// scattered back.
	row := make([]float32, r.Block)
	var s Scratch
	for o := range outer {
		base := o * n * inner
		for in := range inner {
			for b := 0; b < n; b += r.Block {
				start := base + b*inner + in
				for k := range row {
					row[k] = x[start+k*inner]
				}
				r.Rows(row, row, &s)
				for k, v := range row {
					x[start+k*inner] = v
				}
			}
		}
	}
	return nil
}

// Scratch is the float64 memory of Rows, reused from call to call. The
// zero value is ready to use; a Scratch serves one goroutine at a time.
type Scratch struct {
	buf []float64
}

// Rows writes to dst the rotation of src, whose consecutive runs of Block
// values are its blocks: Apply along the last axis of a tensor whose rows
// hold whole blocks, for any number of whole rows. dst may be src, for a
// rotation in place; Rows panics unless len(dst) = len(src) is a multiple
// of the block of a valid Hadamard rotation (see Check). It gives the same
// values as Apply, and allocates only to grow s. The transform is
// kernels.FWHTRows (AVX-512 assembly where the CPU has it, the same bits as
// its Go reference).
func (r Rotation) Rows(dst, src []float32, s *Scratch) {
	if r.IsZero() {
		copy(dst, src)
		return
	}
	n := r.Block
	if r.Kind != Hadamard || !validBlock(n) || len(dst) != len(src) || len(src)%n != 0 {
		panic(fmt.Sprintf("rotate: Rows of %d values into %d by %s", len(src), len(dst), r))
	}
	if cap(s.buf) < n {
		s.buf = make([]float64, n)
	}
	kernels.FWHTRows(dst, src, n, s.buf[:n])
}

// Transform multiplies x, whose length is a power of two, by the
// normalised Hadamard matrix of that order, in place: the fast
// Walsh–Hadamard transform (log₂ n stages of sums and differences), then
// a scaling by 1/√n. It panics when len(x) is not a power of two.
func Transform(x []float64) {
	n := len(x)
	if n == 0 || n&(n-1) != 0 {
		panic(fmt.Sprintf("rotate.Transform: length %d is not a power of two", n))
	}
	kernels.FWHT(x)
	s := kernels.FWHTScale(n)
	for i := range x {
		x[i] *= s
	}
}
