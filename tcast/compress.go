package tcast

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/sparsity"
)

// putCode stores code as entry i of an unpacked part.
func putCode(p *Part, i int, code uint32) {
	switch p.StorageBytes() {
	case 1:
		p.Bytes[i] = uint8(code)
	case 2:
		binary.LittleEndian.PutUint16(p.Bytes[2*i:], uint16(code))
	default:
		binary.LittleEndian.PutUint32(p.Bytes[4*i:], code)
	}
}

// getCode reads entry i of an unpacked part.
func getCode(p *Part, i int) uint32 {
	switch p.StorageBytes() {
	case 1:
		return uint32(p.Bytes[i])
	case 2:
		return uint32(binary.LittleEndian.Uint16(p.Bytes[2*i:]))
	}
	return binary.LittleEndian.Uint32(p.Bytes[4*i:])
}

// codesToBytes returns the little-endian bytes of codes.
func codesToBytes[C kernels.Code](codes []C) []byte {
	switch cs := any(codes).(type) {
	case []uint8:
		return cs
	case []uint16:
		out := make([]byte, 2*len(cs))
		for i, c := range cs {
			binary.LittleEndian.PutUint16(out[2*i:], c)
		}
		return out
	case []uint32:
		out := make([]byte, 4*len(cs))
		for i, c := range cs {
			binary.LittleEndian.PutUint32(out[4*i:], c)
		}
		return out
	}
	panic("tcast: unreachable code type")
}

// readCodes fills dst from little-endian entries of width bytes.
func readCodes[C kernels.Code](dst []C, src []byte, width int) {
	switch width {
	case 1:
		for i := range dst {
			dst[i] = C(src[i])
		}
	case 2:
		for i := range dst {
			dst[i] = C(binary.LittleEndian.Uint16(src[2*i:]))
		}
	default:
		for i := range dst {
			dst[i] = C(binary.LittleEndian.Uint32(src[4*i:]))
		}
	}
}

// maskCodes clears the bits above width, which the decode tables do not cover.
func maskCodes[C kernels.Code](codes []C, width int) {
	if width >= 32 {
		return
	}
	m := C(uint32(1)<<width - 1)
	for i := range codes {
		codes[i] &= m
	}
}

// decoder turns stored scale codes back into block multipliers. Cast uses it for
// the virtual values and Decompress for the stored ones, so the two agree by
// construction.
type decoder struct {
	dt        *DataType
	tensorMul float32
	floatZero bool
	byteScale *[256]float32 // decoded scale bytes, for scale formats of up to 8 bits
	wideScale []float32     // decoded scale codes, for scale formats of 9 to 12 bits
	f32Scale  bool          // the scale format is float32: a code is its bits
}

func newDecoder(dt *DataType, t *Tensor) *decoder {
	d := &decoder{dt: dt, tensorMul: 1}
	if t.TensorScale != nil {
		d.tensorMul = dt.spec.TensorScale.Decode(getCode(t.TensorScale, 0))
	}
	if dt.spec != nil && dt.spec.Zero != nil {
		d.floatZero = dt.spec.Zero.Kind() == dtype.Float
	}
	if dt.spec != nil && dt.spec.Scale.Bits() <= 8 {
		d.byteScale = new([256]float32)
		for c := range d.byteScale {
			d.byteScale[c] = dt.spec.Scale.Decode(uint32(c))
		}
	} else if dt.spec != nil && dt.spec.Scale.Name() == "float32" {
		d.f32Scale = true
	} else if dt.spec != nil && dt.spec.Scale.Bits() <= 12 {
		d.wideScale = make([]float32, 1<<dt.spec.Scale.Bits())
		for c := range d.wideScale {
			d.wideScale[c] = dt.spec.Scale.Decode(uint32(c))
		}
	}
	return d
}

// scale returns the value of a block-scale code.
func (d *decoder) scale(code uint32) float32 {
	if d.byteScale != nil {
		return d.byteScale[code&0xff]
	}
	if code < uint32(len(d.wideScale)) {
		return d.wideScale[code]
	}
	if d.f32Scale {
		if code&0x7fffffff > 0x7f800000 {
			code |= 0x400000 // a NaN is quieted, as the format decodes it
		}
		return math.Float32frombits(code)
	}
	return d.dt.spec.Scale.Decode(code)
}

