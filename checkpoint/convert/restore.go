package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmodel"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
)

// VerifyResult compares one tensor of a converted checkpoint with its source.
type VerifyResult struct {
	Name      string `json:"name"`
	Shape     []int  `json:"shape"`
	Converted bool   `json:"converted"`
	DataType  string `json:"datatype,omitempty"` // the converted tensor's datatype or stored type
	// Bits is what the tensor costs per value in the converted
	// checkpoint: every byte stored for it (values, scales, masks), as
	// convert's report counts a cast weight's bits.
	Bits      float64  `json:"bits_per_value"`
	SQNR      *float64 `json:"sqnr_db"` // nil: exact, or an all-zero source
	MSE       float64  `json:"mse"`
	MaxAbsErr float64  `json:"max_abs_error"`
	// Lost counts finite source values that came back NaN or infinite; any is
	// a failure, and makes the error not finite: SQNR −Inf, MSE and
	// MaxAbsErr +Inf, written as null in JSON (MarshalJSON).
	Lost int `json:"nonfinite_outputs"`
	// WeightedSQNR is the SQNR in dB with each element weighted by its
	// column's importance (VerifyOptions.Imatrix), its entry found as
	// convert finds it: for a Hugging Face source of an architecture
	// package ggufmodel knows, by its GGUF name, else by the converted
	// tensor's name, else by the source's; nil without an importance
	// matrix, for a tensor it has no entry for, or when the tensor is
	// exact.
	WeightedSQNR *float64 `json:"weighted_sqnr_db,omitempty"`
}

// MeanWeightedSQNR returns the mean of the results' WeightedSQNR by
// elements (as convert's Summary), nil when none has one, and
// the number of tensors that have one.
func MeanWeightedSQNR(rs []VerifyResult) (*float64, int) {
	var m measure.MeanSQNR
	n := 0
	for _, r := range rs {
		if r.WeightedSQNR != nil && r.Lost == 0 { // a weight that lost values has no finite error
			m.Add(r.WeightedSQNR, measure.Elements(r.Shape))
			n++
		}
	}
	return m.Mean(), n
}

// VerifyOptions control VerifyWith. The zero value is Verify.
type VerifyOptions struct {
	// Imatrix, when set, adds each converted tensor's importance-weighted
	// SQNR (VerifyResult.WeightedSQNR): the measure the GGUF quantizers
	// minimise when convert is given the importance matrix, and a way to
	// compare conversions with and without it.
	Imatrix *imatrix.Imatrix
	// Warn, when set, is given each warning: an importance matrix with no
	// entry for any converted weight (a matrix of another model), which
	// leaves every WeightedSQNR nil.
	Warn func(msg string)
	// Observe, when set, is called for each float tensor compared, in the
	// source's order, with its result and both sets of values: the
	// source's (after the conversion's transform) and the converted
	// checkpoint's, dequantized. The slices are valid only during the call.
	// The HTML report (package report) measures its error histograms so.
	Observe func(r *VerifyResult, want, got []float32)
}

// ErrMismatch is matched by the error of Verify when the two checkpoints do
// not hold the same tensors (names, shapes, or non-float bytes).
var ErrMismatch = errors.New("checkpoints differ")

// Verify reads every tensor of the converted checkpoint conv, dequantized, and
// compares it with the same tensor of orig. Both are opened with load.Open,
// so either may be in any layout, GGUF included. Tensors that are neither
// quantized nor float must match byte for byte. For a llama.cpp model GGUF,
// tensors are paired by their source names, the source's values go through
// the change the conversion made (query and key rows permuted, Gemma's norms
// plus one) before they are compared, and the tensors it leaves out (a tied
// output head) are skipped.
func Verify(orig, conv string) ([]VerifyResult, error) {
	return VerifyWith(orig, conv, VerifyOptions{})
}

