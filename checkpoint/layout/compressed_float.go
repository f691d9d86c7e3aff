package layout

import (
	"fmt"
	"slices"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// ctFloatCodec is compressed-tensors' "float-quantized": e4m3fn codes
// stored whole in P.weight with a float tensor, channel or 2-D block scale.
var ctFloatCodec = ctCodec{
	format: "float-quantized",
	claims: func(dt *tcast.DataType) bool { return dt.Elem().Name() == fmtE4M3 },
	scheme: floatScheme,
	whole:  safetensors.F8E4M3,
	specs:  f8Specs,
	encode: f8Encode,
	match:  hasF8Weight,
	shape:  f8Shape,
	derive: func(_ Source, _ string, out, in int, sinfo safetensors.TensorInfo) (
		*tcast.DataType, error) {
		return scaleDerive(fmtE4M3, true, out, in, sinfo)
	},
	decode: f8Decode,
}

// ctMXFP8Codec is compressed-tensors' "mxfp8-quantized": OCP MXFP8 (e4m3fn,
// an E8M0 scale per 32), the codes in P.weight, the scale codes U8.
var ctMXFP8Codec = ctCodec{
	format: "mxfp8-quantized",
	claims: func(dt *tcast.DataType) bool { return isMX(dt, fmtE4M3) },
	scheme: fixedScheme(ctScheme{kind: ctMXFP8, bits: 8, typ: "float", symmetric: true,
		strategy: "group", group: 32, scaleDT: safetensors.U8}),
	sparseWhy: func(dt *tcast.DataType, _ *ctScheme) string {
		return fmt.Sprintf("datatype %s (mxfp8-quantized) came to compressed-tensors after "+
			"its sparse formats were dropped: no release reads the two together", dt.Name())
	},
	whole:  safetensors.F8E4M3,
	specs:  f8Specs,
	encode: f8Encode,
	match: func(src Source, p string) bool {
		sinfo, _, _ := src.Tensor(p + ".weight_scale")
		return hasF8Weight(src, p) && (sinfo.DType == safetensors.U8 || sinfo.DType == safetensors.F8E8M0)
	},
	shape:  f8Shape,
	derive: deriveNamed("mxfp8e4"),
	decode: f8Decode,
}

// floatScheme maps an e4m3fn datatype to float-quantized.
func floatScheme(dt *tcast.DataType) (*ctScheme, string) {
	s := dt.Spec()
	sdt, why := floatScale(s)
	if why != "" {
		return nil, why
	}
	if s.Zero != nil {
		return nil, "float data takes no zero point"
	}
	sc := &ctScheme{kind: ctFloat, bits: 8, typ: "float", symmetric: true, scaleDT: sdt}
	switch {
	case len(s.Tiles) == 0:
		sc.strategy = "tensor"
	case len(s.Tiles) == 1 && s.Tiles[0].Size == 0:
		sc.strategy = "channel"
	case len(s.Tiles) == 2 && s.Tiles[0].Size > 0 && s.Tiles[1].Size > 0:
		sc.strategy, sc.block = "block", [2]int{s.Tiles[0].Size, s.Tiles[1].Size}
	default:
		return nil, "e4m3fn weights need a tensor, channel or 2-D block scale"
	}
	return sc, ""
}

// hasF8Weight reports whether module p stores F8_E4M3 codes whole in
// P.weight beside a P.weight_scale.
func hasF8Weight(src Source, p string) bool {
	winfo, _, hasW := src.Tensor(p + ".weight")
	_, _, hasScale := src.Tensor(p + ".weight_scale")
	return hasW && winfo.DType == safetensors.F8E4M3 && hasScale
}

// f8Specs declares P.weight (the codes, stored whole) and P.weight_scale.
func f8Specs(w *ctWeight) []Spec {
	return []Spec{specOf(w.p+".weight", safetensors.F8E4M3, []int{w.out, w.in}), w.scaleSpec()}
}

// f8Encode returns the codes and scales as they are.
func f8Encode(_ *ctWeight, a *tcast.Tensor, _ map[string]string) ([][]byte, error) {
	return [][]byte{a.Data.Bytes, a.Scale.Bytes}, nil
}

// f8Shape is the shape of P.weight.
func f8Shape(src Source, p string) (int, int, error) {
	winfo, _, _ := src.Tensor(p + ".weight")
	if len(winfo.Shape) != 2 {
		return 0, 0, fmt.Errorf("weight has shape %v, want [out, in]", winfo.Shape)
	}
	return winfo.Shape[0], winfo.Shape[1], nil
}

// f8Decode reads the codes of P.weight.
func f8Decode(w *ctWeight, t *tcast.Tensor, src Source) error {
	pw, err := tensorIn(src, w.p+".weight", []int{w.out, w.in}, safetensors.F8E4M3)
	if err != nil {
		return err
	}
	t.Data = part(w.dt.Elem(), t.Shape, slices.Clone(pw.data))
	return nil
}

// scaleDerive finds the datatype of e4m3fn (block: tensor, channel or
// 128×128 block scales) or int8 (not block: tensor, channel or group scales)
// codes stored whole, from the dtype and shape of their scale, sinfo.
func scaleDerive(elem string, block bool, out, in int, sinfo safetensors.TensorInfo) (
	*tcast.DataType, error) {
	sn, ok := floatFormatName[sinfo.DType]
	if !ok {
		return nil, fmt.Errorf("weight_scale dtype %v is not a float scale", sinfo.DType)
	}
	code, tiled := elem+"_"+sn, "128×128 block"
	if !block {
		tiled = "group"
	}
	cdiv := func(a int) int { return (a + 127) / 128 }
	switch {
	case slices.Equal(sinfo.Shape, []int{1}):
	case slices.Equal(sinfo.Shape, []int{out, 1}):
		code += "_t0"
	case block && slices.Equal(sinfo.Shape, []int{cdiv(out), cdiv(in)}):
		code += "_t128_t128"
	case !block && len(sinfo.Shape) == 2 && sinfo.Shape[0] == out && sinfo.Shape[1] > 1 &&
		in%sinfo.Shape[1] == 0:
		code += fmt.Sprintf("_t%d", in/sinfo.Shape[1])
	default:
		return nil, fmt.Errorf("weight_scale shape %v is not a tensor, channel or %s scale of [%d, %d]",
			sinfo.Shape, tiled, out, in)
	}
	return lookupCode(code)
}
