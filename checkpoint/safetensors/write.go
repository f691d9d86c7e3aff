package safetensors

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/internal/spans"
)

// Tensor is a tensor held in memory, for WriteFile, Encode and
// WriteSharded.
type Tensor struct {
	// Name is the tensor's key in the header (see TensorSpec).
	Name string
	// DType is the element type.
	DType DType
	// Shape holds the dimensions (none for a 0-d tensor).
	Shape []int
	// Data holds the elements in little-endian byte order, row-major. Its
	// length must match DType and Shape exactly.
	Data []byte
}

// Spec returns the declaration of t.
func (t Tensor) Spec() TensorSpec { return TensorSpec{Name: t.Name, DType: t.DType, Shape: t.Shape} }

// Writer writes a safetensors file atomically. Create writes the header
// from the declared tensors; the data of each tensor is then supplied with
// Write (appending) or WriteAt (at a place inside the tensor), in any order
// of tensors and pieces; Close checks that every byte of every tensor was
// written exactly once, syncs the file and renames it into place.
//
// Until Close succeeds the data lives in a temporary file in the target
// directory, so nothing is ever visible under the final name but a
// complete file. After any error (including a Write that exceeds a
// tensor's size or names an unknown tensor) the Writer is failed: Close
// removes the temporary file and returns the first error.
//
// Write and WriteAt may be called from several goroutines at once,
// including for the same tensor (each Write then appends at the position it
// reserved), but PatchMetadata, Close and Abort must be called only after
// every Write and WriteAt has returned.
type Writer struct {
	path     string
	out      *atomicfile.Output
	f        *os.File
	tensors  []TensorInfo // in file order
	index    map[string]int
	specs    []TensorSpec
	metadata map[string]string
	hdrLen   int

	mu      sync.Mutex
	written []int64     // bytes Write reserved so far per tensor: where it appends
	filled  []spans.Set // bytes reserved by Write and WriteAt per tensor
	err     error       // first error
	done    bool        // Close or Abort was called
}

