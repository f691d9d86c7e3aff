package tcast

import (
	"fmt"
	"math"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/sparsity"
)

// Options control Cast. The zero value is the default: virtual form, the last
// axis scaled, floor scales, round to nearest even.
type Options struct {
	// Form is the form of the result.
	Form Form
	// Axis is the scaled axis (the axis of a 1-D tile, the second axis of a 2-D
	// tile, the reduced axis of channel scaling). Negative values count from
	// the end and positive ones from the start; 0, the zero value, means the
	// last axis, as -1 does. Name the first axis with FirstAxis (or −rank). A
	// 2-D tile's first axis is the one before Axis (after it when Axis is the
	// first axis).
	Axis int
	// Mode chooses power-of-two scales (floor, the OCP rule, by default).
	Mode scale.Mode
	// Rounding, Seed and FullRange are the element conversion options; see
	// [dtype.Options]. Scales always round to nearest even.
	Rounding dtype.Rounding
	Seed     uint64
	// FullRange lets signed integer elements use their most negative code.
	FullRange bool
	// PowerOfTwoScales makes scale formats that hold more than powers of two
	// (UE4M3, float16, float32) store the power of two the Mode rule picks,
	// as an E8M0 scale would, and a second-level tensor scale the power of
	// two that keeps the largest block scale at the top of its format. Values
	// that are already an element format times power-of-two scales (a cast
	// of MXFP4 or of FP8 with power-of-two block scales) then cast exactly.
	// Datatypes with zero points ignore it.
	PowerOfTwoScales bool
	// Keep, when not nil, is a keep mask that broadcasts to the input's shape
	// (NumPy's rules, see [mask.Mask.Broadcast]; a rank-0 input counts as
	// shape [1]): elements where it is false are left out of every amax, min
	// and max, and are stored as zero. The mask, broadcast to the input's
	// shape, is kept in the tensor's Mask. For an N:M sparse datatype it is
	// the sparsity mask itself and must be N:M along Axis.
	Keep *mask.Mask
	// Pruning chooses the mask of an N:M sparse datatype (n<N>m<M> in its
	// scale spec) when Keep is nil: the zero value keeps the N largest |x|
	// of every M along Axis; Scores or Norms rank as sparsity.NM does, and
	// Mask is another way to give Keep. Dense datatypes ignore it.
	Pruning sparsity.Options
	// Importance, when not nil, weights each element's squared error by
	// the importance of its column (its index along the last axis), as
	// llama.cpp's importance matrix does: one non-negative value per column,
	// or, for a stack of matrices such as a mixture of experts' weight
	// [experts, rows, columns], one such vector per matrix, matrix after
	// matrix. Only casts that search use it: the codebook datatypes of
	// several tables (mxfi4, mxfp4e, the icb44fi types: each subtile takes the
	// table of least importance-weighted squared error, see
	// docs/CODEBOOK.md §6), and the GGUF K-quant, IQ4, Q4_0, Q4_1, Q5_0 and
	// Q5_1 quantizers of the gguf layout, which search for their scales
	// (gguf.Searches). A
	// codebook datatype whose subtiles run along another axis than the
	// last ignores it after checking it: a subtile's values then share one
	// column, whose weight scales every table's error alike. Datatypes that
	// take their scales by rule (MX, NVFP4, integer groups, single-table
	// codebooks such as nf4) ignore it, unless ScaleSearch is set: their
	// search then weighs it, after the same checks. A cast to a codebook datatype of
	// several tables checks it: a length that is not a whole number of
	// vectors for the tensor's matrices, or a negative or non-finite value,
	// is an error. [DataType.UsesImportance] says which datatypes use it.
	Importance []float32
	// ScaleSearch, when set, lets every block of a datatype whose scales
	// come by rule try a few candidate scales around the rule's choice and
	// keep the one whose decoded block has the least squared error,
	// weighted per column by Importance when given (docs/NUMERICS.md §11):
	// exponent (E8M0) scales the rule's exponent −1, 0, +1; narrow float
	// scales (NVFP4's UE4M3) the rule's code, its two neighbouring codes
	// and, for E2M1 elements, the "4/6" scale (amax onto 4 instead of 6);
	// wider float scales (integer groups, FP8 with float32 scales) the
	// amax clipping ratios 1, 0.95, 0.9, 0.85 and 0.8. The rule wins ties.
	// Only the stored scale codes change: every decoder reads the result
	// as it reads a plain cast. Blocks holding a NaN or an infinity, or
	// all zero, keep the rule's scale; datatypes with zero points, subtile
	// offsets or codebooks ignore it. The zero value, off, casts by rule.
	ScaleSearch bool
}

// FirstAxis is the Options.Axis value that names axis 0 (the zero value of
// Axis names the last axis).
const FirstAxis = math.MinInt32

// DefaultOptions returns the options Cast uses for nil, the zero Options:
// virtual form, the last axis scaled, floor scales, round to nearest even.
func DefaultOptions() Options { return Options{Axis: -1} }

// AxisIndex returns the axis, in 0..rank-1, that an Options.Axis value names
// for a tensor of rank rank, and false when it names none.
func AxisIndex(axis, rank int) (int, bool) {
	switch {
	case axis == FirstAxis:
		axis = 0
	case axis == 0:
		axis = rank - 1
	case axis < 0:
		axis += rank
	}
	if rank == 0 {
		return 0, true
	}
	return axis, axis >= 0 && axis < rank
}

