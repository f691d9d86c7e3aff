package convert

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// The conversion pipeline. A weight whose layout streams it (layout.Streamer:
// the tcast layout for the kernel datatypes, the gguf layout) and whose
// source is plain BF16, F16 or F32 never exists as whole float32: its rows
// are read from the mapped input a cache-sized chunk at a time, and each
// chunk is widened to float32, cast into the worker's output buffers,
// dequantized and measured against its source while it is in cache: one
// pass over the data. A large weight is split into work items of whole
// chunks, so that every worker shares it, and the report's sums are kept
// per chunk and added in chunk order, so the report is the same whatever
// the number of workers. A weight rotated along its last axis (-rotate with
// the default axis) streams too: each chunk of whole rows is rotated after
// it is widened (rows hold whole blocks of the rotation), its cast values
// are rotated back before they are measured, and the chunk is cast once
// more unrotated, into bytes thrown away, for the SQNR without rotation.
// Other weights (other layouts and datatypes, quantized or transposed
// sources, rotations along another axis) are cast whole, as run does.
//
// Every layout fixes each stored tensor's place in the output before any
// data is written (the safetensors header and the GGUF tensor infos come
// first), and the rows of a work item fill whole bytes of each stored
// tensor, disjoint from every other item's (layout.RowStream.CastRowsTo).
// So the worker that casts an item writes its bytes to their place in the
// output itself (the sink's WriteAt), in whatever order items finish; so
// does the worker that casts a weight whole, and the workers that copy the
// pieces of a kept tensor (writes.go: the workers take turns, or hand their
// writes to a writing goroutine when a core is spare). The emitting
// goroutine, which takes the items in order, only finishes each weight:
// what Finish adds after the rows (a tensor scale), the report, the
// metadata and the progress.

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
	keptPiece = 4 << 20
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
	sums      []tcast.ErrorSum   // per chunk
	wsums     []measure.Weighted // per chunk, with an importance vector
	// perm, when set, gives the source row of each row (a GGUF model's
	// query and key rows, see ggufmodel.Transform); addOne adds 1 to every
	// value read.
	perm   []int
	addOne bool
	// rot, when not zero, rotates each chunk's rows before the cast (a
	// rotation along the last axis, whose blocks lie within rows): the
	// cast's values are rotated back before they are measured against the
	// source, and rs0 casts the chunk unrotated too, into bytes thrown
	// away, for the SQNR without rotation (sums0).
	rot   rotate.Rotation
	rs0   layout.RowStream
	sums0 []tcast.ErrorSum

	once sync.Once
	err  error
	src  []byte // the source's stored bytes, once ready

	// A second-level tensor scale (NVFP4) depends on every element, and
	// every block's encoding on it: such a weight is read twice, by amax
	// items that gather its amax piece by piece, then by the items that
	// cast it, which wait for amaxReady. Every other weight is read once.
	amaxParts  []tcast.Amax // per amax item
	amaxParts0 []tcast.Amax // per amax item, of rs0's unrotated values (with rs0 only)
	amaxLeft   atomic.Int32 // amax items not finished
	amaxMu     sync.Mutex
	amaxErr    error
	amaxReady  chan struct{} // closed when the amax is set, or an amax item failed
}

// item is one piece of work: chunks [c0, c1) of a streamed weight, pieces
// [c0, c1) of keptPiece bytes of a kept tensor copied from the input, or a
// whole weight (st nil, not copied).
type item struct {
	d      *decision
	c0, c1 int
	amax   int  // 1 + the index of an amax item among its weight's (0: a cast item)
	last   bool // the weight's last item: its emit finishes the weight
}

// scratch is one worker's memory, reused from chunk to chunk and item to
// item, and its writes waiting for their turn (see writer).
type scratch struct {
	x, deq []float32
	w      []float32 // the quantizer's weights of x (layout.WeighedStream)
	xr     []float32 // a rotated chunk
	deq0   []float32 // its unrotated cast's values
	junk   []byte    // its unrotated cast's bytes
	junkTo [][]byte  // junk split by stored tensor
	fwht   rotate.Scratch
	rs     tcast.RowScratch
	freeMu sync.Mutex // a writing goroutine gives buffers back
	free   [][]byte   // output buffers whose bytes were written
	freeB  int        // their bytes

	pending      []write
	pendingBytes int
}

// maxFree is how many bytes of written output buffers a worker keeps for
// its next items: as many as its writes can hold, and one item's more, so
// that its items reuse buffers already mapped.
const maxFree = pendingMax + itemBytes

