package layout

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// The compressed-tensors layout (docs/LAYOUTS.md §2) writes each cast
// weight P.weight ("P" is the name without its trailing ".weight") as the
// tensors vLLM's compressed-tensors loader reads:
//
//   - int4/int8 symmetric, group or channel scales ("pack-quantized"):
//     P.weight_packed I32 [out, ceil(in·b/32)], the codes offset-binary
//     (q + 2^(b−1)) and packed LSB first, 32/b per word, the row padded with
//     zero bits; P.weight_scale in the scale's own dtype (F16, BF16 or F32)
//     [out, in/gs] or [out, 1]; P.weight_shape I64 [2].
//   - uint4/uint8 with an integer zero point (uint8 or int8; every stored
//     zero point must lie in 0..2^b−1), the same plus
//     P.weight_zero_point I32 [ceil(out·b/32), groups], packed along dim 0 in
//     b-bit fields (0..255 for uint8, 0..15 for uint4).
//     compressed-tensors quantizes asymmetric weights to the signed range
//     with a signed zero point, value = (q_s − zp_s)·s, and stores both
//     offset-binary (q_s + 2^(b−1), zp_s + 2^(b−1)). With q_s = q_u − 2^(b−1)
//     and zp_s = zp_u − 2^(b−1) for our unsigned codes q_u and zero points
//     zp_u, the stored values are q_u and zp_u themselves and the decoded
//     values agree: (q_s − zp_s)·s = (q_u − zp_u)·s.
//   - e4m3fn with a tensor, channel or 2-D block scale ("float-quantized"):
//     P.weight F8_E4M3 [out, in]; P.weight_scale F32 (or F16, BF16) [1],
//     [out, 1] or [ceil(out/b0), ceil(in/b1)].
//   - nvfp4 ("nvfp4-pack-quantized"): P.weight_packed U8 [out, in/2] (element
//     2k in the low nibble), P.weight_scale F8_E4M3 [out, in/16] (the UE4M3
//     codes are E4M3 bit patterns with the sign clear), P.weight_global_scale
//     F32 [1] holding the encode scale 1/s_t, the reciprocal of our decode
//     multiplier s_t (ModelOpt's weight_scale_2). Decoding takes
//     s_t = float32(1/g); that recovers s_t exactly for most values but not
//     all (about one float32 mantissa in six fails), so when it does not,
//     Encode also records the bits of s_t in __metadata__ under
//     "tcast.ct.global_scale.P" (layout.KeyCTGlobalScalePrefix) as "0x%08x", and Decode prefers that value when
//     it agrees with the stored g (float32(1/s_t) == g).
//   - mxfp4 ("mxfp4-pack-quantized"): P.weight_packed U8 [out, in/2],
//     P.weight_scale U8 [out, in/32] (E8M0 codes).
//   - mxfp8e4 ("mxfp8-quantized"): P.weight F8_E4M3 [out, in],
//     P.weight_scale U8 [out, in/32].
//
// Only 2-D weights scaled along their last axis are accepted, and the input
// size must be a multiple of the group size (no partial groups). Encode
// records the datatype's name in __metadata__ under "tcast.ct.datatype.P" (layout.KeyCTDataTypePrefix);
// Decode uses it when present and otherwise derives the datatype from the
// tensors' dtypes and shapes.
//
// With pruning (WithPruning, ctsparse.go) the layout also writes weights
// pruned to N:M in compressed-tensors' sparse-bitmask and sparse-24-bitmask
// formats, unquantized or combined with the 8-bit schemes stored whole.
type compressedTensors struct {
	prune Pruning // the zero value: no pruning
}

func init() { register(compressedTensors{}) }

// compressedTensorsVersion is the compressed-tensors release whose on-disk
// layout the config follows (the 4- and 8-bit layouts are the same in every
// release).
const compressedTensorsVersion = "0.18.0"

func (compressedTensors) Name() string { return "compressed-tensors" }

func (compressedTensors) Container() Container { return Safetensors }

// ctKind is a compressed-tensors compression format, an index into
// ctCodecs.
type ctKind int

// The formats, in the order ctClassify and Decode try them: the first codec
// that claims a datatype, or whose tensors a weight has, wins.
const (
	ctPack  ctKind = iota // pack-quantized
	ctNVFP4               // nvfp4-pack-quantized
	ctMXFP4               // mxfp4-pack-quantized
	ctMXFP8               // mxfp8-quantized
	ctFloat               // float-quantized
	ctInt                 // int-quantized (int8 stored whole, with pruning only)
	ctNone                // no quantization: pruned float weights (with pruning only)
	numCTKinds
)