// caster holds what the cast of one tensor needs, computed once.
type caster struct {
	dt        *DataType
	elem      *dtype.Format
	spec      *scale.Spec
	lay       *layout
	opts      Options
	eopts     dtype.Options
	sf, zf    *dtype.Format // block scale and zero formats (nil when absent)
	elemMax   float32
	elemNaN   uint32
	qmin      int64 // integer element range, for zero points
	qmax      int64
	tensorMul float32 // decoded tensor scale, 1 without one
	dec       *decoder
	sel       scale.Selector
	rounder   kernels.IntCodec                  // rounds x/s to an integer for int zero points
	keepMask  *mask.Mask                        // opts.Keep broadcast to lay.shape, or nil
	keep      []bool                            // keepMask's flags, one per element, or nil
	keepBits  []byte                            // keepMask's packed bits, or nil
	blockwise bool                              // never castContiguous (tests compare both paths)
	tmp       []float32                         // scratch for the scaled values of one block
	subAmax   []float32                         // scratch for the subtile amaxes of one block
	cbRef     float32                           // a codebook's reference magnitude (its compute format's largest), once known
	imp       cbImportance                      // opts.Importance as a codebook's selection weighs it
	ssImp     cbImportance                      // opts.Importance as the scale search weighs it
	ss        searchScratch                     // the scale search's buffers
	ssFast    func(*kernels.SqErrBlock) float64 // the scale search's one-pass candidate error, or nil
}

// Cast quantizes x, a tensor of the given shape in row-major order, to dt and
// returns it in the form opts asks for (nil opts: [DefaultOptions]).
//
// Scales follow docs/NUMERICS.md §4 and §6 of the repository: an exponent
// scale is the power of two opts.Mode picks from the block's amax, read from
// the float bits; an all-zero block gets scale code 0, a block holding a NaN or
// an infinity the scale's NaN code, and then decodes to NaN. A float scale is
// amax / max element, rounded to nearest even in the scale format (a decode
// multiplier); an all-zero block gets 1.0, and a block whose scale rounds to
// zero stores zeros. Zero points follow §8: saturated to the zero format and
// kept within the data codes. A second-level tensor scale (NVFP4, §7) follows
// ModelOpt's order: s_t = amax_t / (max element · max scale), s_b = amax_b /
// (max element · s_t), x / (s_b·s_t), and the values decode as
// element × float32(s_b·s_t). Tensors whose size along a tiled axis is not a multiple of the tile are padded
// (the last block is shorter), never rejected.
func Cast(x []float32, shape []int, dt *DataType, opts *Options) (*Tensor, error) {
	return cast(x, shape, dt, opts, true)
}

// cast is Cast, through the one-pass kernels where they apply when
// useKernels is set (the tests compare both paths).
func cast(x []float32, shape []int, dt *DataType, opts *Options, useKernels bool) (*Tensor, error) {
	return castPath(x, shape, dt, opts, useKernels, true)
}

// castPath is cast, through castContiguous where it applies when stream is
// set and block by block otherwise (the tests compare both paths).
func castPath(x []float32, shape []int, dt *DataType, opts *Options, useKernels, stream bool) (*Tensor, error) {
	o := DefaultOptions()
	if opts != nil {
		o = *opts
	}
	if x == nil {
		x = []float32{} // newCaster skips the length check for a template's nil
	}
	if dt != nil && dt.cb != nil {
		return castCodebook(x, shape, dt, o, stream)
	}
	c, err := newCaster(x, shape, dt, o)
	if err != nil {
		return nil, err
	}
	c.blockwise = !stream
	if p := c.groupKernel(); useKernels && p.kind != noKernel {
		return c.castGroupKernel(x, p), nil
	}
	if k := c.kernel(); useKernels && k != noKernel {
		return c.castKernel(x, k), nil
	}
	form := o.Form
	if form == Compressed {
		form = Actual // packed below
	}
	t := c.newTensor(form)
	var deq []float32
	if o.Form == Virtual {
		deq = make([]float32, len(x))
		t.Values = deq
	}
	switch dt.elem.CodeBytes() {
	case 1:
		codes := make([]uint8, len(x))
		castAll(c, x, codes, t, deq)
		prune(c, codes, deq)
		t.Data.Bytes = codes
	case 2:
		codes := make([]uint16, len(x))
		castAll(c, x, codes, t, deq)
		prune(c, codes, deq)
		t.Data.Bytes = codesToBytes(codes)
	default:
		codes := make([]uint32, len(x))
		castAll(c, x, codes, t, deq)
		prune(c, codes, deq)
		t.Data.Bytes = codesToBytes(codes)
	}
	if o.Form == Virtual {
		t.Data = nil
	}
	if o.Form == Compressed {
		return Compress(t)
	}
	return t, nil
}

