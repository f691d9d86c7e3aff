package tcast

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tensorcast-go/tensorcast/codebook"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/scale"
)

// Codebook datatypes (docs/CODEBOOK.md §7): every block gets a scale as the
// other datatypes do, measured against the codebook's compute format (or its
// largest entry); every subtile (or tile) then picks the table that
// represents it best, and its elements store indices into that table.

// castCodebook is Cast for a codebook datatype: row by row (castCodebookRows)
// where the blocks are runs along the last axis and stream is set, else
// block by block (the tests compare both paths).
func castCodebook(x []float32, shape []int, dt *DataType, o Options, stream bool) (*Tensor, error) {
	c, err := newCaster(x, shape, dt, o)
	if err != nil {
		return nil, err
	}
	cb := dt.cb
	if comp := cb.Compute(); comp != nil {
		c.sel = scale.NewSelector(comp, o.Mode)
	}
	lay := c.lay
	if c.imp, err = codebookImportance(o.Importance, lay, cb); err != nil {
		return nil, fmt.Errorf("tcast: cast to %s: %w", dt, err)
	}
	t := c.newTensor(Actual)
	c.dec = newDecoder(dt, t)
	codes := make([]uint8, lay.n)
	var deq []float32
	if o.Form == Virtual {
		deq = make([]float32, lay.n)
	}
	if stream && lay.contiguous() && lay.axis == len(lay.shape)-1 && c.spec != nil {
		err = c.castCodebookRows(x, codes, deq, t)
	} else {
		err = c.castCodebookBlocks(x, codes, deq, t)
	}
	if err != nil {
		return nil, fmt.Errorf("tcast: cast to %s: %w", dt, err)
	}
	t.Data.Bytes = codes
	switch o.Form {
	case Virtual:
		t.Values, t.Data = deq, nil
	case Compressed:
		return Compress(t)
	}
	return t, nil
}

// castCodebookRows casts a codebook datatype whose blocks are runs along the
// last axis a row at a time: the row's block amaxes in one call, every
// block's scale, then the row's codes and meta in one selection (or
// encoding, for one table) with a multiplier and a scale per block, and its
// dequantized values in one decoding. It writes what castCodebookBlocks
// writes.
func (c *caster) castCodebookRows(x []float32, codes []uint8, deq []float32, t *Tensor) error {
	lay, cb := c.lay, c.dt.cb
	rowLen := lay.shape[lay.axis]
	if lay.n == 0 || rowLen == 0 {
		return nil
	}
	tile := lay.tile1
	group := tile
	if lay.sub != 0 {
		group = lay.sub
	}
	perRow := ceilDiv(rowLen, tile)   // blocks
	metaRow := ceilDiv(rowLen, group) // meta fields (or groups)
	amax := make([]uint32, perRow)
	muls, scales := make([]float32, perRow), make([]float32, perRow)
	fills := make([]bool, perRow)
	meta := make([]uint8, metaRow)
	var vbuf []float32
	if c.keep != nil {
		vbuf = make([]float32, rowLen)
	}
	sel := cb.NewSelector()
	zero := cb.Table(0).ZeroCode()
	for r := 0; r*rowLen < lay.n; r++ {
		lo := r * rowLen
		v := x[lo : lo+rowLen]
		if c.keep != nil {
			c.zeroDropped(vbuf, v, lo) // dropped elements are stored as 0
			v = vbuf
		}
		kernels.AbsMaxBlocks(amax, v, tile)
		anyFill := false
		for j := range perRow {
			b := v[j*tile : min((j+1)*tile, rowLen)]
			muls[j], scales[j], fills[j] = c.codebookScaleOf(math.Float32frombits(amax[j]), b, t, r*perRow+j)
			anyFill = anyFill || fills[j]
		}
		cs := codes[lo : lo+rowLen]
		if cb.Len() == 1 {
			if err := cb.Table(0).EncodeBlocks(cs, v, tile, muls); err != nil {
				return err
			}
		} else if err := sel.SelectBlocksWeighted(cs, meta, v, c.imp.row(r), group, tile, muls, scales); err != nil {
			return err
		}
		if anyFill {
			for j, f := range fills {
				if !f {
					continue
				}
				a, b := j*tile, min((j+1)*tile, rowLen)
				for i := range cs[a:b] {
					cs[a+i] = zero
				}
				clear(meta[a/group : ceilDiv(b, group)])
			}
		}
		if lay.sub != 0 {
			copy(t.Meta.Bytes[r*metaRow:], meta)
		}
		if deq != nil {
			if err := cb.DecodeBlocks(deq[lo:lo+rowLen], cs, meta, group, tile, scales); err != nil {
				return err
			}
		}
	}
	return nil
}