// scaleOf returns how block i decodes.
func (d *decoder) scaleOf(t *Tensor, i int) blockScale {
	spec := d.dt.spec
	if spec == nil {
		return blockScale{mul: 1}
	}
	s := d.scale(getCode(t.Scale, i))
	if spec.IsExponent() {
		return blockScale{mul: s}
	}
	bs := blockScale{mul: s * d.tensorMul}
	if spec.Zero != nil {
		bs.zero = spec.Zero.Decode(getCode(t.Zero, i))
		bs.floatZero = d.floatZero
	}
	return bs
}

// Compress returns t in Compressed form: every part of up to 8 bits bit-packed
// (see [Compressed]). A Compressed t is returned as is; a Virtual one is an
// error, as it holds no codes.
func Compress(t *Tensor) (*Tensor, error) {
	if err := Validate(t); err != nil {
		return nil, err
	}
	switch t.Form {
	case Compressed:
		return t, nil
	case Virtual:
		return nil, fmt.Errorf("tcast: compress %s: a virtual tensor holds no codes; cast with Form Actual", t.DataType.name)
	}
	if lay, _ := newLayout(t.Shape, t.Axis, t.DataType.spec); lay.sparse.M != 0 {
		// Validated: the mask is N:M. Only the kept codes are packed.
		kept := *t
		kept.Data = keptData(t.Data, t.Mask, lay)
		t = &kept
	}
	return withParts(t, Compressed, pack), nil
}

// keptData returns the unpacked data part of a sparse tensor reduced to the
// codes of its kept elements, in the values layout of package sparsity: the
// scaled axis shrinks by M/N, each group's kept codes in order.
func keptData(p *Part, m *mask.Mask, lay *layout) *Part {
	q := *p
	q.Shape = dataShape(lay, Compressed)
	sb := p.StorageBytes()
	q.Bytes = make([]byte, q.Len()*sb)
	_ = sparsity.ForEachKept(m, lay.axis, lay.sparse, func(d, k int) {
		copy(q.Bytes[k*sb:k*sb+sb], p.Bytes[d*sb:d*sb+sb])
	})
	return &q
}

// fullData is the inverse of keptData: the data part of every element, the
// element format's zero code where m is false.
func fullData(p *Part, m *mask.Mask, lay *layout, zc uint32) *Part {
	q := *p
	q.Shape = dataShape(lay, Actual)
	sb := p.StorageBytes()
	q.Bytes = make([]byte, q.Len()*sb)
	if zc != 0 {
		for i := range q.Len() {
			putCode(&q, i, zc)
		}
	}
	_ = sparsity.ForEachKept(m, lay.axis, lay.sparse, func(d, k int) {
		copy(q.Bytes[d*sb:d*sb+sb], p.Bytes[k*sb:k*sb+sb])
	})
	return &q
}

// withParts returns a copy of t in form, each part replaced by f of it.
func withParts(t *Tensor, form Form, f func(*Part) *Part) *Tensor {
	out := *t
	out.Form = form
	out.Data, out.Scale, out.Zero = f(t.Data), f(t.Scale), f(t.Zero)
	out.TensorScale, out.Meta = f(t.TensorScale), f(t.Meta)
	if t.Mask != nil {
		out.Mask = t.Mask.Clone()
	}
	return &out
}

func pack(p *Part) *Part {
	if p == nil {
		return nil
	}
	q := *p
	q.Shape = slices.Clone(p.Shape)
	if p.Bits <= 8 {
		q.Packed = true
		q.Bytes = make([]byte, kernels.PackedLen(len(p.Bytes), uint(p.Bits)))
		kernels.PackBits(q.Bytes, p.Bytes, uint(p.Bits))
	} else {
		q.Bytes = slices.Clone(p.Bytes)
	}
	return &q
}

// Expand returns t in Actual form, unpacking a Compressed tensor. An Actual t is
// returned as is; a Virtual one is an error.
func Expand(t *Tensor) (*Tensor, error) {
	if err := Validate(t); err != nil {
		return nil, err
	}
	switch t.Form {
	case Actual:
		return t, nil
	case Virtual:
		return nil, fmt.Errorf("tcast: expand %s: a virtual tensor holds no codes", t.DataType.name)
	}
	return expand(t), nil
}

