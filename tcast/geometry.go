package tcast

import (
	"fmt"

	"github.com/tensorcast-go/tensorcast/internal/shape"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/sparsity"
)

// layout is how a tensor of a given shape splits into scale blocks: each block is
// a rectangle of len0 × len1 elements at offsets base + i·stride0 + j·stride1,
// and blocks are numbered in the row-major order of the scale's shape.
type layout struct {
	input      []int // the tensor's shape as given (rank 0 included)
	shape      []int // the shape worked on: input, or [1] for a rank-0 tensor
	n          int   // elements
	axis       int   // the scaled axis (dimension of the last tile)
	axis0      int   // the dimension of the first tile of a 2-D tile, else -1
	tile0      int   // tile size along axis0 (1 without a 2-D tile)
	tile1      int   // tile size along axis (n for tensor scaling)
	scaleShape []int // blocks per dimension
	blocks     int
	strides    []int
	sub        int   // elements per meta field (subtile of exponent offsets or of a codebook's selection), 0 without meta
	offBits    int   // bits per meta field (offset bits, or a codebook's meta bits)
	metaShape  []int // subtiles per dimension
	metaStr    []int
	sparse     sparsity.Pattern // N:M sparsity along axis; the zero Pattern when dense
}

// product returns the product of dims, or an error when it overflows or a dim is
// negative.
func product(dims []int) (int, error) {
	n, neg, ok := shape.Elements(dims)
	switch {
	case neg >= 0:
		return 0, fmt.Errorf("negative dimension %d in shape %v", dims[neg], dims)
	case !ok:
		return 0, fmt.Errorf("shape %v has too many elements", dims)
	}
	return n, nil
}

// normAxis maps a possibly negative axis to 0..rank-1.
func normAxis(axis, rank int) (int, error) {
	if rank == 0 {
		return 0, nil
	}
	a := axis
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		return 0, fmt.Errorf("axis %d out of range for a rank-%d tensor", axis, rank)
	}
	return a, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// newLayout computes the blocks of spec over shape with the scaled axis axis.
// A nil spec or one without tiles gives one block holding the whole tensor.
func newLayout(shape []int, axis int, spec *scale.Spec) (*layout, error) {
	l, err := newShapeLayout(shape, axis)
	if err != nil {
		return nil, err
	}
	if spec == nil || len(spec.Tiles) == 0 {
		l.tile1 = l.n
		l.blocks = 1
		if l.n == 0 {
			l.blocks = 0
		}
		l.scaleShape = []int{1}
		return l, nil
	}
	if err := l.setTiles(spec); err != nil {
		return nil, err
	}
	return l, nil
}

// newShapeLayout returns the layout of shape with the scaled axis axis,
// without its blocks: strides, the axis in range and a scale shape of ones.
func newShapeLayout(shape []int, axis int) (*layout, error) {
	n, err := product(shape)
	if err != nil {
		return nil, err
	}
	l := &layout{input: append([]int{}, shape...), shape: append([]int(nil), shape...), n: n, axis0: -1, tile0: 1}
	// A rank-0 tensor is one element along a virtual axis.
	if len(l.shape) == 0 {
		l.shape = []int{1}
	}
	rank := len(l.shape)
	l.strides = make([]int, rank)
	st := 1
	for d := rank - 1; d >= 0; d-- {
		l.strides[d] = st
		st *= l.shape[d]
	}
	if l.axis, err = normAxis(axis, rank); err != nil {
		return nil, err
	}
	l.scaleShape = make([]int, rank)
	for d := range l.scaleShape {
		l.scaleShape[d] = 1
	}
	return l, nil
}

// setTiles sets the blocks of spec's one or two tiles (and its sparsity
// and subtile offsets) over the layout's shape.
func (l *layout) setTiles(spec *scale.Spec) error {
	copy(l.scaleShape, l.shape)
	last := spec.Tiles[len(spec.Tiles)-1]
	l.tile1 = l.tileSize(last, l.axis)
	if spec.IsSparse() {
		// A sparse tile counts kept values: T of them span T·M/N elements.
		l.sparse = sparsity.Pattern{N: spec.SparseN, M: spec.SparseM}
		if d := l.shape[l.axis]; d%l.sparse.M != 0 {
			return fmt.Errorf("%v sparsity needs the scaled axis %d to be a multiple of %d long, not %d", l.sparse, l.axis, l.sparse.M, d)
		}
		if last.Size != 0 {
			l.tile1 = last.Size / l.sparse.N * l.sparse.M
		}
		last.Sub = last.Sub / l.sparse.N * l.sparse.M
	}
	l.scaleShape[l.axis] = ceilDiv(l.shape[l.axis], l.tile1)
	if len(spec.Tiles) == 2 {
		if len(l.shape) < 2 {
			return fmt.Errorf("a 2-D tile needs a tensor of rank 2 or more, not shape %v", l.input)
		}
		l.axis0 = l.axis - 1
		if l.axis == 0 {
			l.axis0 = 1
		}
		l.tile0 = l.tileSize(spec.Tiles[0], l.axis0)
		l.scaleShape[l.axis0] = ceilDiv(l.shape[l.axis0], l.tile0)
	}
	l.blocks, _ = product(l.scaleShape)
	if len(spec.Tiles) == 1 && last.Offset != 0 && last.Sub != 0 {
		return l.setMeta(last.Sub, last.Offset)
	}
	return nil
}

