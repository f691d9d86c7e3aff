package tcast

import (
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
)

// The integer-group kernels (kernels.QuantizeIntSym, QuantizeIntAsym and
// their decoders) stand in for the block-by-block path of the int8, int4,
// uint8 and uint4 datatypes with float16 or float32 scales (and, for the
// unsigned ones, an int8 or uint8 zero point): one scale for the tensor, per
// channel or per group along the last axis. The E4M3 kernels
// (kernels.QuantizeE4M3, DequantizeE4M3) do the same for e4m3fn datatypes
// with float32 scales: per tensor, per channel or group along the last axis,
// or per 2-D tile of the last two axes. Both apply under the default options
// (round to nearest even, no keep mask, symmetric integers, float scales
// that are not forced to powers of two). A scale-searching E4M3 cast without
// importance runs through kernels.SearchE4M3, the search fused with the
// quantizer, and a symmetric integer one through kernels.SearchIntSym. The
// results are the same bits either way; the tests compare
// the two paths.

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
// their description of its tiles on one matrix of the last two axes (the
// whole tensor as one row for a tensor scale, the last axis's rows for 1-D
// tiles) and the number of such matrices.
func fp8TilesOf(dt *DataType, lay *layout) (kernels.FP8Tiles, int, bool) {
	var ft kernels.FP8Tiles
	s := dt.spec
	if s == nil || dt.elem != fmtE4M3FN || s.Scale != fmtFloat32 || s.Zero != nil || s.TensorScale != nil ||
		s.IsSparse() || lay.sub != 0 {
		return ft, 0, false
	}
	for _, tl := range s.Tiles {
		if tl.Sub != 0 || tl.Offset != 0 {
			return ft, 0, false
		}
	}
	last := len(lay.shape) - 1
	switch len(s.Tiles) {
	case 0:
		return kernels.FP8Tiles{Cols: lay.n}, 1, true
	case 1:
		if lay.axis != last {
			return ft, 0, false
		}
		return kernels.FP8Tiles{Cols: lay.shape[last], TileRows: 1, TileCols: lay.tile1}, 1, true
	}
	if lay.axis != last || lay.axis0 != last-1 {
		return ft, 0, false
	}
	rows, cols := lay.shape[last-1], lay.shape[last]
	mats := 0
	if rows*cols != 0 {
		mats = lay.n / (rows * cols)
	}
	return kernels.FP8Tiles{Cols: cols, TileRows: lay.tile0, TileCols: lay.tile1}, mats, true
}

// groupPlan is how the group kernels cast or decode a tensor.
type groupPlan struct {
	kind kernelKind
	ig   kernels.IntGroups
	ft   kernels.FP8Tiles
	mats int // matrices of ft (kernelFP8)
}

// planGroups returns the group kernels' plan for dt on lay; its kind is
// noKernel when they do not handle it.
func planGroups(dt *DataType, lay *layout) groupPlan {
	if k, g := intGroupsOf(dt, lay); k != noKernel {
		return groupPlan{kind: k, ig: g}
	}
	if ft, mats, ok := fp8TilesOf(dt, lay); ok {
		return groupPlan{kind: kernelFP8, ft: ft, mats: mats}
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
	switch p.kind {
	case kernelIntSym:
		if c.opts.ScaleSearch {
			kernels.SearchIntSym(codes, t.Scale.Bytes, x, p.ig)
		} else {
			kernels.QuantizeIntSym(codes, t.Scale.Bytes, x, p.ig)
		}
	case kernelIntAsym:
		kernels.QuantizeIntAsym(codes, t.Scale.Bytes, t.Zero.Bytes, x, p.ig)
	case kernelFP8:
		quant := kernels.QuantizeE4M3
		if c.opts.ScaleSearch {
			quant = kernels.SearchE4M3
		}
		p.forMatrices(len(x), func(lo, hi, s0, s1 int) {
			quant(codes[lo:hi], t.Scale.Bytes[s0:s1], x[lo:hi], p.ft)
		})
	}
	return c.finishKernelCast(t, len(x), codes, bits, func(dst []float32) {
		dequantGroupKernel(p, dst, codes, t)
	})
}

// forMatrices calls fn for each matrix of an E4M3 plan over n elements:
// its element range and the byte range of its scales.
func (p groupPlan) forMatrices(n int, fn func(lo, hi, s0, s1 int)) {
	if p.mats == 0 {
		return
	}
	per := n / p.mats
	tr, tc := max(p.ft.TileRows, 1), p.ft.TileCols
	if tc == 0 {
		tc = max(p.ft.Cols, 1)
	}
	cols := max(p.ft.Cols, 1)
	rows := per / cols
	scales := 4 * ((rows + tr - 1) / tr) * ((cols + tc - 1) / tc)
	for m := range p.mats {
		fn(m*per, (m+1)*per, m*scales, (m+1)*scales)
	}
}

// dequantGroupKernel decodes codes (packed for 4-bit elements) with t's
// scale and zero parts into dst.
func dequantGroupKernel(p groupPlan, dst []float32, codes []byte, t *Tensor) {
	switch p.kind {
	case kernelIntSym:
		kernels.DequantizeIntSym(dst, codes, t.Scale.Bytes, p.ig)
	case kernelIntAsym:
		kernels.DequantizeIntAsym(dst, codes, t.Scale.Bytes, t.Zero.Bytes, p.ig)
	case kernelFP8:
		p.forMatrices(len(dst), func(lo, hi, s0, s1 int) {
			kernels.DequantizeE4M3(dst[lo:hi], codes[lo:hi], t.Scale.Bytes[s0:s1], p.ft)
		})
	}
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
