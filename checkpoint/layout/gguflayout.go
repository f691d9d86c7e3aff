package layout

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/codebook"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/names"
	"github.com/tensorcast-go/tensorcast/internal/shape"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// The gguf layout writes each cast weight as one GGUF tensor of a ggml
// type, under the weight's own name and with its row-major shape (a GGUF
// file lists the dimensions innermost first). Blocks run along the
// innermost axis, which must be the scaled axis and a multiple of the
// block size long; weights have 1 to 4 dimensions. It takes these
// datatypes:
//
//   - mxfp4 (any name tcast resolves to OCP MXFP4: mxfp4, mxfp4e2, MXFP4,
//     e2m1_e8m0_t32), written as ggml's MXFP4: per block the E8M0 scale
//     byte, then 16 bytes of E2M1 codes, byte j holding element j in its
//     low nibble and element j+16 in its high nibble. Cast by tcast.Cast;
//     with its default options (floor scales, round to nearest even, no
//     keep mask) Cast quantizes straight into the blocks with
//     gguf.Quantize, which gives the same codes.
//   - q8_0, ggml's Q8_0: per block the float16 scale d, then 32 int8 codes
//     q; the value is q·d. As a tcast datatype: int8 elements with a
//     float16 scale per 32 along the last axis (code int8_float16_t32).
//   - q4_0, ggml's Q4_0: per block the float16 scale d, then 16 bytes of
//     4-bit codes q in the split order of MXFP4; the value is (q−8)·d. As a
//     tcast datatype: int4 elements q−8 in −8..7 with a float16 scale per
//     32 (code int4_float16_t32).
//   - q4_1, q5_0, q5_1, iq4_nl (blocks of 32) and the K-quants q2_k, q3_k,
//     q4_k, q5_k, q6_k, q8_k and iq4_xs (super-blocks of 256), in ggml's
//     layouts (see the gguf package's decoders). As tcast datatypes they are
//     the view of gguf.UnpackBlocks: one code per element and, per
//     sub-block, the decoded scale and (for the types with one) min, value =
//     code·scale − min, exactly ggml's: q4_1 uint4_float16_float16_t32, q5_0
//     int5_float16_t32, q5_1 uint5_float16_float16_t32, iq4_nl the iq4_nl
//     codebook with a float16 scale per 32, q2_k uint2_float32_float32_t16,
//     q3_k int3_float32_t16, q4_k uint4_float32_float32_t32, q5_k
//     uint5_float32_float32_t32, q6_k int6_float32_t16, q8_k int8_float32_t256,
//     iq4_xs the iq4_nl codebook with a float32 scale per 32. Their float32
//     scales are products of a super-block's float16 scale and a small
//     integer, which Encode recovers (gguf.PackBlocks); an Actual tensor
//     whose scales are not such products is refused.
//   - iq3_s, iq3_xxs, iq2_s, iq2_xs, iq2_xxs, iq1_m and iq1_s, ggml's grid
//     types (super-blocks of 256 whose points of a fixed grid hold 8 or 4
//     elements). As tcast datatypes they are the view of gguf.UnpackBlocks:
//     per element an index into a table of the grid's levels, signed (or,
//     for IQ1, shifted by ±1/8: gguf.IQValues), times a float32 scale per
//     32 (per 16 for iq2_s, iq2_xs and iq1_m); Encode refuses an Actual
//     tensor whose levels are not points of the grid.
//   - tq1_0, tq2_0 (ternary, blocks of 256), q1_0 (signs, 128) and q2_0
//     (64), ggml's 1- and 2-bit types with a float16 scale d per block. As
//     tcast datatypes they are the view of gguf.SplitBlocks: the stored
//     code of each element is an index into a table of its values, times
//     d: tq1_0 {−1, 0, 1} with float16_t256, tq2_0 {−1, 0, 1, 2} with
//     float16_t256, q1_0 {−1, 1} with float16_t128 (2-bit indices, of
//     which 0 and 1 are used), q2_0 {−1, 0, 1, 2} with float16_t64.
//   - float32, float16 and bfloat16 (f32, f16, bf16), written as F32, F16
//     and BF16 tensors of any shape.
//
// The ggml datatypes come from DataType, and Cast (the Caster method)
// quantizes to them with the gguf package's quantizers: ggml's reference
// quantizers for q8_0, q4_0 (gguf.Quantize without an importance vector)
// and the 1- and 2-bit types,
// whose scale rules differ from tcast's (Q4_0's scale is negative when the
// element of largest magnitude is positive), and for the others the
// least-squares searches of gguf.Quantize. The Actual tensor holds the
// blocks' codes and scales as they are, and decompresses to exactly the
// values ggml's dequantizers give. Encode writes any Actual tensor of these
// datatypes whose values the blocks can hold, whoever chose its codes.
// tcast's int8_g32 and int4_g32 share Q8_0's and Q4_0's codes but not the
// scale rule, and are not taken.
//
// Decode reads the block tensors of a ggufSource (every type above but the
// plain floats, which are read as they are) and needs no metadata; the
// layout writes no metadata and no extra files.
type ggufLayout struct{}

