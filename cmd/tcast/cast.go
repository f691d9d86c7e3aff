package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/scale"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

const castUsage = "tcast cast -dtype NAME [-axis N] [-scale-mode MODE] [-round even|away|zero|stochastic] [-seed N] [-overflow sat|ieee] [-full-range] [-keep MASK.npy] -o DIR IN.npy\n\n" +
	"NAME is a datatype (tcast datatypes lists them: mxfp4, nvfp4, mxint8, int4_g128, ...), a number\n" +
	"format (tcast formats lists them: e4m3fn, bfloat16, ...) or a code such as e2m1_e8m0_t32.\n" +
	"DIR gets codes.npy, dequant.npy, packed.npy, info.json and, as the datatype has them, scale.npy,\n" +
	"zero.npy, tensor_scale.npy, meta.npy and mask.npy (tcast decompress rebuilds the values from DIR)"

var roundingNames = map[string]dtype.Rounding{
	"even": dtype.RoundEven, "away": dtype.RoundAway, "zero": dtype.RoundZero, "stochastic": dtype.RoundStochastic,
}

var overflowNames = map[string]dtype.Overflow{"sat": dtype.Saturate, "ieee": dtype.OverflowIEEE}

// castInfo is the info.json written by tcast cast and read by tcast decompress.
type castInfo struct {
	// Format is the element format.
	Format     dtype.Info   `json:"format"`
	DataType   dataTypeInfo `json:"datatype"`
	Input      string       `json:"input"`
	InputDType string       `json:"input_dtype"`
	Keep       string       `json:"keep,omitempty"`
	Shape      []int        `json:"shape"`
	CodesDType string       `json:"codes_dtype"`
	Axis       int          `json:"axis"`
	ScaleMode  string       `json:"scale_mode"`
	Rounding   string       `json:"rounding"`
	Overflow   string       `json:"overflow"`
	Seed       *uint64      `json:"seed,omitempty"`
	FullRange  bool         `json:"full_range,omitempty"`
	// BitsPerValue is the exact storage cost of this tensor: every part's bits
	// over the number of elements (tcast.Tensor.BitsPerValue).
	BitsPerValue float64 `json:"bits_per_value"`
	// Form is the form the parts are described in: always "compressed".
	Form  string     `json:"form"`
	Parts []partInfo `json:"parts"`
	Stats castStats  `json:"stats"`
}

// dataTypeInfo describes the datatype of a cast.
type dataTypeInfo struct {
	Name    string   `json:"name"`
	Code    string   `json:"code"`
	Aliases []string `json:"aliases,omitempty"`
	Note    string   `json:"note,omitempty"`
	Scaled  bool     `json:"scaled"`
	// BitsPerValue is the datatype's nominal cost (tcast.DataType.BitsPerValue).
	BitsPerValue float64 `json:"bits_per_value"`
}

// partInfo describes one part of the compressed tensor and where DIR holds it.
type partInfo struct {
	Name    string `json:"name"`  // data, scale, zero, tensor_scale, meta, mask
	Shape   []int  `json:"shape"` // logical shape: one entry per element, block or subtile
	Storage string `json:"storage"`
	Format  string `json:"format,omitempty"` // empty for meta and mask
	Bits    int    `json:"bits"`
	Bytes   int    `json:"bytes"` // compressed size
	// File holds the part: packed.npy for the data (the compressed bytes), else
	// the codes (uint8, int8 for signed integers, bool for the mask) or, for
	// formats wider than 8 bits, the decoded float32 values, with the exact
	// codes in CodesFile.
	File       string `json:"file"`
	FileDType  string `json:"file_dtype"`
	CodesFile  string `json:"codes_file,omitempty"`
	CodesDType string `json:"codes_dtype,omitempty"`
}

// castStats compares the dequantized values with the input.
type castStats struct {
	Count       int     `json:"count"`
	NaNInputs   int     `json:"nan_inputs"`
	Clipped     int     `json:"clipped"` // finite inputs beyond ±max finite (unscaled formats only)
	MaxAbsError float64 `json:"max_abs_error"`
	// SQNR in dB over finite inputs with finite outputs; null when it is not a
	// number (no error at all, or an all-zero input).
	SQNR *float64 `json:"sqnr_db"`
}

