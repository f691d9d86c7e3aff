package gguf

import (
	"fmt"
	"os"
	"sync"

	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/internal/spans"
)

// Stream writes a GGUF file whose tensors were declared with DeclareTensor.
// The header is written first; each tensor's data then comes in one of two
// ways. Write appends to the tensors in declaration order, so that only the
// piece in hand need be in memory. WriteAt writes a piece at its place in a
// tensor, in any order and from any goroutine, for a writer that makes a
// tensor's pieces on several goroutines (the layout fixes every tensor's
// offset before any data is written). A tensor is written one way or the
// other, not both; Write skips the tensors WriteAt completed. The zero
// padding between tensors is the Stream's. Nothing appears under the final
// name until Close succeeds, and after any error the Stream is failed:
// Close removes the temporary file and returns the first error.
//
// WriteAt may be called from several goroutines at once, also while Write
// runs. Write, WriteTensor, Close and Abort must be called from one
// goroutine at a time, and Close and Abort only once every WriteAt has
// returned.
type Stream struct {
	path string
	out  *atomicfile.Output
	f    *os.File
	size int64 // the whole file's

	mu      sync.Mutex
	tensors []streamTensor // in declaration order, so in file order
	index   map[string]int
	next    int // Write's tensor: the first not complete
	err     error

	// Write's buffer, which only Write, WriteTensor and Close touch: bytes
	// bound for the file from offset bufOff.
	buf    []byte
	bufOff int64
	// Bytes Write has put in the file whose writeback is not started yet.
	wb0, wb1 int64
}

// streamTensor is a tensor of a Stream and the bytes it has received.
type streamTensor struct {
	name      string
	off, size int64 // in the file
	padded    int64 // size with the padding that follows it
	got       spans.Set
	appended  int64 // bytes Write appended
	named     bool  // by a Write or WriteAt
	at        bool  // WriteAt wrote some of it
}

// complete reports whether every byte of t was written (a tensor without
// data once it was named).
func (t *streamTensor) complete() bool { return t.got.Len() == t.size && (t.size > 0 || t.named) }

const (
	// bufSize is the size of Write's buffer; pieces at least this large go
	// to the file directly.
	bufSize = 1 << 20
	// writebackMin is how many bytes Write puts in the file between two
	// starts of their writeback.
	writebackMin = 4 << 20
	// writebackAtMin is the size of a WriteAt from which its bytes are sent
	// to disk at once.
	writebackAtMin = 1 << 20
)

// Create writes the header to a temporary file beside path and returns the
// Stream that takes the tensors' data. An existing file at path is replaced
// when Close succeeds; another writer of the same path, in this process or
// another, makes Create fail with an error wrapping atomicfile.ErrLocked.
func (w *Writer) Create(path string) (*Stream, error) {
	hdr, align, err := w.header()
	if err != nil {
		return nil, err
	}
	out, err := atomicfile.Begin(path, atomicfile.Options{Force: true})
	if err != nil {
		return nil, err // names the output
	}
	f, err := os.OpenFile(out.Path(), os.O_WRONLY, 0)
	if err != nil {
		out.Abort()
		return nil, fmt.Errorf("gguf: %w", err)
	}
	s := &Stream{path: path, out: out, f: f, index: make(map[string]int, len(w.tensors))}
	off := int64(len(hdr))
	for i, t := range w.tensors {
		p := padded(t.size, align)
		s.tensors = append(s.tensors, streamTensor{name: t.name, off: off, size: t.size, padded: p})
		s.index[t.name] = i
		off += p
	}
	s.size = off
	s.buf = append(make([]byte, 0, max(bufSize, len(hdr))), hdr...)
	return s, nil
}

// failLocked records err as the Stream's error unless one is recorded, and
// returns the recorded one. s.mu must be held.
func (s *Stream) failLocked(err error) error {
	if s.err == nil {
		s.err = err
	}
	return s.err
}

// fail is failLocked for callers that do not hold s.mu.
func (s *Stream) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failLocked(err)
}

