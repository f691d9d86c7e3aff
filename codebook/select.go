package codebook

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// Criterion scores how well q, the values of x as a table quantizes and
// decodes them, represent x; lower is better. It must not keep or modify
// its arguments.
type Criterion func(x, q []float32) float64

// SquaredError is the default criterion: the sum of (q − x)², in float64.
func SquaredError(x, q []float32) float64 {
	var s float64
	for i, v := range x {
		d := float64(q[i]) - float64(v)
		s += float64(d * d) // no fused multiply-add, so every path sums the same
	}
	return s
}

// SelectOptions control Codebook.Select. The zero value selects by squared
// error on unscaled values.
type SelectOptions struct {
	// Criterion replaces SquaredError.
	Criterion Criterion
	// Mul multiplies x before encoding (the reciprocal of the scale, as the
	// quantizers compute it); 0 means 1.
	Mul float32
	// Scale multiplies the entries when decoding (the block scale); 0 means
	// 1. The criterion sees the decoded values entry × Scale.
	Scale float32
	// Weights, when not nil, weight the squared error value by value: the
	// table chosen for a group minimises Σ w_i·(q_i − x_i)² (an importance
	// per value, such as an importance matrix's per column; a value of
	// weight 0 adds nothing, not even the NaN of 0·∞). It holds one
	// finite non-negative weight per value of x and cannot be combined with
	// a Criterion. A group whose weights are all equal (a run down a column
	// of a weight matrix, whose values share one column importance) is
	// chosen by its plain squared error, as without weights: a common
	// weight scales every table's error alike.
	Weights []float32
}

// Select quantizes x group by group: each run of group consecutive values
// (the last may be shorter) is encoded by every table, and the table whose
// decoded values score lowest by the criterion (the first on ties) is chosen.
// codes[i] receives the code of x[i] in its group's table and meta[g] the
// index of group g's table. codes must hold len(x) entries and meta
// ceil(len(x)/group). It returns an error wrapping ErrArg for a group below 1
// or short slices.
func (c *Codebook) Select(codes, meta []uint8, x []float32, group int, opts *SelectOptions) error {
	return c.NewSelector().Select(codes, meta, x, group, opts)
}

// Selector is Codebook.Select with scratch space kept from call to call, for
// callers that select block after block. It is not safe for concurrent use.
type Selector struct {
	c    *Codebook
	try  []uint8   // one table's codes of a group or chunk
	q    []float32 // their decoded values (Select with a Criterion)
	best []float64 // each group's lowest error so far (selectSSE)
	flat []bool    // whether each group's weights are all equal (selectWSSE)
}

// NewSelector returns a Selector of c.
func (c *Codebook) NewSelector() *Selector { return &Selector{c: c} }

// grow returns b resliced to n, reallocated if it is too short.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// Select is Codebook.Select.
func (s *Selector) Select(codes, meta []uint8, x []float32, group int, opts *SelectOptions) error {
	c := s.c
	var o SelectOptions
	if opts != nil {
		o = *opts
	}
	if group < 1 {
		return fmt.Errorf("codebook %s: select: %w: group %d", c.name, ErrArg, group)
	}
	ng := (len(x) + group - 1) / group
	if len(codes) < len(x) || len(meta) < ng {
		return fmt.Errorf("codebook %s: select: %w: %d codes and %d meta fields for %d values in groups of %d",
			c.name, ErrArg, len(codes), len(meta), len(x), group)
	}
	if o.Weights != nil {
		if o.Criterion != nil {
			return fmt.Errorf("codebook %s: select: %w: weights with a criterion (weights apply to the squared error)", c.name, ErrArg)
		}
		if err := checkWeights(c.name, o.Weights, len(x)); err != nil {
			return err
		}
	}
	crit := o.Criterion
	if crit == nil {
		crit = SquaredError
	}
	mul, scale := o.Mul, o.Scale
	if mul == 0 {
		mul = 1
	}
	if scale == 0 {
		scale = 1
	}
	if o.Weights != nil {
		s.selectWSSE(codes, meta, x, o.Weights[:len(x)], group, mul, scale)
		return nil
	}
	if o.Criterion == nil {
		s.selectSSE(codes, meta, x, group, mul, scale)
		return nil
	}
	try := grow(s.try, min(group, len(x)))
	q := grow(s.q, len(try))
	s.try, s.q = try, q
	for g := range ng {
		lo, hi := g*group, min((g+1)*group, len(x))
		xs, cs := x[lo:hi], codes[lo:hi]
		tc, tq := try[:hi-lo], q[:hi-lo]
		best := 0.0
		for k, t := range c.tables {
			t.EncodeScaled(tc, xs, mul)
			kernels.LUTDecodeScaled(tq, tc, t.lut, scale)
			sc := crit(xs, tq)
			if k == 0 || sc < best {
				best = sc
				copy(cs, tc)
				meta[g] = uint8(k)
			}
		}
	}
	return nil
}