func runCast(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cast", flag.ContinueOnError)
	name := fs.String("dtype", "", "datatype `NAME` (see tcast datatypes and tcast formats)")
	axis := fs.Int("axis", -1, "scaled axis `N`; negative values count from the end")
	modeName := fs.String("scale-mode", "floor", "power-of-two scale selection: "+modeList())
	round := fs.String("round", "even", "rounding: even, away, zero or stochastic")
	seed := fs.Uint64("seed", 0, "seed of stochastic rounding")
	overflow := fs.String("overflow", "sat", "overflow of unscaled formats: sat (to ±max finite) or ieee (to Inf/NaN); scaled datatypes always saturate")
	fullRange := fs.Bool("full-range", false, "let signed integers use their most negative code")
	keepFile := fs.String("keep", "", "bool .npy `MASK` of the input's shape: false elements are left out of the scales and stored as zero (scaled datatypes)")
	out := fs.String("o", "", "output `DIR` (created if missing)")
	pos, err := parseArgs(fs, castUsage, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		return usagef("want exactly one input .npy file, got %d", len(pos))
	case *name == "":
		return usagef("-dtype is required")
	case *out == "":
		return usagef("-o DIR is required")
	}
	rmode, ok := roundingNames[*round]
	if !ok {
		return usagef("-round %q: want even, away, zero or stochastic", *round)
	}
	ov, ok := overflowNames[*overflow]
	if !ok {
		return usagef("-overflow %q: want sat or ieee", *overflow)
	}
	smode, err := scale.ParseMode(*modeName)
	if err != nil {
		return usagef("-scale-mode %q: want one of %s", *modeName, modeList())
	}
	dt, plain, err := resolveDataType(*name)
	if err != nil {
		return usagef("-dtype: %v", err)
	}
	scaled := plain == nil
	if scaled && ov == dtype.OverflowIEEE {
		return usagef("-overflow ieee: %s is a scaled datatype, whose elements always saturate", dt.Name())
	}
	if !scaled && *keepFile != "" {
		return usagef("-keep: %s is not a scaled datatype; a mask needs one", *name)
	}
	in := pos[0]
	arr, src, err := readInput(in)
	if err != nil {
		return err
	}
	rank := max(len(arr.Shape), 1) // a 0-d array is one element along one axis
	if *axis < -rank || *axis >= rank {
		return usagef("-axis %d out of range for the rank-%d input %s", *axis, len(arr.Shape), in)
	}
	normAxis := *axis
	if normAxis < 0 {
		normAxis += rank
	}
	var keep []bool
	if *keepFile != "" {
		if keep, err = readKeep(*keepFile, arr.Shape); err != nil {
			return err
		}
	}

	info := castInfo{
		Input:      in,
		InputDType: arr.DType.String(),
		Keep:       *keepFile,
		Shape:      arr.Shape,
		Axis:       normAxis,
		ScaleMode:  smode.String(),
		Rounding:   *round,
		Overflow:   *overflow,
		FullRange:  *fullRange,
		Form:       tc.Compressed.String(),
	}
	if info.Shape == nil {
		info.Shape = []int{}
	}
	if rmode == dtype.RoundStochastic {
		info.Seed = seed
	}
	var res *castResult
	if scaled {
		opts := tc.Options{Form: tc.Actual, Axis: cliAxis(*axis), Mode: smode, Rounding: rmode, Seed: *seed, FullRange: *fullRange, Keep: keep}
		res, err = castScaled(src, arr.Shape, dt, opts)
		if err != nil {
			return fmt.Errorf("%s: %v", in, err)
		}
		info.Format = dt.Elem().Info()
		info.Stats = compare(src, res.deq, float32(math.Inf(1)))
	} else {
		opts := dtype.Options{Rounding: rmode, Overflow: ov, Seed: *seed, FullRange: *fullRange}
		if res, err = castPlain(src, arr.Shape, plain, opts); err != nil {
			return err
		}
		info.Format = plain.Info()
		info.Stats = compare(src, res.deq, plain.MaxFinite())
	}
	info.DataType = describe(dt, plain)
	info.CodesDType = res.codesDType
	info.BitsPerValue = res.bitsPerValue
	info.Parts = res.parts

	var codes, dequant bytes.Buffer
	if err := npy.Write(&codes, codesNpyDType(res.codeBytes), arr.Shape, res.codes); err != nil {
		return err
	}
	if err := npy.WriteSlice(&dequant, arr.Shape, res.deq); err != nil {
		return err
	}
	js, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	js = append(js, '\n')
	files := []outFile{{"codes.npy", codes.Bytes()}, {"dequant.npy", dequant.Bytes()}}
	files = append(files, res.files...)
	files = append(files, outFile{"info.json", js})
	if err := writeAll(*out, files); err != nil {
		return err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	sqnr := "exact"
	if db := info.Stats.SQNR; db != nil {
		sqnr = fmt.Sprintf("SQNR %.2f dB", *db)
	}
	what := info.DataType.Name
	if info.DataType.Code != what {
		what += " = " + info.DataType.Code
	}
	clipped := ""
	if !scaled {
		clipped = fmt.Sprintf(", %d clipped", info.Stats.Clipped)
	}
	fmt.Fprintf(stdout, "%s: %d values %v → %s (%.4g bits per value) in %s: %s; codes %s; max abs error %g, %s%s\n",
		in, len(src), arr.Shape, what, info.BitsPerValue, *out, strings.Join(names, ", "), res.codesDType,
		info.Stats.MaxAbsError, sqnr, clipped)
	if n := info.DataType.Note; strings.Contains(n, "TensorCast") { // a spelling whose meaning differs elsewhere
		fmt.Fprintf(stderr, "note: %s: %s\n", info.DataType.Name, n)
	}
	return nil
}

func modeList() string {
	var ms []string
	for _, m := range scale.Modes() {
		ms = append(ms, m.String())
	}
	return strings.Join(ms, ", ")
}

// resolveDataType returns the datatype of a -dtype name. A number format that is
// no datatype (an integer or exponent format, which tcast only uses under a
// scale) is cast unscaled as before and returned as plain, with dt nil; an
// unscaled float datatype is returned as both.
func resolveDataType(name string) (dt *tc.DataType, plain *dtype.Format, err error) {
	dt, err = tc.Lookup(name)
	if err != nil {
		if f, perr := dtype.Parse(name); perr == nil {
			return nil, f, nil
		}
		return nil, nil, errors.New(strings.TrimPrefix(err.Error(), "tcast: "))
	}
	if dt.Spec() == nil {
		return dt, dt.Elem(), nil
	}
	return dt, nil, nil
}

func describe(dt *tc.DataType, plain *dtype.Format) dataTypeInfo {
	if dt == nil {
		return dataTypeInfo{Name: plain.Name(), Code: plain.Name(), Note: plain.Note(), BitsPerValue: float64(plain.Bits())}
	}
	note := dt.Note()
	if note == "" && dt.Spec() == nil {
		note = dt.Elem().Note()
	}
	return dataTypeInfo{Name: dt.Name(), Code: dt.Code(), Aliases: dt.Aliases(), Note: note,
		Scaled: dt.Spec() != nil, BitsPerValue: dt.BitsPerValue()}
}

// readInput reads a float .npy array in C order.
func readInput(in string) (*npy.Array, []float32, error) {
	arr, err := npy.ReadFile(in)
	if err != nil {
		return nil, nil, err
	}
	if arr.Fortran {
		return nil, nil, fmt.Errorf("%s: Fortran-order arrays are not supported; save it in C order (numpy.ascontiguousarray)", in)
	}
	src, err := arr.Float32s()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s input not supported, want float16, float32 or float64", in, arr.DType)
	}
	return arr, src, nil
}

