package tcast

import (
	"slices"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/scale"
)

// The one-pass kernels of the hot scaled datatypes (the kernels' codec table,
// kernels.LookupScaled) stand in for the block-by-block path when a cast or a decompression
// is exactly what they compute: the datatype is MXFP4, MXFP6 (E2M3, E3M2),
// MXFP8 (E4M3, E5M2), MXINT8 or NVFP4, its blocks run along the last axis and
// every row is a whole number of blocks, and the options are the defaults
// those kernels implement (floor scales, round to nearest even, symmetric
// integers, float scales that are not forced to powers of two), with or
// without a keep mask. A scale-searching cast (Options.ScaleSearch) of a
// kind that has a fused search kernel (searchKernel: MXFP4, NVFP4 and MXFP8,
// whose codec table entries have a Search) takes it when it
// weighs no importance and keeps every element. The results are the same
// bits either way; the tests compare the two paths.

// kernelKind names the datatypes the kernels handle; kernelTable holds each
// one's kernels.
type kernelKind uint8

const (
	noKernel kernelKind = iota
	kernelMXFP4
	kernelMXFP8
	kernelMXINT8
	kernelNVFP4
	kernelMXFP8E5M2
	kernelMXFP6E2M3
	kernelMXFP6E3M2
	kernelIntSym  // int8/int4 groups, float scales (kernelgroups.go)
	kernelIntAsym // uint8/uint4 groups with zero points (kernelgroups.go)
	kernelFP8     // e4m3fn with float32 scales (kernelgroups.go)
)

// The formats the kernels are written for; dtype interns formats by canonical
// name, so a datatype's parts compare equal to these pointers.
var (
	fmtE2M1    = dtype.MustParse("e2m1")
	fmtE4M3FN  = dtype.MustParse("e4m3fn")
	fmtE5M2    = dtype.MustParse("e5m2")
	fmtE2M3    = dtype.MustParse("e2m3")
	fmtE3M2    = dtype.MustParse("e3m2")
	fmtQ16     = dtype.MustParse("q1.6")
	fmtE8M0    = dtype.MustParse("e8m0")
	fmtUE4M3   = dtype.MustParse("ue4m3")
	fmtFloat32 = dtype.MustParse("float32")
)

// kernelEntry is one kind of kernelTable: its entry of the kernels' codec
// table and, for the kinds kernelKindOf finds, the formats of its elements,
// block scales and second-level tensor scale (nil for none).
type kernelEntry struct {
	codec               kernels.ScaledCodec
	elem, scale, tensor *dtype.Format
}

// kernelTable lists the kinds' kernels.
var kernelTable = [...]kernelEntry{
	kernelMXFP4:     {codec: scaledCodec("MXFP4"), elem: fmtE2M1, scale: fmtE8M0},
	kernelMXFP8:     {codec: scaledCodec("MXFP8"), elem: fmtE4M3FN, scale: fmtE8M0},
	kernelMXINT8:    {codec: scaledCodec("MXINT8"), elem: fmtQ16, scale: fmtE8M0},
	kernelNVFP4:     {codec: scaledCodec("NVFP4"), elem: fmtE2M1, scale: fmtUE4M3, tensor: fmtFloat32},
	kernelMXFP8E5M2: {codec: scaledCodec("MXFP8E5M2"), elem: fmtE5M2, scale: fmtE8M0},
	kernelMXFP6E2M3: {codec: scaledCodec("MXFP6E2M3"), elem: fmtE2M3, scale: fmtE8M0},
	kernelMXFP6E3M2: {codec: scaledCodec("MXFP6E3M2"), elem: fmtE3M2, scale: fmtE8M0},
	kernelIntSym:    {codec: scaledCodec("IntSym")},
	kernelIntAsym:   {codec: scaledCodec("IntAsym")},
	kernelFP8:       {codec: scaledCodec("E4M3")},
}

// scaledCodec returns the kernels' codec of the given name.
func scaledCodec(name string) kernels.ScaledCodec {
	c, ok := kernels.LookupScaled(name)
	if !ok {
		panic("tcast: no kernels codec " + name)
	}
	return c
}

// codec returns the kernels' codec of kind k.
func (k kernelKind) codec() *kernels.ScaledCodec { return &kernelTable[k].codec }