// VerifyWith is Verify with options.
func VerifyWith(orig, conv string, o VerifyOptions) ([]VerifyResult, error) {
	src, err := load.Open(orig)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	c, err := load.Open(conv)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var renamed, dropped map[string]string
	var xf map[string]ggufmodel.Transform
	for _, m := range []struct {
		key string
		dst any
	}{{layout.KeyRenamed, &renamed}, {layout.KeyTransforms, &xf}, {layout.KeyDropped, &dropped}} {
		if js, ok := c.Metadata()[m.key]; ok {
			if err := json.Unmarshal([]byte(js), m.dst); err != nil {
				return nil, fmt.Errorf("%s: metadata %s: %w", conv, m.key, err)
			}
		}
	}
	// Importance entries are GGUF names: a Hugging Face source of a known
	// architecture is looked up under its tensors' GGUF names too.
	var impNames *ggufmodel.Model
	if o.Imatrix != nil {
		impNames, _ = ggufmodel.Detect(src.Config())
	}
	// Tensors the conversion renamed are paired by their source names.
	convName := map[string]string{}
	for n, o := range renamed {
		convName[o] = n
	}
	var out []VerifyResult
	weights, found := 0, 0 // converted weights, and those the matrix has
	for _, ti := range src.Tensors() {
		if _, ok := dropped[ti.Name]; ok {
			continue
		}
		cname := ti.Name
		if n, ok := convName[ti.Name]; ok {
			cname = n
		}
		ci, err := c.Info(cname)
		if err != nil {
			return nil, missingTensor(orig, conv, src, c, renamed, ti.Name)
		}
		r := VerifyResult{Name: ti.Name, Shape: ti.Shape, Converted: ci.Quantized(), DataType: ci.Type, Bits: measure.StoredBits(ci.Size, ti.Shape)}
		if !ti.Float || !ci.Float {
			a, err := src.Bytes(ti.Name)
			if err != nil {
				return nil, err
			}
			b, err := c.Bytes(cname)
			if err != nil {
				return nil, err
			}
			if !slices.Equal(a, b) {
				return nil, fmt.Errorf("%w: tensor %s differs between %s and %s", ErrMismatch, ti.Name, orig, conv)
			}
			out = append(out, r)
			continue
		}
		want, _, err := src.Float32(ti.Name)
		if err != nil {
			return nil, err
		}
		if t, ok := xf[cname]; ok {
			if want, err = t.Apply(want, ti.Shape); err != nil {
				return nil, fmt.Errorf("%s: tensor %s: %w", orig, ti.Name, err)
			}
		}
		got, shape, err := c.Float32(cname)
		if err != nil {
			return nil, err
		}
		if !slices.Equal(shape, ti.Shape) {
			return nil, fmt.Errorf("%w: tensor %s has shape %v in %s and %v in %s", ErrMismatch, ti.Name, ti.Shape, orig, shape, conv)
		}
		e := measure.Compare(want, got)
		r.SQNR, r.MSE, r.MaxAbsErr, r.Lost = e.SQNR, e.MSE, e.MaxAbs, e.Lost
		if o.Imatrix != nil && r.Converted && len(shape) >= 2 {
			weights++
			iname := measure.Entry(o.Imatrix, impNames, ti.Name, cname, ti.Name)
			if iname != "" {
				found++
				if err := checkEntrySize(o.Imatrix, iname, shape); err != nil {
					return nil, fmt.Errorf("tensor %s: %w", ti.Name, err)
				}
			}
			r.WeightedSQNR = measure.WeightedSQNR(o.Imatrix, iname, shape, want, got)
		}
		if o.Observe != nil {
			o.Observe(&r, want, got)
		}
		out = append(out, r)
		src.Release(ti.Name)
		c.Release(cname)
	}
	if o.Imatrix != nil && weights > 0 && found == 0 && o.Warn != nil {
		var entry string
		if len(o.Imatrix.Entries) > 0 {
			entry = o.Imatrix.Entries[0].Name
		}
		o.Warn(fmt.Sprintf("-imatrix %s has no entry for any of the %d converted weights (its entries are named like %q): no weighted SQNR; is it the matrix of another model?",
			filepath.Base(o.Imatrix.Path), weights, entry))
	}
	return out, nil
}

// checkEntrySize reports, as convert does, an importance entry whose size
// does not match the weight of the given shape (an *imatrix.SizeError
// naming the entry and both sizes, with what to do), but for the token
// embedding, which convert quantizes without it then.
func checkEntrySize(im *imatrix.Imatrix, name string, shape []int) error {
	if degenerate(im, name) != ImportanceNone {
		return nil
	}
	cols, experts := measure.Matrices(shape)
	_, err := im.Vector(name, cols, experts)
	var se *imatrix.SizeError
	if errors.As(err, &se) && ggufmix.CategoryOf(name) == ggufmix.TokenEmbd {
		return nil
	}
	if err != nil {
		return fmt.Errorf("-imatrix %s: %w (give the matrix computed for this model)", filepath.Base(im.Path), err)
	}
	return nil
}

// DecompressOptions control Decompress. The zero value writes float32 and
// refuses to replace an existing output.
type DecompressOptions struct {
	// To is the float format of dequantized tensors: float32 (nil),
	// float16 or bfloat16.
	To *dtype.Format
	// Force replaces an existing output.
	Force bool
}

// DecompressResult reports what Decompress wrote.
type DecompressResult struct {
	Input, Output string
	Layout        string // the input's layout
	Tensors       int    // tensors written
	Dequantized   int    // of which dequantized
}

