package tcast

import (
	"fmt"
	"math"
	"slices"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
)

// A RowCaster casts one tensor a range of rows at a time, for converters that
// stream a large tensor through the cache in pieces and split it across
// goroutines instead of casting it whole. A row is a run of elements along
// the last axis: a tensor of shape [..., n] has the product of its other
// dimensions as rows of n elements (a rank-0 tensor is one row of one).
//
// When Kernel reports true, the datatype and options are ones the one-pass
// kernels implement (MXFP4, MXFP6, MXFP8, MXINT8 and NVFP4 blocks along the last
// axis, a whole number of blocks per row, default options): every row range
// casts independently, with no allocation once a goroutine's RowScratch has
// grown, into the part buffers of the whole tensor. The bytes equal those of
// Cast of the whole tensor. Other datatypes and options fall back to Cast
// itself: CastRows then takes only the whole tensor, in one call.
//
// A RowCaster is safe for concurrent CastRows calls on disjoint row ranges
// once SetAmax (NVFP4) has been called.
type RowCaster struct {
	c      *caster
	kind   kernelKind
	block  int
	shape  []int
	rows   int
	rowLen int
	// tensorScale holds the second-level tensor scale code SetAmax chose
	// (NVFP4), as the tensor-scale part stores it.
	tensorScale *Part
}

// NewRowCaster prepares the cast of a tensor of the given shape to dt with
// opts (nil: DefaultOptions), as Cast would make it, in opts.Form.
func NewRowCaster(shape []int, dt *DataType, opts *Options) (*RowCaster, error) {
	o := DefaultOptions()
	if opts != nil {
		o = *opts
	}
	c, err := newCaster(nil, shape, dt, o)
	if err != nil {
		return nil, err
	}
	r := &RowCaster{c: c, shape: slices.Clone(shape), rows: 1, rowLen: 1}
	if rank := len(shape); rank > 0 {
		r.rowLen = shape[rank-1]
		r.rows, _ = product(shape[:rank-1]) // newCaster checked the product of all
	}
	// A keep mask falls back to Cast, whose kernel path zeroes the dropped
	// elements of a copy of the whole tensor first.
	if k := c.kernel(); k != noKernel && c.keepBits == nil {
		r.kind, r.block = k, c.lay.tile1
	}
	return r, nil
}

// Rows returns the number of rows.
func (r *RowCaster) Rows() int { return r.rows }

// RowLen returns the number of elements in a row.
func (r *RowCaster) RowLen() int { return r.rowLen }

// Kernel reports whether row ranges cast independently through the one-pass
// kernels; when false, CastRows takes only the whole tensor.
func (r *RowCaster) Kernel() bool { return r.kind != noKernel }

// NeedsAmax reports whether SetAmax must be given the tensor's largest
// magnitude before CastRows: a second-level tensor scale (NVFP4) depends on
// every element, so such a tensor is read twice, once for its amax and once
// to cast it. It is false when CastRows falls back to Cast, which finds the
// amax itself.
func (r *RowCaster) NeedsAmax() bool { return r.kind == kernelNVFP4 }

// SetAmax sets the tensor-wide largest magnitude that the second-level
// tensor scale comes from (see NeedsAmax); a gathers it from every element.
// It does nothing for datatypes without a tensor scale on the kernel path.
func (r *RowCaster) SetAmax(a Amax) {
	if !r.NeedsAmax() {
		return
	}
	tf := r.c.spec.TensorScale
	p := &Part{Format: tf, Bits: tf.Bits(), Shape: []int{1}}
	p.Bytes = make([]byte, p.StorageBytes())
	r.c.putTensorScale(a.value(), p)
	r.tensorScale = p
}

// RowScratch is one goroutine's reusable memory for CastRows. The zero value
// is ready to use; it grows to the largest row range it has seen.
type RowScratch struct {
	codes []byte
}

// Bytes returns n bytes of scratch, whose contents are undefined, valid
// until the next call; layouts that lay codes out their own way stage them
// there. A nil RowScratch allocates.
func (s *RowScratch) Bytes(n int) []byte {
	if s == nil {
		return make([]byte, n)
	}
	if cap(s.codes) < n {
		s.codes = make([]byte, n)
	}
	return s.codes[:n]
}

