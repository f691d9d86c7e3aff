package layout

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/names"
	"github.com/tensorcast-go/tensorcast/internal/shape"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// The gguf layout writes each cast weight as one GGUF tensor of a ggml
// block type, under the weight's own name and with its row-major shape (a
// GGUF file lists the dimensions innermost first). Blocks hold 32
// consecutive elements along the innermost axis, which must be the scaled
// axis and a multiple of 32 long; weights have 1 to 4 dimensions. It takes
// three datatypes:
//
//   - mxfp4 (any name tcast resolves to OCP MXFP4: mxfp4, mxfp4e2, MXFP4,
//     e2m1_e8m0_t32), written as ggml's MXFP4: per block the E8M0 scale
//     byte, then 16 bytes of E2M1 codes, byte j holding element j in its
//     low nibble and element j+16 in its high nibble. Cast by tcast.Cast;
//     with its default options (floor scales, round to nearest even, no
//     keep mask) Cast quantizes straight into the blocks with
//     gguf.QuantizeMXFP4, which gives the same codes.
//   - q8_0, ggml's Q8_0: per block the float16 scale d, then 32 int8 codes
//     q; the value is q·d. As a tcast datatype: int8 elements with a
//     float16 scale per 32 along the last axis (code int8_float16_t32).
//   - q4_0, ggml's Q4_0: per block the float16 scale d, then 16 bytes of
//     4-bit codes q in the split order of MXFP4; the value is (q−8)·d. As a
//     tcast datatype: int4 elements q−8 in −8..7 with a float16 scale per
//     32 (code int4_float16_t32).
//
// It also writes weights unquantized, as GGUF's plain element types: f32,
// f16 and bf16 (tcast's float32, float16 and bfloat16, rounded to nearest
// even and saturating as tcast.Cast does), which llama.cpp's F32, F16 and
// BF16 model files hold; any innermost dimension goes.
//
// The q8_0 and q4_0 datatypes come from DataType, and Cast (the Caster
// method) quantizes to them with ggml's reference quantizers
// (gguf.QuantizeQ8_0 and gguf.QuantizeQ4_0), whose scale rules differ from
// tcast's (Q4_0's scale is negative when the element of largest magnitude
// is positive): the Actual tensor holds ggml's codes and float16 scales as
// they are, and decompresses to exactly the values ggml's dequantizers
// give. Encode writes any Actual tensor of these datatypes, whoever chose
// its codes. tcast's int8_g32 and int4_g32 share their codes but not the
// scale rule, and are not taken.
//
// Decode reads the tensors of a GGUFSource and needs no metadata; the
// layout writes no metadata and no extra files.
type ggufLayout struct{}

func init() { Register(ggufLayout{}) }

// ggufAccepted names the datatypes the gguf layout takes.
var ggufAccepted = []string{"mxfp4", "q8_0", "q4_0", "f32", "f16", "bf16"}

// ggufPlain maps the -dtype names of the plain element types to tcast's
// datatype names.
var ggufPlain = map[string]string{
	"f32": "float32", "float32": "float32",
	"f16": "float16", "float16": "float16",
	"bf16": "bfloat16", "bfloat16": "bfloat16",
}

// ggufPlainType returns the ggml type of an unscaled float32, float16 or
// bfloat16 datatype.
func ggufPlainType(dt *tcast.DataType) (gguf.Type, bool) {
	if dt.Spec() != nil || dt.Elem() == nil {
		return 0, false
	}
	switch dt.Elem().Name() {
	case "float32":
		return gguf.TypeF32, true
	case "float16":
		return gguf.TypeF16, true
	case "bfloat16":
		return gguf.TypeBF16, true
	}
	return 0, false
}

// ggufBlock is the length of every block the gguf layout writes.
const ggufBlock = 32

// The datatypes of ggml's Q8_0 and Q4_0 blocks.
var (
	ggufQ8_0 = newGGUFDataType("int8", "q8_0")
	ggufQ4_0 = newGGUFDataType("int4", "q4_0")
)