// expand is Expand of a validated Compressed tensor.
func expand(t *Tensor) *Tensor {
	out := withParts(t, Actual, unpack)
	if lay, _ := newLayout(t.Shape, t.Axis, t.DataType.spec); lay.sparse.M != 0 {
		out.Data = fullData(out.Data, t.Mask, lay, t.DataType.elem.Encode(0))
	}
	return out
}

func unpack(p *Part) *Part {
	if p == nil {
		return nil
	}
	q := *p
	q.Shape = slices.Clone(p.Shape)
	if p.Packed {
		q.Packed = false
		q.Bytes = make([]byte, p.Len())
		kernels.UnpackBits(q.Bytes, p.Bytes, uint(p.Bits))
	}
	return &q
}

// Validate checks that t is consistent: its datatype, shape and axis give the
// part shapes and widths it holds, and every part has exactly the bytes its shape
// and form call for. Decompress, Compress and Expand call it, so arbitrary input
// gives an error, never a panic or an allocation larger than the input.
func Validate(t *Tensor) error {
	if t == nil || t.DataType == nil {
		return fmt.Errorf("tcast: tensor without a datatype")
	}
	if t.Form > Compressed {
		return invalid(t, "unknown form %d", t.Form)
	}
	lay, err := newLayoutFor(t.Shape, t.Axis, t.DataType)
	if err != nil {
		return invalid(t, "%v", err)
	}
	if t.Axis < 0 || (len(t.Shape) > 0 && t.Axis >= len(t.Shape)) {
		return invalid(t, "axis %d out of range", t.Axis)
	}
	if err := validateMask(t, lay); err != nil {
		return err
	}
	if t.Form == Virtual {
		if len(t.Values) != lay.n {
			return invalid(t, "%d values for %d elements", len(t.Values), lay.n)
		}
		return nil
	}
	seen := map[string]bool{}
	for _, w := range wantParts(t, lay) {
		seen[w.name] = true
		if err := validatePart(t, w); err != nil {
			return err
		}
	}
	for _, np := range []NamedPart{{"scale", t.Scale}, {"zero", t.Zero}, {"tensor_scale", t.TensorScale}, {"meta", t.Meta}} {
		if np.Part != nil && !seen[np.Name] {
			return invalid(t, "unexpected %s part: datatype %s has none", np.Name, t.DataType.Code())
		}
	}
	return nil
}

// invalid is Validate's error about t.
func invalid(t *Tensor, format string, args ...any) error {
	return fmt.Errorf("tcast: %s tensor %v: %s", t.DataType, t.Shape, fmt.Sprintf(format, args...))
}

// validateMask checks t's mask: of the tensor's shape, and there and of the
// datatype's N:M pattern for a sparse datatype.
func validateMask(t *Tensor, lay *layout) error {
	if t.Mask != nil && !slices.Equal(t.Mask.Shape(), lay.shape) {
		return invalid(t, "mask has shape %v, want %v", t.Mask.Shape(), lay.shape)
	}
	if lay.sparse.M != 0 {
		if t.Mask == nil {
			return invalid(t, "a %v sparse datatype needs its mask", lay.sparse)
		}
		if err := sparsity.Check(t.Mask, lay.axis, lay.sparse); err != nil {
			return invalid(t, "%v", err)
		}
	}
	return nil
}

// partWant is a part an Actual or Compressed tensor must hold: its format
// (nil for meta), entry width and shape.
type partWant struct {
	name  string
	p     *Part
	f     *dtype.Format
	bits  int
	shape []int
}

// wantParts returns the parts t's datatype calls for, data first.
func wantParts(t *Tensor, lay *layout) []partWant {
	dt := t.DataType
	wants := []partWant{{"data", t.Data, dt.elem, dt.elem.Bits(), dataShape(lay, t.Form)}}
	if spec := dt.spec; spec != nil {
		sc, z, ts := spec.Scale, spec.Zero, spec.TensorScale
		wants = append(wants, partWant{"scale", t.Scale, sc, sc.Bits(), lay.scaleShape})
		if z != nil {
			wants = append(wants, partWant{"zero", t.Zero, z, z.Bits(), lay.scaleShape})
		}
		if ts != nil {
			wants = append(wants, partWant{"tensor_scale", t.TensorScale, ts, ts.Bits(), []int{1}})
		}
		if lay.sub != 0 {
			wants = append(wants, partWant{"meta", t.Meta, nil, lay.offBits, lay.metaShape})
		}
	}
	return wants
}

