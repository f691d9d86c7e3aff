package kbench

import (
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSumFloat32(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 16, 17, 33} {
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(i) + 0.5
		}
		// The checksum adds little-endian 64-bit words, the last odd float alone.
		var want uint64
		for i := 0; i+1 < n; i += 2 {
			want += uint64(math.Float32bits(src[i])) | uint64(math.Float32bits(src[i+1]))<<32
		}
		if n%2 == 1 {
			want += uint64(math.Float32bits(src[n-1]))
		}
		if got := SumFloat32(src); got != want {
			t.Fatalf("n=%d: %d, want %d", n, got, want)
		}
	}
}

// TestMeasure checks that Measure runs the kernel on every worker's own
// copy of the input and reports a positive speed.
func TestMeasure(t *testing.T) {
	var mu sync.Mutex
	seen := map[*float32]int{}
	w := Workload{"Count", func(src []float32) func() {
		return func() {
			mu.Lock()
			seen[&src[0]]++
			mu.Unlock()
		}
	}}
	src := make([]float32, 64)
	assert.Greater(t, w.Measure(src, 3, 2), 0.0)
	assert.Len(t, seen, 3, "three workers, three inputs")
	assert.Contains(t, seen, &src[0], "the first worker reads src itself")
	n := -1
	for _, c := range seen {
		if n >= 0 {
			assert.Equal(t, n, c, "every worker runs as often")
		}
		n = c
	}
}

// TestWorkloadsParallel runs every workload on two workers at once, as
// Measure does with workers > 1 (tcast bench -workers): under -race (.ci/run
// races this package) a workload writing state its workers share fails.
func TestWorkloadsParallel(t *testing.T) {
	src := BenchInput(4 * 256)
	for _, w := range Workloads() {
		parallel([]func(){w.Prepare(src), w.Prepare(slices.Clone(src))}, 2)
	}
}