// newGGUFDataType returns elem with a float16 scale per 32, named name.
func newGGUFDataType(elem, name string) *tcast.DataType {
	d, err := tcast.New(dtype.MustParse(elem), scale.MustParse("float16_t32"), name)
	if err != nil {
		panic(err) // a fixed table: a programming error
	}
	return d
}

// ggufTypeOf returns the ggml type a datatype is written as, and false for a
// datatype the gguf layout does not take.
func ggufTypeOf(dt *tcast.DataType) (gguf.Type, bool) {
	switch {
	case dt == nil:
		return 0, false
	case dt == ggufQ8_0 || dt.Name() == ggufQ8_0.Name() && dt.Code() == ggufQ8_0.Code():
		return gguf.TypeQ8_0, true
	case dt == ggufQ4_0 || dt.Name() == ggufQ4_0.Name() && dt.Code() == ggufQ4_0.Code():
		return gguf.TypeQ4_0, true
	case isMXFP4(dt):
		return gguf.TypeMXFP4, true
	}
	return ggufPlainType(dt)
}

// ggufBlockType reports whether t is a ggml type the gguf layout reads.
func ggufBlockType(t gguf.Type) bool {
	return t == gguf.TypeQ8_0 || t == gguf.TypeQ4_0 || t == gguf.TypeMXFP4
}

func (ggufLayout) Name() string { return "gguf" }

func (ggufLayout) Container() Container { return GGUF }

// DataType resolves a -dtype value: "q8_0", "q4_0", "f32", "f16" and
// "bf16" (or "float32", "float16", "bfloat16") in any case, and any name
// tcast.Lookup resolves to OCP MXFP4. Other names give a *DataTypeError.
func (ggufLayout) DataType(name string) (*tcast.DataType, error) {
	switch strings.ToLower(name) {
	case "q8_0":
		return ggufQ8_0, nil
	case "q4_0":
		return ggufQ4_0, nil
	}
	if p, ok := ggufPlain[strings.ToLower(name)]; ok {
		return tcast.MustLookup(p), nil
	}
	d, err := tcast.Lookup(name)
	if err != nil {
		return nil, &DataTypeError{Layout: "gguf", Name: name, Accepted: ggufAccepted,
			Closest: names.Closest(name, ggufAccepted, 3), Err: err}
	}
	if !isMXFP4(d) {
		return nil, &DataTypeError{Layout: "gguf", Name: d.Name(), Accepted: ggufAccepted}
	}
	return d, nil
}