// tileSize is the number of elements of tile t along dimension d: the
// whole dimension (at least 1) for a channel tile.
func (l *layout) tileSize(t scale.Tile, d int) int {
	if t.Size == 0 {
		return max(l.shape[d], 1)
	}
	return t.Size
}

// setMeta gives the layout one meta field of bits per sub consecutive
// elements along the scaled axis, sub dividing the tile.
func (l *layout) setMeta(sub, bits int) error {
	if l.tile1%sub != 0 {
		return fmt.Errorf("subtile %d does not divide the tile of %d elements", sub, l.tile1)
	}
	rank := len(l.shape)
	l.sub, l.offBits = sub, bits
	l.metaShape = append([]int(nil), l.shape...)
	l.metaShape[l.axis] = ceilDiv(l.shape[l.axis], l.sub)
	l.metaStr = make([]int, rank)
	st := 1
	for d := rank - 1; d >= 0; d-- {
		l.metaStr[d] = st
		st *= l.metaShape[d]
	}
	return nil
}

// newLayoutFor is newLayout for a datatype: a codebook datatype of more than
// one table gets a meta field per subtile (per tile without subtiles).
func newLayoutFor(shape []int, axis int, dt *DataType) (*layout, error) {
	l, err := newLayout(shape, axis, dt.spec)
	if err != nil || dt.cb == nil || dt.cb.MetaBits() == 0 {
		return l, err
	}
	last := dt.spec.Tiles[len(dt.spec.Tiles)-1] // a 1-D tile (newCodebookType)
	sub := last.Sub
	if sub == 0 {
		sub = l.tile1
	}
	if err := l.setMeta(sub, dt.cb.MetaBits()); err != nil {
		return nil, err
	}
	return l, nil
}

// maxBlock returns the most elements a block holds: a whole tile, or the
// whole tensor when it is one block or smaller than a tile.
func (l *layout) maxBlock() int {
	if m := l.tile0 * l.tile1; l.blocks > 1 && m <= l.n {
		return m
	}
	return l.n
}

// metaIndex returns where subtile q of block b sits in the meta array.
func (l *layout) metaIndex(b block, q int) int {
	i := 0
	for d, k := range b.idx {
		if d == l.axis {
			k = k*(l.tile1/l.sub) + q
		}
		i += k * l.metaStr[d]
	}
	return i
}

// contiguous reports whether every block is one run of consecutive elements
// (tensor scaling, or 1-D tiles along the last axis).
func (l *layout) contiguous() bool {
	return l.axis0 < 0 && (len(l.scaleShape) == 1 && l.blocks <= 1 || l.axis == len(l.shape)-1)
}

// block describes block number b: its first element and its two extents.
type block struct {
	base          int
	len0, stride0 int
	len1, stride1 int
	scaleIndex    int
	idx           []int // the block's index in the scale's shape; valid during the callback only
}

// forEach calls fn for every block in order.
func (l *layout) forEach(fn func(b block)) {
	if l.blocks == 0 {
		return
	}
	if l.scaleShape[0] == 1 && len(l.scaleShape) == 1 && l.tile1 == l.n {
		fn(block{base: 0, len0: 1, len1: l.n, stride1: 1, idx: []int{0}})
		return
	}
	rank := len(l.shape)
	idx := make([]int, rank)
	for b := 0; b < l.blocks; b++ {
		base := 0
		var blk block
		blk.len0, blk.stride0 = 1, 0
		for d := 0; d < rank; d++ {
			switch d {
			case l.axis:
				start := idx[d] * l.tile1
				base += start * l.strides[d]
				blk.len1 = min(l.tile1, l.shape[d]-start)
				blk.stride1 = l.strides[d]
			case l.axis0:
				start := idx[d] * l.tile0
				base += start * l.strides[d]
				blk.len0 = min(l.tile0, l.shape[d]-start)
				blk.stride0 = l.strides[d]
			default:
				base += idx[d] * l.strides[d]
			}
		}
		blk.base = base
		blk.scaleIndex = b
		blk.idx = idx
		fn(blk)
		for d := rank - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < l.scaleShape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// gather copies the block's elements of src into dst (len0·len1 long) in
// row-major block order.
func gather[T any](dst, src []T, b block) {
	k := 0
	for i := 0; i < b.len0; i++ {
		o := b.base + i*b.stride0
		for j := 0; j < b.len1; j++ {
			dst[k] = src[o+j*b.stride1]
			k++
		}
	}
}

// scatter is the inverse of gather.
func scatter[T any](dst, src []T, b block) {
	k := 0
	for i := 0; i < b.len0; i++ {
		o := b.base + i*b.stride0
		for j := 0; j < b.len1; j++ {
			dst[o+j*b.stride1] = src[k]
			k++
		}
	}
}

// direct reports whether the block is one run of consecutive elements, so it can
// be processed in place.
func (b block) direct() bool { return b.len0 == 1 && (b.stride1 == 1 || b.len1 == 1) }
