package convert

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// The conversion pipeline. A weight whose layout streams it (layout.Streamer:
// the tcast layout for the kernel datatypes, the gguf layout) and whose
// source is plain BF16, F16 or F32 never exists as whole float32: its rows
// are read from the mapped input a cache-sized chunk at a time, and each
// chunk is widened to float32, cast into the output buffers (the stored
// tensors themselves), dequantized and measured against its source while it
// is in cache: one pass over the data. A large weight is split into work
// items of whole chunks, so that every worker shares it, and the report's
// sums are kept per chunk and added in chunk order, so the report is the
// same whatever the number of workers. Other weights (other layouts and
// datatypes, quantized or transposed sources) are cast whole, as run does.

const (
	// chunkElems is about how many elements a worker takes through the
	// pipeline at once: 256 KiB of float32, whose source, float32 values,
	// dequantized values and output stay in a core's L2 cache.
	chunkElems = 64 << 10
	// itemBytes is about how many input bytes one work item of a streamed
	// weight covers: large enough to make scheduling cheap, small enough
	// that the workers share a large weight evenly.
	itemBytes = 4 << 20
	// keptPiece is the size of the pieces in which a kept tensor is copied
	// from the mapped input to the output, each released from
	// memory once written.
	keptPiece = 16 << 20
)

// forceWhole, set by tests, casts every weight whole (the path before
// streaming), to compare the two.
var forceWhole = false

// stream is the state of one streamed weight.
type stream struct {
	rs        layout.RowStream
	dtype     safetensors.DType // of the source
	elem      int               // source bytes per element
	rows      int
	rowLen    int
	chunkRows int
	chunks    int
	sums      []tcast.ErrorSum // per chunk

	once    sync.Once
	err     error
	src     []byte   // the source's stored bytes, once prepared
	out     [][]byte // the stored tensors' buffers, once prepared
	flushed []int    // bytes of each buffer written to the output

	// A second-level tensor scale (NVFP4) depends on every element, and
	// every block's encoding on it: such a weight is read twice, by amax
	// items that gather its amax piece by piece, then by the items that
	// cast it, which wait for amaxReady. Every other weight is read once.
	amaxParts []tcast.Amax // per amax item
	amaxLeft  atomic.Int32 // amax items not finished
	amaxMu    sync.Mutex
	amaxErr   error
	amaxReady chan struct{} // closed when the amax is set, or an amax item failed
}

// item is one piece of work: chunks [c0, c1) of a streamed weight, or a
// whole weight (st nil).
type item struct {
	d      *decision
	c0, c1 int
	amax   int  // 1 + the index of an amax item among its weight's (0: a cast item)
	last   bool // the weight's last item: its emit writes the weight
}

// scratch is one worker's memory, reused from chunk to chunk.
type scratch struct {
	x, deq []float32
	rs     tcast.RowScratch
}

// floats returns b resized to n, reallocated only to grow.
func floats(b *[]float32, n int) []float32 {
	if cap(*b) < n {
		*b = make([]float32, n)
	}
	return (*b)[:n]
}

// streamOf returns the stream of a weight the pipeline casts in chunks, or
// nil.
func (p *plan) streamOf(d *decision) *stream {
	if forceWhole || !d.cast || d.swap || d.info.Quantized() {
		return nil
	}
	elem := 0
	switch d.info.DType {
	case safetensors.BF16, safetensors.F16:
		elem = 2
	case safetensors.F32:
		elem = 4
	default:
		return nil
	}
	s, ok := p.lay.(layout.Streamer)
	if !ok {
		return nil
	}
	rs, ok, err := s.Stream(d.info.Name, d.shape, p.opts.DataType, &tcast.Options{Axis: p.opts.Axis, Mode: p.opts.Mode})
	if err != nil || !ok {
		return nil // cast whole, which reports any error
	}
	rows, rowLen := rs.Rows(), rs.RowLen()
	if rows <= 0 || rowLen <= 0 || int64(rows)*int64(rowLen)*int64(elem) != d.info.Size {
		return nil
	}
	st := &stream{rs: rs, dtype: d.info.DType, elem: elem, rows: rows, rowLen: rowLen}
	st.chunkRows = max(1, chunkElems/rowLen)
	st.chunks = (rows + st.chunkRows - 1) / st.chunkRows
	return st
}

