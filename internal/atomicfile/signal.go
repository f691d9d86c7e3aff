package atomicfile

import (
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// registry holds the outputs in progress in this process, for
// HandleSignals.
var registry struct {
	sync.Mutex
	outputs map[*Output]struct{}
	closed  bool // a signal arrived: no new output may begin
}

// errInterrupted is the error of Begin once a signal has arrived.
var errInterrupted = errors.New("interrupted by a signal")

// register adds o to the outputs in progress.
func register(o *Output) error {
	registry.Lock()
	defer registry.Unlock()
	if registry.closed {
		return errInterrupted
	}
	if registry.outputs == nil {
		registry.outputs = make(map[*Output]struct{})
	}
	registry.outputs[o] = struct{}{}
	return nil
}

// unregister removes o from the outputs in progress.
func unregister(o *Output) {
	registry.Lock()
	delete(registry.outputs, o)
	registry.Unlock()
}

// abortAll aborts every output in progress and lets no new one begin, and
// returns the destinations of the outputs it removed. An output being
// committed is committed first.
func abortAll() []string {
	registry.Lock()
	registry.closed = true
	outs := make([]*Output, 0, len(registry.outputs))
	for o := range registry.outputs {
		outs = append(outs, o)
	}
	registry.Unlock()
	var aborted []*Output
	for _, o := range outs {
		o.Abort()
		o.mu.Lock()
		if o.state == stateAborted {
			aborted = append(aborted, o)
		}
		o.mu.Unlock()
	}
	var removed []string
	for _, o := range aborted {
		// An output staged inside another's temporary (a directory's
		// weights file) went with it.
		inner := slices.ContainsFunc(aborted, func(p *Output) bool {
			return strings.HasPrefix(o.abs, p.tmp+string(filepath.Separator))
		})
		if !inner {
			removed = append(removed, o.dest)
		}
	}
	slices.Sort(removed)
	return removed
}

// HandleSignals makes SIGINT and SIGTERM abort every output in progress in
// this process (removing its temporary and lock; one being committed
// finishes first) and then exit with status 128 plus the signal number (130
// for SIGINT, 143 for SIGTERM), as a shell reports a process killed by the
// signal. Before it exits it calls report, when not nil, with the signal
// and the destinations of the outputs it removed (none appeared). Calling
// stop undoes it: the signals get their default behaviour back.
func HandleSignals(report func(sig os.Signal, removed []string)) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			removed := abortAll()
			if report != nil {
				report(sig, removed)
			}
			code := 1
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			os.Exit(code)
		case <-done:
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}