// ctCodecs holds the codec of every format, each in its own file.
var ctCodecs = [numCTKinds]*ctCodec{
	ctPack:  &ctPackCodec,
	ctNVFP4: &ctNVFP4Codec,
	ctMXFP4: &ctMXFP4Codec,
	ctMXFP8: &ctMXFP8Codec,
	ctFloat: &ctFloatCodec,
	ctInt:   &ctIntCodec,
	ctNone:  &ctNoneCodec,
}

// ctCodec is how one compressed-tensors format maps a datatype and stores
// and reads a weight. Fields a format does not use are nil (ctInt and
// ctNone are only written and read beside a sparse format).
type ctCodec struct {
	format string // quantization_config's format name
	// claims reports whether dt belongs to the format: scheme then maps it
	// or says why not.
	claims func(dt *tcast.DataType) bool
	// scheme maps a claimed datatype to its scheme, or returns why the
	// format cannot hold it.
	scheme func(dt *tcast.DataType) (*ctScheme, string)
	// packed is set for formats storing P.weight_packed, which the sparse
	// compressors leave as it is (they compress only P.weight).
	packed bool
	// sparseWhy, when not nil, says why a sparse format cannot store a
	// weight of the format for another reason ("" when it can).
	sparseWhy func(dt *tcast.DataType, sc *ctScheme) string
	// whole is the dtype of P.weight when the format stores it whole.
	whole safetensors.DType
	// specs declares the tensors of w, in the order encode returns them.
	specs func(w *ctWeight) []Spec
	// declare, when not nil, adds to meta the entries encode records for
	// module p, with placeholder values of their final width.
	declare func(p string, meta map[string]string)
	// encode returns the data of the tensors specs declares; it may set
	// the weight's metadata entries in meta.
	encode func(w *ctWeight, a *tcast.Tensor, meta map[string]string) ([][]byte, error)
	// match reports whether module p's tensors are in this format.
	match func(src Source, p string) bool
	// shape reads the weight's [out, in] shape from its tensors.
	shape func(src Source, p string) (out, in int, err error)
	// derive finds the datatype from the tensors, sinfo the weight_scale's,
	// when no metadata names it.
	derive func(src Source, p string, out, in int, sinfo safetensors.TensorInfo) (
		*tcast.DataType, error)
	// decode fills t's data (and zero point, tensor scale) from the tensors;
	// t.Scale is read already.
	decode func(w *ctWeight, t *tcast.Tensor, src Source) error
}

// fixedScheme is the scheme function of a format holding one scheme, sc.
func fixedScheme(sc ctScheme) func(*tcast.DataType) (*ctScheme, string) {
	return func(*tcast.DataType) (*ctScheme, string) {
		c := sc
		return &c, ""
	}
}

// deriveNamed is the derive function of a format holding one datatype,
// the registered one of that name.
func deriveNamed(name string) func(Source, string, int, int, safetensors.TensorInfo) (
	*tcast.DataType, error) {
	return func(Source, string, int, int, safetensors.TensorInfo) (*tcast.DataType, error) {
		return tcast.MustLookup(name), nil
	}
}

// deriveAt derives the datatype of module p, for want of a recorded one.
func (c *ctCodec) deriveAt(src Source, p string, out, in int, sinfo safetensors.TensorInfo) (
	*tcast.DataType, error) {
	dt, err := c.derive(src, p, out, in, sinfo)
	if err != nil {
		return nil, fmt.Errorf("%v (and no %s%s metadata names the datatype)", err, KeyCTDataTypePrefix, p)
	}
	return dt, nil
}

// ctWeight is one weight in a compressed-tensors scheme: module p (the name
// without ".weight") holding an [out, in] weight of datatype dt.
type ctWeight struct {
	p       string
	dt      *tcast.DataType
	sc      *ctScheme
	out, in int
}

// scaleShape is the shape of w's scale tensor.
func (w *ctWeight) scaleShape() []int { return scaleShape2D(w.dt.Spec(), w.out, w.in) }

// scaleSpec declares w's weight_scale.
func (w *ctWeight) scaleSpec() Spec {
	return specOf(w.p+".weight_scale", w.sc.scaleDT, w.scaleShape())
}

