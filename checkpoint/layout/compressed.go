package layout

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
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

func init() { Register(compressedTensors{}) }

// compressedTensorsVersion is the compressed-tensors release whose on-disk
// layout the config follows (the 4- and 8-bit layouts are the same in every
// release).
const compressedTensorsVersion = "0.18.0"

func (compressedTensors) Name() string { return "compressed-tensors" }

func (compressedTensors) Container() Container { return Safetensors }

// ctKind is a compressed-tensors compression format.
type ctKind int

const (
	ctPack  ctKind = iota // pack-quantized
	ctFloat               // float-quantized
	ctNVFP4               // nvfp4-pack-quantized
	ctMXFP4               // mxfp4-pack-quantized
	ctMXFP8               // mxfp8-quantized
	ctInt                 // int-quantized (int8 stored whole, with pruning only)
	ctNone                // no quantization: pruned float weights (with pruning only)
)

var ctFormats = [...]string{
	ctPack:  "pack-quantized",
	ctFloat: "float-quantized",
	ctNVFP4: "nvfp4-pack-quantized",
	ctMXFP4: "mxfp4-pack-quantized",
	ctMXFP8: "mxfp8-quantized",
	ctInt:   "int-quantized",
	ctNone:  "dense",
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

// ctClassify maps a datatype to its compressed-tensors scheme.
func ctClassify(dt *tcast.DataType) (*ctScheme, error) {
	bad := func(why string) (*ctScheme, error) {
		return nil, fmt.Errorf("layout compressed-tensors: datatype %s: %s; the layout takes %s", dt.Name(), why, ctAccepted)
	}
	s := dt.Spec()
	if s == nil {
		return bad("unscaled datatypes are not quantized formats")
	}
	if !plainTiles(s) {
		return bad("subtile offsets and sparsity have no compressed-tensors form")
	}
	switch {
	case isNVFP4(dt):
		return &ctScheme{kind: ctNVFP4, bits: 4, typ: "float", symmetric: true, strategy: "tensor_group", group: 16, scaleDT: safetensors.F8E4M3}, nil
	case isMXFP4(dt):
		return &ctScheme{kind: ctMXFP4, bits: 4, typ: "float", symmetric: true, strategy: "group", group: 32, scaleDT: safetensors.U8}, nil
	case isMX(dt, fmtE4M3):
		return &ctScheme{kind: ctMXFP8, bits: 8, typ: "float", symmetric: true, strategy: "group", group: 32, scaleDT: safetensors.U8}, nil
	}
	if s.TensorScale != nil {
		return bad("a second-level tensor scale is only supported as nvfp4")
	}
	sdt := floatScaleDType(s.Scale)
	if sdt == 0 {
		return bad(fmt.Sprintf("scale format %s has no safetensors dtype (want float16, bfloat16 or float32)", s.Scale.Name()))
	}
	elem := dt.Elem().Name()
	if elem == fmtE4M3 {
		if s.Zero != nil {
			return bad("float data takes no zero point")
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
			return bad("e4m3fn weights need a tensor, channel or 2-D block scale")
		}
		return sc, nil
	}
	var bits int
	var symmetric bool
	switch elem {
	case "int4", "int8":
		bits, symmetric = int(elem[3]-'0'), true
		if s.Zero != nil {
			return bad("signed integers are written symmetric, without a zero point")
		}
	case "uint4", "uint8":
		bits = int(elem[4] - '0')
		if s.Zero == nil || (s.Zero.Name() != fmtUint8 && s.Zero.Name() != fmtInt8) {
			return bad("unsigned integers need a uint8 or int8 zero point")
		}
	default:
		return bad(fmt.Sprintf("element format %s is not supported", elem))
	}
	sc := &ctScheme{kind: ctPack, bits: bits, typ: "int", symmetric: symmetric, scaleDT: sdt}
	switch {
	case len(s.Tiles) == 1 && s.Tiles[0].Size == 0:
		sc.strategy = "channel"
	case len(s.Tiles) == 1:
		sc.strategy, sc.group = "group", s.Tiles[0].Size
	default:
		return bad("integer weights need a group or channel scale along the input axis")
	}
	return sc, nil
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
func groupCheck(layout, name string, dt *tcast.DataType, in, group int) error {
	if group > 0 && in%group != 0 {
		return fmt.Errorf("layout %s: weight %s: input size %d is not a multiple of the group size %d of %s",
			layout, name, in, group, dt.Name())
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

// wordsPerRow is the int32 words a row of n b-bit values takes.
func wordsPerRow(n, b int) int { return (n*b + 31) / 32 }

// packInt32 packs a rows×n matrix of b-bit values (one per byte) row by row
// into rows×wordsPerRow(n, b) little-endian int32 words: value i of a row at
// bit b·(i mod 32/b) of word i/(32/b), the last word padded with zero bits.
// colMajor packs along dim 0 instead: the result is wordsPerRow(rows, b)×n.
func packInt32(vals []byte, rows, n, b int, colMajor bool) []byte {
	if colMajor {
		w := wordsPerRow(rows, b)
		out := make([]byte, 4*w*n)
		packLines(n, rows, b, func(c, r int) byte { return vals[r*n+c] },
			func(c, k int, word uint32) { binary.LittleEndian.PutUint32(out[4*(k*n+c):], word) })
		return out
	}
	w := wordsPerRow(n, b)
	out := make([]byte, 4*rows*w)
	packLines(rows, n, b, func(r, c int) byte { return vals[r*n+c] },
		func(r, k int, word uint32) { binary.LittleEndian.PutUint32(out[4*(r*w+k):], word) })
	return out
}

// packLines packs each of lines sequences of length b-bit values (value i of
// line l is get(l, i)) into 32-bit words, 32/b values per word from bit 0 up,
// and hands word k of line l to put.
func packLines(lines, length, b int, get func(l, i int) byte, put func(l, k int, word uint32)) {
	per := 32 / b
	mask := uint32(1)<<b - 1
	for l := range lines {
		for k := range wordsPerRow(length, b) {
			var word uint32
			for i := range per {
				if j := k*per + i; j < length {
					word |= (uint32(get(l, j)) & mask) << (b * i)
				}
			}
			put(l, k, word)
		}
	}
}

// unpackInt32 is the inverse of packInt32 (padding bits are ignored).
func unpackInt32(words []byte, rows, n, b int, colMajor bool) []byte {
	per := 32 / b
	mask := uint32(1)<<b - 1
	out := make([]byte, rows*n)
	if colMajor {
		for row := range rows {
			for c := range n {
				word := binary.LittleEndian.Uint32(words[4*((row/per)*n+c):])
				out[row*n+c] = byte(word >> (b * (row % per)) & mask)
			}
		}
		return out
	}
	w := wordsPerRow(n, b)
	for r := range rows {
		for c := range n {
			word := binary.LittleEndian.Uint32(words[4*(r*w+c/per):])
			out[r*n+c] = byte(word >> (b * (c % per)) & mask)
		}
	}
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

// ctSpecs declares the tensors of module p holding an [out, in] weight of
// datatype dt in scheme sc, in the order Encode writes them.
func ctSpecs(p string, sc *ctScheme, dt *tcast.DataType, out, in int) []Spec {
	sshape := scaleShape2D(dt.Spec(), out, in)
	scaleSpec := specOf(p+".weight_scale", sc.scaleDT, sshape)
	switch sc.kind {
	case ctPack:
		specs := []Spec{
			specOf(p+".weight_packed", safetensors.I32, []int{out, wordsPerRow(in, sc.bits)}),
			scaleSpec,
			specOf(p+".weight_shape", safetensors.I64, []int{2}),
		}
		if !sc.symmetric {
			specs = append(specs, specOf(p+".weight_zero_point", safetensors.I32, []int{wordsPerRow(out, sc.bits), sshape[1]}))
		}
		return specs
	case ctFloat, ctMXFP8:
		return []Spec{specOf(p+".weight", safetensors.F8E4M3, []int{out, in}), scaleSpec}
	case ctMXFP4:
		return []Spec{specOf(p+".weight_packed", safetensors.U8, []int{out, in / 2}), scaleSpec}
	}
	return []Spec{specOf(p+".weight_packed", safetensors.U8, []int{out, in / 2}), scaleSpec,
		specOf(p+".weight_global_scale", safetensors.F32, []int{1})}
}

// ctPlan checks weight name of shape shape and dt, and returns its scheme
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
	if err := groupCheck(lay, name, dt, shape[1], sc.group); err != nil {
		return nil, nil, err
	}
	if m := l.prune.Pattern.M; l.prune.active() && shape[1]%m != 0 {
		return nil, nil, fmt.Errorf("layout %s: weight %s: input size %d is not a multiple of %d, the group of %v sparsity",
			lay, name, shape[1], m, l.prune.Pattern)
	}
	p := weightPrefix(name)
	meta := map[string]string{KeyCTDataTypePrefix + p: dt.Name()}
	if sc.kind == ctNVFP4 {
		// Always recorded, at a fixed width, so that a converter can declare
		// the key before it knows the data and patch the value in place.
		meta[KeyCTGlobalScalePrefix+p] = fmt.Sprintf("0x%08x", 0)
	}
	return sc, meta, nil
}

func (l compressedTensors) Specs(name string, shape []int, dt *tcast.DataType, axis int) ([]Spec, map[string]string, error) {
	sc, meta, err := l.plan(name, shape, dt, axis)
	if err != nil {
		return nil, nil, err
	}
	if l.prune.active() {
		return l.sparseSpecs(weightPrefix(name), sc, dt, shape[0], shape[1]), meta, nil
	}
	return ctSpecs(weightPrefix(name), sc, dt, shape[0], shape[1]), meta, nil
}

func (l compressedTensors) Encode(name string, t *tcast.Tensor, meta map[string]string) ([]Tensor, error) {
	const lay = "compressed-tensors"
	a, err := actualOf(lay, name, t)
	if err != nil {
		return nil, err
	}
	dt := a.DataType
	sc, m, err := l.plan(name, a.Shape, dt, a.Axis)
	if err != nil {
		return nil, err
	}
	out, in := a.Shape[0], a.Shape[1]
	p := weightPrefix(name)
	if l.prune.active() && (l.prune.Resolved() != SparseDense || sc.kind == ctNone) {
		ts, err := l.encodeSparse(name, p, sc, a)
		if err != nil {
			return nil, err
		}
		maps.Copy(meta, m)
		return ts, nil
	}
	fail := func(format string, args ...any) ([]Tensor, error) {
		return nil, &FormatError{Layout: lay, Weight: name, Err: fmt.Errorf(format, args...)}
	}
	var data [][]byte
	switch sc.kind {
	case ctPack:
		half := byte(1) << (sc.bits - 1)
		mask := byte(1)<<sc.bits - 1
		vals := make([]byte, len(a.Data.Bytes))
		for i, c := range a.Data.Bytes {
			if sc.symmetric {
				vals[i] = (c ^ half) & mask // q + 2^(b−1), offset binary
			} else {
				vals[i] = c & mask // q_u = q_s + 2^(b−1)
			}
		}
		data = [][]byte{packInt32(vals, out, in, sc.bits, false), a.Scale.Bytes, int64Bytes(out, in)}
		if !sc.symmetric {
			groups := a.Zero.Shape[1]
			zs := make([]byte, len(a.Zero.Bytes))
			zf := dt.Spec().Zero
			for i, c := range a.Zero.Bytes {
				z := int(zf.Decode(uint32(c))) // int8 codes are two's complement, uint8 codes the value
				if z < 0 || z >= 1<<sc.bits {
					return fail("zero point %d of block %d is outside the %d-bit range 0..%d compressed-tensors stores", z, i, sc.bits, 1<<sc.bits-1)
				}
				zs[i] = byte(z)
			}
			data = append(data, packInt32(zs, out, groups, sc.bits, true))
		}
	case ctFloat, ctMXFP8:
		data = [][]byte{a.Data.Bytes, a.Scale.Bytes}
	case ctMXFP4:
		data = [][]byte{pack4(a.Data.Bytes), a.Scale.Bytes}
	case ctNVFP4:
		st := binary.LittleEndian.Uint32(a.TensorScale.Bytes)
		g, _ := globalScale(st)
		m[KeyCTGlobalScalePrefix+p] = fmt.Sprintf("0x%08x", st)
		data = [][]byte{pack4(a.Data.Bytes), a.Scale.Bytes, f32Bytes(g)}
	}
	maps.Copy(meta, m)
	specs := ctSpecs(p, sc, dt, out, in)
	ts := make([]Tensor, len(specs))
	for i := range specs {
		ts[i] = Tensor{Spec: specs[i], Data: data[i]}
	}
	return ts, nil
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

// globalScale returns the bits of the compressed-tensors global scale
// float32(1/s_t) for the tensor scale bits st, and whether float32(1/g)
// gives s_t back exactly.
func globalScale(st uint32) (uint32, bool) {
	s := math.Float32frombits(st)
	g := 1 / s
	return math.Float32bits(g), math.Float32bits(1/g) == st
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
	fail := func(format string, args ...any) (*tcast.Tensor, bool, error) {
		return nil, true, &FormatError{Layout: lay, Weight: name, Err: fmt.Errorf(format, args...)}
	}
	if _, _, ok := src.Tensor(p + ".bitmask"); ok {
		return decodeSparse(name, p, src)
	}
	// Which format holds the weight, if any.
	winfo, _, hasW := src.Tensor(p + ".weight")
	pinfo, _, hasPacked := src.Tensor(p + ".weight_packed")
	sinfo, _, hasScale := src.Tensor(p + ".weight_scale")
	var kind ctKind
	switch {
	case hasPacked && pinfo.DType == safetensors.I32:
		kind = ctPack
	case hasPacked && pinfo.DType == safetensors.U8:
		kind = ctMXFP4
		if _, _, ok := src.Tensor(p + ".weight_global_scale"); ok {
			kind = ctNVFP4
		}
	case hasW && winfo.DType == safetensors.F8E4M3 && hasScale:
		kind = ctFloat
		if sinfo.DType == safetensors.U8 || sinfo.DType == safetensors.F8E8M0 {
			kind = ctMXFP8
		}
	case hasW && winfo.DType.Float():
		return decodePlain(name, p, src)
	default:
		return nil, false, nil
	}
	dt, err := metaDataTypeOf(src.Metadata(), p)
	if err != nil {
		return fail("%w", err)
	}
	if !hasScale {
		return fail("tensor %s.weight_scale is missing", p)
	}
	// The weight's shape.
	var out, in int
	switch kind {
	case ctPack:
		ws, err := tensorIn(src, p+".weight_shape", []int{2}, safetensors.I64, safetensors.I32)
		if err != nil {
			return fail("%w", err)
		}
		dims := ws.ints()
		out, in = int(dims[0]), int(dims[1])
		if out < 0 || in < 0 || len(pinfo.Shape) != 2 || pinfo.Shape[0] != out || in > 8*pinfo.Shape[1] {
			return fail("weight_shape [%d, %d] does not match weight_packed %v", out, in, pinfo.Shape)
		}
	case ctMXFP4, ctNVFP4:
		if len(pinfo.Shape) != 2 {
			return fail("weight_packed has shape %v, want [out, in/2]", pinfo.Shape)
		}
		out, in = pinfo.Shape[0], 2*pinfo.Shape[1]
	default:
		if len(winfo.Shape) != 2 {
			return fail("weight has shape %v, want [out, in]", winfo.Shape)
		}
		out, in = winfo.Shape[0], winfo.Shape[1]
	}
	if dt == nil {
		if dt, err = ctDerive(kind, out, in, pinfo, sinfo, src, p); err != nil {
			return fail("%v (and no %s%s metadata names the datatype)", err, KeyCTDataTypePrefix, p)
		}
	}
	sc, err := ctClassify(dt)
	if err != nil {
		return fail("%w", err)
	}
	if sc.kind != kind {
		return fail("datatype %s is written as %s, but the tensors are %s", dt.Name(), ctFormats[sc.kind], ctFormats[kind])
	}
	spec := dt.Spec()
	t := &tcast.Tensor{DataType: dt, Form: tcast.Actual, Shape: []int{out, in}, Axis: 1}
	sshape := scaleShape2D(spec, out, in)
	scaleDTs := []safetensors.DType{sc.scaleDT}
	if sc.scaleDT == safetensors.U8 {
		scaleDTs = append(scaleDTs, safetensors.F8E8M0)
	}
	s, err := tensorIn(src, p+".weight_scale", sshape, scaleDTs...)
	if err != nil {
		return fail("%w", err)
	}
	t.Scale = part(spec.Scale, sshape, slices.Clone(s.data))
	switch kind {
	case ctPack:
		w, err := tensorIn(src, p+".weight_packed", []int{out, wordsPerRow(in, sc.bits)}, safetensors.I32)
		if err != nil {
			return fail("%w", err)
		}
		vals := unpackInt32(w.data, out, in, sc.bits, false)
		if sc.symmetric {
			half := byte(1) << (sc.bits - 1)
			for i, v := range vals {
				vals[i] = v ^ half
			}
		}
		t.Data = part(dt.Elem(), t.Shape, vals)
		if !sc.symmetric {
			groups := sshape[1]
			z, err := tensorIn(src, p+".weight_zero_point", []int{wordsPerRow(out, sc.bits), groups}, safetensors.I32)
			if err != nil {
				return fail("%w", err)
			}
			zs := unpackInt32(z.data, out, groups, sc.bits, true)
			for i, v := range zs {
				if spec.Zero.Name() == fmtInt8 && v > math.MaxInt8 {
					return fail("zero point %d of block %d does not fit the int8 zero-point format of %s", v, i, dt.Name())
				}
			}
			t.Zero = part(spec.Zero, sshape, zs)
		}
	case ctFloat, ctMXFP8:
		w, err := tensorIn(src, p+".weight", []int{out, in}, safetensors.F8E4M3)
		if err != nil {
			return fail("%w", err)
		}
		t.Data = part(dt.Elem(), t.Shape, slices.Clone(w.data))
	case ctMXFP4, ctNVFP4:
		w, err := tensorIn(src, p+".weight_packed", []int{out, in / 2}, safetensors.U8)
		if err != nil {
			return fail("%w", err)
		}
		t.Data = part(dt.Elem(), t.Shape, unpack4(w.data))
		if kind == ctNVFP4 {
			if err := checkScaleCodes(p+".weight_scale", s.data); err != nil {
				return fail("%w", err)
			}
			g, err := tensorIn(src, p+".weight_global_scale", []int{1}, safetensors.F32)
			if err != nil {
				return fail("%w", err)
			}
			rec, _ := metaValue(src.Metadata(), KeyCTGlobalScalePrefix+p, legacyCTGlobalScalePref+p)
			st, err := tensorScaleFromGlobal(binary.LittleEndian.Uint32(g.data), rec)
			if err != nil {
				return fail("%w", err)
			}
			t.TensorScale = part(spec.TensorScale, []int{1}, f32Bytes(st))
		}
	}
	return finish(lay, name, t)
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

// ctDerive finds the datatype of a compressed-tensors weight from its
// tensors: a float-quantized (ctFloat) or int-quantized (ctInt) weight from
// its scale's dtype and shape (a block scale for the first, a group scale for
// the second), a pack-quantized one also from pinfo, the weight_packed.
func ctDerive(kind ctKind, out, in int, pinfo, sinfo safetensors.TensorInfo, src Source, p string) (*tcast.DataType, error) {
	switch kind {
	case ctNVFP4:
		return tcast.MustLookup("nvfp4"), nil
	case ctMXFP4:
		return tcast.MustLookup("mxfp4"), nil
	case ctMXFP8:
		return tcast.MustLookup("mxfp8e4"), nil
	case ctFloat, ctInt:
		sn, ok := floatFormatName[sinfo.DType]
		if !ok {
			return nil, fmt.Errorf("weight_scale dtype %v is not a float scale", sinfo.DType)
		}
		code, tiled := fmtE4M3+"_"+sn, "128×128 block"
		if kind == ctInt {
			code, tiled = fmtInt8+"_"+sn, "group"
		}
		cdiv := func(a int) int { return (a + 127) / 128 }
		switch {
		case slices.Equal(sinfo.Shape, []int{1}):
		case slices.Equal(sinfo.Shape, []int{out, 1}):
			code += "_t0"
		case kind == ctFloat && slices.Equal(sinfo.Shape, []int{cdiv(out), cdiv(in)}):
			code += "_t128_t128"
		case kind == ctInt && len(sinfo.Shape) == 2 && sinfo.Shape[0] == out && sinfo.Shape[1] > 1 && in%sinfo.Shape[1] == 0:
			code += fmt.Sprintf("_t%d", in/sinfo.Shape[1])
		default:
			return nil, fmt.Errorf("weight_scale shape %v is not a tensor, channel or %s scale of [%d, %d]", sinfo.Shape, tiled, out, in)
		}
		return lookupCode(code)
	}
	// pack-quantized.
	if len(pinfo.Shape) != 2 {
		return nil, fmt.Errorf("weight_packed shape %v is not 2-D", pinfo.Shape)
	}
	bits := 0
	for _, b := range []int{4, 8} {
		if pinfo.Shape[1] == wordsPerRow(in, b) {
			if bits != 0 {
				return nil, fmt.Errorf("%d words per row of %d values fit both 4 and 8 bits", pinfo.Shape[1], in)
			}
			bits = b
		}
	}
	if bits == 0 {
		return nil, fmt.Errorf("%d words per row of %d values is neither 4- nor 8-bit packing", pinfo.Shape[1], in)
	}
	sn, ok := floatFormatName[sinfo.DType]
	if !ok {
		return nil, fmt.Errorf("weight_scale dtype %v is not a float scale", sinfo.DType)
	}
	if len(sinfo.Shape) != 2 || sinfo.Shape[0] != out || sinfo.Shape[1] < 1 || in%sinfo.Shape[1] != 0 {
		return nil, fmt.Errorf("weight_scale shape %v is not [%d, groups] with groups dividing %d", sinfo.Shape, out, in)
	}
	elem := fmt.Sprintf("int%d", bits)
	if _, _, ok := src.Tensor(p + ".weight_zero_point"); ok {
		// Our uint8 types take uint8 zero points (0..255), the uint4 ones int8.
		zero := "_int8"
		if bits == 8 {
			zero = "_uint8"
		}
		elem, sn = "u"+elem, sn+zero
	}
	tile := "_t0"
	if g := sinfo.Shape[1]; g > 1 {
		tile = fmt.Sprintf("_t%d", in/g)
	}
	return lookupCode(elem + "_" + sn + tile)
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
	format := ctFormats[sc.kind]
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

// setConfigKey returns the JSON object src (empty or nil: {}) with key set
// to value (removed for a nil value), keeping the order of the other keys,
// indented by two spaces.
func setConfigKey(src []byte, key string, value any) ([]byte, error) {
	type kv struct {
		k string
		v json.RawMessage
	}
	var kvs []kv
	if len(bytes.TrimSpace(src)) > 0 {
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
			if i := slices.IndexFunc(kvs, func(e kv) bool { return e.k == k }); i >= 0 {
				kvs[i].v = v // a duplicate key: the last one wins, as in Python
				continue
			}
			kvs = append(kvs, kv{k, v})
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("config.json: %w", err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, fmt.Errorf("config.json: data after the top-level object")
		}
	}
	i := slices.IndexFunc(kvs, func(e kv) bool { return e.k == key })
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
			kvs = append(kvs, kv{key, vb})
		}
	}
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