func init() { register(ggufLayout{}) }

// ggufKind is a ggml type the gguf layout writes with its own datatype.
type ggufKind struct {
	name string // the -dtype name
	typ  gguf.Type
	dt   *tcast.DataType
}

// ggufKinds lists the ggml block types with a datatype of the layout. Each
// datatype's BitsPerValue is its ggml type's (bytes per block × 8 / block
// size), not the figure of its view's float32 sub-block scales.
var ggufKinds = withGGUFBits([]ggufKind{
	{"q8_0", gguf.TypeQ8_0, newGGUFDataType("int8", "float16_t32", "q8_0")},
	{"q4_0", gguf.TypeQ4_0, newGGUFDataType("int4", "float16_t32", "q4_0")},
	{"q4_1", gguf.TypeQ4_1, newGGUFDataType("uint4", "float16_float16_t32", "q4_1")},
	{"q5_0", gguf.TypeQ5_0, newGGUFDataType("int5", "float16_t32", "q5_0")},
	{"q5_1", gguf.TypeQ5_1, newGGUFDataType("uint5", "float16_float16_t32", "q5_1")},
	{"q2_k", gguf.TypeQ2_K, newGGUFDataType("uint2", "float32_float32_t16", "q2_k")},
	{"q3_k", gguf.TypeQ3_K, newGGUFDataType("int3", "float32_t16", "q3_k")},
	{"q4_k", gguf.TypeQ4_K, newGGUFDataType("uint4", "float32_float32_t32", "q4_k")},
	{"q5_k", gguf.TypeQ5_K, newGGUFDataType("uint5", "float32_float32_t32", "q5_k")},
	{"q6_k", gguf.TypeQ6_K, newGGUFDataType("int6", "float32_t16", "q6_k")},
	{"q8_k", gguf.TypeQ8_K, newGGUFDataType("int8", "float32_t256", "q8_k")},
	{"iq4_nl", gguf.TypeIQ4_NL, newGGUFCodebook("float16_t32", "iq4_nl")},
	{"iq4_xs", gguf.TypeIQ4_XS, newGGUFCodebook("float32_t32", "iq4_xs")},
	iqKind("iq3_s", gguf.TypeIQ3_S, "float32_t32"),
	iqKind("iq3_xxs", gguf.TypeIQ3_XXS, "float32_t32"),
	iqKind("iq2_s", gguf.TypeIQ2_S, "float32_t16"),
	iqKind("iq2_xs", gguf.TypeIQ2_XS, "float32_t16"),
	iqKind("iq2_xxs", gguf.TypeIQ2_XXS, "float32_t32"),
	iqKind("iq1_m", gguf.TypeIQ1_M, "float32_t16"),
	iqKind("iq1_s", gguf.TypeIQ1_S, "float32_t32"),
	{"tq1_0", gguf.TypeTQ1_0, newGGUFTable(ternaryTable, "float16_t256", "tq1_0")},
	{"tq2_0", gguf.TypeTQ2_0, newGGUFTable(offsetTable, "float16_t256", "tq2_0")},
	{"q1_0", gguf.TypeQ1_0, newGGUFTable(signTable, "float16_t128", "q1_0")},
	{"q2_0", gguf.TypeQ2_0, newGGUFTable(offsetTable, "float16_t64", "q2_0")},
})