// readKeep reads a bool mask of the given shape.
func readKeep(path string, shape []int) ([]bool, error) {
	arr, err := npy.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch {
	case arr.DType != npy.Bool:
		return nil, fmt.Errorf("%s: mask is %s, want bool", path, arr.DType)
	case arr.Fortran:
		return nil, fmt.Errorf("%s: Fortran-order arrays are not supported; save it in C order (numpy.ascontiguousarray)", path)
	case !slices.Equal(arr.Shape, shape):
		return nil, fmt.Errorf("%s: mask has shape %v, want the input's %v", path, arr.Shape, shape)
	}
	keep := make([]bool, len(arr.Data))
	for i, b := range arr.Data {
		keep[i] = b != 0
	}
	return keep, nil
}

// castResult is what a cast writes besides info.json.
type castResult struct {
	codes        []byte // one little-endian code per element
	codeBytes    int
	codesDType   string
	deq          []float32
	bitsPerValue float64
	parts        []partInfo
	files        []outFile // packed.npy and the part files
}

func codesNpyDType(width int) npy.DType {
	switch width {
	case 1:
		return npy.Uint8
	case 2:
		return npy.Uint16
	}
	return npy.Uint32
}

// castPlain casts to an unscaled number format with the dtype codecs, which
// honour every element option (IEEE overflow, one stochastic stream).
func castPlain(src []float32, shape []int, f *dtype.Format, o dtype.Options) (*castResult, error) {
	r := &castResult{codeBytes: f.CodeBytes(), deq: make([]float32, len(src)), bitsPerValue: float64(f.Bits())}
	switch r.codeBytes {
	case 1:
		r.codes = encodeTo[uint8](f, src, r.deq, o)
	case 2:
		r.codes = encodeTo[uint16](f, src, r.deq, o)
	default:
		r.codes = encodeTo[uint32](f, src, r.deq, o)
	}
	r.codesDType = codesNpyDType(r.codeBytes).String()
	data := &tc.Part{Format: f, Bits: f.Bits(), Shape: partShape(shape), Bytes: r.codes}
	if f.Bits() <= 8 {
		data.Packed = true
		data.Bytes = make([]byte, kernels.PackedLen(len(r.codes), uint(f.Bits())))
		kernels.PackBits(data.Bytes, r.codes, uint(f.Bits()))
	}
	pi, file, err := packedFile(data)
	if err != nil {
		return nil, err
	}
	r.parts, r.files = []partInfo{pi}, []outFile{file}
	return r, nil
}

