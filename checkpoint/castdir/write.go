package castdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/codebook"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/kernels"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

// WriteOptions control [Write]. The zero value writes a new directory and
// records a cast with round to nearest even and saturation.
type WriteOptions struct {
	// Force replaces an existing directory at the destination. Without it an
	// existing destination is an error wrapping fs.ErrExist.
	Force bool
	// Input, InputDType and Keep are recorded in info.json as the input file,
	// its NumPy dtype and the keep mask file. With Force, Write refuses to
	// replace a directory that holds Input or Keep.
	Input, InputDType, Keep string
	// Elem are the element options the tensor was cast with, recorded in
	// info.json (the seed only for stochastic rounding).
	Elem dtype.Options
	// ScaleSearch records in info.json that the tensor was cast with
	// tcast.Options.ScaleSearch.
	ScaleSearch bool
	// AllowNonFinite writes the cast of an input holding NaN or ±Inf
	// values, cast per the block policy of docs/NUMERICS.md (a block
	// holding one becomes NaN as a whole in most datatypes). By default
	// (false) Write refuses such an input with a *tcast.NonFiniteError
	// (errors.Is tcast.ErrNonFinite) naming Input and the counts, and
	// writes nothing.
	AllowNonFinite bool
}

var roundingNames = map[dtype.Rounding]string{
	dtype.RoundEven: "even", dtype.RoundAway: "away", dtype.RoundZero: "zero", dtype.RoundStochastic: "stochastic",
}

var overflowNames = map[dtype.Overflow]string{dtype.Saturate: "sat", dtype.OverflowIEEE: "ieee"}

// Write stores t, the cast of x, as the cast directory dir: codes.npy,
// dequant.npy, packed.npy, the part files and info.json (see the package
// comment). The whole directory is written under a temporary name beside dir
// and published with one rename, so dir never holds a partial set; on error
// nothing is left behind.
//
// t must be in the Actual form (tcast.Cast with Form Actual, or
// [tcast.CastFormat]); x holds the values it was cast from, for the statistics.
// A tensor whose DataType is nil is a number format cast without a scale that
// is no tcast datatype: only its Data part, whose Format names the format.
func Write(dir string, x []float32, t *tc.Tensor, opts WriteOptions) error {
	files, err := encodeFiles(x, t, opts)
	if errors.Is(err, tc.ErrNonFinite) {
		return err // names the input: nothing was written
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", dir, err)
	}
	var inputs []string
	for _, in := range []string{opts.Input, opts.Keep} {
		if in != "" {
			inputs = append(inputs, in)
		}
	}
	if err := atomicfile.CheckOutput(dir, inputs...); err != nil {
		return err
	}
	return publishDir(dir, files, opts.Force)
}

// file is one file of a cast directory.
type file struct {
	name string
	data []byte
}

// encodeFiles returns the files [Write] writes for t, in this order:
// codes.npy, dequant.npy, packed.npy, the part files, info.json.
func encodeFiles(x []float32, t *tc.Tensor, opts WriteOptions) ([]file, error) {
	n, err := checkActual(x, t)
	if err != nil {
		return nil, err
	}
	comp, deq, err := compressActual(t, n)
	if err != nil {
		return nil, err
	}
	info := newInfo(t, opts)
	if e := measure(&info, x, deq, t, comp); e.NonFinite() > 0 && !opts.AllowNonFinite {
		return nil, &tc.NonFiniteError{Input: opts.Input, Tensors: []tc.NonFiniteTensor{{NaN: e.NaN, PosInf: e.PosInf, NegInf: e.NegInf}}}
	}
	var codes, dequant bytes.Buffer
	err = npy.Write(&codes, codesDType(t.Data.StorageBytes()), info.Shape, t.Data.Bytes)
	if err != nil {
		return nil, err
	}
	if err := npy.WriteSlice(&dequant, info.Shape, deq); err != nil {
		return nil, err
	}
	files := []file{{CodesFile, codes.Bytes()}, {DequantFile, dequant.Bytes()}}
	parts, pf, err := encodeParts(t, comp)
	if err != nil {
		return nil, err
	}
	info.Parts = parts
	files = append(files, pf...)
	js, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(files, file{InfoFile, append(js, '\n')}), nil
}

// checkActual checks that t is a tensor in the Actual form with data codes
// and that x holds its n values, and returns n.
func checkActual(x []float32, t *tc.Tensor) (int, error) {
	switch {
	case t == nil:
		return 0, errors.New("no tensor")
	case t.Form != tc.Actual:
		return 0, fmt.Errorf("tensor in the %s form, want %s", t.Form, tc.Actual)
	case t.Data == nil || t.Data.Format == nil:
		return 0, errors.New("tensor without data codes")
	}
	n, err := checkedProduct(t.Shape)
	if err != nil {
		return 0, err
	}
	if len(x) != n {
		return 0, fmt.Errorf("%d input values for a tensor of shape %v", len(x), t.Shape)
	}
	return n, nil
}

