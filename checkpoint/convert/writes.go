package convert

import (
	"sync"
)

// Writes to the output. Every layout fixes each stored tensor's place
// before any data is written, so each piece of output is written where it
// belongs by the worker that made it (sink.WriteAt), in whatever order the
// pieces are made. The kernel runs the writes to one file one at a time
// (each holds the file's lock while it copies), and a writer that finds the
// lock taken spins or sleeps there, its core idle for the conversion. So
// the workers take turns here instead: a worker that finds the turn taken
// queues its writes and casts on, and writes them at its next turn, or
// waits for one once it holds pendingMax bytes.

// pendingMax is how many bytes of writes a worker queues before it waits
// for its turn.
const pendingMax = 2 * itemBytes

// A write is a piece of output waiting for its turn.
type write struct {
	name string // of the stored tensor; none for a write that only runs done
	data []byte
	off  int64  // in the stored tensor
	done func() // once written, on the worker's goroutine, out of turn
}

// writer runs the writes of the workers to the sink in turns.
type writer struct {
	s  sink
	mu sync.Mutex // held for a turn
}

// writeError is an error of the sink, which names the output and tensor.
type writeError struct{ error }

func (e writeError) Unwrap() error { return e.error }

// put queues w with the writes of the worker whose scratch is sc, and
// writes them if the turn is free, or after waiting for it when wait is set
// or the queue holds pendingMax bytes.
func (o *writer) put(sc *scratch, w write, wait bool) error {
	sc.pending = append(sc.pending, w)
	sc.pendingBytes += len(w.data)
	if wait || sc.pendingBytes >= pendingMax {
		o.mu.Lock()
	} else if !o.mu.TryLock() {
		return nil
	}
	return o.writeQueued(sc)
}

// flush writes the worker's queued writes, waiting for its turn.
func (o *writer) flush(sc *scratch) error {
	if len(sc.pending) == 0 {
		return nil
	}
	o.mu.Lock()
	return o.writeQueued(sc)
}

// writeQueued writes the queued writes of sc in the turn the caller holds,
// ends the turn, and runs the writes' done functions.
func (o *writer) writeQueued(sc *scratch) error {
	var err error
	for _, w := range sc.pending {
		if w.name != "" {
			if err = o.s.WriteAt(w.name, w.data, w.off); err != nil {
				break
			}
		}
	}
	o.mu.Unlock()
	if err != nil {
		return writeError{err} // the conversion fails: the queue is dropped with the output
	}
	for i, w := range sc.pending {
		if w.done != nil {
			w.done()
		}
		sc.pending[i] = write{}
	}
	sc.pending, sc.pendingBytes = sc.pending[:0], 0
	return nil
}

// writeAt writes data at once, in turn with the workers.
func (o *writer) writeAt(name string, data []byte, off int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.s.WriteAt(name, data, off); err != nil {
		return writeError{err}
	}
	return nil
}