// Describe returns the tensor Cast would return in form for an input of shape
// (Actual or Compressed; Virtual is taken as Actual): every part with its
// format, width, shape and packing, but no bytes (Data, Scale, ... have nil
// Bytes) and no Values. For a sparse datatype Parts lists the mask part too,
// without bytes, while Mask stays nil. It allocates nothing in proportion to the tensor, so a
// converter can declare its output before casting.
func Describe(shape []int, dt *DataType, form Form, opts *Options) (*Tensor, error) {
	o := DefaultOptions()
	if opts != nil {
		o = *opts
	}
	o.Keep = nil
	if form == Virtual {
		form = Actual
	}
	o.Form = form
	c, err := newCaster(nil, shape, dt, o)
	if err != nil {
		return nil, err
	}
	t := c.shell(form, func(f *dtype.Format, bits int, shape []int) *Part {
		return &Part{Format: f, Bits: bits, Shape: append([]int(nil), shape...)}
	})
	if form == Compressed {
		for _, p := range t.Parts() {
			p.Packed = p.Bits <= 8
		}
	}
	if c.lay.sparse.M != 0 {
		t.maskShape = append([]int(nil), c.lay.shape...)
	}
	return t, nil
}

// ByteLen returns the number of bytes the part holds in its form: the packed
// length of its entries when Packed, else one storage word per entry.
func (p *Part) ByteLen() int {
	n, _ := p.wantBytes()
	return n
}

func newCaster(x []float32, shape []int, dt *DataType, o Options) (*caster, error) {
	if dt == nil {
		return nil, fmt.Errorf("tcast: nil datatype")
	}
	if o.Form > Compressed {
		return nil, fmt.Errorf("tcast: unknown form %d", o.Form)
	}
	if o.Mode >= scale.Mode(len(scale.Modes())) {
		return nil, fmt.Errorf("tcast: unknown scale mode %d", o.Mode)
	}
	axis, ok := AxisIndex(o.Axis, len(shape))
	if !ok {
		axis = o.Axis // out of range: newLayout says so
	}
	lay, err := newLayoutFor(shape, axis, dt)
	if err != nil {
		return nil, fmt.Errorf("tcast: cast to %s: %v", dt, err)
	}
	if x != nil && lay.n != len(x) {
		return nil, fmt.Errorf("tcast: cast to %s: shape %v holds %d elements, but x has %d", dt, shape, lay.n, len(x))
	}
	c := &caster{dt: dt, elem: dt.elem, spec: dt.spec, lay: lay, opts: o, tensorMul: 1,
		eopts: dtype.Options{Rounding: o.Rounding, FullRange: o.FullRange}}
	if lay.sparse.M != 0 && x != nil {
		if c.keepMask, err = sparseMask(x, lay, o); err != nil {
			return nil, fmt.Errorf("tcast: cast to %s: %w", dt, err)
		}
	} else if o.Keep != nil {
		if c.keepMask, err = o.Keep.Broadcast(lay.shape); err != nil {
			return nil, fmt.Errorf("tcast: cast to %s: keep mask: %w", dt, err)
		}
	}
	if c.keepMask != nil {
		c.keep, c.keepBits = c.keepMask.Bools(), c.keepMask.Bytes()
	}
	if o.ScaleSearch && dt.SearchesScales() {
		if c.ssImp, err = checkImportance(o.Importance, lay); err != nil {
			return nil, fmt.Errorf("tcast: cast to %s: scale search: %w", dt, err)
		}
	}
	c.elemMax = c.elem.MaxFinite()
	c.sel = scale.NewSelector(c.elem, o.Mode)
	if nan, ok := c.elem.NaN(); ok {
		c.elemNaN = nan
	}
	if c.elem.Kind() == dtype.Int {
		k := c.elem.Bits()
		switch {
		case !c.elem.Signed():
			c.qmin, c.qmax = 0, 1<<k-1
		case o.FullRange:
			c.qmin, c.qmax = -1<<(k-1), 1<<(k-1)-1
		default:
			c.qmin, c.qmax = -(1<<(k-1) - 1), 1<<(k-1)-1
		}
	}
	c.rounder = kernels.IntCodec{Bits: 32, Signed: true, Min: -1 << 30, Max: 1 << 30}
	if o.ScaleSearch && !noSearchFast {
		c.setSearchFast()
	}
	if c.spec != nil {
		c.sf, c.zf = c.spec.Scale, c.spec.Zero
	}
	return c, nil
}

// sparseMask returns the N:M mask of a sparse datatype's cast of x: Keep
// (or Pruning.Mask), broadcast to the shape and checked to be N:M along the
// scaled axis, or the mask Pruning's criterion chooses.
func sparseMask(x []float32, lay *layout, o Options) (*mask.Mask, error) {
	given := o.Keep
	if o.Pruning.Mask != nil {
		if given != nil {
			return nil, fmt.Errorf("sparsity mask: give Keep or Pruning.Mask, not both")
		}
		given = o.Pruning.Mask
	}
	if given != nil {
		if o.Pruning.Scores != nil || o.Pruning.Norms != nil {
			return nil, fmt.Errorf("sparsity mask: a given mask leaves no use for Pruning's scores or norms")
		}
		m, err := given.Broadcast(lay.shape)
		if err != nil {
			return nil, fmt.Errorf("sparsity mask: %w", err)
		}
		if err := sparsity.Check(m, lay.axis, lay.sparse); err != nil {
			return nil, err
		}
		return m, nil
	}
	return sparsity.NM(x, lay.shape, lay.axis, lay.sparse, o.Pruning)
}

// newTensor allocates the tensor's parts, empty of data.
func (c *caster) newTensor(form Form) *Tensor {
	t := c.shell(form, newPart)
	if c.keepMask != nil {
		t.Mask = c.keepMask.Clone()
	}
	return t
}