// ctScheme is how one datatype maps to compressed-tensors.
type ctScheme struct {
	kind      ctKind
	bits      int
	typ       string // "int" or "float"
	symmetric bool
	strategy  string            // tensor, channel, group, block, tensor_group
	group     int               // group size (group, tensor_group), else 0
	block     [2]int            // block_structure (block), else zero
	scaleDT   safetensors.DType // for ctNone, the dtype of the values
}

// codec returns the codec of the scheme's format.
func (sc *ctScheme) codec() *ctCodec { return ctCodecs[sc.kind] }

// Element and scale format names (dtype.Format.Name()).
const (
	fmtE2M1    = "float4_e2m1fn"
	fmtE4M3    = "float8_e4m3fn"
	fmtE8M0    = "float8_e8m0fnu"
	fmtUE4M3   = "ue4m3"
	fmtF16     = "float16"
	fmtBF16    = "bfloat16"
	fmtF32     = "float32"
	fmtInt8    = "int8"
	fmtUint8   = "uint8"
	ctAccepted = "int4/int8 (symmetric) or uint4/uint8 (uint8 or int8 zero point) with float16/bfloat16/float32 group or channel scales, " +
		"e4m3fn with float tensor, channel or 2-D block scales, nvfp4, mxfp4 or mxfp8e4"
)

// floatFormatName is the float format name of a float safetensors dtype
// (the inverse of floatScaleDType).
var floatFormatName = map[safetensors.DType]string{safetensors.F16: fmtF16, safetensors.BF16: fmtBF16, safetensors.F32: fmtF32}

// floatScaleDType is the safetensors dtype of a float scale format, 0 for
// formats safetensors has no dtype for.
func floatScaleDType(f *dtype.Format) safetensors.DType {
	switch f.Name() {
	case fmtF16:
		return safetensors.F16
	case fmtBF16:
		return safetensors.BF16
	case fmtF32:
		return safetensors.F32
	}
	return 0
}

// plainTiles reports whether every tile of spec is a plain tile (no subtiles,
// offsets or sparsity).
func plainTiles(spec *scale.Spec) bool {
	if spec.IsSparse() {
		return false
	}
	for _, t := range spec.Tiles {
		if t.Sub != 0 || t.Offset != 0 {
			return false
		}
	}
	return true
}

// isMXFP4 reports whether dt is OCP MXFP4: e2m1 with an E8M0 scale per 32.
func isMXFP4(dt *tcast.DataType) bool {
	return isMX(dt, fmtE2M1)
}

func isMX(dt *tcast.DataType, elem string) bool {
	s := dt.Spec()
	return dt.Elem().Name() == elem && s != nil && s.Scale.Name() == fmtE8M0 && s.Zero == nil &&
		s.TensorScale == nil && plainTiles(s) && len(s.Tiles) == 1 && s.Tiles[0].Size == 32
}

// isNVFP4 reports whether dt is NVIDIA NVFP4: e2m1, a UE4M3 scale per 16 and a
// float32 tensor scale.
func isNVFP4(dt *tcast.DataType) bool {
	s := dt.Spec()
	return dt.Elem().Name() == fmtE2M1 && s != nil && s.Scale.Name() == fmtUE4M3 && s.Zero == nil &&
		s.TensorScale != nil && s.TensorScale.Name() == fmtF32 && plainTiles(s) && len(s.Tiles) == 1 && s.Tiles[0].Size == 16
}

// ctClassify maps a datatype to its compressed-tensors scheme: the scheme
// of the first codec that claims it.
func ctClassify(dt *tcast.DataType) (*ctScheme, error) {
	bad := func(why string) (*ctScheme, error) {
		return nil, fmt.Errorf("layout compressed-tensors: datatype %s: %s; the layout takes %s",
			dt.Name(), why, ctAccepted)
	}
	s := dt.Spec()
	if s == nil {
		return bad("unscaled datatypes are not quantized formats")
	}
	if !plainTiles(s) {
		return bad("subtile offsets and sparsity have no compressed-tensors form")
	}
	for _, c := range ctCodecs {
		if c.claims == nil || !c.claims(dt) {
			continue
		}
		sc, why := c.scheme(dt)
		if why != "" {
			return bad(why)
		}
		return sc, nil
	}
	if _, why := floatScale(s); why != "" {
		return bad(why)
	}
	return bad(fmt.Sprintf("element format %s is not supported", dt.Elem().Name()))
}