// kernelKindOf returns the kernel family of dt and its block size, or
// noKernel.
func kernelKindOf(dt *DataType) (kernelKind, int) {
	s := dt.spec
	if s == nil || s.Zero != nil || len(s.Tiles) != 1 || s.IsSparse() {
		return noKernel, 0
	}
	tile := s.Tiles[0]
	if tile.Sub != 0 || tile.Offset != 0 {
		return noKernel, 0
	}
	for k, e := range kernelTable {
		if e.elem != nil && e.elem == dt.elem && e.scale == s.Scale && e.tensor == s.TensorScale &&
			tile.Size == e.codec.Block {
			return kernelKind(k), e.codec.Block
		}
	}
	return noKernel, 0
}

// kernelRows reports whether the blocks of lay are whole runs of block
// elements along the last axis.
func kernelRows(lay *layout, block int) bool {
	return lay.axis0 < 0 && lay.sub == 0 && lay.axis == len(lay.shape)-1 && lay.tile1 == block &&
		lay.shape[lay.axis]%block == 0
}

// kernel returns the kernel family that casts exactly as c does, or noKernel.
func (c *caster) kernel() kernelKind {
	k, block := kernelKindOf(c.dt)
	o := c.opts
	if k == noKernel || (o.ScaleSearch && !c.searchKernel(k)) || !kernelRows(c.lay, block) || o.Rounding != kernels.RoundEven ||
		o.FullRange || (k == kernelNVFP4 && o.PowerOfTwoScales) || (k != kernelNVFP4 && o.Mode != scale.Floor) {
		return noKernel
	}
	return k
}

// searchKernel reports whether a scale-searching cast of kind k may run
// through k's fused search kernel (its codec's Search): k has one, and the
// search weighs no importance and keeps every element (those casts take the
// block-by-block path).
func (c *caster) searchKernel(k kernelKind) bool {
	if c.opts.Importance != nil || c.opts.Keep != nil || noSearchFast {
		return false
	}
	return k.codec().Search != nil
}

// packedLen is the number of data bytes the kernels of kind k use for n
// elements (whole blocks, so no partial byte).
func packedLen(k kernelKind, n int) int {
	return kernels.PackedLen(n, uint(kernelBits(k)))
}

// kernelBits is the width of the element codes of kind k, one of the kinds
// kernelKindOf finds.
func kernelBits(k kernelKind) int { return k.codec().Bits }

// castKernel is Cast through the kernels of kind k: the same tensor, part by
// part, as the block-by-block path gives.
//
// With a keep mask the kernels cast a copy of x whose dropped elements are
// +0: a block's largest magnitude is then that of its kept elements (0 when
// none is kept), which is the masked amax the scale comes from, and the
// dropped elements are stored as zero, as the block-by-block path stores
// them.
func (c *caster) castKernel(x []float32, k kernelKind) *Tensor {
	if c.keepBits != nil {
		xz := make([]float32, len(x))
		kernels.ZeroMasked(xz, x, c.keepBits)
		x = xz
	}
	t := c.newKernelTensor()
	scales := t.Scale.Bytes
	codes := make([]byte, packedLen(k, len(x)))
	if k == kernelNVFP4 {
		c.setTensorScale(x, t.TensorScale)
	}
	c.quantKernel(k, codes, scales, x)
	if c.keep != nil {
		// A block holding a NaN or an Inf among its kept elements is
		// filled with the NaN code: its dropped elements are stored as
		// zero all the same.
		zeroDroppedPacked(codes, c.keep, kernelBits(k))
	}
	return c.finishKernelCast(t, len(x), codes, kernelBits(k), func(dst []float32) {
		dequantKernel(k, dst, codes, scales, c.tensorMul)
	})
}

// zeroDroppedPacked clears the codes of the dropped elements (keep false),
// bits wide and packed LSB first, to the zero code 0 of every kernel's
// element format.
func zeroDroppedPacked(codes []byte, keep []bool, bits int) {
	for i, k := range keep {
		if k {
			continue
		}
		if bits == 8 {
			codes[i] = 0
			continue
		}
		for p := i * bits; p < (i+1)*bits; p++ {
			codes[p/8] &^= 1 << (p % 8)
		}
	}
}