// partShape is the shape tcast gives a part of one entry per element: the
// input's, or [1] for a 0-d input.
func partShape(shape []int) []int {
	if len(shape) == 0 {
		return []int{1}
	}
	return slices.Clone(shape)
}

// encodeTo encodes src with codes of type C, decodes them into deq, and returns
// the codes' little-endian bytes.
func encodeTo[C uint8 | uint16 | uint32](f *dtype.Format, src, deq []float32, o dtype.Options) []byte {
	c := make([]C, len(src))
	dtype.EncodeSlice(f, c, src, o)
	dtype.DecodeSlice(f, deq, c)
	out := make([]byte, len(c)*f.CodeBytes())
	for i, v := range c {
		switch f.CodeBytes() {
		case 1:
			out[i] = byte(v)
		case 2:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
		default:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
		}
	}
	return out
}

// castScaled casts with tcast: the Actual form for the codes, the Virtual form
// for the dequantized values, and the Compressed form for packed.npy.
func castScaled(src []float32, shape []int, dt *tc.DataType, opts tc.Options) (*castResult, error) {
	act, err := tc.Cast(src, shape, dt, &opts)
	if err != nil {
		return nil, err
	}
	vopts := opts
	vopts.Form = tc.Virtual
	virt, err := tc.Cast(src, shape, dt, &vopts)
	if err != nil {
		return nil, err
	}
	comp, err := tc.Compress(act)
	if err != nil {
		return nil, err
	}
	r := &castResult{
		codes:        act.Data.Bytes,
		codeBytes:    act.Data.StorageBytes(),
		codesDType:   act.Data.Storage(),
		deq:          virt.Values,
		bitsPerValue: comp.BitsPerValue(),
	}
	actual := map[string]*tc.Part{}
	for _, p := range act.Parts() {
		actual[p.Name] = p.Part
	}
	for _, p := range comp.Parts() {
		var pi partInfo
		var files []outFile
		if p.Name == "data" {
			var f outFile
			pi, f, err = packedFile(p.Part)
			files = []outFile{f}
		} else {
			pi, files, err = partFiles(p.Name, actual[p.Name], p.Part)
		}
		if err != nil {
			return nil, err
		}
		r.parts = append(r.parts, pi)
		r.files = append(r.files, files...)
	}
	return r, nil
}