// iqKind is the kind of an IQ grid type: the table of its view's code
// values (gguf.IQValues) with float32 scales of spec.
func iqKind(name string, t gguf.Type, spec string) ggufKind {
	return ggufKind{name, t, newGGUFTable(mustTable(name, gguf.IQValues(t)), spec, name)}
}

// The code values of the 1- and 2-bit types, as tables: a stored code c is
// the index of its value (c − 1, or 2c − 1 for Q1_0).
var (
	ternaryTable = mustTable("ternary", []float32{-1, 0, 1})
	offsetTable  = mustTable("int2_offset", []float32{-1, 0, 1, 2})
	signTable    = mustTable("sign", []float32{-1, 1})
)

// mustTable returns the table of values named name.
func mustTable(name string, values []float32) *codebook.Table {
	t, err := codebook.NewTable(name, values, nil)
	if err != nil {
		panic(err) // a fixed table: a programming error
	}
	return t
}

// withGGUFBits gives each kind's datatype the bits per value of its ggml
// type.
func withGGUFBits(kinds []ggufKind) []ggufKind {
	for i, k := range kinds {
		kinds[i].dt = k.dt.WithBitsPerValue(k.typ.BitsPerValue())
	}
	return kinds
}

// ggufPlain pairs the plain float datatypes with their GGUF types.
var ggufPlain = []struct {
	elem string
	typ  gguf.Type
}{{"float32", gguf.TypeF32}, {"float16", gguf.TypeF16}, {"bfloat16", gguf.TypeBF16}}

// ggufAccepted names the datatypes the gguf layout takes.
var ggufAccepted = func() []string {
	out := []string{"mxfp4"}
	for _, k := range ggufKinds {
		out = append(out, k.name)
	}
	return append(out, "f32", "f16", "bf16")
}()

// The datatypes of ggml's Q8_0 and Q4_0 blocks.
var (
	ggufQ8_0 = ggufKinds[0].dt
	ggufQ4_0 = ggufKinds[1].dt
)

// newGGUFDataType returns elem with the scale spec spec, named name.
func newGGUFDataType(elem, spec, name string) *tcast.DataType {
	d, err := tcast.New(dtype.MustParse(elem), scale.MustParse(spec), name)
	if err != nil {
		panic(err) // a fixed table: a programming error
	}
	return d
}

// newGGUFCodebook returns ggml's IQ4_NL table with the scale spec spec,
// named name.
func newGGUFCodebook(spec, name string) *tcast.DataType {
	return newGGUFTable(codebook.IQ4NL(), spec, name)
}

// newGGUFTable returns the datatype of table t with the scale spec spec,
// named name; its indices have at least the 2 bits tcast's codebooks
// take.
func newGGUFTable(t *codebook.Table, spec, name string) *tcast.DataType {
	cb, err := codebook.New(t.Name(), max(2, t.Bits()), []*codebook.Table{t}, nil)
	if err == nil {
		var d *tcast.DataType
		if d, err = tcast.NewCodebook(cb, scale.MustParse(spec), name); err == nil {
			return d
		}
	}
	panic(err) // a fixed table: a programming error
}