// NewTensor returns a tensor of the cast's form with every part allocated
// and zero, for CastRows to fill.
func (r *RowCaster) NewTensor() *Tensor {
	c := r.c
	form := c.opts.Form
	if form != Compressed {
		t := c.newTensor(form)
		if form == Virtual {
			t.Data = nil
			t.Values = make([]float32, c.lay.n)
		} else {
			t.Data.Bytes = make([]byte, c.lay.n*t.Data.StorageBytes())
		}
		return t
	}
	mk := func(f *dtype.Format, bits int, shape []int) *Part {
		p := &Part{Format: f, Bits: bits, Shape: slices.Clone(shape), Packed: bits <= 8}
		p.Bytes = make([]byte, p.ByteLen())
		return p
	}
	t := c.shell(Compressed, mk)
	t.Data = mk(t.Data.Format, t.Data.Bits, t.Data.Shape)
	if c.keepMask != nil {
		t.Mask = c.keepMask.Clone()
	}
	return t
}

// DataBytes returns the bytes that the first rows rows take in the data part
// of the Compressed form on the kernel path (two 4-bit codes a byte, element
// 2k in the low nibble; four 6-bit codes in three bytes; one byte per 8-bit
// code).
func (r *RowCaster) DataBytes(rows int) int { return packedLen(r.kind, rows*r.rowLen) }

// ScaleBytes returns the bytes that the first rows rows take in the scale
// part on the kernel path: one byte per block.
func (r *RowCaster) ScaleBytes(rows int) int {
	if r.block == 0 {
		return 0
	}
	return rows * r.rowLen / r.block
}

// rangeOf checks a row range given as rows starting at r0 with the values x,
// and returns its number of rows.
func (r *RowCaster) rangeOf(x []float32, r0 int, deq []float32) (int, error) {
	name := r.c.dt.name
	if r.rowLen == 0 {
		if len(x) != 0 || r0 != 0 {
			return 0, fmt.Errorf("tcast: cast rows of %s: a tensor of shape %v has no elements; cast it whole, from row 0", name, r.shape)
		}
		return r.rows, nil
	}
	if len(x)%r.rowLen != 0 {
		return 0, fmt.Errorf("tcast: cast rows of %s: %d values are not whole rows of %d", name, len(x), r.rowLen)
	}
	nr := len(x) / r.rowLen
	if r0 < 0 || r0 > r.rows-nr {
		return 0, fmt.Errorf("tcast: cast rows of %s: rows %d..%d are outside the %d of shape %v", name, r0, r0+nr, r.rows, r.shape)
	}
	if deq != nil && len(deq) != len(x) {
		return 0, fmt.Errorf("tcast: cast rows of %s: %d dequantized values for %d", name, len(deq), len(x))
	}
	return nr, nil
}

// CastRowsPacked casts whole rows x on the kernel path (Kernel must report
// true) into data and scale, the bytes those rows take in the Compressed
// form's data and scale parts (DataBytes and ScaleBytes of their number),
// and writes the values they decode to into deq unless it is nil. For
// layouts that lay the codes out their own way. NVFP4 needs SetAmax first.
func (r *RowCaster) CastRowsPacked(data, scale []byte, x, deq []float32) error {
	name := r.c.dt.name
	if r.kind == noKernel {
		return fmt.Errorf("tcast: cast rows of %s: no kernel casts these rows; use CastRows", name)
	}
	if r.rowLen == 0 || len(x)%r.rowLen != 0 {
		return fmt.Errorf("tcast: cast rows of %s: %d values are not whole rows of %d", name, len(x), r.rowLen)
	}
	nr := len(x) / r.rowLen
	switch {
	case len(data) != r.DataBytes(nr) || len(scale) != r.ScaleBytes(nr):
		return fmt.Errorf("tcast: cast rows of %s: %d rows take %d data and %d scale bytes, got %d and %d",
			name, nr, r.DataBytes(nr), r.ScaleBytes(nr), len(data), len(scale))
	case deq != nil && len(deq) != len(x):
		return fmt.Errorf("tcast: cast rows of %s: %d dequantized values for %d", name, len(deq), len(x))
	case r.NeedsAmax() && r.tensorScale == nil:
		return fmt.Errorf("tcast: cast rows of %s: the tensor scale needs the tensor's amax: call SetAmax first", name)
	}
	r.castPacked(data, scale, x, deq)
	return nil
}