// compressActual returns the Compressed form of act, a tensor of n values
// in the Actual form, and its n dequantized values.
func compressActual(act *tc.Tensor, n int) (*tc.Tensor, []float32, error) {
	if act.DataType != nil {
		comp, err := tc.Compress(act)
		if err != nil {
			return nil, nil, err
		}
		deq, err := tc.Decompress(comp)
		if err != nil {
			return nil, nil, err
		}
		return comp, deq, nil
	}
	comp, err := compressPlain(act)
	if err != nil {
		return nil, nil, err
	}
	deq, err := decodePlain(act.Data.Format, comp.Data, n)
	if err != nil {
		return nil, nil, err
	}
	return comp, deq, nil
}

// newInfo returns the info.json of t, written with opts, without its
// statistics and parts.
func newInfo(t *tc.Tensor, opts WriteOptions) Info {
	elem := t.Data.Format
	info := Info{
		Format:      describeFormat(t.DataType, elem),
		DataType:    describe(t.DataType, elem),
		Input:       opts.Input,
		InputDType:  opts.InputDType,
		Keep:        opts.Keep,
		Shape:       slices.Clone(t.Shape),
		CodesDType:  codesDType(t.Data.StorageBytes()).String(),
		Axis:        t.Axis,
		ScaleMode:   t.Mode.String(),
		Rounding:    roundingNames[opts.Elem.Rounding],
		Overflow:    overflowNames[opts.Elem.Overflow],
		FullRange:   opts.Elem.FullRange,
		ScaleSearch: opts.ScaleSearch,
		Form:        tc.Compressed.String(),
	}
	if info.Shape == nil {
		info.Shape = []int{}
	}
	if opts.Elem.Rounding == dtype.RoundStochastic {
		seed := opts.Elem.Seed
		info.Seed = &seed
	}
	return info
}

// measure sets the bits per value and the statistics of info, those of the
// cast of x to t (compressed: comp) whose dequantized values are deq, and
// returns the errors of the cast.
func measure(info *Info, x, deq []float32, t, comp *tc.Tensor) tc.Errors {
	var e tc.Errors
	if t.DataType != nil && t.DataType.Spec() != nil {
		info.BitsPerValue = comp.BitsPerValue()
		info.Stats, e = compare(x, deq, float32(math.Inf(1)))
	} else {
		elem := t.Data.Format
		info.BitsPerValue = float64(elem.Bits())
		info.Stats, e = compare(x, deq, elem.MaxFinite())
	}
	return e
}

// encodeParts returns the info.json entries and the files of the parts of
// comp, the Compressed form of act: packed.npy for the data, and the part
// files of the others.
func encodeParts(act, comp *tc.Tensor) ([]PartInfo, []file, error) {
	actual := map[string]*tc.Part{}
	for _, p := range act.Parts() {
		actual[p.Name] = p.Part
	}
	var infos []PartInfo
	var files []file
	for _, p := range comp.Parts() {
		var pi PartInfo
		var pf []file
		var err error
		if p.Name == "data" {
			pi, pf, err = packedFile(p.Part)
		} else {
			pi, pf, err = partFiles(p.Name, actual[p.Name], p.Part)
		}
		if err != nil {
			return nil, nil, err
		}
		infos = append(infos, pi)
		files = append(files, pf...)
	}
	return infos, files, nil
}

// describeFormat returns the info.json description of the elements: the
// codebook of a codebook datatype, else the number format elem.
func describeFormat(dt *tc.DataType, elem *dtype.Format) FormatInfo {
	cb := (*codebook.Codebook)(nil)
	if dt != nil {
		cb = dt.Codebook()
	}
	if cb == nil {
		in := elem.Info()
		return FormatInfo{Number: &in}
	}
	c := &CodebookInfo{Name: cb.Name(), Kind: codebookKind, Bits: cb.IndexBits(), Index: elem.Name(),
		MetaBits: cb.MetaBits(), MaxAbs: cb.MaxAbs()}
	if f := cb.Compute(); f != nil {
		c.Compute = f.Name()
	}
	for _, t := range cb.Tables() {
		c.Tables = append(c.Tables, t.Values())
	}
	return FormatInfo{Codebook: c}
}

// describe returns the info.json description of a datatype, or of the number
// format elem when dt is nil.
func describe(dt *tc.DataType, elem *dtype.Format) DataTypeInfo {
	if dt == nil {
		return DataTypeInfo{Name: elem.Name(), Code: elem.Name(), Note: elem.Note(), BitsPerValue: float64(elem.Bits())}
	}
	note := dt.Note()
	if note == "" && dt.Spec() == nil {
		note = dt.Elem().Note()
	}
	return DataTypeInfo{Name: dt.Name(), Code: dt.Code(), Aliases: dt.Aliases(), Note: note,
		Scaled: dt.Spec() != nil, BitsPerValue: dt.BitsPerValue()}
}