// ggufKindOf returns the kind of a datatype of the layout's table.
func ggufKindOf(dt *tcast.DataType) (ggufKind, bool) {
	for _, k := range ggufKinds {
		if dt == k.dt || dt.Name() == k.dt.Name() && dt.Code() == k.dt.Code() {
			return k, true
		}
	}
	return ggufKind{}, false
}

// ggufPlainType returns the GGUF type of a plain float32, float16 or
// bfloat16 datatype.
func ggufPlainType(dt *tcast.DataType) (gguf.Type, bool) {
	if dt.Spec() != nil || dt.Codebook() != nil {
		return 0, false
	}
	for _, p := range ggufPlain {
		if dt.Elem().Name() == p.elem {
			return p.typ, true
		}
	}
	return 0, false
}

// ggufTypeOf returns the ggml type a datatype is written as, and false for a
// datatype the gguf layout does not take.
func ggufTypeOf(dt *tcast.DataType) (gguf.Type, bool) {
	if dt == nil {
		return 0, false
	}
	if k, ok := ggufKindOf(dt); ok {
		return k.typ, true
	}
	if isMXFP4(dt) {
		return gguf.TypeMXFP4, true
	}
	return ggufPlainType(dt)
}

// GGUFTypeOf returns the ggml type the gguf layout writes datatype dt as
// (Q4_K for q4_k, F16 for float16, MXFP4 for mxfp4), and false for a
// datatype it does not take.
func GGUFTypeOf(dt *tcast.DataType) (gguf.Type, bool) { return ggufTypeOf(dt) }

// ggufBlockType reports whether t is a ggml type the gguf layout reads.
func ggufBlockType(t gguf.Type) bool {
	if t == gguf.TypeMXFP4 {
		return true
	}
	_, ok := ggufKindByType(t)
	return ok
}

// ggufKindByType returns the kind of a ggml block type.
func ggufKindByType(t gguf.Type) (ggufKind, bool) {
	for _, k := range ggufKinds {
		if k.typ == t {
			return k, true
		}
	}
	return ggufKind{}, false
}

func (ggufLayout) Name() string { return "gguf" }

func (ggufLayout) Container() Container { return GGUF }

// DataType resolves a -dtype value: the names of the layout's ggml types
// (q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, q8_k,
// iq4_nl, iq4_xs, the IQ grid types iq3_s … iq1_s, tq1_0, tq2_0, q1_0, q2_0) in any case, f32, f16 and bf16, and any name tcast.Lookup
// resolves to OCP MXFP4 or to plain float32, float16 or bfloat16. Other
// names give a *DataTypeError.
func (ggufLayout) DataType(name string) (*tcast.DataType, error) {
	lower := strings.ToLower(name)
	for _, k := range ggufKinds {
		if lower == k.name {
			return k.dt, nil
		}
	}
	switch lower {
	case "f32":
		name = "float32"
	case "f16":
		name = "float16"
	case "bf16":
		name = "bfloat16"
	}
	d, err := tcast.Lookup(name)
	if err != nil {
		return nil, &DataTypeError{Layout: "gguf", Name: name, Accepted: ggufAccepted,
			Closest: names.Closest(name, ggufAccepted, 3), Err: err}
	}
	if _, ok := ggufPlainType(d); !ok && !isMXFP4(d) {
		return nil, &DataTypeError{Layout: "gguf", Name: d.Name(), Accepted: ggufAccepted}
	}
	return d, nil
}

func (ggufLayout) Check(dt *tcast.DataType, axis, rank int) error {
	if dt == nil {
		return fmt.Errorf("layout gguf: nil datatype")
	}
	typ, ok := ggufTypeOf(dt)
	if !ok {
		return &DataTypeError{Layout: "gguf", Name: dt.Name(), Accepted: ggufAccepted}
	}
	if rank < 1 || rank > gguf.MaxDims {
		return fmt.Errorf("layout gguf: datatype %s: weights must have 1 to %d dimensions, not %d", dt.Name(), gguf.MaxDims, rank)
	}
	if typ.Quantized() && axis != rank-1 {
		return fmt.Errorf("layout gguf: datatype %s: the scaled axis must be the last (innermost) axis %d, not %d: ggml blocks run along it",
			dt.Name(), rank-1, axis)
	}
	return nil
}