// floatScale returns the safetensors dtype of spec's float scale, or why
// the formats with float scales cannot take spec.
func floatScale(spec *scale.Spec) (safetensors.DType, string) {
	if spec.TensorScale != nil {
		return 0, "a second-level tensor scale is only supported as nvfp4"
	}
	sdt := floatScaleDType(spec.Scale)
	if sdt == 0 {
		return 0, fmt.Sprintf("scale format %s has no safetensors dtype "+
			"(want float16, bfloat16 or float32)", spec.Scale.Name())
	}
	return sdt, ""
}

// checkMatrix checks a weight's rank and scaled axis for the layouts that
// take 2-D weights scaled along their input (last) axis.
func checkMatrix(layout string, dt *tcast.DataType, axis, rank int) error {
	if rank != 2 {
		return fmt.Errorf("layout %s: datatype %s: weights must be 2-D [out, in], not rank %d (cast the experts of a stacked 3-D MoE weight as separate 2-D weights)",
			layout, dt.Name(), rank)
	}
	if axis != rank-1 {
		return fmt.Errorf("layout %s: datatype %s: the scaled axis must be the last (input) axis %d, not %d", layout, dt.Name(), rank-1, axis)
	}
	return nil
}

func (l compressedTensors) Check(dt *tcast.DataType, axis, rank int) error {
	if _, err := l.scheme(dt); err != nil {
		return err
	}
	return checkMatrix("compressed-tensors", dt, axis, rank)
}

// weightPrefix is the module prefix of a weight: its name without a trailing
// ".weight".
func weightPrefix(name string) string { return strings.TrimSuffix(name, ".weight") }

// actualOf returns t in Actual form, checked.
func actualOf(layout, name string, t *tcast.Tensor) (*tcast.Tensor, error) {
	if t == nil {
		return nil, fmt.Errorf("layout %s: weight %s: nil tensor", layout, name)
	}
	a, err := tcast.Expand(t)
	if err != nil {
		return nil, fmt.Errorf("layout %s: weight %s: %w", layout, name, err)
	}
	return a, nil
}

// groupCheck checks that the input size in is a whole number of groups.
// The message names no weight: the weight's report line, or the error
// that wraps it, does.
func groupCheck(layout string, dt *tcast.DataType, in, group int) error {
	if group > 0 && in%group != 0 {
		return fmt.Errorf("layout %s: input size %d is not a multiple of the group size %d of %s",
			layout, in, group, dt)
	}
	return nil
}

// pack4 packs 4-bit codes (one per byte, even count) two to a byte, element
// 2k in the low nibble (kernels.PackBits with width 4).
func pack4(codes []byte) []byte {
	out := make([]byte, kernels.PackedLen(len(codes), 4))
	kernels.PackBits(out, codes, 4)
	return out
}

// unpack4 is the inverse of pack4.
func unpack4(b []byte) []byte {
	out := make([]byte, 2*len(b))
	kernels.UnpackBits(out, b, 4)
	return out
}

// int64Bytes returns the little-endian bytes of vs.
func int64Bytes(vs ...int) []byte {
	out := make([]byte, 8*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(int64(v)))
	}
	return out
}

// f32Bytes returns the little-endian bytes of float32 bits.
func f32Bytes(bits uint32) []byte { return binary.LittleEndian.AppendUint32(nil, bits) }

// plan checks weight name of shape shape and dt, and returns its scheme
// and the metadata entries every such weight carries (the NVFP4 tensor scale
// as a placeholder of its final width).
func (l compressedTensors) plan(name string, shape []int, dt *tcast.DataType, axis int) (*ctScheme, map[string]string, error) {
	const lay = "compressed-tensors"
	sc, err := l.scheme(dt)
	if err != nil {
		return nil, nil, err
	}
	if err := checkMatrix(lay, dt, axis, len(shape)); err != nil {
		return nil, nil, err
	}
	if err := groupCheck(lay, dt, shape[1], sc.group); err != nil {
		return nil, nil, err
	}
	if m := l.prune.Pattern.M; l.prune.active() && shape[1]%m != 0 {
		return nil, nil, fmt.Errorf("layout %s: weight %s: input size %d is not a multiple of %d, the group of %v sparsity",
			lay, name, shape[1], m, l.prune.Pattern)
	}
	p := weightPrefix(name)
	meta := map[string]string{KeyCTDataTypePrefix + p: dt.Name()}
	if d := sc.codec().declare; d != nil {
		d(p, meta)
	}
	return sc, meta, nil
}