// castCodebookBlocks casts a codebook datatype block by block.
func (c *caster) castCodebookBlocks(x []float32, codes []uint8, deq []float32, t *Tensor) error {
	k := newCodebookBlocks(c)
	c.lay.forEach(func(b block) { k.cast(x, codes, deq, t, b) })
	return k.err
}

// codebookBlocks is castCodebookBlocks's scratch space, of the largest
// block, and the first error of a table selection.
type codebookBlocks struct {
	c       *caster
	cb      *codebook.Codebook
	v, out  []float32 // a block's values and its dequantized values
	cs      []uint8   // its codes
	keep    []bool    // its keep mask, with one
	metas   []uint8   // its meta fields: at most one per element
	weights []float32 // its importance, with one
	sel     *codebook.Selector
	sopts   *codebook.SelectOptions
	err     error
}

func newCodebookBlocks(c *caster) *codebookBlocks {
	maxBlock := c.lay.maxBlock()
	k := &codebookBlocks{
		c:     c,
		cb:    c.dt.cb,
		v:     make([]float32, maxBlock),
		cs:    make([]uint8, maxBlock),
		out:   make([]float32, maxBlock),
		metas: make([]uint8, maxBlock),
		sel:   c.dt.cb.NewSelector(),
		sopts: &codebook.SelectOptions{},
	}
	if c.keep != nil {
		k.keep = make([]bool, maxBlock)
	}
	if c.imp.v != nil {
		k.weights = make([]float32, maxBlock)
	}
	return k
}

// cast casts block b of x into codes, t's meta and, if deq is not nil, its
// dequantized values. Dropped elements are stored as 0.
func (k *codebookBlocks) cast(x []float32, codes []uint8, deq []float32, t *Tensor, b block) {
	c, lay := k.c, k.c.lay
	n := b.len0 * b.len1
	v, cs := k.v[:n], k.cs[:n]
	if b.direct() && c.keep == nil {
		v = x[b.base : b.base+n]
	} else {
		gather(v, x, b)
	}
	if c.keep != nil {
		keep := k.keep[:n]
		gather(keep, c.keep, b)
		for i, kept := range keep {
			if !kept {
				v[i] = 0
			}
		}
	}
	group := n
	if lay.sub != 0 {
		group = lay.sub
	}
	metas := k.metas[:ceilDiv(n, group)]
	clear(metas)
	scl := k.encode(cs, metas, v, group, t, b)
	scatter(codes, cs, b)
	if lay.sub != 0 {
		for q, m := range metas {
			t.Meta.Bytes[lay.metaIndex(b, q)] = m
		}
	}
	if deq != nil {
		out := k.out[:n]
		for q, m := range metas {
			lo, hi := q*group, min((q+1)*group, n)
			kernels.LUTDecodeScaled(out[lo:hi], cs[lo:hi], k.cb.Table(int(m)).LUT(), scl)
		}
		scatter(deq, out, b)
	}
}

// encode chooses the scale of block b of values v, encodes them into cs
// and metas (each meta field for group elements) and returns the scale.
func (k *codebookBlocks) encode(cs, metas []uint8, v []float32, group int, t *Tensor,
	b block) float32 {
	mul, scl, fill := k.c.codebookScale(v, t, b)
	switch {
	case fill:
		for i := range cs {
			cs[i] = k.cb.Table(0).ZeroCode()
		}
	case k.cb.Len() == 1:
		k.cb.Table(0).EncodeScaled(cs, v, mul)
	default:
		k.sopts.Mul, k.sopts.Scale = mul, scl
		if k.weights != nil {
			k.sopts.Weights = k.weights[:len(v)]
			k.c.imp.gather(k.sopts.Weights, b)
		}
		if err := k.sel.Select(cs, metas, v, group, k.sopts); err != nil && k.err == nil {
			k.err = err
		}
	}
	return scl
}

// cbImportance is Options.Importance checked for a codebook cast: vectors
// of cols values (one per column), vector k for the rows [k·rowsPer,
// (k+1)·rowsPer) of the tensor seen as rows of its last axis. The zero
// value (v nil) weighs nothing.
type cbImportance struct {
	v       []float32
	cols    int
	rowsPer int
}