// Decompress writes a plain safetensors checkpoint at out (a .safetensors
// file, or a directory for model.safetensors and the input's config.json
// without its quantization_config) holding every logical tensor of
// the checkpoint in (any layout load.Open reads): quantized tensors
// dequantized to opts.To, the others as they are.
func Decompress(in, out string, opts DecompressOptions) (*DecompressResult, error) {
	st, err := decompressDType(opts.To)
	if err != nil {
		return nil, err
	}
	dest, isDir, err := decompressDest(out)
	if err != nil {
		return nil, err
	}
	c, err := load.Open(in)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := checkOutput(dest, c.Files(), in); err != nil {
		return nil, err
	}
	specs, err := plainSpecs(in, c.Tensors(), st)
	if err != nil {
		return nil, err
	}
	stage, err := beginOutput(dest, isDir, opts.Force)
	if err != nil {
		return nil, err
	}
	defer stage.Abort()
	path := stage.Path()
	if isDir {
		path = filepath.Join(path, "model.safetensors")
	}
	if err := writePlain(c, specs, path); err != nil {
		return nil, err
	}
	if isDir && c.Config() != nil {
		// A directory output is a loadable checkpoint: its config without
		// the quantization the weights no longer have.
		cfg, err := layout.PlainConfig(c.Config())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in, err)
		}
		if err := writeNew(filepath.Join(stage.Path(), "config.json"), cfg); err != nil {
			return nil, err
		}
	}
	if err := stage.Commit(); err != nil {
		return nil, err
	}
	res := &DecompressResult{Input: in, Output: dest, Layout: c.Layout(), Tensors: len(specs)}
	for _, info := range c.Tensors() {
		if info.DType == 0 {
			res.Dequantized++
		}
	}
	return res, nil
}

// decompressDType returns the safetensors dtype of DecompressOptions.To.
func decompressDType(to *dtype.Format) (safetensors.DType, error) {
	if to == nil {
		return safetensors.F32, nil
	}
	switch to.Name() {
	case "float32":
		return safetensors.F32, nil
	case "float16":
		return safetensors.F16, nil
	case "bfloat16":
		return safetensors.BF16, nil
	}
	return 0, fmt.Errorf("convert: DecompressOptions.To is %s; want float32, float16 or bfloat16", to.Name())
}

// decompressDest returns where Decompress writes out, and whether that is
// a directory: a .safetensors file, else a directory.
func decompressDest(out string) (string, bool, error) {
	switch ext := strings.ToLower(filepath.Ext(out)); {
	case ext == ".safetensors":
		return out, false, nil
	case fileExts[ext] && !strings.HasSuffix(out, string(os.PathSeparator)):
		return "", false, &OutputError{Path: out, Layout: "safetensors", Reason: "names a " + ext + " file, " +
			"and Decompress writes safetensors", Want: "a directory or a .safetensors file"}
	}
	return out, true, nil
}

// plainSpecs declares the plain output of every tensor: quantized ones as
// st, the others as they are stored.
func plainSpecs(in string, infos []load.Info, st safetensors.DType) ([]safetensors.TensorSpec, error) {
	specs := make([]safetensors.TensorSpec, len(infos))
	for i, info := range infos {
		specs[i] = safetensors.TensorSpec{Name: info.Name, DType: info.DType, Shape: info.Shape}
		if info.DType == 0 {
			if !info.Float {
				return nil, fmt.Errorf("%s: tensor %s (%s) cannot be dequantized", in, info.Name, info.Type)
			}
			specs[i].DType = st
		}
	}
	return specs, nil
}

// writePlain writes the tensors of c as specs declares them to the
// safetensors file path, one at a time.
func writePlain(c *load.Checkpoint, specs []safetensors.TensorSpec, path string) error {
	meta := layout.WithoutMetaKeys(c.Metadata())
	if c.GGUF() != nil {
		meta = nil // GGUF key/values are not safetensors metadata
	}
	w, err := safetensors.Create(path, specs, meta)
	if err != nil {
		return err
	}
	for i, info := range c.Tensors() {
		var data []byte
		if info.DType != 0 {
			data, err = c.Bytes(info.Name)
		} else {
			var v []float32
			if v, _, err = c.Float32(info.Name); err == nil {
				data = floatBytes(v, specs[i].DType)
			}
		}
		if err == nil {
			err = w.Write(info.Name, data)
		}
		if err != nil {
			w.Abort()
			return err
		}
		c.Release(info.Name)
	}
	return w.Close()
}

// floatBytes encodes v little-endian as d (F32, F16 or BF16), rounding to
// nearest even and keeping overflow as infinity.
func floatBytes(v []float32, d safetensors.DType) []byte {
	if d == safetensors.F32 {
		return float32Bytes(v)
	}
	f := dtype.MustParse("float16")
	if d == safetensors.BF16 {
		f = dtype.MustParse("bfloat16")
	}
	codes := make([]uint16, len(v))
	dtype.EncodeSlice(f, codes, v, dtype.Options{Overflow: dtype.OverflowIEEE})
	out := make([]byte, 2*len(v))
	for i, c := range codes {
		out[2*i], out[2*i+1] = byte(c), byte(c>>8)
	}
	return out
}