func (l compressedTensors) Specs(name string, shape []int, dt *tcast.DataType, axis int) ([]Spec, map[string]string, error) {
	sc, meta, err := l.plan(name, shape, dt, axis)
	if err != nil {
		return nil, nil, err
	}
	w := &ctWeight{p: weightPrefix(name), dt: dt, sc: sc, out: shape[0], in: shape[1]}
	if l.prune.active() {
		return l.sparseSpecs(w), meta, nil
	}
	return sc.codec().specs(w), meta, nil
}

func (l compressedTensors) Encode(name string, t *tcast.Tensor, meta map[string]string) ([]Tensor, error) {
	a, err := actualOf("compressed-tensors", name, t)
	if err != nil {
		return nil, err
	}
	sc, m, err := l.plan(name, a.Shape, a.DataType, a.Axis)
	if err != nil {
		return nil, err
	}
	w := &ctWeight{p: weightPrefix(name), dt: a.DataType, sc: sc, out: a.Shape[0], in: a.Shape[1]}
	var ts []Tensor
	if l.prune.active() && (l.prune.Resolved() != SparseDense || sc.kind == ctNone) {
		ts, err = l.encodeSparse(name, w, a)
	} else {
		ts, err = encodeQuantized(name, w, a, m)
	}
	if err != nil {
		return nil, err
	}
	maps.Copy(meta, m)
	return ts, nil
}

// encodeQuantized writes weight w (a, Actual form) in its scheme's format,
// adding to meta the entries the format records.
func encodeQuantized(name string, w *ctWeight, a *tcast.Tensor, meta map[string]string) (
	[]Tensor, error) {
	c := w.sc.codec()
	data, err := c.encode(w, a, meta)
	if err != nil {
		return nil, &FormatError{Layout: "compressed-tensors", Weight: name, Err: err}
	}
	return zipTensors(c.specs(w), data), nil
}

// zipTensors pairs each spec with its data.
func zipTensors(specs []Spec, data [][]byte) []Tensor {
	ts := make([]Tensor, len(specs))
	for i := range specs {
		ts[i] = Tensor{Spec: specs[i], Data: data[i]}
	}
	return ts
}

// Find lists the modules holding a quantized weight: P.weight_packed (int or
// FP4 codes) or an F8_E4M3 P.weight beside a P.weight_scale, with the
// tensors of P that belong to it.
func (compressedTensors) Find(src Source) map[string][]string {
	out := map[string][]string{}
	findSparse(src, out)
	for _, n := range src.Names() {
		p, ok := strings.CutSuffix(n, ".weight_packed")
		if !ok {
			info, _, _ := src.Tensor(n)
			if p, ok = strings.CutSuffix(n, ".weight"); !ok || info.DType != safetensors.F8E4M3 {
				continue
			}
			if _, _, has := src.Tensor(p + ".weight_scale"); !has {
				continue
			}
			if _, _, inv := src.Tensor(p + ".weight_scale_inv"); inv {
				continue
			}
		}
		for _, suf := range []string{".weight_packed", ".weight", ".weight_scale", ".weight_shape", ".weight_zero_point", ".weight_global_scale"} {
			if _, _, has := src.Tensor(p + suf); has {
				out[p+".weight"] = append(out[p+".weight"], p+suf)
			}
		}
	}
	return out
}

// srcTensor is one tensor read from a Source.
type srcTensor struct {
	info safetensors.TensorInfo
	data []byte
}

// tensorIn reads a tensor of src and checks its dtype (one of dts) and
// shape (nil: any) and byte length.
func tensorIn(src Source, name string, shape []int, dts ...safetensors.DType) (*srcTensor, error) {
	info, b, ok := src.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("tensor %s is missing", name)
	}
	if !slices.Contains(dts, info.DType) {
		return nil, fmt.Errorf("tensor %s has dtype %v, want %v", name, info.DType, dts)
	}
	if shape != nil && !slices.Equal(info.Shape, shape) {
		return nil, fmt.Errorf("tensor %s has shape %v, want %v", name, info.Shape, shape)
	}
	n, ok := elements(info.Shape)
	if !ok {
		return nil, fmt.Errorf("tensor %s has a bad shape %v", name, info.Shape)
	}
	if want := n * info.DType.BitSize() / 8; len(b) != want {
		return nil, fmt.Errorf("tensor %s holds %d bytes, want %d for %v %v", name, len(b), want, info.DType, info.Shape)
	}
	return &srcTensor{info, b}, nil
}