func (ggufLayout) Check(dt *tcast.DataType, axis, rank int) error {
	if dt == nil {
		return fmt.Errorf("layout gguf: nil datatype")
	}
	if _, ok := ggufTypeOf(dt); !ok {
		return &DataTypeError{Layout: "gguf", Name: dt.Name(), Accepted: ggufAccepted}
	}
	if rank < 1 || rank > gguf.MaxDims {
		return fmt.Errorf("layout gguf: datatype %s: weights must have 1 to %d dimensions, not %d", dt.Name(), gguf.MaxDims, rank)
	}
	if axis != rank-1 {
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
	if err := groupCheck("gguf", name, dt, shape[len(shape)-1], typ.BlockSize()); err != nil {
		return nil, nil, err
	}
	if len(name) > gguf.MaxNameLen {
		return nil, nil, fmt.Errorf("layout gguf: weight %s: GGUF tensor names hold at most %d bytes, not %d (rename it: tcast convert -rename RE=REPL)", name, gguf.MaxNameLen, len(name))
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
	codes := a.Data.Bytes
	if !sp.GGML.Quantized() {
		// The plain types' codes are their little-endian bytes.
		if int64(len(codes)) != sp.Bytes(GGUF) {
			return nil, &FormatError{Layout: lay, Weight: name, Msg: fmt.Sprintf("%d bytes of %v data, want %d", len(codes), sp.GGML, sp.Bytes(GGUF))}
		}
		return []Tensor{{Spec: sp, Data: slices.Clone(codes)}}, nil
	}
	out := make([]byte, sp.Bytes(GGUF))
	if sp.GGML != gguf.TypeQ8_0 {
		for i, c := range codes {
			if c > 15 {
				return nil, &FormatError{Layout: lay, Weight: name, Msg: fmt.Sprintf("element %d has code 0x%02x, not a 4-bit code", i, c)}
			}
		}
	}
	switch sp.GGML {
	case gguf.TypeMXFP4:
		gguf.PackMXFP4(out, codes, a.Scale.Bytes)
	case gguf.TypeQ8_0:
		gguf.PackQ8_0(out, codes, f16Codes(a.Scale.Bytes))
	case gguf.TypeQ4_0:
		q := make([]byte, len(codes))
		for i, c := range codes {
			q[i] = c ^ 8 // two's complement q−8 → stored q
		}
		gguf.PackQ4_0(out, q, f16Codes(a.Scale.Bytes))
	}
	return []Tensor{{Spec: sp, Data: out}}, nil
}

// f16Codes returns the float16 codes of a part's little-endian bytes.
func f16Codes(b []byte) []uint16 {
	out := make([]uint16, len(b)/2)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return out
}

// ggufTensor returns the Actual tensor of shape shape that blocks of ggml
// type typ (MXFP4, Q8_0 or Q4_0) hold. The blocks must be whole and
// typ.Size(elements) bytes long.
func ggufTensor(typ gguf.Type, shape []int, blocks []byte) *tcast.Tensor {
	return ggufTensorOf(tcast.MustLookup("mxfp4"), typ, shape, blocks)
}

// ggufTensorOf is ggufTensor with the datatype of MXFP4 blocks given (any of
// tcast's names for OCP MXFP4).
func ggufTensorOf(mxfp4 *tcast.DataType, typ gguf.Type, shape []int, blocks []byte) *tcast.Tensor {
	r := len(shape)
	n := 1
	for _, d := range shape {
		n *= d
	}
	nb := n / ggufBlock
	sshape := append(slices.Clone(shape[:r-1]), shape[r-1]/ggufBlock)
	codes := make([]byte, n)
	var dt *tcast.DataType
	var sbytes []byte
	switch typ {
	case gguf.TypeMXFP4:
		dt = mxfp4
		sbytes = make([]byte, nb)
		gguf.UnpackMXFP4(codes, sbytes, blocks)
	case gguf.TypeQ8_0, gguf.TypeQ4_0:
		s := make([]uint16, nb)
		if typ == gguf.TypeQ8_0 {
			dt = ggufQ8_0
			gguf.UnpackQ8_0(codes, s, blocks)
		} else {
			dt = ggufQ4_0
			gguf.UnpackQ4_0(codes, s, blocks)
			for i, q := range codes {
				codes[i] = q ^ 8 // stored q → two's complement q−8
			}
		}
		sbytes = make([]byte, 0, 2*nb)
		for _, c := range s {
			sbytes = binary.LittleEndian.AppendUint16(sbytes, c)
		}
	}
	return &tcast.Tensor{DataType: dt, Form: tcast.Actual, Shape: slices.Clone(shape), Axis: r - 1,
		Data:  part(dt.Elem(), shape, codes),
		Scale: part(dt.Spec().Scale, sshape, sbytes)}
}

// Cast quantizes x, of shape shape, to a datatype of the layout in Actual
// form: q8_0 and q4_0 with ggml's reference quantizers, which choose their
// own scales and rounding (so opts may only name the last axis), and mxfp4
// with tcast.Cast and opts.
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
	if in := shape[len(shape)-1]; in%ggufBlock != 0 {
		return nil, fmt.Errorf("layout gguf: datatype %s: the innermost dimension %d is not a multiple of the block size %d", dt.Name(), in, ggufBlock)
	}
	ggml := ggmlOptions(&o)
	n, ok := elements(shape)
	if typ == gguf.TypeMXFP4 && (!ggml || !ok || n != len(x) || n == 0) {
		// Only with tcast.Cast's defaults is the cast gguf.QuantizeMXFP4's,
		// which writes the blocks Encode would lay out in one pass.
		o.Form = tcast.Actual
		return tcast.Cast(x, shape, dt, &o)
	}
	if !ggml {
		return nil, fmt.Errorf("layout gguf: datatype %s: ggml's quantizer chooses its own scales and rounding; scale modes, rounding modes, full range and keep masks apply to mxfp4 only", dt.Name())
	}
	if !ok {
		return nil, fmt.Errorf("layout gguf: bad shape %v", shape)
	}
	if len(x) != n {
		return nil, fmt.Errorf("layout gguf: shape %v holds %d elements, but x has %d", shape, n, len(x))
	}
	size, _ := typ.Size(int64(n))
	blocks := make([]byte, size)
	ggmlQuantize(typ, blocks, x)
	return ggufTensorOf(dt, typ, shape, blocks), nil
}

// ggmlOptions reports whether o leaves the scales and rounding to ggml's
// quantizers: floor scales, round to nearest even, no full range, no keep
// mask (for mxfp4, tcast.Cast's defaults, whose codes gguf.QuantizeMXFP4
// gives).
func ggmlOptions(o *tcast.Options) bool {
	return o.Mode == scale.Floor && o.Rounding == dtype.RoundEven && !o.FullRange && o.Keep == nil
}

// ggmlQuantize writes x as the blocks dst of ggml type typ (Q8_0, Q4_0 or
// MXFP4), with ggml's quantizers.
func ggmlQuantize(typ gguf.Type, dst []byte, x []float32) {
	switch typ {
	case gguf.TypeQ8_0:
		gguf.QuantizeQ8_0(dst, x)
	case gguf.TypeQ4_0:
		gguf.QuantizeQ4_0(dst, x)
	case gguf.TypeMXFP4:
		gguf.QuantizeMXFP4(dst, x)
	}
}

// elements returns the number of elements of dims, and false for a
// negative dimension or a count beyond shape.MaxElements.
func elements(dims []int) (int, bool) {
	n, _, ok := shape.Elements(dims)
	return n, ok
}

// Find lists every MXFP4, Q8_0 and Q4_0 tensor of a GGUFSource, each the
// weight of its own name; a Source that is not a GGUFSource holds none.
func (ggufLayout) Find(src Source) map[string][]string {
	out := map[string][]string{}
	gs, ok := src.(GGUFSource)
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
	gs, ok := src.(GGUFSource)
	if !ok {
		return nil, nil, &FormatError{Layout: "gguf", Weight: name, Msg: "not a GGUF file"}
	}
	info, ok := gs.GGUFInfo(name)
	if !ok || !ggufBlockType(info.Type) {
		return nil, nil, &FormatError{Layout: "gguf", Weight: name, Msg: "no MXFP4, Q8_0 or Q4_0 tensor of that name"}
	}
	switch info.Type {
	case gguf.TypeQ8_0:
		return ggufQ8_0, info.Shape(), nil
	case gguf.TypeQ4_0:
		return ggufQ4_0, info.Shape(), nil
	}
	return tcast.MustLookup("mxfp4"), info.Shape(), nil
}

// Decode returns the weight of an MXFP4, Q8_0 or Q4_0 tensor of a
// GGUFSource, and ok=false when src is not a GGUFSource or holds no such
// tensor of that name.
func (ggufLayout) Decode(name string, src Source) (*tcast.Tensor, bool, error) {
	const lay = "gguf"
	gs, ok := src.(GGUFSource)
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
	if shape[r-1]%ggufBlock != 0 {
		return fail("%v tensor has shape %v: the innermost dimension is not a multiple of %d", info.Type, shape, ggufBlock)
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