func (l ggufLayout) Specs(name string, shape []int, dt *tcast.DataType, axis int) ([]Spec, map[string]string, error) {
	if err := l.Check(dt, axis, len(shape)); err != nil {
		return nil, nil, err
	}
	typ, _ := ggufTypeOf(dt)
	if err := groupCheck("gguf", dt, shape[len(shape)-1], typ.BlockSize()); err != nil {
		return nil, nil, err
	}
	if len(name) > gguf.MaxNameLen {
		return nil, nil, fmt.Errorf("layout gguf: weight %s: %w: GGUF tensor names hold at most %d bytes, not %d",
			name, ErrNameTooLong, gguf.MaxNameLen, len(name))
	}
	return []Spec{{Name: name, Shape: slices.Clone(shape), GGML: typ}}, nil, nil
}

func (l ggufLayout) Encode(name string, t *tcast.Tensor, meta map[string]string) ([]Tensor, error) {
	const lay = "gguf"
	a, err := actualOf(lay, name, t)
	if err != nil {
		return nil, err
	}
	specs, _, err := l.Specs(name, a.Shape, a.DataType, a.Axis)
	if err != nil {
		return nil, err
	}
	sp := specs[0]
	out := make([]byte, sp.Bytes(GGUF))
	codes := a.Data.Bytes
	switch sp.GGML {
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16:
		if len(codes) != len(out) {
			return nil, &FormatError{Layout: lay, Weight: name, Msg: fmt.Sprintf("%d bytes of codes, want %d", len(codes), len(out))}
		}
		copy(out, codes)
		return []Tensor{{Spec: sp, Data: out}}, nil
	case gguf.TypeMXFP4, gguf.TypeQ4_0:
		for i, c := range codes {
			if c > 15 {
				return nil, &FormatError{Layout: lay, Weight: name, Msg: fmt.Sprintf("element %d has code 0x%02x, not a 4-bit code", i, c)}
			}
		}
	}
	switch {
	case gguf.CanSplit(sp.GGML):
		// The scale part holds the bytes the blocks store: E8M0, or
		// little-endian float16.
		if err := gguf.JoinBlocks(sp.GGML, out, codes, a.Scale.Bytes); err != nil {
			return nil, &FormatError{Layout: lay, Weight: name, Err: err}
		}
	default:
		scales := partFloats(a.Scale)
		var mins []float32
		if a.Zero != nil {
			mins = partFloats(a.Zero)
		}
		if err := gguf.PackBlocks(sp.GGML, out, codes, scales, mins); err != nil {
			return nil, &FormatError{Layout: lay, Weight: name, Err: err}
		}
	}
	return []Tensor{{Spec: sp, Data: out}}, nil
}

// partFloats returns the float32 values of a float16 or float32 part.
func partFloats(p *tcast.Part) []float32 {
	out := make([]float32, p.Len())
	if p.Bits == 16 {
		for i := range out {
			out[i] = p.Format.Decode(uint32(binary.LittleEndian.Uint16(p.Bytes[2*i:])))
		}
		return out
	}
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(p.Bytes[4*i:]))
	}
	return out
}

// floatPart returns values as a part of format f (float16 or float32;
// float16 values must be exact in it, ±Inf and NaN included).
func floatPart(f *dtype.Format, shape []int, v []float32) *tcast.Part {
	var b []byte
	if f.Bits() == 16 {
		// IEEE overflow: a block's ±Inf scale stays ±Inf.
		codes := make([]uint32, len(v))
		dtype.EncodeSlice(f, codes, v, dtype.Options{Overflow: dtype.OverflowIEEE})
		b = make([]byte, 0, 2*len(v))
		for _, c := range codes {
			b = binary.LittleEndian.AppendUint16(b, uint16(c))
		}
	} else {
		b = make([]byte, 0, 4*len(v))
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
	}
	return part(f, shape, b)
}

