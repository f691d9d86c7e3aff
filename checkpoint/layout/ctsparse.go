package layout

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/sparsity"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// Pruned weights in the compressed-tensors layout (docs/SPARSITY.md §7,
// docs/LAYOUTS.md §2). compressed-tensors quantizes a module's weight first
// and then hands the state dict to a sparse compressor, which replaces every
// tensor P.weight of a targeted module P by
//
//   - "sparse-24-bitmask": P.shape I64 [2, 1] (the dense shape), P.compressed
//     [out, in/2] in the weight's dtype (the two kept values of every group
//     of four, row-major), P.bitmask U8 [out, ceil(in/8)] (numpy.packbits of
//     the keep mask along the rows, LSB first);
//   - "sparse-bitmask": P.shape I64 [2], P.compressed 1-D (the kept values
//     in row-major order), P.bitmask as above, P.row_offsets I64 [out] (the
//     index in compressed of each row's first value).
//
// Everything else (P.weight_scale) passes through. Only a weight stored
// whole as P.weight is ever compressed: unquantized (BF16, F16, F32),
// float-quantized (F8_E4M3) and int-quantized (I8). The packed formats store
// P.weight_packed, which the sparse compressors leave as it is, so they are
// refused with a sparse format. compressed-tensors 0.14.x is the last
// release with the sparse compressors, and the configs written with them
// name it as their version.

// SparseFormat is how the compressed-tensors layout stores pruned weights:
// quantization_config.sparsity_config.format.
type SparseFormat string

// The sparse formats.
const (
	// SparseNatural is the natural sparse format of the pattern:
	// sparse-24-bitmask for 2:4, sparse-bitmask for any other N:M.
	SparseNatural SparseFormat = ""
	// SparseDense writes the pruned weights in their usual dense form, with
	// no sparsity_config (the one form current vLLM loads).
	SparseDense SparseFormat = "dense"
	// SparseBitmask is compressed-tensors' "sparse-bitmask".
	SparseBitmask SparseFormat = "sparse-bitmask"
	// Sparse24Bitmask is compressed-tensors' "sparse-24-bitmask" (2:4 only).
	Sparse24Bitmask SparseFormat = "sparse-24-bitmask"
)

// SparseFormats lists the named sparse formats.
func SparseFormats() []SparseFormat {
	return []SparseFormat{SparseDense, SparseBitmask, Sparse24Bitmask}
}

// ParseSparseFormat returns the sparse format of a name ("" is
// SparseNatural), or a *SparsityError for Pruning.Format.
func ParseSparseFormat(s string) (SparseFormat, error) {
	f := SparseFormat(s)
	if f == SparseNatural || slices.Contains(SparseFormats(), f) {
		return f, nil
	}
	return "", &SparsityError{Layout: "compressed-tensors", Option: optFormat, Value: s,
		Reason: "unknown sparse format"}
}

// Pruning asks a layout to store weights pruned to an N:M pattern along
// their input (last) axis, in a sparse format.
type Pruning struct {
	Pattern sparsity.Pattern
	Format  SparseFormat
}

// Resolved returns the format the pruning writes: Format, or the natural
// one when none was named.
func (p Pruning) Resolved() SparseFormat {
	if p.Format == SparseNatural {
		if p.Pattern == sparsity.P24 {
			return Sparse24Bitmask
		}
		return SparseBitmask
	}
	return p.Format
}

// active reports whether p asks for pruning.
func (p Pruning) active() bool { return p.Pattern.M != 0 }

// Pruner is implemented by layouts that store pruning apart from the
// datatype's quantization (compressed-tensors): the weights are cast with
// their dense datatype (scales over dense groups) and a keep mask, and the
// layout stores the mask. A converter casting for a layout configured with
// pruning chooses each weight's N:M mask along its last axis, then casts
// with tcast.Options.Keep set to it.
type Pruner interface {
	// WithPruning returns the layout writing weights pruned as p says, or a
	// *SparsityError for a pattern or format it cannot write.
	WithPruning(p Pruning) (Layout, error)
	// Pruning returns the pruning the layout was configured with, and false
	// when none.
	Pruning() (Pruning, bool)
}