// validatePart checks that t holds part w, of its format, width and shape,
// packed as t's form calls for, with exactly the bytes those call for.
func validatePart(t *Tensor, w partWant) error {
	p := w.p
	if p == nil {
		return invalid(t, "missing %s part", w.name)
	}
	switch {
	case p.Format != w.f:
		return invalid(t, "%s part has format %v, want %v", w.name, p.Format, w.f)
	case p.Bits != w.bits:
		return invalid(t, "%s part has %d-bit entries, want %d", w.name, p.Bits, w.bits)
	case !slices.Equal(p.Shape, w.shape):
		return invalid(t, "%s part has shape %v, want %v", w.name, p.Shape, w.shape)
	case p.Packed != (t.Form == Compressed && w.bits <= 8):
		return invalid(t, "%s part packed=%v does not match the %s form", w.name, p.Packed, t.Form)
	}
	nb, err := p.wantBytes()
	if err != nil {
		return invalid(t, "%s part: %v", w.name, err)
	}
	if len(p.Bytes) != nb {
		return invalid(t, "%s part holds %d bytes, want %d (%d %s entries)", w.name, len(p.Bytes), nb, p.Len(), p.Storage())
	}
	return nil
}

// Decompress returns the float32 values of t (the "upcast" of TensorCast): the
// values themselves for a Virtual tensor, the dequantized codes otherwise. For
// any tensor Cast produced, Decompress(Compress(Cast(x, Actual))) equals the
// Values of Cast(x, Virtual) bit for bit.
func Decompress(t *Tensor) ([]float32, error) {
	return decompress(t, true)
}

// decompress is Decompress, through the one-pass kernels where they apply
// when useKernels is set.
func decompress(t *Tensor, useKernels bool) ([]float32, error) {
	if err := Validate(t); err != nil {
		return nil, err
	}
	if t.Form == Virtual {
		return slices.Clone(t.Values), nil
	}
	lay, _ := newLayoutFor(t.Shape, t.Axis, t.DataType)
	if t.DataType.cb != nil {
		return decompressCodebook(t, lay)
	}
	if lay.sparse.M != 0 {
		// Decode every element, then zero the pruned ones: a pruned element
		// is +0 whatever its block's scale.
		a := t
		if t.Form == Compressed {
			a = expand(t)
		}
		out := decodeCodes(a, lay)
		// Apply cannot fail: Validate checked the mask's shape.
		_ = t.Mask.Apply(out, t.Mask.Shape())
		return out, nil
	}
	if useKernels {
		if out, ok := decompressKernel(t, lay); ok {
			return out, nil
		}
	}
	if out, ok := decompressPacked(t, lay); ok {
		return out, nil
	}
	// Validated above: Expand cannot fail.
	return decodeCodes(withParts(t, Actual, unpack), lay), nil
}

// decodeCodes dequantizes the codes of a validated Actual tensor.
func decodeCodes(a *Tensor, lay *layout) []float32 {
	out := make([]float32, lay.n)
	switch a.Data.StorageBytes() {
	case 1:
		decodeAll(a, lay, a.Data.Bytes, out)
	case 2:
		codes := make([]uint16, lay.n)
		readCodes(codes, a.Data.Bytes, 2)
		maskCodes(codes, a.Data.Bits)
		decodeAll(a, lay, codes, out)
	default:
		codes := make([]uint32, lay.n)
		readCodes(codes, a.Data.Bytes, 4)
		maskCodes(codes, a.Data.Bits)
		decodeAll(a, lay, codes, out)
	}
	return out
}