// allStreamed reports whether every weight the plan casts streams.
func (p *plan) allStreamed() bool {
	for _, d := range p.tensors {
		if d.cast && d.st == nil {
			return false
		}
	}
	return true
}

// items splits the plan's weights into work items.
func (p *plan) items() []item {
	var its []item
	for _, d := range p.tensors {
		st := d.st
		if st == nil {
			its = append(its, item{d: d, last: true})
			continue
		}
		per := max(1, itemBytes/(st.chunkRows*st.rowLen*st.elem))
		if st.rs.NeedsAmax() {
			for c0 := 0; c0 < st.chunks; c0 += per {
				its = append(its, item{d: d, c0: c0, c1: min(c0+per, st.chunks), amax: 1 + len(st.amaxParts)})
				st.amaxParts = append(st.amaxParts, tcast.Amax{})
			}
			st.amaxLeft.Store(int32(len(st.amaxParts)))
			st.amaxReady = make(chan struct{})
		}
		for c0 := 0; c0 < st.chunks; c0 += per {
			c1 := min(c0+per, st.chunks)
			its = append(its, item{d: d, c0: c0, c1: c1, last: c1 == st.chunks})
		}
	}
	return its
}

// prepare makes a streamed weight ready for its items: the source view and
// the output buffers.
func (p *plan) prepare(d *decision) error {
	st := d.st
	src, err := p.in.Bytes(d.source)
	if err != nil {
		return err
	}
	if int64(len(src)) != d.info.Size {
		return fmt.Errorf("%d stored bytes, want %d", len(src), d.info.Size)
	}
	st.src = src
	st.sums = make([]tcast.ErrorSum, st.chunks)
	st.out = make([][]byte, len(d.specs))
	st.flushed = make([]int, len(d.specs))
	for i, sp := range d.specs {
		st.out[i] = p.pool.get(int(sp.Bytes(p.lay.Container())))
	}
	return nil
}

// gatherAmax runs an amax item: the amax of its chunks. The last amax item
// of a weight to finish sets the weight's amax and lets its cast items go.
func (p *plan) gatherAmax(it item, sc *scratch) (err error) {
	st := it.d.st
	defer func() {
		if err != nil {
			st.amaxMu.Lock()
			if st.amaxErr == nil {
				st.amaxErr = err
			}
			st.amaxMu.Unlock()
		}
		if st.amaxLeft.Add(-1) == 0 {
			if st.amaxErr == nil {
				var a tcast.Amax
				for _, part := range st.amaxParts {
					a.Merge(part)
				}
				st.rs.SetAmax(a)
			}
			close(st.amaxReady)
		}
	}()
	st.once.Do(func() { st.err = p.prepare(it.d) })
	if st.err != nil {
		return st.err
	}
	a := &st.amaxParts[it.amax-1]
	for c := it.c0; c < it.c1; c++ {
		r0, r1 := st.chunkRange(c)
		a.Add(st.read(sc, r0, r1))
	}
	return nil
}

// chunkRange returns the rows of chunk c.
func (st *stream) chunkRange(c int) (r0, r1 int) {
	r0 = c * st.chunkRows
	return r0, min(r0+st.chunkRows, st.rows)
}

// read returns rows [r0, r1) of the source as float32: widened into the
// worker's scratch, or for F32 a view of the mapped bytes when they are
// aligned and the machine is little-endian.
func (st *stream) read(sc *scratch, r0, r1 int) []float32 {
	e0, e1 := r0*st.rowLen, r1*st.rowLen
	b := st.src[e0*st.elem : e1*st.elem]
	if st.dtype == safetensors.F32 {
		if v, ok := float32View(b); ok {
			return v
		}
	}
	x := floats(&sc.x, e1-e0)
	switch st.dtype {
	case safetensors.BF16:
		kernels.BFloat16BytesToFloat32(x, b)
	case safetensors.F16:
		kernels.Float16BytesToFloat32(x, b)
	default:
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	}
	return x
}

// littleEndian reports whether the machine stores words little-endian, as
// safetensors does.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// float32View returns little-endian float32 bytes as float32 values without
// copying, when the machine and the bytes' alignment allow it.
func float32View(b []byte) ([]float32, bool) {
	if !littleEndian || len(b) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4), true
}