// itemBuffers returns buffers of the given sizes for the bytes an item
// casts, one after the other in one buffer, which recycle gives back once
// they are written.
func (sc *scratch) itemBuffers(sizes []int) (parts [][]byte, buf []byte) {
	n := 0
	for _, k := range sizes {
		n += k
	}
	sc.freeMu.Lock()
	for i := len(sc.free) - 1; i >= 0; i-- {
		if cap(sc.free[i]) >= n {
			buf = sc.free[i][:n]
			sc.freeB -= cap(buf)
			sc.free = append(sc.free[:i], sc.free[i+1:]...)
			break
		}
	}
	sc.freeMu.Unlock()
	if buf == nil {
		buf = make([]byte, n)
		// A write to each page maps it now. Otherwise a kernel that reads
		// a byte before writing it maps the shared zero page first, and its
		// write then copies the page and flushes the other cores' TLBs: an
		// interrupt per page, costly in a VM.
		for j := 0; j < n; j += 4096 {
			buf[j] = 0
		}
	}
	at := 0
	for _, k := range sizes {
		parts = append(parts, buf[at:at+k:at+k])
		at += k
	}
	return parts, buf
}

// recycle keeps a written output buffer for the next items.
func (sc *scratch) recycle(b []byte) {
	sc.freeMu.Lock()
	defer sc.freeMu.Unlock()
	if cap(b) > maxFree {
		return
	}
	for sc.freeB+cap(b) > maxFree {
		sc.freeB -= cap(sc.free[0])
		sc.free[0] = nil
		sc.free = sc.free[1:]
	}
	sc.free = append(sc.free, b)
	sc.freeB += cap(b)
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
	if forceWhole || !d.cast || d.swap || !d.rot.IsZero() && d.rotAxis != len(d.shape)-1 || d.info.Quantized() || p.pruned || d.xform.PermuteHeads > 0 && len(d.shape) != 2 {
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
	sopts := tcast.Options{Axis: p.opts.Axis, Mode: p.opts.Mode, Importance: d.imp, ScaleSearch: p.opts.ScaleSearch}
	rs, ok, err := s.Stream(d.info.Name, d.shape, d.dt, &sopts)
	if err != nil || !ok {
		return nil // cast whole, which reports any error
	}
	rows, rowLen := rs.Rows(), rs.RowLen()
	if rows <= 0 || rowLen <= 0 || int64(rows)*int64(rowLen)*int64(elem) != d.info.Size {
		return nil
	}
	st := &stream{rs: rs, dtype: d.info.DType, elem: elem, rows: rows, rowLen: rowLen, addOne: d.xform.AddOne}
	if !d.rot.IsZero() {
		// The rotation's blocks run along the last axis: rows that hold
		// whole blocks rotate on their own, as the whole weight would.
		if rowLen%d.rot.Block != 0 {
			return nil
		}
		st.rot = d.rot
		if st.rs0, ok, err = s.Stream(d.info.Name, d.shape, d.dt, &sopts); err != nil || !ok || st.rs0.Rows() != rows || st.rs0.RowLen() != rowLen {
			return nil
		}
	}
	if st.perm, err = d.xform.RowPermutation(rows); err != nil {
		return nil // cast whole, which reports the error
	}
	st.chunkRows = max(1, chunkElems/rowLen)
	st.chunks = (rows + st.chunkRows - 1) / st.chunkRows
	return st
}

// copied reports whether tensor d is kept and copied from the input's
// bytes, piece by piece.
func (d *decision) copied() bool {
	return d.raw || !d.cast && d.info.DType != 0 && d.xform.IsZero() && (len(d.specs) == 0 || d.specs[0].DType == d.info.DType)
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

// items splits the plan's weights into work items. When every cast weight
// streams, the pieces of kept tensors copied from the input are spread
// evenly among the other items, by bytes: a copy is nearly all write, and
// writes to one file take turns (the kernel locks the file for each), so a
// copy runs best beside casts, which are nearly all computation, not beside
// another copy. (A weight cast whole takes long, and copies queued behind
// it in the window of items in flight would keep the other workers
// waiting: then the copies keep their place.)
func (p *plan) items() []item {
	var its, copies []item
	var size, copySize []int64 // the input bytes of each item
	for _, d := range p.tensors {
		st := d.st
		if d.copied() {
			n := max(1, int((d.info.Size+keptPiece-1)/keptPiece))
			for k := range n {
				copies = append(copies, item{d: d, c0: k, c1: k + 1, last: k == n-1})
				copySize = append(copySize, min(keptPiece, d.info.Size-int64(k)*keptPiece))
			}
			continue
		}
		if st == nil {
			its = append(its, item{d: d, last: true})
			size = append(size, d.info.Size)
			continue
		}
		per := max(1, itemBytes/(st.chunkRows*st.rowLen*st.elem))
		bytes := func(c0, c1 int) int64 {
			r0, _ := st.chunkRange(c0)
			_, r1 := st.chunkRange(c1 - 1)
			return int64(r1-r0) * int64(st.rowLen*st.elem)
		}
		if st.rs.NeedsAmax() {
			for c0 := 0; c0 < st.chunks; c0 += per {
				its = append(its, item{d: d, c0: c0, c1: min(c0+per, st.chunks), amax: 1 + len(st.amaxParts)})
				size = append(size, 0) // reads, writes nothing
				st.amaxParts = append(st.amaxParts, tcast.Amax{})
				if st.rs0 != nil {
					st.amaxParts0 = append(st.amaxParts0, tcast.Amax{})
				}
			}
			st.amaxLeft.Store(int32(len(st.amaxParts)))
			st.amaxReady = make(chan struct{})
		}
		for c0 := 0; c0 < st.chunks; c0 += per {
			c1 := min(c0+per, st.chunks)
			its = append(its, item{d: d, c0: c0, c1: c1, last: c1 == st.chunks})
			size = append(size, bytes(c0, c1))
		}
	}
	if !p.allStreamed() {
		return inOrder(its, copies)
	}
	return spread(its, size, copies, copySize)
}

// inOrder merges the items a and b, each in its order, into the order of
// their tensors in the plan.
func inOrder(a, b []item) []item {
	out := make([]item, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].d.index < b[0].d.index {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// spread merges the items b into a, each in its order, so that b's share of
// its bytes done keeps up with a's share of its own.
func spread(a []item, aSize []int64, b []item, bSize []int64) []item {
	if len(b) == 0 {
		return a
	}
	var aTotal, bTotal float64
	for _, n := range aSize {
		aTotal += float64(n)
	}
	for _, n := range bSize {
		bTotal += float64(n)
	}
	out := make([]item, 0, len(a)+len(b))
	var aDone, bDone float64
	j := 0
	for i, it := range a {
		for j < len(b) && (aTotal == 0 || bDone/bTotal <= aDone/aTotal) {
			out = append(out, b[j])
			bDone += float64(bSize[j])
			j++
		}
		out = append(out, it)
		aDone += float64(aSize[i])
	}
	return append(out, b[j:]...)
}

// stored returns the mapped bytes of tensor d's source, checked against
// the size the plan counted.
func (p *plan) stored(d *decision) ([]byte, error) {
	if d.data != nil {
		return d.data, nil
	}
	b, err := p.in.Bytes(d.source)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != d.info.Size {
		return nil, fmt.Errorf("%d stored bytes, want %d", len(b), d.info.Size)
	}
	return b, nil
}

// ready makes a streamed weight ready for its items, once, whichever item
// comes first: the source view and the report's sums.
func (p *plan) ready(d *decision) error {
	st := d.st
	st.once.Do(func() {
		st.src, st.err = p.stored(d)
		st.sums = make([]tcast.ErrorSum, st.chunks)
		if st.rs0 != nil {
			st.sums0 = make([]tcast.ErrorSum, st.chunks)
		}
		if d.imp != nil {
			st.wsums = make([]measure.Weighted, st.chunks)
		}
	})
	return st.err
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
				if st.rs0 != nil {
					var a0 tcast.Amax
					for _, part := range st.amaxParts0 {
						a0.Merge(part)
					}
					st.rs0.SetAmax(a0)
				}
			}
			close(st.amaxReady)
		}
	}()
	if err := p.ready(it.d); err != nil {
		return err
	}
	a := &st.amaxParts[it.amax-1]
	for c := it.c0; c < it.c1; c++ {
		r0, r1 := st.chunkRange(c)
		x := st.read(sc, r0, r1)
		if st.rs0 != nil {
			st.amaxParts0[it.amax-1].Add(x)
			x = st.rotated(sc, x)
		}
		a.Add(x)
	}
	return nil
}

// rotated returns the chunk x rotated, in the worker's scratch.
func (st *stream) rotated(sc *scratch, x []float32) []float32 {
	xr := floats(&sc.xr, len(x))
	st.rot.Rows(xr, x, &sc.fwht)
	return xr
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
	if st.perm != nil || st.addOne {
		x := floats(&sc.x, (r1-r0)*st.rowLen)
		for r := r0; r < r1; r++ {
			src := r
			if st.perm != nil {
				src = st.perm[r]
			}
			n := st.rowLen * st.elem
			st.widen(x[(r-r0)*st.rowLen:(r-r0+1)*st.rowLen], st.src[src*n:(src+1)*n])
		}
		if st.addOne {
			for i := range x {
				x[i]++
			}
		}
		return x
	}
	e0, e1 := r0*st.rowLen, r1*st.rowLen
	b := st.src[e0*st.elem : e1*st.elem]
	if st.dtype == safetensors.F32 {
		if v, ok := kernels.ViewLE[float32](b); ok {
			return v
		}
	}
	x := floats(&sc.x, e1-e0)
	st.widen(x, b)
	return x
}

// widen converts the source bytes b to the float32 values x.
func (st *stream) widen(x []float32, b []byte) { widen(st.dtype, x, b) }

// widen converts the bytes b of a BF16, F16 or F32 tensor to the float32
// values x.
func widen(dtype safetensors.DType, x []float32, b []byte) {
	switch dtype {
	case safetensors.BF16:
		kernels.BFloat16BytesToFloat32(x, b)
	case safetensors.F16:
		kernels.Float16BytesToFloat32(x, b)
	default:
		kernels.Float32BytesToFloat32(x, b)
	}
}

// work casts the chunks of one item into the worker's buffers and writes
// their bytes to their place in the output.
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
	if err := p.ready(d); err != nil {
		return err
	}
	R0, _ := st.chunkRange(it.c0)
	_, R1 := st.chunkRange(it.c1 - 1)
	lo, hi := st.rs.Written(R0), st.rs.Written(R1)
	sizes := make([]int, len(lo))
	for i := range lo {
		sizes[i] = hi[i] - lo[i]
	}
	bufs, buf := sc.itemBuffers(sizes)
	parts := make([][]byte, len(bufs))
	at := lo
	for c := it.c0; c < it.c1; c++ {
		r0, r1 := st.chunkRange(c)
		x := st.read(sc, r0, r1)
		deq := floats(&sc.deq, len(x))
		end := st.rs.Written(r1)
		for i, b := range bufs {
			parts[i] = b[at[i]-lo[i] : end[i]-lo[i]]
		}
		w, err := st.castRows(sc, parts, x, c, deq)
		if err != nil {
			return err
		}
		st.sums[c].Add(x, deq)
		switch {
		case st.wsums == nil:
		case w != nil:
			st.wsums[c].AddWeighed(w, x, deq)
		default:
			addRows(&st.wsums[c], d, r0, x, deq)
		}
		at = end
	}
	// The item's input pages leave the resident set (they stay cached);
	// permuted rows come from elsewhere, and wait for the whole weight.
	if st.perm == nil {
		row := int64(st.rowLen * st.elem)
		p.in.ReleaseRange(d.source, int64(R0)*row, int64(R1-R0)*row)
	}
	for i, b := range bufs {
		if len(b) > 0 {
			sc.pending = append(sc.pending, write{name: d.specs[i].Name, data: b, off: int64(lo[i])})
			sc.pendingBytes += len(b)
		}
	}
	return p.out.put(sc, write{done: func() { sc.recycle(buf) }}, false)
}

