package mask

import (
	"fmt"
	"sync"
)

// Buffer is a reference-counted shared mask: the users of one mask (the layers
// of a model that share an attention mask, the tensors that share a sparsity
// pattern) each call Materialize with the mask they have and Release when they
// are done. The first Materialize stores the mask; later ones only check that
// they bring an equal one and take another reference; the Release that drops
// the last reference frees the mask, after which the next Materialize stores a
// mask anew.
//
// The zero Buffer is empty and ready to use. A Buffer is safe for concurrent
// use; Applies run in parallel with each other. A Buffer must not be copied
// after first use.
type Buffer struct {
	mu    sync.RWMutex
	m     *Mask // the stored mask; nil when empty
	refs  int   // references taken by Materialize and not yet released
	freed bool  // the last reference was released and nothing materialized since
}

// Materialize takes a reference to the shared mask. On an empty buffer it
// stores a copy of m (later changes to m do not reach the buffer); otherwise m
// must equal the stored mask, shape and elements, or Materialize returns a
// *BufferError wrapping ErrMismatch and takes no reference. A nil m is a
// *BufferError wrapping a *ShapeError.
func (b *Buffer) Materialize(m *Mask) error {
	if m == nil {
		return &BufferError{Op: "materialize", Err: &ShapeError{Op: "materialize", Reason: "nil mask"}}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m, b.refs, b.freed = m.Clone(), 1, false
		return nil
	}
	if !b.m.Equal(m) {
		var detail string
		if have, got := b.m.Shape(), m.Shape(); fmt.Sprint(have) != fmt.Sprint(got) {
			detail = fmt.Sprintf("holds shape %v, got %v", have, got)
		} else {
			i := b.m.firstDiff(m)
			detail = fmt.Sprintf("shape %v, first different element %d: holds %v, got %v", have, i, getBit(b.m.bits, i), getBit(m.bits, i))
		}
		return &BufferError{Op: "materialize", Err: ErrMismatch, Detail: detail}
	}
	b.refs++
	return nil
}

// Release drops one reference and frees the mask when it was the last. On a
// buffer that was never materialized it returns a *BufferError wrapping
// ErrNotMaterialized, and once every reference is released (a Release past
// zero) one wrapping ErrReleased.
func (b *Buffer) Release() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.stateError("release"); err != nil {
		return err
	}
	b.refs--
	if b.refs == 0 {
		b.m, b.freed = nil, true
	}
	return nil
}

// stateError returns the error of using an empty buffer, or nil when it holds
// a mask. The caller holds b.mu.
func (b *Buffer) stateError(op string) error {
	switch {
	case b.m != nil:
		return nil
	case b.freed:
		return &BufferError{Op: op, Err: ErrReleased}
	}
	return &BufferError{Op: op, Err: ErrNotMaterialized}
}

// Apply zeroes, in place, the entries of x where the shared mask is false; x
// is a tensor of the given shape, the mask's own or the mask's with one more
// trailing dimension (see [Mask.Apply], whose *ShapeError it returns wrapped
// in a *BufferError). On an empty buffer it returns a *BufferError wrapping
// ErrNotMaterialized or ErrReleased, as Release does.
func (b *Buffer) Apply(x []float32, shape []int) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if err := b.stateError("apply"); err != nil {
		return err
	}
	if err := b.m.Apply(x, shape); err != nil {
		return &BufferError{Op: "apply", Err: err}
	}
	return nil
}

// Mask returns a copy of the shared mask, or a *BufferError as Apply does on
// an empty buffer.
func (b *Buffer) Mask() (*Mask, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if err := b.stateError("mask"); err != nil {
		return nil, err
	}
	return b.m.Clone(), nil
}

// Refs returns the number of references held: 0 on an empty buffer.
func (b *Buffer) Refs() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.refs
}