// Create starts writing a safetensors file at path holding the declared
// tensors and string metadata (which may be nil). The tensors are laid out
// as the reference writer does: sorted by descending dtype order (see
// DType), then by name, back to back after a header padded with spaces to a
// multiple of 8 bytes, so every tensor is 8-byte aligned in the file.
//
// The header is written to a temporary file in the directory of path at
// once; the data follows through Write, and Close publishes the file. An
// existing file at path is replaced when Close succeeds (callers that must
// not replace one check first); another Writer of the same path, in this
// process or another, makes Create fail with an error wrapping
// atomicfile.ErrLocked.
func Create(path string, specs []TensorSpec, metadata map[string]string) (*Writer, error) {
	hdr, infos, err := layout(specs, metadata)
	if err != nil {
		return nil, err
	}
	out, err := atomicfile.Begin(path, atomicfile.Options{Force: true})
	if err != nil {
		return nil, err // names the output
	}
	f, err := os.OpenFile(out.Path(), os.O_RDWR, 0)
	if err != nil {
		out.Abort()
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	w := &Writer{
		path:     path,
		out:      out,
		f:        f,
		tensors:  infos,
		index:    make(map[string]int, len(infos)),
		written:  make([]int64, len(infos)),
		filled:   make([]spans.Set, len(infos)),
		specs:    slices.Clone(specs),
		metadata: maps.Clone(metadata),
		hdrLen:   len(hdr),
	}
	for i, t := range infos {
		w.index[t.Name] = i
	}
	if _, err := f.WriteAt(hdr, 0); err != nil {
		w.discard()
		return nil, fmt.Errorf("safetensors: writing header of %s: %w", path, err)
	}
	return w, nil
}

// PatchMetadata changes the values of existing __metadata__ keys after Create,
// for writers that learn them only from the data (a conversion's exact scale
// bits, say). The header must keep its length: each new value must encode to
// as many bytes as the value it replaces (declare a placeholder of the final
// width at Create). It is an error otherwise, and the Writer is then failed.
func (w *Writer) PatchMetadata(patch map[string]string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	for k, v := range patch {
		if _, ok := w.metadata[k]; !ok {
			return w.failLocked(fmt.Errorf("safetensors: %s: metadata key %q was not declared at Create", w.path, k))
		}
		w.metadata[k] = v
	}
	hdr, _, err := layout(w.specs, w.metadata)
	if err != nil {
		return w.failLocked(err)
	}
	if len(hdr) != w.hdrLen {
		return w.failLocked(fmt.Errorf("safetensors: %s: patched metadata changes the header from %d to %d bytes", w.path, w.hdrLen, len(hdr)))
	}
	if _, err := w.f.WriteAt(hdr, 0); err != nil {
		return w.failLocked(fmt.Errorf("safetensors: writing header of %s: %w", w.path, err))
	}
	return nil
}

// Tensors returns the planned layout: every declared tensor in file order,
// with its absolute offset and size. The result is a copy.
func (w *Writer) Tensors() []TensorInfo {
	out := make([]TensorInfo, len(w.tensors))
	for i, t := range w.tensors {
		out[i] = t.clone()
	}
	return out
}

// Write appends data to the named tensor: successive calls for one tensor
// supply consecutive parts of its bytes, from its first. Writing more bytes
// than the tensor holds, writing bytes that a WriteAt wrote, or naming a
// tensor that was not declared, is an error that fails the Writer.
func (w *Writer) Write(name string, data []byte) error {
	return w.write(name, data, -1)
}

// WriteAt writes data at byte off of the named tensor's data (not of the
// file): a writer that makes a tensor's pieces out of order, on several
// goroutines, writes each where it belongs as soon as it has it. The
// pieces of a tensor must not overlap (nor the parts Write appended), and
// must lie inside it; otherwise, and for a tensor that was not declared,
// WriteAt fails the Writer. Close checks that every byte was written.
func (w *Writer) WriteAt(name string, data []byte, off int64) error {
	if off < 0 {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.failLocked(fmt.Errorf("safetensors: %s: tensor %s: negative offset %d", w.path, strconv.Quote(clip(name)), off))
	}
	return w.write(name, data, off)
}

// write reserves the bytes of data in the named tensor, at off or, when off
// is negative, after the bytes Write reserved before, and writes them there.
func (w *Writer) write(name string, data []byte, off int64) error {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return fmt.Errorf("safetensors: %s: write after Close or Abort", w.path)
	}
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	i, ok := w.index[name]
	if !ok {
		err := w.failLocked(fmt.Errorf("safetensors: %s: tensor %s was not declared: %w", w.path, strconv.Quote(clip(name)), ErrNotFound))
		w.mu.Unlock()
		return err
	}
	t := &w.tensors[i]
	pos := off
	if off < 0 {
		pos = w.written[i]
	}
	if int64(len(data)) > t.Size-pos {
		what := "written after"
		if off >= 0 {
			what = "written at"
		}
		err := w.failLocked(fmt.Errorf("safetensors: %s: tensor %s: %d bytes %s %d exceed its size of %d bytes",
			w.path, strconv.Quote(clip(name)), len(data), what, pos, t.Size))
		w.mu.Unlock()
		return err
	}
	if err := w.filled[i].Add(pos, pos+int64(len(data))); err != nil {
		err := w.failLocked(fmt.Errorf("safetensors: %s: tensor %s: %w", w.path, strconv.Quote(clip(name)), err))
		w.mu.Unlock()
		return err
	}
	if off < 0 {
		w.written[i] += int64(len(data))
	}
	w.mu.Unlock()

	if len(data) == 0 {
		return nil
	}
	if _, err := w.f.WriteAt(data, t.Offset+pos); err != nil {
		w.mu.Lock()
		err = w.failLocked(fmt.Errorf("safetensors: %s: writing tensor %s: %w", w.path, strconv.Quote(clip(name)), err))
		w.mu.Unlock()
		return err
	}
	if len(data) >= writebackMin {
		// The disk starts on these bytes now, so that Close's sync has
		// little left to wait for.
		atomicfile.StartWriteback(w.f, t.Offset+pos, int64(len(data)))
	}
	return nil
}

// writebackMin is the size of a Write from which its bytes are sent to disk
// at once.
const writebackMin = 1 << 20