// compressPlain returns the Compressed form of a tensor of a number format
// that is no datatype: its one data part bit-packed when 8 bits wide or less.
func compressPlain(t *tc.Tensor) (*tc.Tensor, error) {
	d, f := t.Data, t.Data.Format
	n, _ := checkedProduct(t.Shape)
	switch {
	case t.Scale != nil || t.Zero != nil || t.TensorScale != nil || t.Meta != nil || t.Mask != nil:
		return nil, fmt.Errorf("a %s tensor without a datatype has only a data part", f.Name())
	case d.Bits != f.Bits() || d.Packed || !slices.Equal(d.Shape, partShape(t.Shape)):
		return nil, fmt.Errorf("data part of %d bits, packed=%v, shape %v; want %d bits, unpacked, shape %v",
			d.Bits, d.Packed, d.Shape, f.Bits(), partShape(t.Shape))
	case len(d.Bytes) != n*d.StorageBytes():
		return nil, fmt.Errorf("data part holds %d bytes, want %d", len(d.Bytes), n*d.StorageBytes())
	}
	p := *d
	p.Shape = slices.Clone(d.Shape)
	if d.Bits <= 8 {
		p.Packed = true
		p.Bytes = make([]byte, kernels.PackedLen(n, uint(d.Bits)))
		kernels.PackBits(p.Bytes, d.Bytes, uint(d.Bits))
	}
	c := *t
	c.Form, c.Data = tc.Compressed, &p
	return &c, nil
}

// partShape is the shape tcast gives a part of one entry per element: the
// input's, or [1] for a 0-d input.
func partShape(shape []int) []int {
	if len(shape) == 0 {
		return []int{1}
	}
	return slices.Clone(shape)
}

// codesDType is the .npy dtype of codes of width bytes.
func codesDType(width int) npy.DType {
	switch width {
	case 1:
		return npy.Uint8
	case 2:
		return npy.Uint16
	}
	return npy.Uint32
}

func newPartInfo(name string, comp *tc.Part) PartInfo {
	pi := PartInfo{Name: name, Shape: slices.Clone(comp.Shape), Storage: comp.Storage(), Bits: comp.Bits, Bytes: len(comp.Bytes)}
	if comp.Format != nil {
		pi.Format = comp.Format.Name()
	}
	return pi
}

// packedFile stores the compressed data bytes as a 1-D uint8 array.
func packedFile(comp *tc.Part) (PartInfo, []file, error) {
	pi := newPartInfo("data", comp)
	pi.File, pi.FileDType = PackedFile, npy.Uint8.String()
	var b bytes.Buffer
	err := npy.Write(&b, npy.Uint8, []int{len(comp.Bytes)}, comp.Bytes)
	return pi, []file{{pi.File, b.Bytes()}}, err
}

// fileDType is how a byte-wide part's codes are stored: bool for the mask, int8
// for signed integer codes (sign-extended, so they read back as the integers),
// uint8 otherwise.
func fileDType(name string, p *tc.Part) npy.DType {
	switch {
	case name == "mask":
		return npy.Bool
	case p.Format != nil && p.Format.Kind() == dtype.Int && p.Format.Signed():
		return npy.Int8
	}
	return npy.Uint8
}

// partFiles stores a scale, zero, tensor scale, meta or mask part: byte-wide
// parts as their codes, wider ones as float32 values plus the exact codes.
func partFiles(name string, act, comp *tc.Part) (PartInfo, []file, error) {
	pi := newPartInfo(name, comp)
	pi.File = name + ".npy"
	var b bytes.Buffer
	if act.Bits <= 8 {
		dt := fileDType(name, act)
		pi.FileDType = dt.String()
		data := act.Bytes
		if dt == npy.Int8 {
			data = make([]byte, len(act.Bytes))
			sh := 8 - uint(act.Bits)
			for i, c := range act.Bytes {
				data[i] = byte(int8(c<<sh) >> sh)
			}
		}
		if err := npy.Write(&b, dt, act.Shape, data); err != nil {
			return pi, nil, err
		}
		return pi, []file{{pi.File, b.Bytes()}}, nil
	}
	codes, err := act.Codes()
	if err != nil {
		return pi, nil, err
	}
	vals := make([]float32, len(codes))
	for i, c := range codes {
		vals[i] = act.Format.Decode(c)
	}
	pi.FileDType = npy.Float32.String()
	if err := npy.WriteSlice(&b, act.Shape, vals); err != nil {
		return pi, nil, err
	}
	cdt := codesDType(act.StorageBytes())
	pi.CodesFile, pi.CodesDType = name+"_codes.npy", cdt.String()
	var cb bytes.Buffer
	if err := npy.Write(&cb, cdt, act.Shape, act.Bytes); err != nil {
		return pi, nil, err
	}
	return pi, []file{{pi.File, b.Bytes()}, {pi.CodesFile, cb.Bytes()}}, nil
}

// compare returns the error statistics of dequantized values against the
// input, and tcast's measures they come from (with the input's NaN and
// ±Inf counts).
func compare(src, deq []float32, maxFinite float32) (Stats, tc.Errors) {
	e := tc.Compare(src, deq)
	s := Stats{Count: len(src), NaNInputs: e.NaN, MaxAbsError: e.MaxAbs, SQNR: e.SQNR, Lost: e.Lost}
	for _, x := range src {
		if !math.IsInf(float64(x), 0) && (x > maxFinite || x < -maxFinite) { // NaN compares false
			s.Clipped++
		}
	}
	return s, e
}