// selectChunk is how many values selectSSE encodes per table at a time.
const selectChunk = 4096

// selectSSE is Select by SquaredError: through the signed plan where it
// applies; else every table encodes a chunk of whole groups in one pass,
// then each group's squared error is summed from the decoded entries.
func (s *Selector) selectSSE(codes, meta []uint8, x []float32, group int, mul, scale float32) {
	c := s.c
	if p := c.plan(); p != nil {
		block := (len(x) + group - 1) / group * group
		muls, scales := [1]float32{mul}, [1]float32{scale}
		p.sel.Select(codes, meta, x, group, max(block, group), muls[:], scales[:])
		return
	}
	chunk := max(group, selectChunk/group*group)
	try := grow(s.try, min(chunk, len(x)))
	best := grow(s.best, (len(try)+group-1)/group)
	s.try, s.best = try, best
	for lo := 0; lo < len(x); lo += chunk {
		hi := min(lo+chunk, len(x))
		xs, tc := x[lo:hi], try[:hi-lo]
		g0 := lo / group
		for k, t := range c.tables {
			t.EncodeScaled(tc, xs, mul)
			lut := t.lut
			for g := 0; g*group < len(xs); g++ {
				a, b := g*group, min((g+1)*group, len(xs))
				var e float64
				for i, v := range xs[a:b] {
					d := float64(lut[tc[a+i]]*scale) - float64(v)
					e += float64(d * d)
				}
				if k == 0 || e < best[g] {
					best[g] = e
					meta[g0+g] = uint8(k)
					copy(codes[lo+a:lo+b], tc[a:b])
				}
			}
		}
	}
}

// SelectBlocks is Select by squared error for a run of blocks of block
// values (a multiple of group; the last may be shorter), block b with the
// multiplier muls[b] and the scale scales[b] (SelectOptions' Mul and Scale,
// used as they are: 0 is 0). muls and scales must hold a number per block.
// It returns an error wrapping ErrArg for malformed arguments.
func (s *Selector) SelectBlocks(codes, meta []uint8, x []float32, group, block int, muls, scales []float32) error {
	c := s.c
	nb := 0
	if block > 0 {
		nb = (len(x) + block - 1) / block
	}
	if group < 1 || block < 1 || block%group != 0 || len(codes) < len(x) || len(meta) < (len(x)+group-1)/group ||
		len(muls) < nb || len(scales) < nb {
		return fmt.Errorf("codebook %s: select: %w: %d codes, %d meta fields, %d multipliers and %d scales for %d values in groups of %d, blocks of %d",
			c.name, ErrArg, len(codes), len(meta), len(muls), len(scales), len(x), group, block)
	}
	if p := c.plan(); p != nil {
		p.sel.Select(codes, meta, x, group, block, muls, scales)
		return nil
	}
	for b := range nb {
		lo, hi := b*block, min((b+1)*block, len(x))
		s.selectSSE(codes[lo:hi], meta[lo/group:], x[lo:hi], group, muls[b], scales[b])
	}
	return nil
}

// SelectBlocksWeighted is SelectBlocks with the squared error of value i
// weighted by w[i] (see SelectOptions.Weights): one finite non-negative
// weight per value of x. A nil w is SelectBlocks, through the same code. It
// returns an error wrapping ErrArg for malformed arguments or weights.
func (s *Selector) SelectBlocksWeighted(codes, meta []uint8, x, w []float32, group, block int, muls, scales []float32) error {
	if w == nil {
		return s.SelectBlocks(codes, meta, x, group, block, muls, scales)
	}
	c := s.c
	nb := 0
	if block > 0 {
		nb = (len(x) + block - 1) / block
	}
	if group < 1 || block < 1 || block%group != 0 || len(codes) < len(x) || len(meta) < (len(x)+group-1)/group ||
		len(muls) < nb || len(scales) < nb {
		return fmt.Errorf("codebook %s: select: %w: %d codes, %d meta fields, %d multipliers and %d scales for %d values in groups of %d, blocks of %d",
			c.name, ErrArg, len(codes), len(meta), len(muls), len(scales), len(x), group, block)
	}
	if err := checkWeights(c.name, w, len(x)); err != nil {
		return err
	}
	if p := c.plan(); p != nil {
		p.sel.SelectWeighted(codes, meta, x, w, group, block, muls, scales)
		return nil
	}
	for b := range nb {
		lo, hi := b*block, min((b+1)*block, len(x))
		s.selectWSSE(codes[lo:hi], meta[lo/group:], x[lo:hi], w[lo:hi], group, muls[b], scales[b])
	}
	return nil
}