// ggufTensor returns the Actual tensor of shape shape that blocks of ggml
// type typ (a block type of the layout) hold. The blocks must be whole and
// typ.Size(elements) bytes long.
func ggufTensor(typ gguf.Type, shape []int, blocks []byte) *tcast.Tensor {
	if typ == gguf.TypeMXFP4 {
		return ggufTensorOf(tcast.MustLookup("mxfp4"), typ, shape, blocks)
	}
	k, _ := ggufKindByType(typ)
	return ggufTensorOf(k.dt, typ, shape, blocks)
}

// ggufTensorOf is ggufTensor with the datatype given (for MXFP4 blocks, any
// of tcast's names for OCP MXFP4).
func ggufTensorOf(dt *tcast.DataType, typ gguf.Type, shape []int, blocks []byte) *tcast.Tensor {
	r := len(shape)
	n := 1
	for _, d := range shape {
		n *= d
	}
	sub := gguf.SubBlockSize(typ)
	nb := n / sub
	sshape := append(slices.Clone(shape[:r-1]), shape[r-1]/sub)
	codes := make([]byte, n)
	t := &tcast.Tensor{DataType: dt, Form: tcast.Actual, Shape: slices.Clone(shape), Axis: r - 1}
	spec := dt.Spec()
	switch {
	case gguf.CanSplit(typ):
		sbytes := make([]byte, nb*spec.Scale.Bits()/8) // E8M0 or float16, as stored
		gguf.SplitBlocks(typ, codes, sbytes, blocks)
		t.Scale = part(spec.Scale, sshape, sbytes)
	default:
		scales := make([]float32, nb)
		var mins []float32
		if gguf.HasMin(typ) {
			mins = make([]float32, nb)
		}
		gguf.UnpackBlocks(typ, codes, scales, mins, blocks)
		t.Scale = floatPart(spec.Scale, sshape, scales)
		if mins != nil {
			t.Zero = floatPart(spec.Zero, sshape, mins)
		}
	}
	t.Data = part(dt.Elem(), shape, codes) // uint4 indices for the codebooks
	return t
}

// Cast quantizes x, of shape shape, to a datatype of the layout in Actual
// form: the ggml types with the gguf package's quantizers, which choose
// their own scales and rounding (so opts may only name the last axis), and
// mxfp4 and the plain floats with tcast.Cast and opts.
func (l ggufLayout) Cast(x []float32, shape []int, dt *tcast.DataType, opts *tcast.Options) (*tcast.Tensor, error) {
	o := tcast.DefaultOptions()
	if opts != nil {
		o = *opts
	}
	axis, ok := tcast.AxisIndex(o.Axis, len(shape))
	if !ok {
		return nil, fmt.Errorf("layout gguf: axis %d is out of range for shape %v", o.Axis, shape)
	}
	if err := l.Check(dt, axis, len(shape)); err != nil {
		return nil, err
	}
	typ, _ := ggufTypeOf(dt)
	if !typ.Quantized() {
		o.Form = tcast.Actual
		return tcast.Cast(x, shape, dt, &o)
	}
	if in, bs := shape[len(shape)-1], typ.BlockSize(); in%bs != 0 {
		return nil, fmt.Errorf("layout gguf: datatype %s: the innermost dimension %d is not a multiple of the block size %d", dt.Name(), in, bs)
	}
	ggml := ggmlOptions(&o)
	n, ok := elements(shape)
	if typ == gguf.TypeMXFP4 && (!ggml || !ok || n != len(x) || n == 0) {
		// Only with tcast.Cast's defaults is the cast gguf.Quantize's,
		// which writes the blocks Encode would lay out in one pass.
		o.Form = tcast.Actual
		return tcast.Cast(x, shape, dt, &o)
	}
	if !ggml {
		return nil, fmt.Errorf("layout gguf: datatype %s: the gguf quantizer chooses its own scales and rounding; scale modes, rounding modes, full range and keep masks apply to mxfp4 only", dt.Name())
	}
	if !ok {
		return nil, fmt.Errorf("layout gguf: bad shape %v", shape)
	}
	if len(x) != n {
		return nil, fmt.Errorf("layout gguf: shape %v holds %d elements, but x has %d", shape, n, len(x))
	}
	imp, err := ggufImportance(o.Importance, shape, typ)
	if err != nil {
		return nil, err
	}
	size, _ := typ.Size(int64(n))
	blocks := make([]byte, size)
	if err := imp.quantize(typ, blocks, x, 0, nil); err != nil {
		return nil, fmt.Errorf("layout gguf: %s %v: %w", typ, shape, err)
	}
	return ggufTensorOf(dt, typ, shape, blocks), nil
}

