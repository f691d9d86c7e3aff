package masked

import (
	"slices"
	"sync/atomic"

	"github.com/tensorcast-go/tensorcast/mask"
)

// broadcastMask returns keep (of shape mshape) broadcast to shape, following
// NumPy's rules: mshape has at most len(shape) dimensions and, aligned from the
// right, each is 1 or equal to shape's. A nil keep keeps everything. A mask
// that already has the shape is returned as it is; another is stretched by
// mask.Mask.Broadcast.
func broadcastMask(op string, keep []bool, mshape, shape []int) ([]bool, error) {
	n, err := numel(op, "shape", shape)
	if err != nil {
		return nil, err
	}
	if keep == nil {
		out := make([]bool, n)
		for i := range out {
			out[i] = true
		}
		return out, nil
	}
	mn, err := numel(op, "mask shape", mshape)
	if err != nil {
		return nil, err
	}
	if len(keep) != mn {
		return nil, errorf(ErrShape, op, "mask", "%d values for mask shape %v (%d elements)", len(keep), mshape, mn)
	}
	if len(mshape) > len(shape) {
		return nil, errorf(ErrShape, op, "mask", "mask shape %v has more dimensions than %v", mshape, shape)
	}
	lead := len(shape) - len(mshape)
	same := true
	for i, s := range mshape {
		if s != 1 && s != shape[lead+i] {
			return nil, errorf(ErrShape, op, "mask", "mask shape %v does not broadcast to %v", mshape, shape)
		}
		same = same && s == shape[lead+i]
	}
	if same && mn == n {
		// Equal up to leading dimensions of size 1: the flat order is the same.
		return keep, nil
	}
	if n == 0 {
		return []bool{}, nil
	}
	// The shapes are checked: only a shape beyond the bit masks' limit on
	// elements fails here.
	m, err := mask.FromBools(mshape, keep)
	if err == nil {
		m, err = m.Broadcast(shape)
	}
	if err != nil {
		return nil, errorf(ErrShape, op, "mask", "%v", err)
	}
	return m.Bools(), nil
}

// canonicalDims turns dims (negative values count from the end; nil or empty:
// all dimensions) into a per-dimension "reduced" flag. As in torch, a scalar
// accepts dimension 0 and -1.
func canonicalDims(op string, dims []int, rank int) ([]bool, error) {
	red := make([]bool, rank)
	if len(dims) == 0 {
		for i := range red {
			red[i] = true
		}
		return red, nil
	}
	lim := max(rank, 1)
	seen := make([]bool, lim)
	for _, d := range dims {
		if d < -lim || d >= lim {
			return nil, errorf(ErrDim, op, "dims", "dimension %d out of range for rank %d", d, rank)
		}
		if d < 0 {
			d += lim
		}
		if seen[d] {
			return nil, errorf(ErrDim, op, "dims", "dimension %d repeated in %v", d, dims)
		}
		seen[d] = true
		if d < rank {
			red[d] = true
		}
	}
	return red, nil
}

// outShape is shape without the reduced dimensions, or with size 1 in their
// place when keepdim is set.
func outShape(shape []int, red []bool, keepdim bool) []int {
	out := make([]int, 0, len(shape))
	for d, s := range shape {
		switch {
		case !red[d]:
			out = append(out, s)
		case keepdim:
			out = append(out, 1)
		}
	}
	return out
}

// group is a run of adjacent dimensions of the same kind (reduced or kept),
// merged into one: size elements at the given stride.
type group struct {
	size, stride int
	red          bool
}

// plan is how a dense tensor's elements are visited for a reduction (or a scan)
// over some dimensions: one block per output position, holding that position's
// reduced elements in row-major order of the reduced dimensions.
type plan struct {
	nOut, nRed int
	mode       int // planDirect, planGather or planTiled
	// The offset of reduced element r from its block's base is r·rstride when
	// the reduced dimensions merge into one group, roff[r] otherwise.
	rstride int
	roff    []int
	kept    []group // kept groups walked for the base offsets (outer to inner)
	inner   int     // planTiled: size of the innermost (stride 1) kept group
}