// castPacked is CastRowsPacked past its checks: the kernel of r over whole
// blocks into codes and scales, then, unless deq is nil, the values they
// decode to into deq.
func (r *RowCaster) castPacked(codes, scales []byte, x, deq []float32) {
	r.c.quantKernel(r.kind, codes, scales, x)
	if deq != nil {
		dequantKernel(r.kind, deq, codes, scales, r.c.tensorMul)
	}
}

// CastRows casts the rows x, which start at row r0, into t, a tensor of the
// cast's form whose parts hold the whole tensor (NewTensor's, or parts of
// the same sizes the caller allocated), writing only those rows' bytes, and
// writes the values they decode to into deq unless it is nil. s (which may
// be nil) is the calling goroutine's scratch. Every row must be cast once,
// then Finish called.
//
// Without Kernel, x must be the whole tensor (r0 = 0): it is cast with Cast
// and its parts copied into t.
func (r *RowCaster) CastRows(t *Tensor, x []float32, r0 int, deq []float32, s *RowScratch) error {
	nr, err := r.rangeOf(x, r0, deq)
	if err != nil {
		return err
	}
	if r.kind == noKernel {
		return r.castWhole(t, x, r0, nr, deq)
	}
	if r.NeedsAmax() && r.tensorScale == nil {
		return fmt.Errorf("tcast: cast rows of %s: the tensor scale needs the tensor's amax: call SetAmax first", r.c.dt)
	}
	if err := r.check(t); err != nil {
		return err
	}
	e0, e1 := r0*r.rowLen, (r0+nr)*r.rowLen
	scales := t.Scale.Bytes[r.ScaleBytes(r0):r.ScaleBytes(r0+nr)]
	switch t.Form {
	case Compressed:
		r.castPacked(t.Data.Bytes[r.DataBytes(r0):r.DataBytes(r0+nr)], scales, x, deq)
	case Actual:
		codes := t.Data.Bytes[e0:e1]
		if kernelBits(r.kind) != 8 {
			codes = s.Bytes(r.DataBytes(nr))
		}
		r.castPacked(codes, scales, x, deq)
		if len(codes) != e1-e0 {
			kernels.UnpackBits(t.Data.Bytes[e0:e1], codes, uint(kernelBits(r.kind)))
		}
	case Virtual:
		vals := t.Values[e0:e1]
		r.castPacked(s.Bytes(r.DataBytes(nr)), scales, x, vals)
		if deq != nil {
			copy(deq, vals)
		}
	}
	return nil
}

// check reports whether t has the parts the kernel path writes, at the sizes
// of the whole tensor in the cast's form.
func (r *RowCaster) check(t *Tensor) error {
	c := r.c
	fail := func(format string, args ...any) error {
		return fmt.Errorf("tcast: cast rows of %s: %s", c.dt, fmt.Sprintf(format, args...))
	}
	switch {
	case t == nil:
		return fail("nil tensor")
	case t.Form != c.opts.Form:
		return fail("the tensor is %s, the cast %s", t.Form, c.opts.Form)
	case t.Scale == nil || len(t.Scale.Bytes) != r.ScaleBytes(r.rows):
		return fail("the scale part must hold %d bytes", r.ScaleBytes(r.rows))
	case r.NeedsAmax() && (t.TensorScale == nil || len(t.TensorScale.Bytes) != len(r.tensorScale.Bytes)):
		return fail("the tensor_scale part must hold %d bytes", len(r.tensorScale.Bytes))
	}
	switch t.Form {
	case Compressed:
		if t.Data == nil || len(t.Data.Bytes) != r.DataBytes(r.rows) {
			return fail("the data part must hold %d bytes", r.DataBytes(r.rows))
		}
	case Actual:
		if t.Data == nil || len(t.Data.Bytes) != c.lay.n {
			return fail("the data part must hold %d bytes", c.lay.n)
		}
	case Virtual:
		if len(t.Values) != c.lay.n {
			return fail("the tensor must hold %d values", c.lay.n)
		}
	}
	return nil
}