// decompressPacked is Decompress for the common packed case, decoding the
// data bytes where they are instead of unpacking them first: 4- or 8-bit
// codes, blocks that are runs of consecutive elements starting on a byte, one
// multiplier per block. It reports false when t is not such a tensor.
func decompressPacked(t *Tensor, lay *layout) ([]float32, bool) {
	d, spec := t.Data, t.DataType.spec
	if t.Form != Compressed || !d.Packed || (d.Bits != 4 && d.Bits != 8) || !lay.contiguous() || lay.sub != 0 ||
		(spec != nil && spec.Zero != nil) || (lay.blocks > 1 && lay.tile1%2 != 0) {
		return nil, false
	}
	// The small parts (scales) are unpacked; the data stays packed.
	a := withParts(t, Actual, func(p *Part) *Part {
		if p == d {
			return p
		}
		return unpack(p)
	})
	dec := newDecoder(t.DataType, a)
	out := make([]float32, lay.n)
	elem := t.DataType.elem
	if d.Bits == 8 {
		dtype.DecodeSlice(elem, out, d.Bytes[:lay.n])
	} else {
		pairs := pairTable(elem)
		for i, b := range d.Bytes[:lay.n/2] {
			p := &pairs[b]
			out[2*i], out[2*i+1] = p[0], p[1]
		}
		if lay.n%2 == 1 {
			out[lay.n-1] = pairs[d.Bytes[lay.n/2]&0x0f][0]
		}
	}
	lay.forEach(func(b block) {
		if m := dec.scaleOf(a, b.scaleIndex).mul; m != 1 {
			seg := out[b.base : b.base+b.len1]
			for i, e := range seg {
				seg[i] = e * m
			}
		}
	})
	return out, true
}

// pairTable returns, for a 4-bit format, the two values each byte holds (low
// nibble first), built from the format's decode.
func pairTable(f *dtype.Format) *[256][2]float32 {
	var t [256][2]float32
	for b := range 256 {
		t[b] = [2]float32{f.Decode(uint32(b & 0x0f)), f.Decode(uint32(b >> 4))}
	}
	return &t
}

// Decompress16 returns the values of t as float16 or bfloat16 codes (to must be
// one of those formats), rounded to nearest even from the float32 values.
func Decompress16(t *Tensor, to *dtype.Format) ([]uint16, error) {
	if to == nil || to.Bits() != 16 || to.Kind() != dtype.Float {
		return nil, fmt.Errorf("tcast: decompress to %v: want float16 or bfloat16", to)
	}
	v, err := Decompress(t)
	if err != nil {
		return nil, err
	}
	out := make([]uint16, len(v))
	dtype.EncodeSlice(to, out, v, dtype.Options{Overflow: dtype.OverflowIEEE})
	return out, nil
}

// decodeAll dequantizes the codes of an Actual tensor block by block.
func decodeAll[C kernels.Code](t *Tensor, lay *layout, codes []C, out []float32) {
	dec := newDecoder(t.DataType, t)
	maxBlock := lay.maxBlock()
	cbuf := make([]C, maxBlock)
	vbuf := make([]float32, maxBlock)
	var off []uint8
	if lay.sub != 0 {
		off = make([]uint8, ceilDiv(maxBlock, lay.sub))
	}
	if lay.contiguous() && lay.sub == 0 && (t.DataType.spec == nil || t.DataType.spec.Zero == nil) {
		// One table lookup pass over all codes, then one multiply per block.
		dtype.DecodeSlice(t.DataType.elem, out, codes)
		lay.forEach(func(b block) {
			if m := dec.scaleOf(t, b.scaleIndex).mul; m != 1 {
				seg := out[b.base : b.base+b.len1]
				for i, e := range seg {
					seg[i] = e * m
				}
			}
		})
		return
	}
	lay.forEach(func(b block) {
		n := b.len0 * b.len1
		cs, vs := cbuf[:n], vbuf[:n]
		direct := b.direct()
		if direct {
			cs, vs = codes[b.base:b.base+n], out[b.base:b.base+n]
		} else {
			gather(cs, codes, b)
		}
		var o []uint8
		if off != nil {
			o = off[:ceilDiv(n, lay.sub)]
			for q := range o {
				o[q] = t.Meta.Bytes[lay.metaIndex(b, q)]
			}
		}
		dequantBlock(t.DataType.elem, vs, cs, dec.scaleOf(t, b.scaleIndex), o, lay.sub)
		if !direct {
			scatter(out, vs, b)
		}
	})
}
