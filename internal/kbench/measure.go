package kbench

import (
	"slices"
	"sync"
	"time"
)

// MeasureRound is the least time one round of Measure takes: kernels that are
// faster run several times in a round.
const MeasureRound = 50 * time.Millisecond

// Measure times w on src and returns its median speed over rounds rounds, in
// GB/s of float32 (4·len(src) bytes per run and worker).
//
// With workers > 1, that many goroutines run the kernel at once, each on
// its own copy of src and its own outputs, and the speed is their total:
// the figure that shows how a kernel scales across cores (compute-bound and
// cache-resident work should scale with the cores, memory-bound work with
// the memory bandwidth). Each worker runs the kernel once first, paging in
// its buffers and giving the first estimate of its time.
func (w Workload) Measure(src []float32, workers, rounds int) float64 {
	workers, rounds = max(workers, 1), max(rounds, 1)
	runs := make([]func(), workers)
	for i := range runs {
		in := src
		if i > 0 {
			in = slices.Clone(src)
		}
		runs[i] = w.Prepare(in)
	}
	t := time.Now()
	parallel(runs, 1)
	one := max(time.Since(t), time.Microsecond)
	reps := max(1, int(MeasureRound/one))
	speeds := make([]float64, rounds)
	for r := range speeds {
		t := time.Now()
		parallel(runs, reps)
		speeds[r] = float64(4*len(src)) * float64(reps*workers) / time.Since(t).Seconds() / 1e9
	}
	slices.Sort(speeds)
	return speeds[len(speeds)/2]
}

// parallel calls each of runs reps times, each in a goroutine of its own
// (the caller's for the first), and returns when all are done.
func parallel(runs []func(), reps int) {
	var wg sync.WaitGroup
	for _, run := range runs[1:] {
		wg.Go(func() {
			for range reps {
				run()
			}
		})
	}
	for range reps {
		runs[0]()
	}
	wg.Wait()
}