// off returns the offset of reduced element r from its block's base.
func (p *plan) off(r int) int {
	if p.roff != nil {
		return p.roff[r]
	}
	return r * p.rstride
}

const (
	// planDirect: block o is elements [o*nRed, (o+1)*nRed).
	planDirect = iota
	// planGather: block o is gathered element by element through roff.
	planGather
	// planTiled: the innermost dimension is kept, so planTile neighbouring
	// blocks are gathered together, reading planTile contiguous elements at a
	// time.
	planTiled
)

// planTile is how many blocks planTiled gathers at once (a 64-byte line of
// float32), as long as they hold at most tileBudget elements together.
const (
	planTile   = 16
	tileBudget = 1 << 20
)

// newPlan plans the visit of a dense tensor of the given shape, reducing the
// dimensions flagged in red.
func newPlan(shape []int, red []bool) *plan {
	p := &plan{nOut: 1, nRed: 1}
	strides := make([]int, len(shape))
	st := 1
	for d := len(shape) - 1; d >= 0; d-- {
		strides[d] = st
		st *= shape[d]
	}
	var groups []group
	for d, s := range shape {
		if red[d] {
			p.nRed *= s
		} else {
			p.nOut *= s
		}
		if s == 1 {
			continue
		}
		if n := len(groups); n > 0 && groups[n-1].red == red[d] {
			groups[n-1].size *= s
			groups[n-1].stride = strides[d]
			continue
		}
		groups = append(groups, group{size: s, stride: strides[d], red: red[d]})
	}
	if p.nOut == 0 || p.nRed == 0 {
		p.mode = planDirect // nothing to read
		return p
	}
	var kept, reduced []group
	for _, g := range groups {
		if g.red {
			reduced = append(reduced, g)
		} else {
			kept = append(kept, g)
		}
	}
	// Kept dimensions first, then reduced ones: each block is contiguous.
	if len(reduced) == 0 || (len(reduced) == 1 && groups[len(groups)-1].red) {
		p.mode = planDirect
		return p
	}
	if len(reduced) == 1 {
		p.rstride = reduced[0].stride
	} else {
		p.roff = make([]int, 0, p.nRed)
		walk(reduced, func(off int) { p.roff = append(p.roff, off) })
	}
	if last := groups[len(groups)-1]; !last.red {
		p.mode = planTiled
		p.inner = last.size
		p.kept = kept[:len(kept)-1]
	} else {
		p.mode = planGather
		p.kept = kept
	}
	return p
}

