package layout

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// ctNVFP4Codec is compressed-tensors' "nvfp4-pack-quantized": e2m1 codes
// two to a byte in P.weight_packed, UE4M3 block scales, and the encode
// scale 1/s_t in P.weight_global_scale.
var ctNVFP4Codec = ctCodec{
	format: "nvfp4-pack-quantized",
	claims: isNVFP4,
	scheme: fixedScheme(ctScheme{kind: ctNVFP4, bits: 4, typ: "float", symmetric: true,
		strategy: "tensor_group", group: 16, scaleDT: safetensors.F8E4M3}),
	packed: true,
	specs: func(w *ctWeight) []Spec {
		return append(fp4Specs(w), specOf(w.p+".weight_global_scale", safetensors.F32, []int{1}))
	},
	declare: func(p string, meta map[string]string) {
		// Always recorded, at a fixed width, so that a converter can declare
		// the key before it knows the data and patch the value in place.
		meta[KeyCTGlobalScalePrefix+p] = fmt.Sprintf("0x%08x", 0)
	},
	encode: nvfp4Encode,
	match: func(src Source, p string) bool {
		_, _, ok := src.Tensor(p + ".weight_global_scale")
		return hasFP4Packed(src, p) && ok
	},
	shape:  fp4Shape,
	derive: deriveNamed("nvfp4"),
	decode: nvfp4Decode,
}

// ctMXFP4Codec is compressed-tensors' "mxfp4-pack-quantized": OCP MXFP4,
// e2m1 codes two to a byte in P.weight_packed, E8M0 scale codes U8.
var ctMXFP4Codec = ctCodec{
	format: "mxfp4-pack-quantized",
	claims: isMXFP4,
	scheme: fixedScheme(ctScheme{kind: ctMXFP4, bits: 4, typ: "float", symmetric: true,
		strategy: "group", group: 32, scaleDT: safetensors.U8}),
	packed: true,
	specs:  fp4Specs,
	encode: func(_ *ctWeight, a *tcast.Tensor, _ map[string]string) ([][]byte, error) {
		return [][]byte{pack4(a.Data.Bytes), a.Scale.Bytes}, nil
	},
	match:  hasFP4Packed,
	shape:  fp4Shape,
	derive: deriveNamed("mxfp4"),
	decode: fp4Decode,
}

// hasFP4Packed reports whether module p has a U8 P.weight_packed.
func hasFP4Packed(src Source, p string) bool {
	info, _, ok := src.Tensor(p + ".weight_packed")
	return ok && info.DType == safetensors.U8
}

// fp4Specs declares P.weight_packed and P.weight_scale.
func fp4Specs(w *ctWeight) []Spec {
	return []Spec{specOf(w.p+".weight_packed", safetensors.U8, []int{w.out, w.in / 2}), w.scaleSpec()}
}

// nvfp4Encode packs the codes and stores the global scale 1/s_t, recording
// s_t's bits in the metadata.
func nvfp4Encode(w *ctWeight, a *tcast.Tensor, meta map[string]string) ([][]byte, error) {
	st := binary.LittleEndian.Uint32(a.TensorScale.Bytes)
	g, _ := globalScale(st)
	meta[KeyCTGlobalScalePrefix+w.p] = fmt.Sprintf("0x%08x", st)
	return [][]byte{pack4(a.Data.Bytes), a.Scale.Bytes, f32Bytes(g)}, nil
}

// fp4Shape is [out, in] for the [out, in/2] bytes of P.weight_packed.
func fp4Shape(src Source, p string) (int, int, error) {
	pinfo, _, _ := src.Tensor(p + ".weight_packed")
	if len(pinfo.Shape) != 2 {
		return 0, 0, fmt.Errorf("weight_packed has shape %v, want [out, in/2]", pinfo.Shape)
	}
	return pinfo.Shape[0], 2 * pinfo.Shape[1], nil
}

// fp4Decode unpacks the codes of P.weight_packed.
func fp4Decode(w *ctWeight, t *tcast.Tensor, src Source) error {
	pw, err := tensorIn(src, w.p+".weight_packed", []int{w.out, w.in / 2}, safetensors.U8)
	if err != nil {
		return err
	}
	t.Data = part(w.dt.Elem(), t.Shape, unpack4(pw.data))
	return nil
}

// nvfp4Decode unpacks the codes, checks the block scales are unsigned and
// reads the tensor scale from the global scale.
func nvfp4Decode(w *ctWeight, t *tcast.Tensor, src Source) error {
	if err := fp4Decode(w, t, src); err != nil {
		return err
	}
	if err := checkScaleCodes(w.p+".weight_scale", t.Scale.Bytes); err != nil {
		return err
	}
	g, err := tensorIn(src, w.p+".weight_global_scale", []int{1}, safetensors.F32)
	if err != nil {
		return err
	}
	rec, _ := metaValue(src.Metadata(), KeyCTGlobalScalePrefix+w.p, legacyCTGlobalScalePref+w.p)
	st, err := tensorScaleFromGlobal(binary.LittleEndian.Uint32(g.data), rec)
	if err != nil {
		return err
	}
	t.TensorScale = part(w.dt.Spec().TensorScale, []int{1}, f32Bytes(st))
	return nil
}

// globalScale returns the bits of the compressed-tensors global scale
// float32(1/s_t) for the tensor scale bits st, and whether float32(1/g)
// gives s_t back exactly.
func globalScale(st uint32) (uint32, bool) {
	s := math.Float32frombits(st)
	g := 1 / s
	return math.Float32bits(g), math.Float32bits(1/g) == st
}

// tensorScaleFromGlobal returns the tensor scale bits s_t for the stored
// global scale bits g: the recorded bits rec ("0x%08x") when present and
// consistent with g, else float32(1/g).
func tensorScaleFromGlobal(g uint32, rec string) (uint32, error) {
	gf := math.Float32frombits(g)
	if !(gf > 0) || math.IsInf(float64(gf), 0) {
		return 0, fmt.Errorf("weight_global_scale %v is not a positive finite number", gf)
	}
	if rec != "" {
		v, err := strconv.ParseUint(rec, 0, 32)
		if err != nil {
			return 0, fmt.Errorf("metadata global scale %q: %w", rec, err)
		}
		if bits, _ := globalScale(uint32(v)); bits == g {
			return uint32(v), nil
		}
		// The tensor was rewritten after the metadata: trust the tensor.
	}
	return math.Float32bits(1 / gf), nil
}