// failLocked records err as the Writer's error unless one is recorded, and
// returns err. w.mu must be held.
func (w *Writer) failLocked(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

// TensorWriter returns an io.Writer whose writes append to the named
// tensor, as Write does.
func (w *Writer) TensorWriter(name string) (io.Writer, error) {
	if _, ok := w.index[name]; !ok {
		w.mu.Lock()
		defer w.mu.Unlock()
		return nil, w.failLocked(fmt.Errorf("safetensors: %s: tensor %s was not declared: %w", w.path, strconv.Quote(clip(name)), ErrNotFound))
	}
	return tensorWriter{w, name}, nil
}

type tensorWriter struct {
	w    *Writer
	name string
}

func (t tensorWriter) Write(p []byte) (int, error) {
	if err := t.w.Write(t.name, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close finishes the file: it checks that every tensor received exactly its
// declared size, syncs the data to disk, and renames the temporary file to
// the final path (then syncs the directory). If any Write failed, a tensor
// is incomplete, or a step fails, the temporary file is removed, nothing is
// left under the final path by this Writer, and the error is returned.
// Calling Close again returns nil if the first call succeeded.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		if w.f != nil || w.err != nil {
			return fmt.Errorf("safetensors: %s: Close after Abort or a failed Close", w.path)
		}
		return nil
	}
	w.done = true
	if w.err == nil {
		for i, t := range w.tensors {
			if f := &w.filled[i]; !f.Whole(t.Size) {
				hole, _ := f.Hole(t.Size)
				w.err = fmt.Errorf("safetensors: %s: tensor %s received %d of its %d bytes (byte %d is missing)",
					w.path, strconv.Quote(clip(t.Name)), f.Len(), t.Size, hole)
				break
			}
		}
	}
	if w.err != nil {
		w.discard()
		return w.err
	}
	if err := w.f.Close(); err != nil {
		w.f = nil
		w.err = fmt.Errorf("safetensors: %s: %w", w.path, err)
		w.out.Abort()
		return w.err
	}
	w.f = nil
	if err := w.out.Commit(); err != nil {
		w.err = fmt.Errorf("safetensors: %w", err)
		return w.err
	}
	return nil
}

// Abort abandons the file: the temporary file is removed and nothing is
// created under the final path. Abort after a successful Close does
// nothing; it returns nil in every case.
func (w *Writer) Abort() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return nil
	}
	w.done = true
	w.err = errors.New("safetensors: " + w.path + ": aborted")
	w.discard()
	return nil
}

// discard closes and removes the temporary file.
func (w *Writer) discard() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	w.out.Abort()
}

// WriteFile writes tensors and string metadata (which may be nil) to the
// safetensors file at path, atomically, with the layout described at
// Create. Each tensor's Data must have exactly the size its DType and Shape
// give.
func WriteFile(path string, tensors []Tensor, metadata map[string]string) error {
	specs := make([]TensorSpec, len(tensors))
	for i, t := range tensors {
		specs[i] = t.Spec()
	}
	w, err := Create(path, specs, metadata)
	if err != nil {
		return err
	}
	for _, t := range tensors {
		if err := w.Write(t.Name, t.Data); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

// Encode writes tensors and string metadata (which may be nil) as a
// safetensors file to w, with the layout described at Create. It checks
// every tensor's data size before writing anything.
func Encode(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	specs := make([]TensorSpec, len(tensors))
	byName := make(map[string][]byte, len(tensors))
	for i, t := range tensors {
		specs[i] = t.Spec()
		byName[t.Name] = t.Data
	}
	hdr, infos, err := layout(specs, metadata)
	if err != nil {
		return err
	}
	for _, t := range infos {
		if n := len(byName[t.Name]); int64(n) != t.Size {
			return fmt.Errorf("safetensors: tensor %s: data has %d bytes, shape %s of %v needs %d",
				strconv.Quote(clip(t.Name)), n, clip(formatShape(t.Shape)), t.DType, t.Size)
		}
	}
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("safetensors: write: %w", err)
	}
	for _, t := range infos {
		if len(byName[t.Name]) == 0 {
			continue
		}
		if _, err := w.Write(byName[t.Name]); err != nil {
			return fmt.Errorf("safetensors: write: %w", err)
		}
	}
	return nil
}