// walk calls f with the offset of every element of the groups, in row-major
// order.
func walk(groups []group, f func(off int)) {
	if len(groups) == 0 {
		f(0)
		return
	}
	idx := make([]int, len(groups))
	off := 0
	for {
		f(off)
		d := len(groups) - 1
		for ; d >= 0; d-- {
			idx[d]++
			off += groups[d].stride
			if idx[d] < groups[d].size {
				break
			}
			off -= groups[d].stride * idx[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// visit is called for every block: o is the output position (row-major over the
// kept dimensions), xs and ks the block's data and mask in reduced row-major
// order, and ys, when the visit writes back, the block of the output to fill
// (same order). The slices are only valid during the call.
type visit[T Float] func(o int, xs []T, ks []bool, ys []T)

// forBlocks visits every block of the planned tensor. With out non-nil (the
// size of data), what the visit writes to ys lands in the matching elements of
// out. Scratch space is allocated once per call.
func forBlocks[T Float](p *plan, data []T, mask []bool, out []T, f visit[T]) {
	if p.nOut == 0 {
		return
	}
	if p.nRed == 0 {
		for o := range p.nOut {
			f(o, nil, nil, nil)
		}
		return
	}
	switch p.mode {
	case planDirect:
		forDirect(p, data, mask, out, f)
	case planGather:
		forGathered(p, data, mask, out, f)
	case planTiled:
		forTiled(p, data, mask, out, f)
	}
}

// forDirect is forBlocks for contiguous blocks, visited in place.
func forDirect[T Float](p *plan, data []T, mask []bool, out []T, f visit[T]) {
	n := p.nRed
	for o := range p.nOut {
		var ys []T
		if out != nil {
			ys = out[o*n : (o+1)*n]
		}
		f(o, data[o*n:(o+1)*n], mask[o*n:(o+1)*n], ys)
	}
}

// forGathered is forBlocks for blocks whose elements are gathered one by
// one into scratch space (and scattered back to out).
func forGathered[T Float](p *plan, data []T, mask []bool, out []T, f visit[T]) {
	n := p.nRed
	xs, ks := make([]T, n), make([]bool, n)
	var ys []T
	if out != nil {
		ys = make([]T, n)
	}
	o := 0
	walk(p.kept, func(base int) {
		for r := range n {
			at := base + p.off(r)
			xs[r], ks[r] = data[at], mask[at]
		}
		f(o, xs, ks, ys)
		if out != nil {
			for r := range n {
				out[base+p.off(r)] = ys[r]
			}
		}
		o++
	})
}

// forTiled is forBlocks for blocks along a kept innermost dimension,
// gathered (and scattered back to out) a tile of up to planTile blocks at
// a time, so that each read covers adjacent elements.
func forTiled[T Float](p *plan, data []T, mask []bool, out []T, f visit[T]) {
	n := p.nRed
	t := min(planTile, p.inner, max(1, tileBudget/n))
	xs, ks := make([]T, t*n), make([]bool, t*n)
	var ys []T
	if out != nil {
		ys = make([]T, t*n)
	}
	o := 0
	walk(p.kept, func(base int) {
		for j0 := 0; j0 < p.inner; j0 += t {
			w := min(t, p.inner-j0)
			for r := range n {
				src := base + p.off(r) + j0
				for jj := range w {
					xs[jj*n+r] = data[src+jj]
					ks[jj*n+r] = mask[src+jj]
				}
			}
			for jj := range w {
				var y []T
				if out != nil {
					y = ys[jj*n : (jj+1)*n]
				}
				f(o+j0+jj, xs[jj*n:(jj+1)*n], ks[jj*n:(jj+1)*n], y)
			}
			if out != nil {
				for r := range n {
					dst := base + p.off(r) + j0
					for jj := range w {
						out[dst+jj] = ys[jj*n+r]
					}
				}
			}
		}
		o += p.inner
	})
}

// allTrue is a shared, read-only slice of true values backing the nil keep of
// the slice forms; it grows to the longest length asked for, up to
// maxSharedKeep (longer ones are allocated per call, where the O(n) work
// dwarfs the allocation).
var allTrue atomic.Pointer[[]bool]

const maxSharedKeep = 1 << 16

// keepAll returns a read-only slice of n true values.
func keepAll(n int) []bool {
	if p := allTrue.Load(); p != nil && len(*p) >= n {
		return (*p)[:n]
	}
	s := make([]bool, max(n, 1024))
	for i := range s {
		s[i] = true
	}
	if n <= maxSharedKeep {
		allTrue.Store(&s)
	}
	return s[:n]
}

// keepOrAll returns keep, or n true values for a nil keep. A keep of another
// length panics: it is a programming error, like an index out of range.
func keepOrAll(keep []bool, n int) []bool {
	if keep == nil {
		return keepAll(n)
	}
	if len(keep) != n {
		panic("masked: keep and x have different lengths")
	}
	return keep
}

// anyTrue reports whether ks holds a true value.
func anyTrue(ks []bool) bool { return slices.Contains(ks, true) }