// ints returns the elements of an I64 or I32 tensor (one tensorIn checked
// to have one of those dtypes) as int64.
func (t *srcTensor) ints() []int64 {
	w := t.info.DType.BitSize() / 8
	out := make([]int64, len(t.data)/w)
	for i := range out {
		if w == 8 {
			out[i] = int64(binary.LittleEndian.Uint64(t.data[8*i:]))
		} else {
			out[i] = int64(int32(binary.LittleEndian.Uint32(t.data[4*i:])))
		}
	}
	return out
}

// lookupCode returns the datatype of a code, preferring the registered
// names the layouts document, then any registered name, then the code.
func lookupCode(code string) (*tcast.DataType, error) {
	for _, n := range []string{"mxfp4", "mxfp8e4", "nvfp4", "fp8e4_tensor", "fp8e4_channel", "fp8e4_block128",
		"int4_g32", "int4_g64", "int4_g128", "int8_g32", "int8_g64", "int8_g128", "int4_channel", "int8_channel",
		"uint4_g32", "uint4_g64", "uint4_g128", "uint8_g32", "uint8_g64", "uint8_g128", "uint4_channel", "uint8_channel"} {
		if d, err := tcast.Lookup(n); err == nil && d.Code() == code {
			return d, nil
		}
	}
	for _, d := range tcast.Registered() {
		if d.Code() == code {
			return d, nil
		}
	}
	return tcast.Lookup(code)
}

// metaDataTypeOf returns the datatype recorded for prefix p, nil if none.
func metaDataTypeOf(meta map[string]string, p string) (*tcast.DataType, error) {
	n, ok := metaValue(meta, KeyCTDataTypePrefix+p, legacyCTDataType+p)
	if !ok {
		return nil, nil
	}
	d, err := tcast.Lookup(n)
	if err != nil {
		return nil, fmt.Errorf("metadata %s%s: %w", KeyCTDataTypePrefix, p, err)
	}
	return d, nil
}

// checkScaleCodes rejects E4M3 block scale codes with the sign bit set, which
// the unsigned UE4M3 format cannot hold.
func checkScaleCodes(name string, b []byte) error {
	for i, c := range b {
		if c&0x80 != 0 {
			return fmt.Errorf("tensor %s: block scale %d is negative (code 0x%02x); NVFP4 block scales are unsigned", name, i, c)
		}
	}
	return nil
}

// part builds an Actual-form part of format f.
func part(f *dtype.Format, shape []int, b []byte) *tcast.Part {
	return &tcast.Part{Format: f, Bits: f.Bits(), Shape: slices.Clone(shape), Bytes: b}
}

// scaleShape2D is the scale shape of spec over a 2-D [out, in] weight scaled
// along its last axis, as tcast lays it out.
func scaleShape2D(spec *scale.Spec, out, in int) []int {
	cdiv := func(a, b int) int { return (a + b - 1) / b }
	size := func(t scale.Tile, d int) int {
		if t.Size == 0 {
			return max(d, 1)
		}
		return t.Size
	}
	switch len(spec.Tiles) {
	case 0:
		return []int{1}
	case 1:
		return []int{out, cdiv(in, size(spec.Tiles[0], in))}
	}
	return []int{cdiv(out, size(spec.Tiles[0], out)), cdiv(in, size(spec.Tiles[1], in))}
}

// finish validates a decoded Actual tensor; a tensor that does not hold
// together is a *FormatError.
func finish(layout, name string, t *tcast.Tensor) (*tcast.Tensor, bool, error) {
	if err := tcast.Validate(t); err != nil {
		return nil, true, &FormatError{Layout: layout, Weight: name, Err: err}
	}
	return t, true, nil
}