// shell returns the tensor of the cast in form, with a Data part without
// bytes and the scale, zero, tensor scale and meta parts mk makes.
func (c *caster) shell(form Form, mk func(f *dtype.Format, bits int, shape []int) *Part) *Tensor {
	lay := c.lay
	t := &Tensor{DataType: c.dt, Form: form, Shape: append([]int{}, lay.input...), Axis: lay.axis, Mode: c.opts.Mode}
	t.Data = &Part{Format: c.elem, Bits: c.elem.Bits(), Shape: dataShape(lay, form)}
	if c.spec == nil {
		return t
	}
	t.Scale = mk(c.sf, c.sf.Bits(), lay.scaleShape)
	if c.zf != nil {
		t.Zero = mk(c.zf, c.zf.Bits(), lay.scaleShape)
	}
	if tf := c.spec.TensorScale; tf != nil {
		t.TensorScale = mk(tf, tf.Bits(), []int{1})
	}
	if lay.sub != 0 {
		t.Meta = mk(nil, lay.offBits, lay.metaShape)
	}
	return t
}

// dataShape is the shape of the data part in form: the tensor's, or for a
// sparse datatype in Compressed form the shape of its kept values (the
// scaled axis times N/M).
func dataShape(lay *layout, form Form) []int {
	s := append([]int(nil), lay.shape...)
	if lay.sparse.M != 0 && form == Compressed {
		s[lay.axis] = s[lay.axis] / lay.sparse.M * lay.sparse.N
	}
	return s
}

func newPart(f *dtype.Format, bits int, shape []int) *Part {
	p := &Part{Format: f, Bits: bits, Shape: append([]int(nil), shape...)}
	p.Bytes = make([]byte, p.Len()*p.StorageBytes())
	return p
}

// blockScale is how one block decodes: value = (elem − zero)·mul, or
// elem·mul − zero for a float zero point; subtiles divide mul by 2^offset.
type blockScale struct {
	mul       float32
	zero      float32
	floatZero bool
}

// prune finishes the cast of a sparse datatype: a pruned element is zero
// whatever its block, so its code becomes the element's zero code and its
// value +0 (a block holding a NaN would otherwise fill it with NaN). It does
// nothing for dense datatypes.
func prune[C kernels.Code](c *caster, codes []C, deq []float32) {
	if c.lay.sparse.M == 0 {
		return
	}
	pruneCodes(codes, c.keepMask, c.elem.Encode(0))
	if deq != nil {
		// Apply cannot fail: the mask has the tensor's shape.
		_ = c.keepMask.Apply(deq, c.keepMask.Shape())
	}
}

// pruneCodes sets to zc the codes where m is false.
func pruneCodes[C kernels.Code](cs []C, m *mask.Mask, zc uint32) {
	for i := m.NextClear(0); i >= 0; i = m.NextClear(i + 1) {
		cs[i] = C(zc)
	}
}

// zeroDropped writes src, the elements from offset at of the tensor, to dst
// with the dropped ones (keep mask false) as +0; dst may be src. It goes
// through the mask's bits where at starts a byte of them, else flag by flag.
func (c *caster) zeroDropped(dst, src []float32, at int) {
	if at%8 == 0 {
		kernels.ZeroMasked(dst, src, c.keepBits[at/8:])
		return
	}
	for i, k := range c.keep[at : at+len(src)] {
		if k {
			dst[i] = src[i]
		} else {
			dst[i] = 0
		}
	}
}

// castAll quantizes every block of x into codes, fills the scale parts of t, and
// writes the dequantized values to deq when it is not nil.
func castAll[C kernels.Code](c *caster, x []float32, codes []C, t *Tensor, deq []float32) {
	if c.spec != nil && c.spec.TensorScale != nil {
		c.setTensorScale(x, t.TensorScale)
	}
	c.dec = newDecoder(c.dt, t)
	if c.streamable() {
		castContiguous(c, x, codes, t, deq)
		return
	}
	maxBlock := c.lay.maxBlock()
	buf := make([]float32, maxBlock)
	c.tmp = make([]float32, maxBlock)
	vals := make([]float32, maxBlock)
	cbuf := make([]C, maxBlock)
	var kbuf []bool
	if c.keep != nil {
		kbuf = make([]bool, maxBlock)
	}
	var offs []uint8
	if c.lay.sub != 0 {
		offs = make([]uint8, ceilDiv(maxBlock, c.lay.sub))
		c.subAmax = make([]float32, len(offs))
	}
	c.lay.forEach(func(b block) {
		n := b.len0 * b.len1
		v, cs, keep := buf[:n], cbuf[:n], []bool(nil)
		direct := b.direct()
		if direct {
			v = x[b.base : b.base+n]
			cs = codes[b.base : b.base+n]
		} else {
			gather(v, x, b)
		}
		if c.keep != nil {
			if direct {
				keep = c.keep[b.base : b.base+n]
			} else {
				keep = kbuf[:n]
				gather(keep, c.keep, b)
			}
		}
		var off []uint8
		if c.lay.sub != 0 {
			off = offs[:ceilDiv(n, c.lay.sub)]
		}
		quantizeBlock(c, v, keep, cs, off, t, b)
		if !direct {
			scatter(codes, cs, b)
		}
		if off != nil {
			c.storeOffsets(t.Meta, off, b)
		}
		if deq != nil {
			out := vals[:n]
			if direct {
				out = deq[b.base : b.base+n]
			}
			dequantBlock(c.elem, out, cs, c.dec.scaleOf(t, b.scaleIndex), off, c.lay.sub)
			if !direct {
				scatter(deq, out, b)
			}
		}
	})
}

