package tcast

import (
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
)

// The integer-group kernels (the IntSym and IntAsym entries of the kernels'
// codec table) stand in for the block-by-block path of the int8, int4,
// uint8 and uint4 datatypes with float16 or float32 scales (and, for the
// unsigned ones, an int8 or uint8 zero point): one scale for the tensor, per
// channel or per group along the last axis. The E4M3 entry does the same for
// e4m3fn datatypes with float32 scales: per tensor, per channel or group
// along the last axis, or per 2-D tile of the last two axes. Both apply
// under the default options (round to nearest even, no keep mask, symmetric
// integers, float scales that are not forced to powers of two). A
// scale-searching E4M3 or symmetric integer cast without importance runs
// through its entry's Search, the search fused with the quantizer. The
// results are the same bits either way; the tests compare the two paths.

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

// fp8TilesOf reports whether the E4M3 kernels handle dt on lay and returns
// their description of its tiles: the whole tensor as one row for a tensor
// scale, the last axis's rows for 1-D tiles, a stack of matrices of the last
// two axes for 2-D tiles.
func fp8TilesOf(dt *DataType, lay *layout) (kernels.FP8Tiles, bool) {
	var ft kernels.FP8Tiles
	s := dt.spec
	if s == nil || dt.elem != fmtE4M3FN || s.Scale != fmtFloat32 || s.Zero != nil || s.TensorScale != nil ||
		s.IsSparse() || lay.sub != 0 {
		return ft, false
	}
	for _, tl := range s.Tiles {
		if tl.Sub != 0 || tl.Offset != 0 {
			return ft, false
		}
	}
	last := len(lay.shape) - 1
	switch len(s.Tiles) {
	case 0:
		return kernels.FP8Tiles{Cols: lay.n}, true
	case 1:
		if lay.axis != last {
			return ft, false
		}
		return kernels.FP8Tiles{Cols: lay.shape[last], TileRows: 1, TileCols: lay.tile1}, true
	}
	if lay.axis != last || lay.axis0 != last-1 {
		return ft, false
	}
	return kernels.FP8Tiles{Cols: lay.shape[last], TileRows: lay.tile0, TileCols: lay.tile1, Rows: lay.shape[last-1]}, true
}

// groupPlan is how the group kernels cast or decode a tensor.
type groupPlan struct {
	kind kernelKind
	ig   kernels.IntGroups
	ft   kernels.FP8Tiles
}

// planGroups returns the group kernels' plan for dt on lay; its kind is
// noKernel when they do not handle it.
func planGroups(dt *DataType, lay *layout) groupPlan {
	if k, g := intGroupsOf(dt, lay); k != noKernel {
		return groupPlan{kind: k, ig: g}
	}
	if ft, ok := fp8TilesOf(dt, lay); ok {
		return groupPlan{kind: kernelFP8, ft: ft}
	}
	return groupPlan{}
}

// groupKernel returns the group kernels' plan for a cast that they compute
// exactly as c does; its kind is noKernel otherwise.
func (c *caster) groupKernel() groupPlan {
	p := planGroups(c.dt, c.lay)
	o := c.opts
	if p.kind == noKernel || (o.ScaleSearch && p.kind != kernelIntAsym && !c.searchKernel(p.kind)) || o.Keep != nil || o.Rounding != kernels.RoundEven ||
		(p.kind != kernelIntAsym && o.PowerOfTwoScales) || (p.kind == kernelIntSym && o.FullRange) {
		return groupPlan{}
	}
	return p
}

// castGroupKernel is Cast through the group kernels of plan p: the same
// tensor, part by part, as the block-by-block path gives.
func (c *caster) castGroupKernel(x []float32, p groupPlan) *Tensor {
	t := c.newKernelTensor()
	bits := 8
	if p.kind != kernelFP8 {
		bits = p.ig.Bits
	}
	codes := make([]byte, kernels.PackedLen(len(x), uint(bits)))
	quant := p.kind.codec().Quantize
	if c.opts.ScaleSearch && p.kind.codec().Search != nil {
		quant = p.kind.codec().Search // not IntAsym's: it has none
	}
	quant(p.planes(codes, t), x)
	return c.finishKernelCast(t, len(x), codes, bits, func(dst []float32) {
		dequantGroupKernel(p, dst, codes, t)
	})
}

// planes returns the kernels' planes of plan p: codes, and t's scale and
// zero parts.
func (p groupPlan) planes(codes []byte, t *Tensor) kernels.Planes {
	pl := kernels.Planes{Codes: codes, Scales: t.Scale.Bytes, Groups: p.ig, Tiles: p.ft}
	if p.kind == kernelIntAsym {
		pl.Zeros = t.Zero.Bytes
	}
	return pl
}

// dequantGroupKernel decodes codes (packed for 4-bit elements) with t's
// scale and zero parts into dst.
func dequantGroupKernel(p groupPlan, dst []float32, codes []byte, t *Tensor) {
	p.kind.codec().Dequantize(dst, p.planes(codes, t))
}

// decompressGroupKernel is Decompress through the group kernels,
// for a validated Compressed or Actual tensor of a datatype and layout they
// handle; it reports false otherwise.
func decompressGroupKernel(t *Tensor, lay *layout) ([]float32, bool) {
	p := planGroups(t.DataType, lay)
	if p.kind == noKernel {
		return nil, false
	}
	codes, ok := kernelCodes(t)
	if !ok {
		return nil, false
	}
	out := make([]float32, lay.n)
	dequantGroupKernel(p, out, codes, t)
	return out, true
}