// ggufImp is an importance option checked against a weight: vectors of
// rowLen values, vector v for rows [v·rowsPer, (v+1)·rowsPer).
type ggufImp struct {
	v       []float32
	rowLen  int
	rowsPer int
}

// ggufImportance checks the importance option imp of a weight of the given
// shape cast to block type typ. A type that takes no importance ignores it.
func ggufImportance(imp []float32, shape []int, typ gguf.Type) (ggufImp, error) {
	if imp == nil || !gguf.Searches(typ) || len(shape) == 0 {
		return ggufImp{}, nil
	}
	rowLen := shape[len(shape)-1]
	n, ok := elements(shape)
	if !ok || rowLen <= 0 || n == 0 {
		return ggufImp{}, nil // the caller reports the shape
	}
	rows := n / rowLen
	if len(imp) == 0 || len(imp)%rowLen != 0 || rows%(len(imp)/rowLen) != 0 {
		return ggufImp{}, fmt.Errorf("layout gguf: an importance vector of %d values for shape %v: want %d per column of each matrix (a multiple of %d dividing the %d rows)",
			len(imp), shape, rowLen, rowLen, rows)
	}
	for i, w := range imp {
		if !(w >= 0) || math.IsInf(float64(w), 1) {
			return ggufImp{}, fmt.Errorf("layout gguf: importance value %d is %v, not a finite non-negative number", i, w)
		}
	}
	return ggufImp{v: imp, rowLen: rowLen, rowsPer: rows / (len(imp) / rowLen)}, nil
}

// quantize writes x, whole rows starting at row r0 of the weight, as the
// blocks dst of block type typ with gguf.Quantize (ggml's rule for Q8_0,
// the toolkit's MXFP4 cast for MXFP4, the searching quantizers for the others),
// with each row's importance vector, and the weight of each element in
// the error the quantizer minimised to w unless it is nil.
func (im ggufImp) quantize(typ gguf.Type, dst []byte, x []float32, r0 int, w []float32) error {
	if im.v == nil {
		return gguf.QuantizeWeighed(typ, dst, x, nil, w)
	}
	rows := len(x) / im.rowLen
	rowBytes, _ := typ.Size(int64(im.rowLen))
	for r := 0; r < rows; {
		v := (r0 + r) / im.rowsPer
		end := min(rows, (v+1)*im.rowsPer-r0)
		lo, hi := r*im.rowLen, end*im.rowLen
		var wr []float32
		if w != nil {
			wr = w[lo:hi]
		}
		err := gguf.QuantizeWeighed(typ, dst[int64(r)*rowBytes:int64(end)*rowBytes], x[lo:hi],
			im.v[v*im.rowLen:(v+1)*im.rowLen], wr)
		if err != nil {
			return err
		}
		r = end
	}
	return nil
}