func (compressedTensors) Decode(name string, src Source) (*tcast.Tensor, bool, error) {
	const lay = "compressed-tensors"
	p := weightPrefix(name)
	if _, _, ok := src.Tensor(p + ".bitmask"); ok {
		return decodeSparse(name, p, src)
	}
	kind, ok := ctDetect(src, p)
	if !ok {
		if info, _, ok := src.Tensor(p + ".weight"); ok && info.DType.Float() {
			return decodePlain(name, p, src)
		}
		return nil, false, nil
	}
	t, err := decodeQuantized(kind, src, p)
	if err != nil {
		return nil, true, &FormatError{Layout: lay, Weight: name, Err: err}
	}
	return finish(lay, name, t)
}

// ctDetect returns the format of module p's tensors: that of the first
// codec whose tensors p has.
func ctDetect(src Source, p string) (ctKind, bool) {
	for k, c := range ctCodecs {
		if c.match != nil && c.match(src, p) {
			return ctKind(k), true
		}
	}
	return 0, false
}

// decodeQuantized reads module p's weight stored in format kind: its
// datatype (recorded or derived), shape, scale and codes.
func decodeQuantized(kind ctKind, src Source, p string) (*tcast.Tensor, error) {
	c := ctCodecs[kind]
	dt, err := metaDataTypeOf(src.Metadata(), p)
	if err != nil {
		return nil, err
	}
	sinfo, _, hasScale := src.Tensor(p + ".weight_scale")
	if !hasScale {
		return nil, fmt.Errorf("tensor %s.weight_scale is missing", p)
	}
	out, in, err := c.shape(src, p)
	if err != nil {
		return nil, err
	}
	if dt == nil {
		if dt, err = c.deriveAt(src, p, out, in, sinfo); err != nil {
			return nil, err
		}
	}
	sc, err := ctClassify(dt)
	if err != nil {
		return nil, err
	}
	if sc.kind != kind {
		return nil, fmt.Errorf("datatype %s is written as %s, but the tensors are %s",
			dt.Name(), sc.codec().format, c.format)
	}
	w := &ctWeight{p: p, dt: dt, sc: sc, out: out, in: in}
	t := &tcast.Tensor{DataType: dt, Form: tcast.Actual, Shape: []int{out, in}, Axis: 1}
	if t.Scale, err = w.readScale(src); err != nil {
		return nil, err
	}
	if err := c.decode(w, t, src); err != nil {
		return nil, err
	}
	return t, nil
}

// readScale reads w's P.weight_scale (U8 scale codes may also be stored
// F8_E8M0).
func (w *ctWeight) readScale(src Source) (*tcast.Part, error) {
	sshape := w.scaleShape()
	dts := []safetensors.DType{w.sc.scaleDT}
	if w.sc.scaleDT == safetensors.U8 {
		dts = append(dts, safetensors.F8E8M0)
	}
	s, err := tensorIn(src, w.p+".weight_scale", sshape, dts...)
	if err != nil {
		return nil, err
	}
	return part(w.dt.Spec().Scale, sshape, slices.Clone(s.data)), nil
}

// ctArgs is compressed-tensors' QuantizationArgs, with fields every release
// accepts (QuantizationArgs forbids unknown fields, so the newer scale_dtype
// and zp_dtype are left out; their defaults fit).
type ctArgs struct {
	NumBits        int    `json:"num_bits"`
	Type           string `json:"type"`
	Symmetric      bool   `json:"symmetric"`
	GroupSize      *int   `json:"group_size"`
	Strategy       string `json:"strategy"`
	BlockStructure []int  `json:"block_structure,omitempty"`
	Dynamic        bool   `json:"dynamic"`
	Observer       string `json:"observer"`
}

type ctGroup struct {
	Targets           []string `json:"targets"`
	Weights           ctArgs   `json:"weights"`
	InputActivations  *ctArgs  `json:"input_activations"`
	OutputActivations *ctArgs  `json:"output_activations"`
	Format            string   `json:"format"`
}

type ctConfig struct {
	QuantMethod        string             `json:"quant_method"`
	Format             string             `json:"format"`
	QuantizationStatus string             `json:"quantization_status"`
	ConfigGroups       map[string]ctGroup `json:"config_groups"`
	Ignore             []string           `json:"ignore"`
	KVCacheScheme      *ctArgs            `json:"kv_cache_scheme"`
	SparsityConfig     *ctSparsityConfig  `json:"sparsity_config,omitempty"`
	TransformConfig    *struct{}          `json:"transform_config,omitempty"`
	Version            string             `json:"version"`
}