func newPartInfo(name string, comp *tc.Part) partInfo {
	pi := partInfo{Name: name, Shape: slices.Clone(comp.Shape), Storage: comp.Storage(), Bits: comp.Bits, Bytes: len(comp.Bytes)}
	if comp.Format != nil {
		pi.Format = comp.Format.Name()
	}
	return pi
}

// packedFile writes the compressed data bytes as a 1-D uint8 array.
func packedFile(comp *tc.Part) (partInfo, outFile, error) {
	pi := newPartInfo("data", comp)
	pi.File, pi.FileDType = "packed.npy", npy.Uint8.String()
	var b bytes.Buffer
	err := npy.Write(&b, npy.Uint8, []int{len(comp.Bytes)}, comp.Bytes)
	return pi, outFile{pi.File, b.Bytes()}, err
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

// partFiles writes a scale, zero, tensor scale, meta or mask part: byte-wide
// parts as their codes, wider ones as float32 values plus the exact codes.
func partFiles(name string, act, comp *tc.Part) (partInfo, []outFile, error) {
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
		return pi, []outFile{{pi.File, b.Bytes()}}, nil
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
	cdt := codesNpyDType(act.StorageBytes())
	pi.CodesFile, pi.CodesDType = name+"_codes.npy", cdt.String()
	var cb bytes.Buffer
	if err := npy.Write(&cb, cdt, act.Shape, act.Bytes); err != nil {
		return pi, nil, err
	}
	return pi, []outFile{{pi.File, b.Bytes()}, {pi.CodesFile, cb.Bytes()}}, nil
}

// compare returns the error statistics of dequantized values against the input.
func compare(src, deq []float32, maxFinite float32) castStats {
	s := castStats{Count: len(src)}
	var sig, noise float64
	for i, x := range src {
		switch {
		case x != x:
			s.NaNInputs++
			continue
		case math.IsInf(float64(x), 0):
			continue
		}
		if x > maxFinite || x < -maxFinite {
			s.Clipped++
		}
		y := float64(deq[i])
		if math.IsInf(y, 0) || y != y {
			continue
		}
		d := math.Abs(float64(x) - y)
		s.MaxAbsError = math.Max(s.MaxAbsError, d)
		sig += float64(x) * float64(x)
		noise += d * d
	}
	if noise > 0 && sig > 0 {
		db := 10 * math.Log10(sig/noise)
		s.SQNR = &db
	}
	return s
}

type outFile struct {
	name string
	data []byte
}

// writeAll writes every file into dir atomically as a set: each goes to a
// temporary file in dir, fsynced, and only when all are written are they renamed
// into place. On failure the temporary files are removed and no file of the set
// appears under its final name.
func writeAll(dir string, files []outFile) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var temps []string
	defer func() {
		if err != nil {
			for _, t := range temps {
				os.Remove(t)
			}
		}
	}()
	for _, f := range files {
		t, err := os.CreateTemp(dir, "."+f.name+".tmp*")
		if err != nil {
			return err
		}
		temps = append(temps, t.Name())
		_, err = t.Write(f.data)
		if err == nil {
			err = t.Sync()
		}
		if cerr := t.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, f.name), err)
		}
		if err := os.Chmod(t.Name(), 0o644); err != nil {
			return err
		}
	}
	for i, f := range files {
		if err := os.Rename(temps[i], filepath.Join(dir, f.name)); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, f.name), err)
		}
	}
	return nil
}