// castRows casts x, the rows of chunk c, into parts and their values into
// deq (rotated, when the weight is, and back). With a weighted error to
// measure it returns the quantizer's weights of x where the stream gives
// them, else nil.
func (st *stream) castRows(sc *scratch, parts [][]byte, x []float32, c int, deq []float32) ([]float32, error) {
	r0, r1 := st.chunkRange(c)
	if st.rs0 != nil {
		if err := st.castUnrotated(sc, c, x, r0, r1); err != nil {
			return nil, err
		}
		if err := st.rs.CastRowsTo(parts, st.rotated(sc, x), r0, deq, &sc.rs); err != nil {
			return nil, err
		}
		st.rot.Rows(deq, deq, &sc.fwht) // as load gives it back
		return nil, nil
	}
	ws, ok := st.rs.(layout.WeighedStream)
	if st.wsums == nil || !ok {
		return nil, st.rs.CastRowsTo(parts, x, r0, deq, &sc.rs)
	}
	w := floats(&sc.w, len(x))
	if weighed, err := ws.CastRowsWeighed(parts, x, r0, deq, w, &sc.rs); err != nil || !weighed {
		return nil, err
	}
	return w, nil
}

// castUnrotated casts rows [r0, r1) of a rotated weight, chunk c, whose
// values are x, without the rotation, into bytes thrown away, and measures
// the cast: the report's SQNR without rotation.
func (st *stream) castUnrotated(sc *scratch, c int, x []float32, r0, r1 int) error {
	lo, hi := st.rs0.Written(r0), st.rs0.Written(r1)
	n := 0
	for i := range lo {
		n += hi[i] - lo[i]
	}
	if cap(sc.junk) < n {
		sc.junk = make([]byte, n)
	}
	parts := sc.junkTo[:0]
	at := 0
	for i := range lo {
		parts = append(parts, sc.junk[at:at+hi[i]-lo[i]])
		at += hi[i] - lo[i]
	}
	sc.junkTo = parts
	deq0 := floats(&sc.deq0, len(x))
	if err := st.rs0.CastRowsTo(parts, x, r0, deq0, &sc.rs); err != nil {
		return err
	}
	st.sums0[c].Add(x, deq0)
	return nil
}