// checkWeights checks that w holds n finite non-negative weights.
func checkWeights(name string, w []float32, n int) error {
	if len(w) < n {
		return fmt.Errorf("codebook %s: select: %w: %d weights for %d values", name, ErrArg, len(w), n)
	}
	for i, v := range w[:n] {
		if !(v >= 0) || math.IsInf(float64(v), 1) {
			return fmt.Errorf("codebook %s: select: %w: weight %d is %v, not a finite non-negative number", name, ErrArg, i, v)
		}
	}
	return nil
}

// selectWSSE is Select by the weighted squared error Σ w·(q − x)², w the
// weights of x's values: through the signed plan where it applies
// (kernels.LUTSelector.SelectWeighted, the same sums), else selectWSSEGo.
func (s *Selector) selectWSSE(codes, meta []uint8, x, w []float32, group int, mul, scale float32) {
	if p := s.c.plan(); p != nil {
		block := (len(x) + group - 1) / group * group
		muls, scales := [1]float32{mul}, [1]float32{scale}
		p.sel.SelectWeighted(codes, meta, x, w, group, max(block, group), muls[:], scales[:])
		return
	}
	s.selectWSSEGo(codes, meta, x, w, group, mul, scale)
}

// selectWSSEGo is selectWSSE for any tables: every table encodes a chunk
// of whole groups, then each group's error is summed in float64 in the
// order of the values, each product rounded (no fused multiply-add), a
// value of weight 0 adding nothing (not even the NaN of 0·∞). A group whose weights are all
// equal is scored by its plain squared error, exactly as selectSSE sums it,
// so it gets the table it gets without weights.
func (s *Selector) selectWSSEGo(codes, meta []uint8, x, w []float32, group int, mul, scale float32) {
	c := s.c
	chunk := max(group, selectChunk/group*group)
	try := grow(s.try, min(chunk, len(x)))
	best := grow(s.best, (len(try)+group-1)/group)
	flat := grow(s.flat, len(best))
	s.try, s.best, s.flat = try, best, flat
	for lo := 0; lo < len(x); lo += chunk {
		hi := min(lo+chunk, len(x))
		xs, ws, tc := x[lo:hi], w[lo:hi], try[:hi-lo]
		g0 := lo / group
		for g := 0; g*group < len(xs); g++ {
			gw := ws[g*group : min((g+1)*group, len(xs))]
			flat[g] = true
			for _, v := range gw[1:] {
				if v != gw[0] {
					flat[g] = false
					break
				}
			}
		}
		for k, t := range c.tables {
			t.EncodeScaled(tc, xs, mul)
			lut := t.lut
			for g := 0; g*group < len(xs); g++ {
				a, b := g*group, min((g+1)*group, len(xs))
				var e float64
				if flat[g] {
					for i, v := range xs[a:b] {
						d := float64(lut[tc[a+i]]*scale) - float64(v)
						e += float64(d * d)
					}
				} else {
					for i, v := range xs[a:b] {
						if ws[a+i] == 0 {
							continue // nothing, not even the NaN of 0·∞
						}
						d := float64(lut[tc[a+i]]*scale) - float64(v)
						e += float64(float64(ws[a+i]) * float64(d*d))
					}
				}
				if k == 0 || e < best[g] {
					best[g] = e
					meta[g0+g] = uint8(k)
					copy(codes[lo+a:lo+b], tc[a:b])
				}
			}
		}
	}
}

// Decode writes the values of codes, in groups of group with table meta[g]
// for group g, times scale, to dst (which must hold len(codes) values). A
// meta field naming no table or a code without an entry in its table is an
// error wrapping ErrMeta or ErrCode.
func (c *Codebook) Decode(dst []float32, codes, meta []uint8, group int, scale float32) error {
	if group < 1 || len(dst) < len(codes) || len(meta) < (len(codes)+group-1)/group {
		return fmt.Errorf("codebook %s: decode: %w: %d values, %d meta fields, group %d", c.name, ErrArg, len(codes), len(meta), group)
	}
	for g := 0; g*group < len(codes); g++ {
		lo, hi := g*group, min((g+1)*group, len(codes))
		k := int(meta[g])
		if k >= len(c.tables) {
			return &MetaError{Offset: g, Reason: fmt.Sprintf("table %d, the codebook has %d", k, len(c.tables)), Err: ErrMeta}
		}
		t := c.tables[k]
		if err := t.CheckCodes(codes[lo:hi]); err != nil {
			return fmt.Errorf("codebook %s: group %d: %w", c.name, g, err)
		}
		kernels.LUTDecodeScaled(dst[lo:hi], codes[lo:hi], t.lut, scale)
	}
	return nil
}