// codebookImportance checks imp for a cast of the given layout to codebook
// cb and returns what the selection weighs, nothing when no search uses it:
// a single table (nothing to choose), or subtiles that run along an axis
// other than the last, whose values share one column and so one weight,
// which scales every table's error alike and cannot change the choice.
func codebookImportance(imp []float32, lay *layout, cb *codebook.Codebook) (cbImportance, error) {
	if cb.Len() == 1 {
		return cbImportance{}, nil
	}
	im, err := checkImportance(imp, lay)
	if err != nil || im.v == nil {
		return im, err
	}
	if lay.axis != len(lay.shape)-1 && lay.tile1 != lay.n {
		return cbImportance{}, nil // 1-D tiles down a column
	}
	return im, nil
}

// checkImportance checks imp for a cast of the given layout: one
// non-negative finite weight per column of each matrix, the vectors
// dividing the rows evenly. It returns the zero cbImportance for a nil imp
// or an empty tensor.
func checkImportance(imp []float32, lay *layout) (cbImportance, error) {
	if imp == nil || lay.n == 0 {
		return cbImportance{}, nil
	}
	cols := lay.shape[len(lay.shape)-1]
	rows := lay.n / cols
	if len(imp) == 0 || len(imp)%cols != 0 || rows%(len(imp)/cols) != 0 {
		return cbImportance{}, fmt.Errorf("an importance vector of %d values for shape %v: want %d per column of each matrix (a multiple of %d dividing the %d rows)",
			len(imp), lay.input, cols, cols, rows)
	}
	for i, w := range imp {
		if !(w >= 0) || math.IsInf(float64(w), 1) {
			return cbImportance{}, fmt.Errorf("importance value %d is %v, not a finite non-negative number", i, w)
		}
	}
	return cbImportance{v: imp, cols: cols, rowsPer: rows / (len(imp) / cols)}, nil
}

// row returns the weights of row r's values, nil without importance.
func (im cbImportance) row(r int) []float32 {
	if im.v == nil {
		return nil
	}
	k := r / im.rowsPer
	return im.v[k*im.cols : (k+1)*im.cols]
}

// gather writes the weights of block b's values to dst, in gather's order.
func (im cbImportance) gather(dst []float32, b block) {
	k := 0
	for i := 0; i < b.len0; i++ {
		o := b.base + i*b.stride0
		for j := 0; j < b.len1; j++ {
			e := o + j*b.stride1
			r := e / im.cols
			dst[k] = im.v[r/im.rowsPer*im.cols+e%im.cols]
			k++
		}
	}
}

// codebookScale chooses the scale of one block of a codebook datatype whose
// values are v, stores its code, and returns the multiplier applied before
// encoding, the scale the entries decode with, and whether the block is
// filled with the zero code instead (a NaN scale, or a float scale that
// rounded to zero).
func (c *caster) codebookScale(v []float32, t *Tensor, b block) (mul, scl float32, fill bool) {
	if c.spec == nil {
		return 1, 1, false
	}
	return c.codebookScaleOf(c.amax(v, nil), v, t, b.scaleIndex)
}

// codebookScaleOf is codebookScale of the block of scale index si whose
// values v have the largest magnitude amax.
func (c *caster) codebookScaleOf(amax float32, v []float32, t *Tensor, si int) (mul, scl float32, fill bool) {
	nan := func() (float32, float32, bool) {
		code, _ := c.sf.NaN()
		putCode(t.Scale, si, code)
		return 0, c.dec.scale(code), true
	}
	if c.spec.IsExponent() {
		code, ok := c.exponentCode(amax)
		if !ok {
			return nan()
		}
		putCode(t.Scale, si, code)
		s := c.dec.scale(code)
		return 1 / s, s, false // a power of two: exact
	}
	if isNonFinite(amax) {
		if c.sf.HasNaN() {
			return nan()
		}
		amax = finiteAmax(v, nil)
	}
	code := c.sf.Encode(1)
	comp := c.dt.cb.Compute()
	switch {
	case amax > 0 && c.opts.PowerOfTwoScales && comp != nil:
		code = c.sf.Encode(float32(math.Ldexp(1, c.sel.Exponent(amax))))
	case amax > 0:
		if c.cbRef == 0 {
			c.cbRef = c.dt.cb.MaxAbs()
			if comp != nil {
				c.cbRef = comp.MaxFinite()
			}
		}
		code = c.sf.Encode(amax / c.cbRef)
	}
	putCode(t.Scale, si, code)
	s := c.dec.scale(code)
	if s == 0 || isNonFinite(s) {
		return 0, s, true
	}
	return 1 / s, s, false // the reciprocal in float32, as bitsandbytes multiplies
}