// keptModules returns the module names of the kept weights named
// "<module>.weight", sorted and without duplicates. Other kept tensors
// (biases, buffers) name no module a loader would quantize.
func keptModules(kept []string) []string {
	out := []string{}
	for _, k := range kept {
		if m, ok := strings.CutSuffix(k, ".weight"); ok {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func (l compressedTensors) Files(dt *tcast.DataType, converted []Converted, kept []string, srcConfig []byte) (map[string][]byte, error) {
	if l.prune.active() {
		return l.sparseFiles(dt, converted, kept, srcConfig)
	}
	if dt == nil {
		return nil, fmt.Errorf("layout compressed-tensors: nil datatype")
	}
	sc, err := ctClassify(dt)
	if err != nil {
		return nil, err
	}
	return l.quantFiles(sc, kept, srcConfig, nil)
}

// quantFiles returns config.json for weights quantized in scheme sc, with
// the sparsity config sp when not nil.
func (compressedTensors) quantFiles(sc *ctScheme, kept []string, srcConfig []byte, sp *ctSparsityConfig) (map[string][]byte, error) {
	args := ctArgs{NumBits: sc.bits, Type: sc.typ, Symmetric: sc.symmetric, Strategy: sc.strategy, Observer: "minmax"}
	if sc.group > 0 {
		g := sc.group
		args.GroupSize = &g
	}
	if sc.strategy == "block" {
		args.BlockStructure = []int{sc.block[0], sc.block[1]}
	}
	format := sc.codec().format
	qc := ctConfig{
		QuantMethod:        "compressed-tensors",
		Format:             format,
		QuantizationStatus: "compressed",
		ConfigGroups:       map[string]ctGroup{"group_0": {Targets: []string{"Linear"}, Weights: args, Format: format}},
		Ignore:             keptModules(kept),
		Version:            compressedTensorsVersion,
	}
	if sp != nil {
		qc.SparsityConfig, qc.TransformConfig, qc.Version = sp, &struct{}{}, ctSparseVersion
	}
	cfg, err := setConfigKey(srcConfig, "quantization_config", qc)
	if err != nil {
		return nil, fmt.Errorf("layout compressed-tensors: %w", err)
	}
	return map[string][]byte{"config.json": cfg}, nil
}

// configKV is one key of a JSON object and its raw value.
type configKV struct {
	k string
	v json.RawMessage
}

// setConfigKey returns the JSON object src (empty or nil: {}) with key set
// to value (removed for a nil value), keeping the order of the other keys,
// indented by two spaces.
func setConfigKey(src []byte, key string, value any) ([]byte, error) {
	kvs, err := configKeys(src)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(kvs, func(e configKV) bool { return e.k == key })
	switch {
	case value == nil && i >= 0:
		kvs = slices.Delete(kvs, i, i+1)
	case value != nil:
		vb, err := json.Marshal(value)
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			kvs[i].v = vb
		} else {
			kvs = append(kvs, configKV{key, vb})
		}
	}
	return writeConfig(kvs)
}

// configKeys returns the keys of the JSON object src (empty or nil: none)
// in their order, a duplicate key's last value at its first place.
func configKeys(src []byte) ([]configKV, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return nil, nil
	}
	var kvs []configKV
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return nil, fmt.Errorf("config.json is not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("config.json: %w", err)
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("config.json: key %q: %w", k, err)
		}
		if i := slices.IndexFunc(kvs, func(e configKV) bool { return e.k == k }); i >= 0 {
			kvs[i].v = v // a duplicate key: the last one wins, as in Python
			continue
		}
		kvs = append(kvs, configKV{k, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("config.json: data after the top-level object")
	}
	return kvs, nil
}

// writeConfig returns the JSON object of kvs, indented by two spaces, with
// a final newline.
func writeConfig(kvs []configKV) ([]byte, error) {
	var compact bytes.Buffer
	compact.WriteByte('{')
	for i, e := range kvs {
		if i > 0 {
			compact.WriteByte(',')
		}
		kb, _ := json.Marshal(e.k)
		compact.Write(kb)
		compact.WriteByte(':')
		compact.Write(e.v)
	}
	compact.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// PlainConfig returns config.json src without its quantization_config, for
// a checkpoint whose weights were dequantized; nil for a nil src.
func PlainConfig(src []byte) ([]byte, error) {
	if src == nil {
		return nil, nil
	}
	return setConfigKey(src, "quantization_config", nil)
}
