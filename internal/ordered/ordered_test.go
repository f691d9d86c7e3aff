package ordered

import (
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOrdered checks emit order, the bound on items in flight, and stopping at
// the first error.
func TestRun(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		var inFlight, peak atomic.Int32
		var got []int
		err := Run(50, workers, workers+1, func(i int) error {
			if v := inFlight.Add(1); v > peak.Load() {
				peak.Store(v)
			}
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			return nil
		}, func(i int) error {
			got = append(got, i)
			inFlight.Add(-1)
			return nil
		})
		require.NoError(t, err)
		require.Len(t, got, 50)
		for i, g := range got {
			assert.Equal(t, i, g)
		}
		assert.LessOrEqual(t, int(peak.Load()), workers+1, "workers %d", workers)
	}
	boom := errors.New("boom")
	var emitted []int
	err := Run(20, 3, 4, func(i int) error {
		if i == 7 {
			return boom
		}
		return nil
	}, func(i int) error { emitted = append(emitted, i); return nil })
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6}, emitted)
	err = Run(20, 2, 3, func(int) error { return nil }, func(i int) error {
		if i == 3 {
			return boom
		}
		return nil
	})
	assert.ErrorIs(t, err, boom)
}