// PruningOf returns the pruning layout l was configured with, and false
// when it has none (or is no Pruner).
func PruningOf(l Layout) (Pruning, bool) {
	if p, ok := l.(Pruner); ok {
		return p.Pruning()
	}
	return Pruning{}, false
}

// ErrSparsity is matched (errors.Is) by every *SparsityError.
var ErrSparsity = errors.New("unsupported sparsity")

// The settings a SparsityError names: the fields of Pruning, and the
// datatype the weights are cast to.
const (
	optPattern  = "Pruning.Pattern"
	optFormat   = "Pruning.Format"
	optDataType = "DataType"
)

// SparsityError reports pruning a layout cannot store: a pattern or sparse
// format it does not take, or a datatype its sparse formats do not compose
// with. Option names the refused setting, "Pruning.Pattern" or
// "Pruning.Format" (the fields of Pruning) or "DataType" (the datatype the
// weights are cast to), and Value its value; Conflict, when not empty,
// names the other setting it does not go with ("Pruning.Pattern" or
// "DataType").
type SparsityError struct {
	Layout   string
	Option   string
	Value    string // the value refused
	Reason   string
	Conflict string
}

func (e *SparsityError) Error() string {
	return fmt.Sprintf("layout %s: %s %s: %s", e.Layout, e.Option, e.Value, e.Reason)
}

// Is reports whether target is ErrSparsity.
func (e *SparsityError) Is(target error) bool { return target == ErrSparsity }

// WithPruning returns the compressed-tensors layout writing weights pruned
// as p says. sparse-24-bitmask needs the 2:4 pattern; the other formats take
// any N:M.
func (compressedTensors) WithPruning(p Pruning) (Layout, error) {
	const lay = "compressed-tensors"
	if err := p.Pattern.Validate(); err != nil {
		return nil, &SparsityError{Layout: lay, Option: optPattern, Value: p.Pattern.String(),
			Reason: err.Error()}
	}
	if _, err := ParseSparseFormat(string(p.Format)); err != nil {
		return nil, err
	}
	if p.Format == Sparse24Bitmask && p.Pattern != sparsity.P24 {
		return nil, &SparsityError{Layout: lay, Option: optFormat, Value: string(p.Format),
			Reason: fmt.Sprintf("the format holds 2:4 sparsity, not %v", p.Pattern), Conflict: optPattern}
	}
	return compressedTensors{prune: p}, nil
}

// Pruning returns the layout's pruning.
func (l compressedTensors) Pruning() (Pruning, bool) { return l.prune, l.prune.active() }

// ctSparseVersion is the compressed-tensors release whose sparse formats the
// configs with a sparsity_config follow: the last one that has them.
const ctSparseVersion = "0.14.0.1"

// plainFloatDType returns the safetensors dtype of an unscaled float16,
// bfloat16 or float32 datatype, and false for any other datatype.
func plainFloatDType(dt *tcast.DataType) (safetensors.DType, bool) {
	if dt == nil || dt.Spec() != nil || dt.Codebook() != nil {
		return 0, false
	}
	d := floatScaleDType(dt.Elem())
	return d, d != 0
}

// int8Whole returns the int-quantized scheme of a symmetric int8 datatype
// with a float tensor, channel or group scale along the input axis.
func int8Whole(dt *tcast.DataType) (*ctScheme, bool) {
	s := dt.Spec()
	if dt.Elem().Name() != fmtInt8 || s == nil || s.Zero != nil || s.TensorScale != nil || !plainTiles(s) || len(s.Tiles) > 1 {
		return nil, false
	}
	sdt := floatScaleDType(s.Scale)
	if sdt == 0 {
		return nil, false
	}
	sc := &ctScheme{kind: ctInt, bits: 8, typ: "int", symmetric: true, scaleDT: sdt, strategy: "tensor"}
	switch {
	case len(s.Tiles) == 0:
	case s.Tiles[0].Size == 0:
		sc.strategy = "channel"
	default:
		sc.strategy, sc.group = "group", s.Tiles[0].Size
	}
	return sc, true
}