// decompressCodebook is Decompress for a validated Actual or Compressed
// tensor of a codebook datatype. Codes and meta fields are read within their
// widths; a code beyond its table's entries is an error.
func decompressCodebook(t *Tensor, lay *layout) ([]float32, error) {
	a := withParts(t, Actual, unpack)
	if lay.contiguous() && lay.axis == len(lay.shape)-1 && t.DataType.spec != nil {
		if out, ok := decompressCodebookRows(a, lay); ok {
			return out, nil
		}
	}
	return decompressCodebookBlocks(t, a, lay)
}

// decompressCodebookRows is decompressCodebook a row at a time for blocks
// along the last axis: the row's scales, then one decoding with a scale per
// block and a table per meta field. It returns false when a code or meta
// field is out of range, which the block-by-block path then reports.
func decompressCodebookRows(a *Tensor, lay *layout) ([]float32, bool) {
	dt := a.DataType
	cb := dt.cb
	dec := newDecoder(dt, a)
	out := make([]float32, lay.n)
	rowLen := lay.shape[lay.axis]
	if lay.n == 0 || rowLen == 0 {
		return out, true
	}
	tile := lay.tile1
	group := tile
	if lay.sub != 0 {
		group = lay.sub
	}
	perRow, metaRow := ceilDiv(rowLen, tile), ceilDiv(rowLen, group)
	scales := make([]float32, perRow)
	codes := make([]uint8, rowLen)
	meta := make([]uint8, metaRow)
	codeMask := uint8(1<<cb.IndexBits() - 1)
	metaMask := uint8(1<<cb.MetaBits() - 1)
	for r := 0; r*rowLen < lay.n; r++ {
		for j := range scales {
			scales[j] = dec.scaleOf(a, r*perRow+j).mul
		}
		maskBytes(codes, a.Data.Bytes[r*rowLen:(r+1)*rowLen], codeMask)
		if lay.sub != 0 {
			for i, m := range a.Meta.Bytes[r*metaRow : (r+1)*metaRow] {
				meta[i] = m & metaMask
			}
		}
		if err := cb.DecodeBlocks(out[r*rowLen:(r+1)*rowLen], codes, meta, group, tile, scales); err != nil {
			return nil, false
		}
	}
	return out, true
}

// decompressCodebookBlocks is decompressCodebook block by block (a is t in
// Actual form).
func decompressCodebookBlocks(t *Tensor, a *Tensor, lay *layout) ([]float32, error) {
	dt := t.DataType
	cb := dt.cb
	dec := newDecoder(dt, a)
	out := make([]float32, lay.n)
	maxBlock := lay.maxBlock()
	cbuf := make([]uint8, maxBlock)
	vbuf := make([]float32, maxBlock)
	codeMask := uint8(1<<cb.IndexBits() - 1)
	metaMask := uint8(1<<cb.MetaBits() - 1)
	var derr error
	lay.forEach(func(b block) {
		if derr != nil {
			return
		}
		n := b.len0 * b.len1
		cs, vs := cbuf[:n], vbuf[:n]
		gather(cs, a.Data.Bytes, b)
		maskBytes(cs, cs, codeMask)
		group := n
		if lay.sub != 0 {
			group = lay.sub
		}
		s := dec.scaleOf(a, b.scaleIndex).mul
		for q := 0; q*group < n; q++ {
			lo, hi := q*group, min((q+1)*group, n)
			m := uint8(0)
			if lay.sub != 0 {
				m = a.Meta.Bytes[lay.metaIndex(b, q)] & metaMask
			}
			tb := cb.Table(int(m))
			if err := tb.CheckCodes(cs[lo:hi]); err != nil {
				derr = fmt.Errorf("tcast: %s tensor %v: block %d: %w", dt, t.Shape, b.scaleIndex, err)
				return
			}
			kernels.LUTDecodeScaled(vs[lo:hi], cs[lo:hi], tb.LUT(), s)
		}
		scatter(out, vs, b)
	})
	if derr != nil {
		return nil, derr
	}
	return out, nil
}

// maskBytes sets dst[i] to src[i] & m, eight bytes at a time.
func maskBytes(dst, src []byte, m byte) {
	src = src[:len(dst)]
	mm := uint64(m) * 0x0101010101010101
	i := 0
	for ; i+8 <= len(dst); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(src[i:])&mm)
	}
	for ; i < len(dst); i++ {
		dst[i] = src[i] & m
	}
}

// UsesImportance reports whether casts to dt weigh Options.Importance: a
// codebook datatype of several tables, whose subtiles each take the table
// of least importance-weighted squared error (when they run along the last
// axis). Datatypes that take their scales by rule, and codebook datatypes
// of a single table, have nothing to search and ignore it.
func (dt *DataType) UsesImportance() bool { return dt != nil && dt.cb != nil && dt.cb.Len() > 1 }