// copyPieces writes pieces [c0, c1) of a kept tensor, copied from the
// mapped input, to their place in the output, each released from memory
// once written, so that the tensor is never resident whole.
func (p *plan) copyPieces(it item, sc *scratch) error {
	d := it.d
	for k := it.c0; k < it.c1; k++ {
		off := min(int64(k)*keptPiece, d.info.Size)
		n := min(keptPiece, d.info.Size-off)
		b, err := p.storedPiece(d, off, n)
		if err != nil {
			return err
		}
		release := func() { p.in.ReleaseRange(d.source, off, n) }
		if err := p.out.put(sc, write{name: d.specs[0].Name, data: b, off: off, done: release}, false); err != nil {
			return err
		}
	}
	return nil
}

// storedPiece returns n bytes from byte off of tensor d's source, reading
// no more of it than that where the input is not mapped.
func (p *plan) storedPiece(d *decision, off, n int64) ([]byte, error) {
	if d.data != nil || len(d.info.Stored) != 1 {
		b, err := p.stored(d)
		if err != nil {
			return nil, err
		}
		return b[off : off+n], nil
	}
	return p.in.StoredRange(d.info.Stored[0], off, n)
}

// whole casts (or dequantizes) a weight whole and writes its stored
// tensors, waiting for its turn, so that their memory is let go at once.
func (p *plan) whole(d *decision, sc *scratch) error {
	out, err := p.run(d)
	if err != nil {
		return err
	}
	for _, t := range out {
		sc.pending = append(sc.pending, write{name: t.Name, data: t.Data})
		d.result.BytesOut += int64(len(t.Data))
	}
	return p.out.put(sc, write{}, true)
}