// streamable reports whether castContiguous applies: blocks are runs of
// consecutive elements, scaled by one number each (no zero point, no subtile
// offsets), and the rounding does not draw per-block random bits.
func (c *caster) streamable() bool {
	return c.lay.contiguous() && c.zf == nil && c.lay.sub == 0 &&
		c.opts.Rounding != kernels.RoundStochastic && !c.blockwise
}

// castChunk is how many elements castContiguous scales before encoding them in
// one call: large enough to amortize the call, small enough to stay in cache.
const castChunk = 1 << 14

// castContiguous is castAll for streamable casts: it chooses every block's scale,
// writes the scaled values of a chunk of blocks to a buffer of at most
// 2·castChunk elements, and encodes the chunk with one slice call, which is what
// lets the element kernel run at its own speed instead of block by block. The
// codes equal castAll's.
func castContiguous[C kernels.Code](c *caster, x []float32, codes []C, t *Tensor, deq []float32) {
	if c.spec == nil {
		encodeUnscaled(c, x, codes)
	} else {
		e := newChunkEncoder(c, codes, len(x))
		amaxes := c.maskedBlockAmax(x)
		c.lay.forEach(func(b block) {
			v := x[b.base : b.base+b.len1]
			var keep []bool
			var sc scaling
			if c.keep != nil {
				keep = c.keep[b.base : b.base+b.len1]
				sc = c.chooseScaleOf(amaxes(b), v, keep, t, b)
			} else {
				sc = c.chooseScale(v, nil, t, b)
			}
			e.add(b.base, v, keep, sc)
		})
		e.flush(len(x))
	}
	if deq != nil {
		decodeAll(t, c.lay, codes, deq)
	}
}

// encodeUnscaled is castContiguous without a scale: it encodes straight
// from x, a chunk at a time; dropped elements store zero.
func encodeUnscaled[C kernels.Code](c *caster, x []float32, codes []C) {
	n := len(x)
	for lo := 0; lo < n; lo += castChunk {
		hi := min(lo+castChunk, n)
		dtype.EncodeSlice(c.elem, codes[lo:hi], x[lo:hi], c.eopts)
	}
	if c.keepMask != nil {
		pruneCodes(codes, c.keepMask, c.elem.Encode(0))
	}
}

// chunkEncoder holds the scaled values of castContiguous's blocks, in
// order, until a chunk of at least castChunk elements is there to encode
// with one slice call. Its buffer holds whole blocks up to castChunk
// elements past a flush; a larger block (tensor or channel scaling) goes
// through it in pieces.
type chunkEncoder[C kernels.Code] struct {
	c     *caster
	codes []C
	tmp   []float32 // the scaled values of codes[start:]
	start int       // first element held in tmp
	fills []fillRun // runs of tmp whose blocks store one code
}

// fillRun is a run of elements lo..hi whose block stores code throughout.
type fillRun struct {
	lo, hi int
	code   uint32
}

// newChunkEncoder returns a chunkEncoder for the n codes of codes.
func newChunkEncoder[C kernels.Code](c *caster, codes []C, n int) *chunkEncoder[C] {
	return &chunkEncoder[C]{c: c, codes: codes, tmp: make([]float32, min(n, 2*castChunk))}
}

// add scales v, the values of the block from element at on (keep: their
// mask, or nil), by sc, encoding what the buffer holds whenever it fills.
func (e *chunkEncoder[C]) add(at int, v []float32, keep []bool, sc scaling) {
	tmp := e.tmp
	if at+len(v)-e.start > len(tmp) {
		e.flush(at)
	}
	base := at
	for lo := 0; lo < len(v); lo += len(tmp) {
		piece := v[lo:min(lo+len(tmp), len(v))]
		at := base + lo
		seg := tmp[at-e.start : at-e.start+len(piece)]
		scaleInto(seg, piece, sc)
		if keep != nil && !sc.fill {
			// Dropped elements are stored as zero, as encodeScaled does.
			e.c.zeroDropped(seg, seg, at)
		}
		if sc.fill {
			e.fills = append(e.fills, fillRun{at, at + len(piece), sc.fillCode})
		}
		if end := at + len(piece); end-e.start >= castChunk {
			e.flush(end)
		}
	}
}

// flush encodes the values held, up to element end, and stores the fill
// codes of their runs.
func (e *chunkEncoder[C]) flush(end int) {
	c, codes := e.c, e.codes
	dtype.EncodeSlice(c.elem, codes[e.start:end], e.tmp[:end-e.start], c.eopts)
	for _, f := range e.fills {
		fill(codes[f.lo:f.hi], f.code)
		if c.keep != nil {
			zeroDroppedCodes(c, codes[f.lo:f.hi], c.keep[f.lo:f.hi])
		}
	}
	e.fills = e.fills[:0]
	e.start = end
}

// scaleInto writes v scaled by sc to dst: zeros for a filled block, v/div,
// or v·mul.
func scaleInto(dst, v []float32, sc scaling) {
	switch {
	case sc.fill:
		clear(dst)
	case sc.div != 0:
		for i, e := range v {
			dst[i] = e / sc.div
		}
	default:
		kernels.MulSlice(dst, v, sc.mul)
	}
}

