package mask

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBufferLifecycle(t *testing.T) {
	var b Buffer
	assert.Equal(t, 0, b.Refs())
	m := mustBools(t, []int{2, 2}, "10 01")
	require.NoError(t, b.Materialize(m))
	m.Set(1, true) // the buffer holds its own copy
	require.NoError(t, b.Materialize(mustBools(t, []int{2, 2}, "10 01")))
	assert.Equal(t, 2, b.Refs())
	got, err := b.Mask()
	require.NoError(t, err)
	assert.Equal(t, "[[1 0] [0 1]]", got.String())
	got.Set(0, false) // a copy again
	x := []float32{1, 2, 3, 4}
	require.NoError(t, b.Apply(x, []int{2, 2}))
	assert.Equal(t, []float32{1, 0, 0, 4}, x)
	x = []float32{1, 1, 2, 2, 3, 3, 4, 4}
	require.NoError(t, b.Apply(x, []int{2, 2, 2}))
	assert.Equal(t, []float32{1, 1, 0, 0, 0, 0, 4, 4}, x)

	require.NoError(t, b.Release())
	assert.Equal(t, 1, b.Refs())
	require.NoError(t, b.Apply(x, []int{2, 2, 2})) // still held
	require.NoError(t, b.Release())
	assert.Equal(t, 0, b.Refs())

	// Freed: every use is ErrReleased until the next Materialize.
	assert.ErrorIs(t, b.Release(), ErrReleased)
	assert.ErrorIs(t, b.Apply(x, []int{2, 2, 2}), ErrReleased)
	_, err = b.Mask()
	assert.ErrorIs(t, err, ErrReleased)

	// A new mask, of another shape, after the free.
	require.NoError(t, b.Materialize(mustBools(t, []int{3}, "011")))
	x = []float32{5, 6, 7}
	require.NoError(t, b.Apply(x, []int{3}))
	assert.Equal(t, []float32{0, 6, 7}, x)
	require.NoError(t, b.Release())
}

func TestBufferMisuse(t *testing.T) {
	var b Buffer
	var be *BufferError
	err := b.Release()
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "release", be.Op)
	assert.ErrorIs(t, err, ErrNotMaterialized)
	assert.Equal(t, "mask: buffer release: buffer used before Materialize", err.Error())
	assert.ErrorIs(t, b.Apply(nil, []int{0}), ErrNotMaterialized)
	_, err = b.Mask()
	assert.ErrorIs(t, err, ErrNotMaterialized)
	assert.ErrorIs(t, b.Materialize(nil), ErrShape)

	require.NoError(t, b.Materialize(mustBools(t, []int{2, 3}, "110 001")))
	// A different shape.
	err = b.Materialize(mustBools(t, []int{6}, "110 001"))
	require.ErrorAs(t, err, &be)
	assert.ErrorIs(t, err, ErrMismatch)
	assert.Contains(t, err.Error(), "holds shape [2 3], got [6]")
	// Different elements.
	err = b.Materialize(mustBools(t, []int{2, 3}, "110 011"))
	assert.ErrorIs(t, err, ErrMismatch)
	assert.Contains(t, err.Error(), "first different element 4: holds false, got true")
	assert.Equal(t, 1, b.Refs()) // failed calls take no reference
	// A tensor of the wrong shape.
	err = b.Apply(make([]float32, 6), []int{3, 2})
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "apply", be.Op)
	assert.ErrorIs(t, err, ErrShape)
	require.NoError(t, b.Release())
	assert.ErrorIs(t, b.Release(), ErrReleased)
}

// TestBufferConcurrent has many goroutines materialize, apply and release one
// buffer at once (run it with -race): every Apply sees the one mask, and the
// count returns to zero. In the first phase the test holds a reference of its
// own, so the mask is never freed and a goroutine that brings another mask is
// refused every time; in the second the count reaches zero again and again.
func TestBufferConcurrent(t *testing.T) {
	shape := []int{4, 33}
	keep := make([]bool, 4*33)
	for i := range keep {
		keep[i] = i%3 != 0
	}
	other := make([]bool, len(keep))
	other[5] = true
	for _, holdOne := range []bool{true, false} {
		var b Buffer
		if holdOne {
			m, err := FromBools(shape, keep)
			require.NoError(t, err)
			require.NoError(t, b.Materialize(m))
		}
		const workers, rounds = 8, 200
		var wg sync.WaitGroup
		errs := make(chan error, 4*workers*rounds)
		for w := range workers {
			wg.Go(func() {
				m, err := FromBools(shape, keep)
				if err != nil {
					errs <- err
					return
				}
				x := make([]float32, 4*33*2)
				for range rounds {
					if err := b.Materialize(m); err != nil {
						errs <- err
						return
					}
					for i := range x {
						x[i] = float32(i + w + 1) // never 0
					}
					if err := b.Apply(x, []int{4, 33, 2}); err != nil {
						errs <- err
					}
					for i, v := range x {
						if keep[i/2] != (v != 0) {
							t.Errorf("worker %d: entry %d is %v", w, i, v)
							return
						}
					}
					if got, err := b.Mask(); err != nil {
						errs <- err
					} else if got.Count() != 88 {
						t.Errorf("worker %d: mask has %d set", w, got.Count())
					}
					_ = b.Refs()
					if err := b.Release(); err != nil {
						errs <- err
					}
				}
			})
		}
		if holdOne {
			wg.Go(func() {
				m, err := FromBools(shape, other)
				if err != nil {
					errs <- err
					return
				}
				for range rounds {
					if err := b.Materialize(m); !errors.Is(err, ErrMismatch) {
						t.Errorf("other mask: %v, want a mismatch", err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if holdOne {
			assert.Equal(t, 1, b.Refs())
			require.NoError(t, b.Release())
		}
		assert.Equal(t, 0, b.Refs())
		assert.ErrorIs(t, b.Release(), ErrReleased)
	}
}