// scheme maps a datatype to the compressed-tensors scheme the layout writes
// it in: ctClassify's without pruning; with pruning, also the unscaled float
// types (no quantization), and for a sparse format only the schemes that
// store P.weight whole.
func (l compressedTensors) scheme(dt *tcast.DataType) (*ctScheme, error) {
	const lay = "compressed-tensors"
	if dt == nil {
		return nil, fmt.Errorf("layout %s: nil datatype", lay)
	}
	if !l.prune.active() {
		return ctClassify(dt)
	}
	if d, ok := plainFloatDType(dt); ok {
		return &ctScheme{kind: ctNone, scaleDT: d}, nil
	}
	format := l.prune.Resolved()
	if s := dt.Spec(); s != nil && s.IsSparse() {
		return nil, &SparsityError{Layout: lay, Option: optDataType, Value: dt.Name(),
			Reason: "the layout prunes a dense datatype and stores the mask itself; " +
				"an n<N>m<M> datatype has no compressed-tensors form"}
	}
	if format != SparseDense {
		if sc, ok := int8Whole(dt); ok {
			return sc, nil
		}
	}
	sc, err := ctClassify(dt)
	if err != nil {
		return nil, err
	}
	why := sparseWhy(dt, sc)
	if format == SparseDense || why == "" {
		return sc, nil
	}
	value := string(format)
	if l.prune.Format == SparseNatural {
		value += fmt.Sprintf(" (the default for %v)", l.prune.Pattern)
	}
	return nil, &SparsityError{Layout: lay, Option: optFormat, Value: value, Reason: why,
		Conflict: optDataType}
}

// sparseWhy says why a sparse format cannot store weights of datatype dt in
// scheme sc, "" when it can.
func sparseWhy(dt *tcast.DataType, sc *ctScheme) string {
	c := sc.codec()
	if c.sparseWhy != nil {
		if why := c.sparseWhy(dt, sc); why != "" {
			return why
		}
	}
	if c.packed {
		return fmt.Sprintf("datatype %s is stored packed (%s, P.weight_packed), which "+
			"compressed-tensors' sparse compressors leave as it is (they compress only P.weight)",
			dt.Name(), c.format)
	}
	return ""
}

// configSource is implemented by Sources that have the checkpoint's
// config.json (nil when there is none): the compressed-tensors layout
// checks a sparse weight's tensors against its sparsity_config.
type configSource interface {
	Config() []byte
}

// ctSparsityConfig is compressed-tensors' SparsityCompressionConfig, with
// its keys in the order compressed-tensors writes them (sorted).
type ctSparsityConfig struct {
	Format            string   `json:"format"`
	GlobalSparsity    float64  `json:"global_sparsity"`
	Ignore            []string `json:"ignore"`
	SparsityStructure string   `json:"sparsity_structure"`
	Targets           []string `json:"targets"`
}

// configSparsity returns the sparsity_config format of src's config.json,
// "" when there is none.
func configSparsity(src Source) (string, error) {
	cs, ok := src.(configSource)
	if !ok || cs.Config() == nil {
		return "", nil
	}
	var cfg struct {
		Q struct {
			S *struct {
				Format string `json:"format"`
			} `json:"sparsity_config"`
		} `json:"quantization_config"`
	}
	if err := json.Unmarshal(cs.Config(), &cfg); err != nil {
		return "", nil // a config we cannot read says nothing about the tensors
	}
	if cfg.Q.S == nil {
		return "", nil
	}
	return cfg.Q.S.Format, nil
}

// sparseParts are the suffixes of a pruned module's tensors, in the order
// compressed-tensors writes them.
var sparseParts = []string{".shape", ".compressed", ".bitmask", ".row_offsets", ".weight_scale"}

// findSparse adds the pruned modules of src (P.bitmask beside P.compressed
// and P.shape) to found.
func findSparse(src Source, found map[string][]string) {
	for _, n := range src.Names() {
		p, ok := strings.CutSuffix(n, ".bitmask")
		if !ok {
			continue
		}
		_, _, c := src.Tensor(p + ".compressed")
		_, _, s := src.Tensor(p + ".shape")
		if !c || !s {
			continue
		}
		for _, suf := range sparseParts {
			if _, _, has := src.Tensor(p + suf); has {
				found[p+".weight"] = append(found[p+".weight"], p+suf)
			}
		}
	}
}