// maskedBlockAmax returns, for a streamable cast with a keep mask, the amax
// of the kept elements of each block as chooseScale takes it: the masked
// reduction kernels.AbsMaxBlocksMasked over each row of blocks (the blocks
// along the last axis, or the one block of the tensor), computed when
// forEach, which visits the blocks in order, reaches the row. Without a mask
// it returns nil.
func (c *caster) maskedBlockAmax(x []float32) func(b block) float32 {
	if c.keep == nil || c.lay.blocks == 0 {
		return nil
	}
	rowLen := c.lay.n // tensor scaling: one block
	if c.lay.blocks > 1 || len(c.lay.scaleShape) > 1 {
		rowLen = c.lay.shape[len(c.lay.shape)-1]
	}
	tile := min(c.lay.tile1, rowLen)
	perRow := ceilDiv(rowLen, tile)
	buf := make([]uint32, perRow)
	row := -1
	return func(b block) float32 {
		if r := b.scaleIndex / perRow; r != row {
			row = r
			lo := r * rowLen
			kernels.AbsMaxBlocksMasked(buf, x[lo:lo+rowLen], c.keep[lo:lo+rowLen], tile)
		}
		return math.Float32frombits(buf[b.scaleIndex%perRow])
	}
}

// setTensorScale computes the second-level tensor scale from the tensor's amax.
func (c *caster) setTensorScale(x []float32, p *Part) {
	// The tensor scale comes from the finite values: a NaN or an Inf makes its
	// own block NaN (floatBlock), not every block of the tensor.
	amax := c.amax(x, c.keep)
	if isNonFinite(amax) {
		if c.zf != nil {
			lo, hi, _ := kernels.MinMax(x, c.keep)
			amax = max(hi, 0) - min(lo, 0)
		} else {
			amax = finiteAmax(x, c.keep)
		}
	}
	c.putTensorScale(amax, p)
}

// putTensorScale stores in p the second-level tensor scale of a tensor whose
// largest finite (kept) magnitude, or range for zero points, is amax, and
// sets c.tensorMul.
func (c *caster) putTensorScale(amax float32, p *Part) {
	tf := c.spec.TensorScale
	code := tf.Encode(1)
	if c.opts.PowerOfTwoScales && c.zf == nil && amax > 0 && !isNonFinite(amax) {
		// The largest block's scale exponent, over the largest power of two
		// the block scale format holds.
		_, top := scale.Exponent(c.sf.MaxFinite())
		e := c.sel.Exponent(amax) - top
		if sc := tf.Encode(float32(math.Ldexp(1, e))); tf.Decode(sc) > 0 && !isNonFinite(tf.Decode(sc)) {
			code = sc
		}
		putCode(p, 0, code)
		c.tensorMul = tf.Decode(code)
		return
	}
	if amax > 0 && !isNonFinite(amax) {
		denom := c.elemMax * c.sf.MaxFinite()
		if c.zf != nil {
			denom = float32(c.qmax-c.qmin) * c.sf.MaxFinite()
		}
		if sc := tf.Encode(amax / denom); tf.Decode(sc) > 0 && !isNonFinite(tf.Decode(sc)) {
			code = sc
		}
	}
	putCode(p, 0, code)
	c.tensorMul = tf.Decode(code)
}

// amax returns the largest kept |x|, ignoring nothing (NaN and Inf show up as
// non-finite results). For zero points it is the kept range hi − lo.
func (c *caster) amax(x []float32, keep []bool) float32 {
	if c.zf != nil {
		lo, hi, nf := kernels.MinMax(x, keep)
		if nf {
			return float32(math.NaN())
		}
		return max(hi, 0) - min(lo, 0)
	}
	if keep == nil {
		return math.Float32frombits(kernels.AbsMaxBits(x))
	}
	return math.Float32frombits(kernels.AbsMaxBitsMasked(x, keep))
}

func isNonFinite(x float32) bool { return math.Float32bits(x)&0x7fffffff >= 0x7f800000 }

// storeOffsets writes a block's subtile offsets into the meta part.
func (c *caster) storeOffsets(meta *Part, off []uint8, b block) {
	for q, o := range off {
		meta.Bytes[c.lay.metaIndex(b, q)] = o
	}
}

// blockSeed gives each block its own stream of random bits for stochastic
// rounding.
func (c *caster) blockSeed(b block) uint64 {
	return c.opts.Seed ^ uint64(b.scaleIndex+1)*0x9e3779b97f4a7c15
}

// quantizeBlock encodes one block's values v (with keep flags, or nil) into cs,
// stores its scale (and zero point and offsets), and returns how it decodes.
func quantizeBlock[C kernels.Code](c *caster, v []float32, keep []bool, cs []C, off []uint8, t *Tensor, b block) {
	if c.spec == nil {
		dtype.EncodeSlice(c.elem, cs, v, c.eoptsFor(b))
		if keep != nil {
			zc := C(c.elem.Encode(0))
			for i, k := range keep {
				if !k {
					cs[i] = zc
				}
			}
		}
		return
	}
	switch {
	case c.zf != nil:
		zeroPointBlock(c, v, keep, cs, t, b)
	case off != nil:
		exponentBlock(c, v, keep, cs, off, t, b)
	default:
		sc := c.chooseScale(v, keep, t, b)
		if sc.fill {
			fill(cs, sc.fillCode)
			zeroDroppedCodes(c, cs, keep)
			return
		}
		encodeScaled(c, v, keep, cs, sc.mul, sc.div, b)
	}
}