// DecodeBlocks is Decode for a run of blocks of block codes (a multiple of
// group; the last may be shorter), block b decoded with the scale
// scales[b], which must hold a scale per block. Errors are those of Decode,
// and ErrArg for malformed arguments.
func (c *Codebook) DecodeBlocks(dst []float32, codes, meta []uint8, group, block int, scales []float32) error {
	nb := 0
	if block > 0 {
		nb = (len(codes) + block - 1) / block
	}
	if group < 1 || block < 1 || block%group != 0 || len(dst) < len(codes) || len(meta) < (len(codes)+group-1)/group || len(scales) < nb {
		return fmt.Errorf("codebook %s: decode: %w: %d values, %d meta fields, %d scales, groups of %d, blocks of %d",
			c.name, ErrArg, len(codes), len(meta), len(scales), group, block)
	}
	ng := (len(codes) + group - 1) / group
	if c.luts != nil && validCodes(codes, c.minLen) && validMeta(meta[:ng], len(c.tables)) {
		kernels.LUTDecodeGroups(dst, codes, meta, group, block, 1<<c.indexBits, c.luts, scales)
		return nil
	}
	for b := range nb {
		lo, hi := b*block, min((b+1)*block, len(codes))
		if err := c.Decode(dst[lo:hi], codes[lo:hi], meta[lo/group:], group, scales[b]); err != nil {
			return fmt.Errorf("block %d: %w", b, err)
		}
	}
	return nil
}

// validCodes reports whether every code is below n (at least 1).
func validCodes(codes []uint8, n int) bool {
	if n >= maxEntries {
		return true
	}
	i := 0
	if n <= 128 {
		// Eight codes at a time: a byte b > m = n−1 (m < 128) carries into
		// bit 7 of b + 127 − m, or has bit 7 set itself.
		const ones, highs = 0x0101010101010101, 0x8080808080808080
		add := uint64(127-(n-1)) * ones
		var bad uint64
		for ; i+8 <= len(codes); i += 8 {
			v := binary.LittleEndian.Uint64(codes[i:])
			bad |= (v&^highs + add) | v
		}
		if bad&highs != 0 {
			return false
		}
	}
	for _, v := range codes[i:] {
		if int(v) >= n {
			return false
		}
	}
	return true
}

// validMeta reports whether every meta field names one of n tables.
func validMeta(meta []uint8, n int) bool { return validCodes(meta, n) }

// MetaLen returns the bytes that n meta fields of bits each take packed:
// ceil(n·bits/8).
func MetaLen(n, bits int) int { return kernels.PackedLen(n, uint(bits)) }

// PackMeta packs meta fields of bits each (1 to 8) into dst as an LSB-first
// bit stream (field i in stream bits i·bits …, stream bit 8k+j in bit j of
// dst[k]; unused high bits of the last byte zero). dst must hold
// MetaLen(len(meta), bits) bytes. A field that does not fit in bits is an
// error wrapping ErrMeta.
func PackMeta(dst []byte, meta []uint8, bits int) error {
	if bits < 1 || bits > 8 || len(dst) < MetaLen(len(meta), bits) {
		return fmt.Errorf("codebook: pack meta: %w: %d fields of %d bits into %d bytes", ErrArg, len(meta), bits, len(dst))
	}
	for i, m := range meta {
		if bits < 8 && m>>bits != 0 {
			return &MetaError{Offset: i, Reason: fmt.Sprintf("field %d does not fit in %d bits", m, bits), Err: ErrMeta}
		}
	}
	kernels.PackBits(dst, meta, uint(bits))
	return nil
}

// UnpackMeta reads len(dst) meta fields of bits each (1 to 8) from the
// LSB-first bit stream src, the inverse of PackMeta. src must be exactly
// MetaLen(len(dst), bits) bytes with its unused high bits zero, else the
// error wraps ErrMeta; every field then is below 2^bits, so it names a table
// of a codebook of 2^bits tables.
func UnpackMeta(dst []uint8, src []byte, bits int) error {
	if bits < 1 || bits > 8 {
		return fmt.Errorf("codebook: unpack meta: %w: %d bits per field", ErrArg, bits)
	}
	want := MetaLen(len(dst), bits)
	if len(src) != want {
		return &MetaError{Offset: min(len(src), want), Reason: fmt.Sprintf("%d bytes for %d fields of %d bits, want %d", len(src), len(dst), bits, want), Err: ErrMeta}
	}
	if used := len(dst) * bits % 8; used != 0 && src[want-1]>>used != 0 {
		return &MetaError{Offset: want - 1, Reason: fmt.Sprintf("padding bits set in the last byte %#02x", src[want-1]), Err: ErrMeta}
	}
	kernels.UnpackBits(dst, src, uint(bits))
	return nil
}