// work casts the chunks of one item.
func (p *plan) work(it item, sc *scratch) error {
	d, st := it.d, it.d.st
	if it.amax > 0 {
		return p.gatherAmax(it, sc)
	}
	if st.amaxReady != nil {
		<-st.amaxReady // amax items come first, so they are running or done
		st.amaxMu.Lock()
		err := st.amaxErr
		st.amaxMu.Unlock()
		if err != nil {
			return err
		}
	}
	st.once.Do(func() { st.err = p.prepare(d) })
	if st.err != nil {
		return st.err
	}
	for c := it.c0; c < it.c1; c++ {
		r0, r1 := st.chunkRange(c)
		x := st.read(sc, r0, r1)
		deq := floats(&sc.deq, len(x))
		if err := st.rs.CastRows(st.out, x, r0, deq, &sc.rs); err != nil {
			return err
		}
		st.sums[c].Add(x, deq)
	}
	// The item's input pages leave the resident set (they stay cached).
	r0, _ := st.chunkRange(it.c0)
	_, r1 := st.chunkRange(it.c1 - 1)
	row := int64(st.rowLen * st.elem)
	p.in.ReleaseRange(d.source, int64(r0)*row, int64(r1-r0)*row)
	return nil
}

// flush writes what the rows of a streamed weight cast so far fill of its
// stored tensors, at the emit of one of its cast items but the last: items
// are emitted in order, so every row before the item's end is cast. The
// sinks append, in the order the tensors were declared (GGUF) or at each
// tensor's place (safetensors).
func (p *plan) flush(s sink, it item) error {
	st := it.d.st
	if st == nil || it.amax > 0 || st.out == nil {
		return nil
	}
	_, r1 := st.chunkRange(it.c1 - 1)
	for i, w := range st.rs.Written(r1) {
		if w > st.flushed[i] {
			if err := s.Write(it.d.specs[i].Name, st.out[i][st.flushed[i]:w]); err != nil {
				return err
			}
			st.flushed[i] = w
		}
	}
	return nil
}

// finish returns the stored tensors of a streamed weight whose items are all
// done, and fills in its report.
func (p *plan) finish(d *decision) ([]layout.Tensor, error) {
	st := d.st
	var sum tcast.ErrorSum
	for _, s := range st.sums {
		sum.Merge(s) // in chunk order: the same sums for any number of workers
	}
	d.meta = map[string]string{}
	out, bits, err := st.rs.Finish(st.out, d.meta)
	if err != nil {
		return nil, err
	}
	if err := p.checkEncoded(d, out); err != nil {
		return nil, err
	}
	d.result.Bits = bits
	d.result.setErrors(sum.Errors())
	return out, nil
}

// release returns a streamed weight's buffers to the pool once written.
func (p *plan) release(d *decision) {
	if st := d.st; st != nil {
		for _, b := range st.out {
			p.pool.put(b)
		}
		st.out, st.sums, st.src, st.flushed = nil, nil, nil, nil
	}
}

// bufPool reuses output buffers from weight to weight, so that the memory
// the pipeline writes into is mapped and faulted in once, not per weight.
// It keeps at most max buffers, dropping the smallest.
type bufPool struct {
	mu   sync.Mutex
	free [][]byte // sorted by capacity
	max  int
}

// get returns a buffer of n bytes (not zeroed: every byte is written).
func (bp *bufPool) get(n int) []byte {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	i := sort.Search(len(bp.free), func(i int) bool { return cap(bp.free[i]) >= n })
	if i == len(bp.free) {
		b := make([]byte, n)
		// A write to each page maps it now, on this goroutine. Otherwise a
		// kernel that reads a byte before writing it maps the shared zero
		// page first, and its write then copies the page and flushes the
		// other cores' TLBs: an interrupt per page, costly in a VM.
		for j := 0; j < n; j += 4096 {
			b[j] = 0
		}
		return b
	}
	b := bp.free[i]
	bp.free = append(bp.free[:i], bp.free[i+1:]...)
	return b[:n]
}

// put gives b back.
func (bp *bufPool) put(b []byte) {
	if cap(b) == 0 {
		return
	}
	bp.mu.Lock()
	defer bp.mu.Unlock()
	i := sort.Search(len(bp.free), func(i int) bool { return cap(bp.free[i]) >= cap(b) })
	bp.free = append(bp.free, nil)
	copy(bp.free[i+1:], bp.free[i:])
	bp.free[i] = b
	if len(bp.free) > bp.max {
		bp.free[0] = nil
		bp.free = bp.free[1:]
	}
}