// scaling is how one block's values reach the element grid: v·mul, or v/div
// when div is not 0; with fill set, every element gets fillCode instead.
type scaling struct {
	mul, div float32
	fill     bool
	fillCode uint32
}

// chooseScale picks the scale of a block without zero point or subtile offsets,
// stores its code, and says how to scale the values: the OCP MX rule for
// exponent scales, amax / max element (times the tensor scale) for float scales.
func (c *caster) chooseScale(v []float32, keep []bool, t *Tensor, b block) scaling {
	return c.chooseScaleOf(c.amax(v, keep), v, keep, t, b)
}

// chooseScaleOf is chooseScale given the block's amax, c.amax(v, keep).
func (c *caster) chooseScaleOf(amax float32, v []float32, keep []bool, t *Tensor, b block) scaling {
	if c.spec.IsExponent() {
		code, ok := c.exponentCode(amax)
		if !ok {
			return c.nanScale(t, b)
		}
		if c.opts.ScaleSearch && amax > 0 {
			code = c.searchExponent(code, v, keep, b)
		}
		putCode(t.Scale, b.scaleIndex, code)
		return scaling{mul: 1 / c.dec.byteScale[code]} // a power of two: exact (exponent formats are byte-wide)
	}
	search := c.opts.ScaleSearch
	if isNonFinite(amax) {
		if c.sf.HasNaN() {
			return c.nanScale(t, b)
		}
		amax = finiteAmax(v, keep)
		search = false // the rule's scale for a block holding a NaN or an Inf
	}
	code := c.sf.Encode(1)
	switch {
	case amax > 0 && c.opts.PowerOfTwoScales:
		code = c.sf.Encode(float32(math.Ldexp(1, c.sel.Exponent(amax))) / c.tensorMul)
	case amax > 0:
		code = c.sf.Encode(amax / (c.elemMax * c.tensorMul))
	}
	if search && amax > 0 {
		code = c.searchFloat(code, amax, v, keep, b)
	}
	putCode(t.Scale, b.scaleIndex, code)
	s := c.dec.scale(code)
	d := s * c.tensorMul
	if d == 0 {
		return scaling{fill: true, fillCode: c.elem.Encode(0)}
	}
	return scaling{div: d}
}

// exponentCode returns the power-of-two scale code of a block whose largest
// magnitude is amax: code 0 for an all-zero block, and ok=false (the NaN scale)
// for a block holding a NaN or an infinity or whose exponent is beyond the
// scale format.
func (c *caster) exponentCode(amax float32) (code uint32, ok bool) {
	switch {
	case isNonFinite(amax):
		return 0, false
	case amax == 0:
		return 0, true
	}
	return scale.ExponentCode(c.sel.Exponent(amax), c.sf)
}

// nanScale stores the NaN scale of a block holding a NaN or an infinity; its
// elements get the element NaN code (or 0 where the format has none).
func (c *caster) nanScale(t *Tensor, b block) scaling {
	nan, _ := c.sf.NaN()
	putCode(t.Scale, b.scaleIndex, nan)
	return scaling{fill: true, fillCode: c.elemNaN}
}

func (c *caster) eoptsFor(b block) dtype.Options {
	o := c.eopts
	o.Seed = c.blockSeed(b)
	return o
}

// fill sets every code of cs to code.
func fill[C kernels.Code](cs []C, code uint32) {
	for i := range cs {
		cs[i] = C(code)
	}
}

// encodeScaled encodes v·mul (or v/div when div is not 0) into cs, with
// masked-out elements stored as zero.
func encodeScaled[C kernels.Code](c *caster, v []float32, keep []bool, cs []C, mul, div float32, b block) {
	tmp := c.tmp[:len(v)]
	if div != 0 {
		for i, x := range v {
			tmp[i] = x / div
		}
	} else {
		for i, x := range v {
			tmp[i] = x * mul
		}
	}
	for i, k := range keep {
		if !k {
			tmp[i] = 0
		}
	}
	dtype.EncodeSlice(c.elem, cs, tmp, c.eoptsFor(b))
}

// nanBlock stores the NaN policy's block: the scale's NaN code, the element NaN
// code (or 0 where the element format has none) everywhere but at dropped
// elements (keep false), which are stored as zero, offsets 0.
func nanBlock[C kernels.Code](c *caster, cs []C, keep []bool, off []uint8, t *Tensor, b block) {
	fill(cs, c.nanScale(t, b).fillCode)
	zeroDroppedCodes(c, cs, keep)
	clear(off)
}

// zeroDroppedCodes stores the dropped elements of a filled block (keep false)
// as the element's zero code, as encodeScaled stores them in any other block.
// keep nil drops nothing.
func zeroDroppedCodes[C kernels.Code](c *caster, cs []C, keep []bool) {
	if keep == nil {
		return
	}
	zc := C(c.elem.Encode(0))
	for i, k := range keep {
		if !k {
			cs[i] = zc
		}
	}
}

