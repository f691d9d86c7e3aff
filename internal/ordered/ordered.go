// Package ordered runs work on several goroutines and consumes the results in
// order, with a bound on how many are in flight.
package ordered

import "sync"

// Run calls work(i) for i = 0..n-1 on workers goroutines and emit(i) on the
// calling goroutine in order of i, each as soon as work(i) and every earlier
// emit are done. At most window items (window ≥ workers) are between the start
// of their work and the end of their emit, which bounds the memory their
// results hold. The first error, from work or emit, stops the run and is
// returned; items not started by then are skipped.
func Run(n, workers, window int, work func(i int) error, emit func(i int) error) error {
	window = max(window, workers, 1)
	tokens := make(chan struct{}, window)
	todo := make(chan int)
	type result struct {
		i   int
		err error
	}
	done := make(chan result, window)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range todo {
				done <- result{i, work(i)}
			}
		}()
	}
	go func() {
		defer close(todo)
		for i := range n {
			select {
			case tokens <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case todo <- i:
			case <-stop:
				return
			}
		}
	}()
	go func() { wg.Wait(); close(done) }()
	errs := map[int]error{}
	next := 0
	var firstErr error
	for r := range done {
		if firstErr != nil {
			continue // drain
		}
		errs[r.i] = r.err
		for {
			err, ok := errs[next]
			if !ok {
				break
			}
			delete(errs, next)
			if err == nil {
				err = emit(next)
			}
			next++
			<-tokens
			if err != nil {
				firstErr = err
				close(stop)
				break
			}
		}
	}
	return firstErr
}