// castWhole is CastRows without a kernel: Cast of the whole tensor, its
// parts copied into t.
func (r *RowCaster) castWhole(t *Tensor, x []float32, r0, nr int, deq []float32) error {
	c := r.c
	if r0 != 0 || nr != r.rows {
		return fmt.Errorf("tcast: cast rows of %s: without a kernel for these options the rows of shape %v cast only all at once, not rows %d..%d",
			c.dt.name, r.shape, r0, r0+nr)
	}
	if t == nil || t.Form != c.opts.Form {
		return fmt.Errorf("tcast: cast rows of %s: want a %s tensor", c.dt, c.opts.Form)
	}
	w, err := Cast(x, r.shape, c.dt, &c.opts)
	if err != nil {
		return err
	}
	dst := map[string]*Part{}
	for _, p := range t.Parts() {
		dst[p.Name] = p.Part
	}
	for _, p := range w.Parts() {
		if p.Name == "mask" {
			continue // the keep mask is the options', in both tensors
		}
		d := dst[p.Name]
		if d == nil || len(d.Bytes) != len(p.Bytes) {
			return fmt.Errorf("tcast: cast rows of %s: the %s part must hold %d bytes", c.dt, p.Name, len(p.Bytes))
		}
		copy(d.Bytes, p.Bytes)
	}
	t.Mask = w.Mask
	if w.Form == Virtual {
		if len(t.Values) != len(w.Values) {
			return fmt.Errorf("tcast: cast rows of %s: the tensor must hold %d values", c.dt, len(w.Values))
		}
		copy(t.Values, w.Values)
	}
	if deq == nil {
		return nil
	}
	v := w.Values
	if w.Form != Virtual {
		if v, err = Decompress(w); err != nil {
			return err
		}
	}
	copy(deq, v)
	return nil
}

// Finish completes t once every row is cast: it stores the second-level
// tensor scale (NVFP4). Without a kernel it does nothing (Cast stored all).
func (r *RowCaster) Finish(t *Tensor) error {
	if !r.NeedsAmax() {
		return nil
	}
	if r.tensorScale == nil {
		return fmt.Errorf("tcast: cast rows of %s: SetAmax was not called", r.c.dt)
	}
	if t == nil || t.TensorScale == nil || len(t.TensorScale.Bytes) != len(r.tensorScale.Bytes) {
		return fmt.Errorf("tcast: cast rows of %s: the tensor_scale part must hold %d bytes", r.c.dt, len(r.tensorScale.Bytes))
	}
	copy(t.TensorScale.Bytes, r.tensorScale.Bytes)
	return nil
}

// Amax gathers the largest magnitude of a tensor piece by piece, as a
// second-level tensor scale needs it: Add each piece (on any goroutine, each
// with its own Amax), Merge the partial ones in any order. The zero value is
// the amax of nothing. NaNs and infinities are left out, as Cast leaves them
// out of the tensor scale.
type Amax struct {
	bits   uint32  // the largest |x| as float32 bits: NaN and Inf above every finite value
	finite float32 // the largest finite |x|, found only when bits is not finite
	seen   bool
}

// Add takes the values x into the amax.
func (a *Amax) Add(x []float32) {
	if len(x) == 0 {
		return
	}
	b := kernels.AbsMaxBits(x)
	f := math.Float32frombits(b)
	if isNonFinite(f) {
		f = finiteAmax(x, nil)
	}
	a.Merge(Amax{bits: b, finite: f, seen: true})
}

// Merge takes the values another Amax gathered.
func (a *Amax) Merge(b Amax) {
	switch {
	case !b.seen:
	case !a.seen:
		*a = b
	default:
		a.bits, a.finite = max(a.bits, b.bits), max(a.finite, b.finite)
	}
}

// value is the amax Cast takes for the tensor scale: the largest magnitude,
// or the largest finite one when a NaN or an Inf is present.
func (a Amax) value() float32 {
	if v := math.Float32frombits(a.bits); !isNonFinite(v) {
		return v
	}
	return a.finite
}