// exponentBlock is the OCP MX rule with subtile offsets: a power-of-two scale
// from the block's amax, and a smaller power of two for each subtile whose own
// amax allows it (docs/NUMERICS.md §4.4).
func exponentBlock[C kernels.Code](c *caster, v []float32, keep []bool, cs []C, off []uint8, t *Tensor, b block) {
	// One pass over the subtiles: the block's amax is the largest of theirs.
	sub := c.lay.sub
	amaxes := c.subAmax[:len(off)]
	amax := float32(0)
	for q := range off {
		lo, hi := q*sub, min((q+1)*sub, len(v))
		var kq []bool
		if keep != nil {
			kq = keep[lo:hi]
		}
		amaxes[q] = c.amax(v[lo:hi], kq)
		amax = max(amax, amaxes[q]) // NaN propagates
	}
	code, ok := c.exponentCode(amax)
	if !ok {
		nanBlock(c, cs, keep, off, t, b)
		return
	}
	putCode(t.Scale, b.scaleIndex, code)
	x := c.sf.Decode(code)
	k := int(code) - c.sf.Bias()
	maxOff := 1<<c.lay.offBits - 1
	seed := c.blockSeed(b)
	for q := range off {
		lo, hi := q*sub, min((q+1)*sub, len(v))
		var kq []bool
		if keep != nil {
			kq = keep[lo:hi]
		}
		o := maxOff
		if a := amaxes[q]; a > 0 {
			o = min(max(k-c.sel.Exponent(a), 0), maxOff)
		}
		off[q] = uint8(o)
		xs := float32(math.Ldexp(float64(x), -o))
		sb := b
		sb.scaleIndex = int(seed>>1) + q
		// Divide rather than multiply by 1/xs: xs can be 2^-130, whose
		// reciprocal overflows float32. Division by a power of two is exact.
		encodeScaled(c, v[lo:hi], kq, cs[lo:hi], 0, xs, sb)
	}
}

// finiteAmax is the largest finite kept |x|.
func finiteAmax(v []float32, keep []bool) float32 {
	lo, hi, _ := kernels.MinMax(v, keep)
	return max(-lo, hi)
}

// zeroPointBlock is asymmetric integer quantization (docs/NUMERICS.md §8): the range
// [min(lo, 0), max(hi, 0)] mapped onto the integer codes, with an integer or a
// float zero point.
func zeroPointBlock[C kernels.Code](c *caster, v []float32, keep []bool, cs []C, t *Tensor, b block) {
	lo, hi, nonFinite := kernels.MinMax(v, keep)
	if nonFinite && c.sf.HasNaN() {
		putCode(t.Zero, b.scaleIndex, 0)
		nanBlock(c, cs, keep, nil, t, b)
		return
	}
	lo, hi = min(lo, 0), max(hi, 0)
	code := c.sf.Encode(1)
	if rng := hi - lo; rng > 0 {
		code = c.sf.Encode(rng / (float32(c.qmax-c.qmin) * c.tensorMul))
	}
	putCode(t.Scale, b.scaleIndex, code)
	d := c.sf.Decode(code) * c.tensorMul
	if c.zf.Kind() == dtype.Float {
		zc := c.zf.Encode(-lo)
		putCode(t.Zero, b.scaleIndex, zc)
		z := c.zf.Decode(zc)
		if d == 0 {
			fill(cs, c.elem.Encode(0))
		} else {
			tmp := c.tmp[:len(v)]
			for i, x := range v {
				tmp[i] = x + z
			}
			encodeScaled(c, tmp, keep, cs, 0, d, b)
			if keep != nil {
				// A dropped element decodes to 0: q·d − z = 0 needs q = z/d.
				zq := c.elem.EncodeWith(z/d, c.eopts)
				for i, k := range keep {
					if !k {
						cs[i] = C(zq)
					}
				}
			}
		}
		return
	}
	// zp = round(qmin − lo/s), saturated to the zero format and then kept
	// within the codes qmin..qmax: a scale that rounded below (hi − lo)/qmax
	// can push it one past qmax, and a zero point outside the codes would
	// leave 0 without an exact code (and cannot be stored in the data's width).
	zp := int64(0)
	if d != 0 {
		zc := c.zf.Encode(float32(c.qmin) - lo/d)
		zp = min(max(int64(c.zf.Decode(zc)), c.qmin), c.qmax)
	}
	putCode(t.Zero, b.scaleIndex, c.zf.Encode(float32(zp)))
	mask := uint32(1)<<c.elem.Bits() - 1
	seed := c.blockSeed(b)
	for i, x := range v {
		q := zp
		if d != 0 && (keep == nil || keep[i]) {
			r := c.rounder.Encode(x/d, c.opts.Rounding, kernels.RandFor(c.opts.Rounding, seed, uint64(i)))
			q += int64(int32(r))
		}
		q = min(max(q, c.qmin), c.qmax)
		cs[i] = C(uint32(q) & mask)
	}
	return
}

// dequantBlock decodes the codes cs of one block into out.
func dequantBlock[C kernels.Code](elem *dtype.Format, out []float32, cs []C, bs blockScale, off []uint8, sub int) {
	dtype.DecodeSlice(elem, out, cs)
	switch {
	case bs.floatZero:
		for i, e := range out {
			out[i] = e*bs.mul - bs.zero
		}
	case bs.zero != 0:
		for i, e := range out {
			out[i] = (e - bs.zero) * bs.mul
		}
	case off != nil:
		for q, o := range off {
			m := float32(math.Ldexp(float64(bs.mul), -int(o)))
			seg := out[q*sub : min((q+1)*sub, len(out))]
			for i, e := range seg {
				seg[i] = e * m
			}
		}
	case bs.mul != 1:
		for i, e := range out {
			out[i] = e * bs.mul
		}
	}
}