// nextLocked returns Write's tensor: the first that is not complete, or nil.
// s.mu must be held.
func (s *Stream) nextLocked() *streamTensor {
	for s.next < len(s.tensors) && s.tensors[s.next].complete() {
		s.next++
	}
	if s.next == len(s.tensors) {
		return nil
	}
	return &s.tensors[s.next]
}

// WriteTensor writes the data of the next declared tensor, which must be
// name, with exactly its size.
func (s *Stream) WriteTensor(name string, data []byte) error {
	s.mu.Lock()
	if t := s.nextLocked(); s.err == nil && t != nil && t.name == name {
		switch {
		case t.appended != 0:
			s.failLocked(fmt.Errorf("gguf: %s: tensor %q: WriteTensor after %d of its bytes were written with Write", s.path, name, t.appended))
		case int64(len(data)) != t.size:
			s.failLocked(fmt.Errorf("gguf: %s: tensor %q: %d bytes, want %d", s.path, name, len(data), t.size))
		}
	}
	s.mu.Unlock()
	return s.Write(name, data)
}

// Write appends data to the next declared tensor that is not complete,
// which must be name: successive calls supply consecutive parts of its
// bytes, so that a tensor need not be in memory whole. Writing more than the
// tensor holds, or to a tensor WriteAt wrote some of, is an error; the
// tensor is complete (and the next one may follow) when all its bytes are
// written.
func (s *Stream) Write(name string, data []byte) error {
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	t := s.nextLocked()
	var err error
	switch {
	case t == nil:
		err = fmt.Errorf("gguf: %s: tensor %q: every declared tensor is written", s.path, name)
	case t.name != name:
		err = fmt.Errorf("gguf: %s: tensor %q written, %q is next", s.path, name, t.name)
	case t.at:
		err = fmt.Errorf("gguf: %s: tensor %q: Write after WriteAt wrote some of its bytes", s.path, name)
	case int64(len(data)) > t.size-t.appended:
		err = fmt.Errorf("gguf: %s: tensor %q: %d bytes after %d exceed its %d", s.path, name, len(data), t.appended, t.size)
	}
	if err != nil {
		err = s.failLocked(err)
		s.mu.Unlock()
		return err
	}
	pos := t.off + t.appended
	_ = t.got.Add(t.appended, t.appended+int64(len(data))) // WriteAt wrote none of t
	t.appended += int64(len(data))
	t.named = true
	pad := int64(0)
	if t.appended == t.size {
		pad = t.padded - t.size
	}
	s.mu.Unlock()

	if err := s.put(pos, data); err != nil {
		return s.fail(fmt.Errorf("gguf: %s: tensor %q: %w", s.path, name, err))
	}
	if pad > 0 {
		if err := s.put(pos+int64(len(data)), make([]byte, pad)); err != nil {
			return s.fail(fmt.Errorf("gguf: %s: %w", s.path, err))
		}
	}
	return nil
}

// put writes data at file offset pos through Write's buffer.
func (s *Stream) put(pos int64, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if len(s.buf) > 0 && (s.bufOff+int64(len(s.buf)) != pos || len(s.buf)+len(data) > bufSize) {
		if err := s.flush(); err != nil {
			return err
		}
	}
	if len(data) >= bufSize {
		return s.pwrite(data, pos)
	}
	if len(s.buf) == 0 {
		s.bufOff = pos
	}
	s.buf = append(s.buf, data...)
	return nil
}

// flush writes Write's buffer to the file.
func (s *Stream) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	err := s.pwrite(s.buf, s.bufOff)
	s.buf = s.buf[:0]
	return err
}

// pwrite writes b at file offset pos for Write, and starts the writeback of
// what Write put in the file whenever writebackMin bytes are in one run.
func (s *Stream) pwrite(b []byte, pos int64) error {
	if _, err := s.f.WriteAt(b, pos); err != nil {
		return err
	}
	end := pos + int64(len(b))
	if pos != s.wb1 {
		atomicfile.StartWriteback(s.f, s.wb0, s.wb1-s.wb0)
		s.wb0 = pos
	}
	s.wb1 = end
	if s.wb1-s.wb0 >= writebackMin {
		// The disk starts on what reached the file, so that Close's sync
		// has little left to wait for.
		atomicfile.StartWriteback(s.f, s.wb0, s.wb1-s.wb0)
		s.wb0 = s.wb1
	}
	return nil
}