// sparseFiles returns config.json for weights pruned as l.prune says, of
// datatype dt (nil: no quantization; each weight keeps its float dtype).
func (l compressedTensors) sparseFiles(dt *tcast.DataType, converted []Converted, kept []string, srcConfig []byte) (map[string][]byte, error) {
	sc := &ctScheme{kind: ctNone}
	if dt != nil {
		var err error
		if sc, err = l.scheme(dt); err != nil {
			return nil, err
		}
	}
	format := l.prune.Resolved()
	if format == SparseDense {
		if sc.kind == ctNone {
			// Nothing compressed-tensors would describe: the source's config,
			// without any quantization_config.
			if srcConfig == nil {
				return map[string][]byte{}, nil
			}
			cfg, err := PlainConfig(srcConfig)
			if err != nil {
				return nil, fmt.Errorf("layout compressed-tensors: %w", err)
			}
			return map[string][]byte{"config.json": cfg}, nil
		}
		return l.quantFiles(sc, kept, srcConfig, nil)
	}
	targets := []string{}
	var zeros, n int64
	measured := len(converted) > 0
	for _, c := range converted {
		targets = append(targets, weightPrefix(c.Name))
		e := int64(1)
		for _, d := range c.Shape {
			e *= int64(d)
		}
		n += e
		zeros += c.Zeros
		measured = measured && c.Measured
	}
	slices.Sort(targets)
	global := 1 - l.prune.Pattern.Density()
	if measured && n > 0 {
		global = float64(zeros) / float64(n)
	}
	sp := &ctSparsityConfig{Format: string(format), GlobalSparsity: global, Ignore: keptModules(kept),
		SparsityStructure: l.prune.Pattern.String(), Targets: slices.Compact(targets)}
	if sc.kind != ctNone {
		return l.quantFiles(sc, kept, srcConfig, sp)
	}
	qc := struct {
		QuantMethod     string            `json:"quant_method"`
		SparsityConfig  *ctSparsityConfig `json:"sparsity_config"`
		TransformConfig struct{}          `json:"transform_config"`
		Version         string            `json:"version"`
	}{QuantMethod: "compressed-tensors", SparsityConfig: sp, Version: ctSparseVersion}
	cfg, err := setConfigKey(srcConfig, "quantization_config", qc)
	if err != nil {
		return nil, fmt.Errorf("layout compressed-tensors: %w", err)
	}
	return map[string][]byte{"config.json": cfg}, nil
}

// decodePlain rebuilds a weight pruned and written dense without
// quantization: P.weight in a float dtype, which only the datatype recorded
// in __metadata__ marks as converted (ok is false without one: a plain
// tensor of another tool).
func decodePlain(name, p string, src Source) (*tcast.Tensor, bool, error) {
	const lay = "compressed-tensors"
	dt, err := metaDataTypeOf(src.Metadata(), p)
	if err != nil {
		return nil, true, &FormatError{Layout: lay, Weight: name, Err: err}
	}
	if dt == nil {
		return nil, false, nil
	}
	w, err := tensorIn(src, p+".weight", nil, safetensors.BF16, safetensors.F16, safetensors.F32)
	if err == nil && len(w.info.Shape) != 2 {
		err = fmt.Errorf("tensor %s.weight has shape %v, want [out, in]", p, w.info.Shape)
	}
	if d, ok := plainFloatDType(dt); err == nil && (!ok || d != w.info.DType) {
		err = fmt.Errorf("metadata %s%s names datatype %s, but %s.weight holds %v values", KeyCTDataTypePrefix, p, dt.Name(), p, w.info.DType)
	}
	if err != nil {
		return nil, true, &FormatError{Layout: lay, Weight: name, Err: err}
	}
	t := &tcast.Tensor{DataType: dt, Form: tcast.Actual, Shape: slices.Clone(w.info.Shape), Axis: 1}
	t.Data = part(dt.Elem(), t.Shape, slices.Clone(w.data))
	return finish(lay, name, t)
}