// newKernelTensor returns the tensor a kernel cast fills in: of the cast's
// form, or Actual for a Compressed cast, whose parts finishKernelCast packs.
func (c *caster) newKernelTensor() *Tensor {
	form := c.opts.Form
	if form == Compressed {
		form = Actual
	}
	return c.newTensor(form)
}

// finishKernelCast completes t (from newKernelTensor, its scale parts
// filled in) with the codes a kernel wrote for n elements, bits wide and
// packed: the values decoded by dequant (Virtual), one code per byte
// (Actual), or the packed codes with the other parts packed as Compress
// packs an Actual tensor (Compressed). It returns the finished tensor.
func (c *caster) finishKernelCast(t *Tensor, n int, codes []byte, bits int, dequant func(dst []float32)) *Tensor {
	switch c.opts.Form {
	case Virtual:
		t.Values = make([]float32, n)
		dequant(t.Values)
		t.Data = nil
	case Actual:
		t.Data.Bytes = codes
		if bits != 8 {
			t.Data.Bytes = make([]byte, n)
			kernels.UnpackBits(t.Data.Bytes, codes, uint(bits))
		}
	case Compressed:
		t.Data.Bytes = codes
		t = withParts(t, Compressed, func(p *Part) *Part {
			if p == t.Data {
				q := *p
				q.Shape = slices.Clone(p.Shape)
				q.Packed = true
				return &q
			}
			return pack(p)
		})
	}
	return t
}

// quantKernel quantizes x, whole blocks, with the kernel of kind k into
// codes (packed for 4- and 6-bit elements) and scales; tensorMul is NVFP4's
// second-level tensor scale.
func quantKernel(k kernelKind, codes, scales []byte, x []float32, tensorMul float32) {
	k.codec().Quantize(kernels.Planes{Codes: codes, Scales: scales, TensorScale: tensorMul}, x)
}

// quantKernel is quantKernel of kind k with c's tensor scale, through the
// fused search kernel when c searches scales (searchKernel holds then).
func (c *caster) quantKernel(k kernelKind, codes, scales []byte, x []float32) {
	quant := k.codec().Quantize
	if c.opts.ScaleSearch {
		quant = k.codec().Search
	}
	quant(kernels.Planes{Codes: codes, Scales: scales, TensorScale: c.tensorMul}, x)
}

// dequantKernel decodes codes (packed for 4- and 6-bit elements) and scales of kind
// k into dst.
func dequantKernel(k kernelKind, dst []float32, codes, scales []byte, tensorMul float32) {
	k.codec().Dequantize(dst, kernels.Planes{Codes: codes, Scales: scales, TensorScale: tensorMul})
}

// decompressKernel is Decompress through the kernels, for a validated
// Compressed or Actual tensor of a datatype and layout they handle; it
// reports false otherwise.
func decompressKernel(t *Tensor, lay *layout) ([]float32, bool) {
	if out, ok := decompressGroupKernel(t, lay); ok {
		return out, true
	}
	k, block := kernelKindOf(t.DataType)
	if k == noKernel || !kernelRows(lay, block) {
		return nil, false
	}
	codes, ok := kernelCodes(t)
	if !ok || t.Data.Bits != kernelBits(k) {
		return nil, false
	}
	var tensorMul float32 = 1
	if k == kernelNVFP4 {
		tensorMul = newDecoder(t.DataType, t).tensorMul
	}
	out := make([]float32, lay.n)
	dequantKernel(k, out, codes, t.Scale.Bytes, tensorMul)
	return out, true
}

// kernelCodes returns the data of a validated tensor as the kernels read
// it: codes narrower than a byte packed LSB first (element 2k in the low
// nibble of byte k for 4-bit codes, four 6-bit codes in three bytes), 8-bit
// codes one a byte. A Compressed tensor's packed part is that already; an
// Actual tensor's codes (one a byte) are packed into a new buffer. It
// reports false for other data.
func kernelCodes(t *Tensor) ([]byte, bool) {
	d := t.Data
	switch {
	case d == nil || d.Bits < 1 || d.Bits > 8:
		return nil, false
	case t.Form == Compressed && d.Packed, t.Form == Actual && d.Bits == 8:
		return d.Bytes, true
	case t.Form == Actual:
		packed := make([]byte, kernels.PackedLen(len(d.Bytes), uint(d.Bits)))
		kernels.PackBits(packed, d.Bytes, uint(d.Bits))
		return packed, true
	}
	return nil, false
}