// WriteAt writes data at byte off of the named tensor's data (not of the
// file). The pieces of a tensor may come in any order, from any goroutine,
// but must not overlap and must lie inside it; a tensor Write appended to
// takes none. Otherwise, and for a tensor that was not declared, WriteAt
// fails the Stream. Close checks that every byte was written.
func (s *Stream) WriteAt(name string, data []byte, off int64) error {
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	i, ok := s.index[name]
	var t *streamTensor
	var err error
	switch {
	case !ok:
		err = fmt.Errorf("gguf: %s: tensor %q was not declared", s.path, name)
	case off < 0:
		err = fmt.Errorf("gguf: %s: tensor %q: negative offset %d", s.path, name, off)
	default:
		t = &s.tensors[i]
		switch {
		case int64(len(data)) > t.size-off:
			err = fmt.Errorf("gguf: %s: tensor %q: %d bytes at %d exceed its %d", s.path, name, len(data), off, t.size)
		case t.appended > 0:
			err = fmt.Errorf("gguf: %s: tensor %q: WriteAt after Write appended %d of its bytes", s.path, name, t.appended)
		default:
			if e := t.got.Add(off, off+int64(len(data))); e != nil {
				err = fmt.Errorf("gguf: %s: tensor %q: %w", s.path, name, e)
			}
		}
	}
	if err != nil {
		err = s.failLocked(err)
		s.mu.Unlock()
		return err
	}
	t.at, t.named = true, true
	pos := t.off + off
	s.mu.Unlock()

	if len(data) == 0 {
		return nil
	}
	if _, err := s.f.WriteAt(data, pos); err != nil {
		return s.fail(fmt.Errorf("gguf: %s: tensor %q: %w", s.path, name, err))
	}
	if len(data) >= writebackAtMin {
		atomicfile.StartWriteback(s.f, pos, int64(len(data)))
	}
	return nil
}

// Close checks that every declared tensor was written, syncs the file and
// renames it into place. After an error it removes the temporary file. The
// file gets mode 0666 less the umask (0644 under the usual umask 022).
func (s *Stream) Close() error {
	s.mu.Lock()
	if s.err == nil {
		for i := range s.tensors {
			t := &s.tensors[i]
			if t.complete() {
				continue
			}
			if t.got.Len() > 0 {
				hole, _ := t.got.Hole(t.size)
				s.err = fmt.Errorf("gguf: %s: tensor %q received %d of its %d bytes (byte %d is missing)", s.path, t.name, t.got.Len(), t.size, hole)
			} else {
				s.err = fmt.Errorf("gguf: %s: tensor %q was never written", s.path, t.name)
			}
			break
		}
	}
	err := s.err
	s.mu.Unlock()
	if err == nil {
		err = s.flush()
	}
	if err == nil {
		// The padding after the last tensor, when WriteAt wrote it, is
		// missing: extend the file to its size (the new bytes read as
		// zeros). A file that has all its bytes keeps them.
		err = s.f.Truncate(s.size)
	}
	if err != nil {
		err = s.fail(fmt.Errorf("gguf: %s: %w", s.path, err))
		s.Abort()
		return err
	}
	s.fail(fmt.Errorf("gguf: %s: the Stream is closed", s.path))
	if err := s.f.Close(); err != nil {
		s.out.Abort()
		return fmt.Errorf("gguf: %w", err)
	}
	if err := s.out.Commit(); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	return nil
}

// Abort removes the temporary file; the Stream is unusable afterwards.
func (s *Stream) Abort() {
	s.fail(fmt.Errorf("gguf: %s: aborted", s.path))
	s.f.Close()
	s.out.Abort()
}
