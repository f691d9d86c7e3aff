package convert

import (
	"sync"
)

// Writes to the output. Every layout fixes each stored tensor's place
// before any data is written, so each piece of output is written where it
// belongs, in whatever order the pieces are made (sink.WriteAt), by the
// worker that made it. The kernel runs the writes to one file one at a time
// (each holds the file's lock while it copies), and a writer that finds the
// lock taken spins or sleeps there, its core idle for the conversion. So
// the workers take turns here instead: a worker that finds the turn taken
// queues its writes and casts on, and writes them at its next turn, or
// waits for one once it holds pendingMax bytes.
//
// With a spare core (fewer workers than cores), the workers hand their
// writes to a goroutine of the writer's own instead, which writes them while
// they cast on.

// pendingMax is how many bytes of writes a worker queues before it waits
// for its turn.
const pendingMax = 2 * itemBytes

// A write is a piece of output waiting for its turn.
type write struct {
	name string // of the stored tensor; none for a write that only runs done
	data []byte
	off  int64  // in the stored tensor
	done func() // once written, out of turn
}

// writer runs the writes of the workers to the sink in turns.
type writer struct {
	s  sink
	mu sync.Mutex // held for a turn

	batches chan batch    // to the writing goroutine, when there is one
	ended   chan struct{} // closed when the writing goroutine ends
	errMu   sync.Mutex
	err     error // the writing goroutine's first error
	stopped bool
}

// batch is the writes of one worker handed to the writing goroutine.
type batch struct {
	ws      []write
	written chan struct{} // closed once written, for a worker that waits
}

// writeError is an error of the sink, which names the output and tensor.
type writeError struct{ error }

func (e writeError) Unwrap() error { return e.error }

// newWriter returns the writer to s; own starts its writing goroutine.
func newWriter(s sink, own bool) *writer {
	o := &writer{s: s}
	if own {
		o.batches, o.ended = make(chan batch, 2), make(chan struct{})
		go o.run()
	}
	return o
}

// run is the writing goroutine.
func (o *writer) run() {
	defer close(o.ended)
	for b := range o.batches {
		if o.firstErr() == nil {
			o.mu.Lock()
			err := o.writeAll(b.ws)
			o.mu.Unlock()
			if err != nil {
				o.errMu.Lock()
				o.err = err
				o.errMu.Unlock()
			} else {
				runDone(b.ws)
			}
		}
		if b.written != nil {
			close(b.written)
		}
	}
}

// firstErr returns the writing goroutine's first error.
func (o *writer) firstErr() error {
	o.errMu.Lock()
	defer o.errMu.Unlock()
	return o.err
}

// put queues w with the writes of the worker whose scratch is sc. Without
// a writing goroutine, it writes them if the turn is free, or after waiting
// for it when wait is set or the queue holds pendingMax bytes; with one, it
// hands them over, and when wait is set waits for them to be written.
func (o *writer) put(sc *scratch, w write, wait bool) error {
	sc.pending = append(sc.pending, w)
	sc.pendingBytes += len(w.data)
	if o.batches != nil {
		if err := o.firstErr(); err != nil {
			return err
		}
		b := batch{ws: sc.pending}
		if wait {
			b.written = make(chan struct{})
		}
		sc.pending, sc.pendingBytes = nil, 0
		o.batches <- b
		if wait {
			<-b.written
			return o.firstErr()
		}
		return nil
	}
	if wait || sc.pendingBytes >= pendingMax {
		o.mu.Lock()
	} else if !o.mu.TryLock() {
		return nil
	}
	return o.writeQueued(sc)
}

// writeQueued writes the queued writes of sc in the turn the caller holds,
// ends the turn, and runs the writes' done functions.
func (o *writer) writeQueued(sc *scratch) error {
	err := o.writeAll(sc.pending)
	o.mu.Unlock()
	if err == nil {
		runDone(sc.pending)
	}
	// On an error the conversion fails and the queue is dropped with the
	// output; it must not stay queued for the scratch's next item.
	clear(sc.pending)
	sc.pending, sc.pendingBytes = sc.pending[:0], 0
	return err
}

// writeAll writes ws to the sink.
func (o *writer) writeAll(ws []write) error {
	for _, w := range ws {
		if w.name != "" {
			if err := o.s.WriteAt(w.name, w.data, w.off); err != nil {
				return writeError{err}
			}
		}
	}
	return nil
}

// runDone runs the done functions of written writes.
func runDone(ws []write) {
	for _, w := range ws {
		if w.done != nil {
			w.done()
		}
	}
}

// writeAt writes data at once, in turn with the workers.
func (o *writer) writeAt(name string, data []byte, off int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.writeAll([]write{{name: name, data: data, off: off}})
}

// finish writes what the workers, whose scratches are scs and who are all
// done, left queued, and ends the writing goroutine.
func (o *writer) finish(scs []*scratch) error {
	if o.batches != nil {
		o.stop()
		return o.firstErr()
	}
	for _, sc := range scs {
		if len(sc.pending) > 0 {
			o.mu.Lock()
			if err := o.writeQueued(sc); err != nil {
				return err
			}
		}
	}
	return nil
}

// stop ends the writing goroutine, if there is one, once it has written
// what it was handed; the workers must be done. It may be called again.
func (o *writer) stop() {
	if o.batches == nil || o.stopped {
		return
	}
	o.stopped = true
	close(o.batches)
	<-o.ended
}