// ggmlOptions reports whether o leaves the scales and rounding to ggml's
// quantizers: floor scales, round to nearest even, no full range, no keep
// mask (for mxfp4, tcast.Cast's defaults, whose codes gguf.Quantize
// gives).
func ggmlOptions(o *tcast.Options) bool {
	return o.Mode == scale.Floor && o.Rounding == dtype.RoundEven && !o.FullRange && o.Keep == nil
}

// elements returns the number of elements of dims, and false for a
// negative dimension or a count beyond shape.MaxElements.
func elements(dims []int) (int, bool) {
	n, _, ok := shape.Elements(dims)
	return n, ok
}

// Find lists every tensor of a block type the layout reads (MXFP4 and the
// ggml types of its table) of a ggufSource, each the weight of its own
// name; a Source that is not a ggufSource holds none.
func (ggufLayout) Find(src Source) map[string][]string {
	out := map[string][]string{}
	gs, ok := src.(ggufSource)
	if !ok {
		return out
	}
	for _, n := range src.Names() {
		if info, has := gs.GGUFInfo(n); has && ggufBlockType(info.Type) {
			out[n] = []string{n}
		}
	}
	return out
}

// Describe returns the datatype and shape of a block tensor from its
// description alone; Decode checks its bytes.
func (ggufLayout) Describe(name string, src Source) (*tcast.DataType, []int, error) {
	gs, ok := src.(ggufSource)
	if !ok {
		return nil, nil, &FormatError{Layout: "gguf", Weight: name, Msg: "not a GGUF file"}
	}
	info, ok := gs.GGUFInfo(name)
	if !ok || !ggufBlockType(info.Type) {
		return nil, nil, &FormatError{Layout: "gguf", Weight: name, Msg: "no block tensor of a type the layout reads of that name"}
	}
	if k, ok := ggufKindByType(info.Type); ok {
		return k.dt, info.Shape(), nil
	}
	return tcast.MustLookup("mxfp4"), info.Shape(), nil
}

// Decode returns the weight of a block tensor of a ggufSource, and
// ok=false when src is not a ggufSource or holds no such tensor of that
// name.
func (ggufLayout) Decode(name string, src Source) (*tcast.Tensor, bool, error) {
	const lay = "gguf"
	gs, ok := src.(ggufSource)
	if !ok {
		return nil, false, nil
	}
	info, data, ok := gs.GGUFTensor(name)
	if !ok || !ggufBlockType(info.Type) {
		return nil, false, nil
	}
	fail := func(format string, args ...any) (*tcast.Tensor, bool, error) {
		return nil, true, &FormatError{Layout: lay, Weight: name, Err: fmt.Errorf(format, args...)}
	}
	shape := info.Shape()
	r := len(shape)
	if r < 1 || r > gguf.MaxDims {
		return fail("%v tensor has %d dimensions, want 1 to %d", info.Type, r, gguf.MaxDims)
	}
	n := int64(1)
	for _, d := range shape {
		if d < 0 || (d != 0 && n > (math.MaxInt64>>1)/int64(d)) {
			return fail("%v tensor has a bad shape %v", info.Type, shape)
		}
		n *= int64(d)
	}
	if bs := info.Type.BlockSize(); shape[r-1]%bs != 0 {
		return fail("%v tensor has shape %v: the innermost dimension is not a multiple of %d", info.Type, shape, bs)
	}
	size, ok := info.Type.Size(n)
	if !ok || int64(len(data)) != size {
		return fail("%v tensor of shape %v holds %d bytes, want %d", info.Type, shape, len(data), size)
	}
	return finish(lay, name, ggufTensor(info.Type, shape, data))
}

// Files returns nothing: a GGUF file carries its own metadata.
func (ggufLayout) Files(*tcast.DataType, []Converted, []string, []byte) (map[string][]byte, error) {
	return nil, nil
}

// ErrNameTooLong is matched by the error of a tensor name longer than
// GGUF holds (gguf.MaxNameLen).
var ErrNameTooLong = errors.New("name too long for GGUF")
