package tcast

import (
	"slices"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
)

// The integer-group kernels (kernels.QuantizeIntSym, QuantizeIntAsym and
// their decoders) stand in for the block-by-block path of the int8, int4,
// uint8 and uint4 datatypes with float16 or float32 scales (and, for the
// unsigned ones, an int8 or uint8 zero point): one scale for the tensor, per
// channel or per group along the last axis, under the default options (round
// to nearest even, no keep mask, symmetric integers, float scales that are
// not forced to powers of two). The results are the same bits either way;
// the tests compare the two paths.

var (
	fmtInt8    = dtype.MustParse("int8")
	fmtInt4    = dtype.MustParse("int4")
	fmtUint8   = dtype.MustParse("uint8")
	fmtUint4   = dtype.MustParse("uint4")
	fmtFloat16 = dtype.MustParse("float16")
)

// intGroupsOf returns the kernel family of dt (kernelIntSym or
// kernelIntAsym) and the kernels' description of its groups on lay, or
// noKernel.
func intGroupsOf(dt *DataType, lay *layout) (kernelKind, kernels.IntGroups) {
	var g kernels.IntGroups
	s := dt.spec
	if s == nil || s.TensorScale != nil || s.IsSparse() || len(s.Tiles) > 1 || lay.sub != 0 || lay.axis0 >= 0 {
		return noKernel, g
	}
	if len(s.Tiles) == 1 && (s.Tiles[0].Sub != 0 || s.Tiles[0].Offset != 0 || lay.axis != len(lay.shape)-1) {
		return noKernel, g
	}
	switch s.Scale {
	case fmtFloat16:
		g.Scale = kernels.ScaleFloat16
	case fmtFloat32:
		g.Scale = kernels.ScaleFloat32
	default:
		return noKernel, g
	}
	kind := kernelIntSym
	switch {
	case s.Zero == nil && (dt.elem == fmtInt8 || dt.elem == fmtInt4):
	case (s.Zero == fmtInt8 || s.Zero == fmtUint8) && (dt.elem == fmtUint8 || dt.elem == fmtUint4):
		kind = kernelIntAsym
		g.SignedZero = s.Zero == fmtInt8
	default:
		return noKernel, g
	}
	g.Bits = dt.elem.Bits()
	if len(s.Tiles) == 0 {
		// One scale for the whole tensor.
		g.Cols, g.Group = lay.n, lay.n
	} else {
		g.Cols, g.Group = lay.shape[lay.axis], lay.tile1
	}
	return kind, g
}

// groupKernel returns the integer-group family that casts exactly as c
// does, or noKernel.
func (c *caster) groupKernel() (kernelKind, kernels.IntGroups) {
	k, g := intGroupsOf(c.dt, c.lay)
	o := c.opts
	if k == noKernel || o.Keep != nil || o.Rounding != kernels.RoundEven ||
		(k == kernelIntSym && (o.FullRange || o.PowerOfTwoScales)) {
		return noKernel, g
	}
	return k, g
}

// castGroupKernel is Cast through the integer-group kernels of kind k: the
// same tensor, part by part, as the block-by-block path gives.
func (c *caster) castGroupKernel(x []float32, k kernelKind, g kernels.IntGroups) *Tensor {
	form := c.opts.Form
	if form == Compressed {
		form = Actual // its parts are packed below
	}
	t := c.newTensor(form)
	codes := make([]byte, (len(x)*g.Bits+7)/8)
	if k == kernelIntSym {
		kernels.QuantizeIntSym(codes, t.Scale.Bytes, x, g)
	} else {
		kernels.QuantizeIntAsym(codes, t.Scale.Bytes, t.Zero.Bytes, x, g)
	}
	switch c.opts.Form {
	case Virtual:
		t.Values = make([]float32, len(x))
		dequantGroupKernel(k, g, t.Values, codes, t)
		t.Data = nil
	case Actual:
		t.Data.Bytes = codes
		if g.Bits == 4 {
			t.Data.Bytes = make([]byte, len(x))
			kernels.UnpackBits(t.Data.Bytes, codes, 4)
		}
	case Compressed:
		// As Compress packs an Actual tensor, with the data already packed.
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

// dequantGroupKernel decodes codes (packed for 4-bit elements) with t's
// scale and zero parts into dst.
func dequantGroupKernel(k kernelKind, g kernels.IntGroups, dst []float32, codes []byte, t *Tensor) {
	if k == kernelIntSym {
		kernels.DequantizeIntSym(dst, codes, t.Scale.Bytes, g)
		return
	}
	kernels.DequantizeIntAsym(dst, codes, t.Scale.Bytes, t.Zero.Bytes, g)
}

// decompressGroupKernel is Decompress through the integer-group kernels,
// for a validated Compressed tensor (or an Actual one with 8-bit elements)
// of a datatype and layout they handle; it reports false otherwise.
func decompressGroupKernel(t *Tensor, lay *layout) ([]float32, bool) {
	k, g := intGroupsOf(t.DataType, lay)
	if k == noKernel {
		return nil, false
	}
	d := t.Data
	if !(t.Form == Compressed && d.Packed) && !(t.Form == Actual && d.Bits == 8) {
		return nil, false
	}
	out := make([]float32, lay.n)
	dequantGroupKernel(k, g, out, d.Bytes, t)
	return out, true
}