// finish completes a streamed weight whose items are all done and written:
// it writes what Finish adds after the rows and fills in the report.
func (p *plan) finish(d *decision) error {
	st := d.st
	var sum tcast.ErrorSum
	for _, s := range st.sums {
		sum.Merge(s) // in chunk order: the same sums for any number of workers
	}
	d.meta = map[string]string{}
	tail, _, err := st.rs.FinishTail(d.meta)
	if err != nil {
		return err
	}
	if len(tail) != len(d.specs) {
		return fmt.Errorf("layout %s wrote %d tensors, not the %d it declared", p.lay.Name(), len(tail), len(d.specs))
	}
	if err := p.checkEncoded(d, tail); err != nil {
		return err
	}
	for i, off := range st.rs.Written(st.rows) {
		if len(tail[i].Data) > 0 {
			if err := p.out.writeAt(tail[i].Name, tail[i].Data, int64(off)); err != nil {
				return err
			}
		}
	}
	for _, sp := range d.specs {
		d.result.BytesOut += sp.Bytes(p.lay.Container())
	}
	d.result.setErrors(sum.Errors())
	if st.sums0 != nil {
		var sum0 tcast.ErrorSum
		for _, s := range st.sums0 {
			sum0.Merge(s)
		}
		d.result.SQNRUnrotated = sum0.Errors().SQNR
	}
	if st.wsums != nil {
		var ws measure.Weighted
		for _, s := range st.wsums {
			ws.Signal += s.Signal // in chunk order, as the plain sums
			ws.Noise += s.Noise
		}
		d.result.WeightedSQNR = ws.SQNR()
	}
	st.sums, st.sums0, st.wsums, st.src = nil, nil, nil, nil
	return nil
}
