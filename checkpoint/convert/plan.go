package convert

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmodel"
	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// ErrNameTooLong is matched by the error of Convert for an output tensor
// name longer than GGUF holds (gguf.MaxNameLen); Options.Rename shortens
// names.
var ErrNameTooLong = layout.ErrNameTooLong

// ErrCannotCast is matched by the error of Convert for a tensor that
// Options.Include names but that cannot be cast.
var ErrCannotCast = errors.New("the tensor cannot be cast")

// ErrMixOnly is matched by the error of an option that applies to a GGUF
// mix (GGUF.Pure) given for output without one.
var ErrMixOnly = errors.New("the option applies to a GGUF mix only")

// ErrNothingCast is matched by the error of Convert when no tensor could be
// cast; the error says why each kind of tensor was kept.
var ErrNothingCast = errors.New("no tensor was cast")

// plan is the second step of a conversion: the input opened, every tensor
// decided and the output declared, and the output checked against the
// input's files.
func (c *conversion) plan() error {
	var err error
	if c.in, err = load.Open(c.inPath); err != nil {
		return err
	}
	if c.p, err = newPlan(c.in, &c.opts); err != nil {
		if errors.Is(err, ErrNoModelFile) {
			return err // names the input's file at fault
		}
		return fmt.Errorf("%s: %w", c.inPath, err)
	}
	if c.dest == "" {
		return nil // a dry run without an output
	}
	if err := checkOutput(c.dest, c.in.Files(), c.inPath); err != nil {
		return err
	}
	if c.p.splits != nil && !c.isDir {
		return &OutputError{Path: c.out, Layout: c.opts.Layout.Name(), Want: "a directory",
			Reason: "names a file, and the GGUF output keeps the splits of the split input: " +
				"they go in a directory (a name ending in /)"}
	}
	if len(c.p.files) > 0 && !c.isDir {
		names := slices.Sorted(maps.Keys(c.p.files))
		return &OutputError{Path: c.out, Layout: c.opts.Layout.Name(), Want: "a directory",
			Reason: "names a file, but the " + c.opts.Layout.Name() + " layout writes " +
				strings.Join(names, " and ") + " beside the weights"}
	}
	c.p.nameGeneric(strings.TrimSuffix(filepath.Base(c.dest), ".gguf"))
	return nil
}

// keepByDefault names the tensors people expect a conversion to leave alone:
// biases, norms, embeddings and the output head.
var keepByDefault = regexp.MustCompile(`(?i)(bias|norm|embed|lm_head|wte|wpe|\.ln_|_ln\b|layernorm|batchnorm|\.bn|running_|gamma|beta)`)

// decision is what the plan does with one logical tensor.
type decision struct {
	info   load.Info       // Name is the output name
	source string          // the tensor's name in the input
	dt     *tcast.DataType // the datatype cast to
	cast   bool
	shape  []int // the shape cast (transposed for a Transposer layout)
	swap   bool
	specs  []layout.Spec
	meta   map[string]string
	result TensorResult
	index  int     // in the plan's tensors, which the report keeps
	st     *stream // set when the pipeline streams the weight
	conv   int     // in the plan's converted, when cast
	zeros  int64   // of the written values, once cast
	// For a GGUF model file (package ggufmodel): the change of the values on
	// their way, whether a kept tensor is stored as F32, and the bytes of a
	// tensor computed rather than read (source "").
	xform ggufmodel.Transform
	f32   bool
	data  []byte
	// raw reports a quantized tensor of a GGUF input kept in its type:
	// its blocks are copied as stored.
	raw bool
	// For GGUF output: the mix's choice for the tensor (nil without a mix)
	// and the importance vector its quantizer takes (nil for none), one per
	// impRows rows.
	mix     *ggufmix.Decision
	imp     []float32
	impRows int
	// rot is the rotation of the weight's values before the cast (with its
	// block), along axis index rotAxis of shape; zero for none.
	rot     rotate.Rotation
	rotAxis int
}

// plan decides every tensor and declares the output.
type plan struct {
	in        *load.Checkpoint
	opts      *Options
	lay       layout.Layout
	tensors   []*decision
	specs     []layout.Spec
	meta      map[string]string
	weights   map[string][]string
	swapped   []string
	converted []layout.Converted
	kept      []string
	files     map[string][]byte
	out       *writer // the output, once created
	prune     layout.Pruning
	pruned    bool // the layout prunes (prune is set)
	// model describes the llama.cpp model file the GGUF output is, nil for
	// generic GGUF and safetensors output; ggufKV is the typed metadata the
	// GGUF file starts with (the model's, a GGUF input's, or the generic
	// keys, which generic reports); meta then holds only our tcast.* keys.
	model   *ggufmodel.Model
	ggufKV  []gguf.KV
	generic bool
	dropped []dropped // input tensors the model file leaves out
	// mixed reports that Options.GGUF.Mix chooses the types (mixApplies).
	mixed bool
	// genericWhy says why the GGUF output is generic (Result.Generic).
	genericWhy string
	// warnings are the Result's, as the plan finds them.
	warnings []Warning
	// impNames maps Hugging Face names to the GGUF names an importance
	// matrix holds, for output that is not GGUF (nil: names as they are).
	impNames *ggufmodel.Model
	// rotated records the rotated weights (layout.KeyRotated).
	rotated map[string]layout.RotationInfo
	// splits gives the split of each spec of GGUF output in splits, nil
	// for one file (splitOf).
	splits []int
	// fitted holds the size target's choices by output name (fitTarget).
	fitted map[string]ggufmix.Decision
}

// warn adds a warning to the conversion's Result.
func (p *plan) warn(w Warning) { p.warnings = append(p.warnings, w) }

// sourceBits is what a kept tensor costs per value in the output: its own
// dtype's width, or 32 for a quantized tensor (kept dequantized to F32).
func sourceBits(info *load.Info) float64 {
	if info.DType != 0 {
		return float64(info.DType.BitSize())
	}
	return 32
}

// requantized starts the note of a weight whose quantized source is cast
// again.
const requantized = "requantized from"

// warnRequantized warns when the report holds weights whose quantized
// source was quantized again (not exactly), naming their source types.
func (p *plan) warnRequantized(rs []TensorResult) {
	n := 0
	var types []string
	for _, r := range rs {
		if r.DataType != "" && strings.HasPrefix(r.Note, requantized) {
			n++
			if !slices.Contains(types, r.Source) {
				types = append(types, r.Source)
			}
		}
	}
	if n > 0 {
		p.warn(Warning{Text: fmt.Sprintf("%d weights of the input were already quantized (%s) and "+
			"were quantized again to %s: the errors add up, and the report's SQNR is measured "+
			"against the dequantized input, not the original weights; convert the unquantized "+
			"checkpoint when there is one", n, strings.Join(types, ", "), p.dataTypeName())})
	}
}

// decide reports whether tensor info is cast and, if not, why. An error is a
// tensor Include asked for that cannot be cast.
func (p *plan) decide(d *decision) error {
	info, opts := &d.info, p.opts
	included := opts.Include != nil && opts.Include.MatchString(info.Name)
	keep := func(why string) error {
		if included && !(opts.Exclude != nil && opts.Exclude.MatchString(info.Name)) {
			return &OptionError{Option: "Include", Value: opts.Include.String(), Err: ErrCannotCast,
				Reason: fmt.Sprintf("matches tensor %s, which cannot be cast: %s", info.Name, why)}
		}
		d.result.Note = "kept: " + why
		return nil
	}
	why, dt, err := p.candidate(d, included, keep)
	switch {
	case why != "":
		return keep(why)
	case err != nil || (p.mixed && dt == nil):
		return err // the mix kept it, or cannot give it its type
	}
	axis, ok := tcast.AxisIndex(opts.Axis, len(info.Shape))
	if !ok {
		return keep(fmt.Sprintf("axis %d is out of range for rank %d", opts.Axis, len(info.Shape)))
	}
	if dt == nil {
		dt = p.dataTypeOf(info)
		if len(opts.GGUF.TypeFor) > 0 && p.lay.Container() == layout.GGUF {
			if dt, err = p.overrideType(d, dt); err != nil {
				return err
			}
		}
	}
	d.dt = dt
	d.shape, d.swap = info.Shape, false
	if t, ok := p.lay.(layout.Transposer); ok && len(info.Shape) >= 2 && t.Transposed(info.Name, len(info.Shape)) {
		d.shape, d.swap = layout.SwapLast2(info.Shape), true
	}
	if why := p.fits(d, axis, included); why != "" {
		return keep(why)
	}
	if err := p.decideRotation(d, axis); err != nil {
		return err
	}
	d.cast = true
	if info.Quantized() {
		// The keep rule compares with 32 bits, what a kept quantized tensor
		// costs (dequantized to F32): the weight is quantized again, which
		// the note says (run replaces it with "exact: ..." when it is).
		d.result.Note = fmt.Sprintf("%s %s (%.3g bits per value): its error adds to the source's", requantized, info.Type, measure.StoredBits(info.Size, info.Shape))
	}
	return p.importance(d)
}

// candidate says why tensor d is kept by its kind and name ("" when it is
// a candidate to cast), and with a GGUF mix the datatype the mix gives it
// (nil, with the error of keep, when the mix keeps it).
func (p *plan) candidate(d *decision, included bool, keep func(string) error) (string, *tcast.DataType, error) {
	info, opts := &d.info, p.opts
	rank := len(info.Shape)
	switch {
	case !info.Float:
		return "not a float tensor", nil, nil
	case opts.Exclude != nil && opts.Exclude.MatchString(info.Name):
		return "excluded", nil, nil
	case rank == 0:
		return "a scalar", nil, nil
	case p.mixed:
		dt, err := p.decideMix(d, keep)
		return "", dt, err
	case included:
	case rank < 2:
		return "fewer than 2 dimensions", nil, nil
	case keepByDefault.MatchString(info.Name):
		return "bias, norm, embedding or output head", nil, nil
	}
	return "", nil, nil
}

// fits says why weight d cannot be cast to d.dt in the layout along axis
// ("" when it can), and declares its output (specs and metadata) when it
// can: a block longer than the axis, the layout's refusal, or a cast that
// would cost no fewer bits than the source.
func (p *plan) fits(d *decision, axis int, included bool) string {
	info, dt, opts := &d.info, d.dt, p.opts
	if tile := lastTile(dt); tile > 0 && d.shape[axis] < tile && !included {
		return fmt.Sprintf("axis %d holds %d, less than one block of %d", axis, d.shape[axis], tile)
	}
	if err := p.lay.Check(dt, axis, len(info.Shape)); err != nil {
		return err.Error()
	}
	desc, err := tcast.Describe(d.shape, dt, tcast.Compressed, &tcast.Options{Axis: opts.Axis, Mode: opts.Mode})
	if err != nil {
		return err.Error()
	}
	// Pruning is asked for its own sake: a pruned weight is cast whatever
	// it costs; and GGUF's plain element types (f32, f16, bf16) are what the
	// file is asked to hold, whatever the source's width.
	plain := p.lay.Container() == layout.GGUF && dt.Spec() == nil
	if bits, src := desc.BitsPerValue(), sourceBits(info); bits >= src && !included && !p.pruned && !plain && !p.mixed {
		return fmt.Sprintf("%s costs %.3g bits per value on this shape, no fewer than the source's %.3g", dt.Name(), bits, src)
	}
	if d.specs, d.meta, err = p.lay.Specs(info.Name, d.shape, dt, axis); err != nil {
		return err.Error()
	}
	return ""
}

// dataTypeOf returns the datatype tensor info is cast to: Options.DataType,
// or, for pruning without one, the unscaled float datatype of the source's
// dtype (float32 for any dtype but BF16 and F16).
func (p *plan) dataTypeOf(info *load.Info) *tcast.DataType {
	if p.opts.DataType != nil {
		return p.opts.DataType
	}
	switch info.DType {
	case safetensors.BF16:
		return tcast.MustLookup("bfloat16")
	case safetensors.F16:
		return tcast.MustLookup("float16")
	}
	return tcast.MustLookup("float32")
}

// dataTypeName names the datatype of the conversion: Options.DataType's, or
// for pruning without one the datatypes the weights were cast to (from
// their sources), comma-separated.
func (p *plan) dataTypeName() string {
	if p.mixed {
		return p.opts.GGUF.Mix.String()
	}
	if p.opts.DataType != nil {
		return p.opts.DataType.Name()
	}
	var names []string
	for _, d := range p.tensors {
		if d.cast && !slices.Contains(names, d.dt.Name()) {
			names = append(names, d.dt.Name())
		}
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// lastTile returns the tile size along the scaled axis, 0 for tensor or
// channel scaling.
func lastTile(dt *tcast.DataType) int {
	if s := dt.Spec(); s != nil && len(s.Tiles) > 0 {
		return s.Tiles[len(s.Tiles)-1].Size
	}
	return 0
}

// keptSpec declares a tensor copied (or dequantized to F32) to the output.
func (p *plan) keptSpec(d *decision) (layout.Spec, error) {
	info := &d.info
	sp := layout.Spec{Name: info.Name, Shape: slices.Clone(info.Shape), DType: info.DType}
	if d.raw {
		sp.GGML, _ = p.inputType(d)
		return sp, nil
	}
	if info.DType == 0 || d.f32 || !d.xform.IsZero() {
		if !info.Float {
			return sp, fmt.Errorf("tensor %s (%s) can neither be copied nor dequantized", info.Name, info.Type)
		}
		sp.DType = safetensors.F32
	}
	if p.lay.Container() == layout.GGUF {
		t, ok := layout.GGUFType(sp.DType)
		if !ok {
			return sp, fmt.Errorf("tensor %s: no GGUF type holds %s", info.Name, sp.DType)
		}
		sp.GGML = t
	}
	return sp, nil
}

// newPlan opens nothing: it decides every tensor of in and declares the
// output. With a size target it plans twice: with the mix's types, which
// give the bytes of everything but the tensors the target chooses types
// for, then with the target's types.
func newPlan(in *load.Checkpoint, opts *Options) (*plan, error) {
	p, err := buildPlan(in, opts, nil)
	if err != nil || !p.mixed || !opts.GGUF.targeted() {
		return p, err
	}
	fitted, err := p.fitTarget()
	if err != nil {
		return nil, err
	}
	return buildPlan(in, opts, fitted)
}

// buildPlan is newPlan with the size target's choices fitted (nil for
// none).
func buildPlan(in *load.Checkpoint, opts *Options, fitted map[string]ggufmix.Decision) (*plan, error) {
	p := &plan{in: in, opts: opts, lay: opts.Layout, weights: map[string][]string{},
		meta: layout.WithoutMetaKeys(in.Metadata()), fitted: fitted}
	if err := p.start(); err != nil {
		return nil, err
	}
	ds, renamed, err := p.names()
	if err != nil {
		return nil, err
	}
	if ds, err = p.pruneLayers(ds, renamed); err != nil {
		return nil, err
	}
	if err := p.decideAll(ds); err != nil {
		return nil, err
	}
	if len(renamed) > 0 {
		p.meta[layout.KeyRenamed] = jsonString(renamed)
	}
	if err := p.checkImatrix(); err != nil {
		return nil, err
	}
	if p.files, err = p.lay.Files(opts.DataType, p.converted, p.kept, in.Config()); err != nil {
		return nil, err
	}
	p.declareMeta()
	if err := p.finishModel(); err != nil {
		return nil, err
	}
	p.splits = p.splitOf()
	return p, nil
}

// start takes what the plan's decisions depend on: the pruning, the GGUF
// model file's metadata and whether a mix chooses the types, and refuses
// the options these rule out.
func (p *plan) start() error {
	in, opts := p.in, p.opts
	p.prune, p.pruned = layout.PruningOf(opts.Layout)
	if in.GGUF() != nil {
		p.meta = map[string]string{} // GGUF key/values are not safetensors metadata
	}
	if p.lay.Container() == layout.GGUF {
		if err := p.ggufMetadata(in, opts); err != nil {
			return err
		}
	}
	p.mixed = p.mixApplies()
	if err := p.checkModelType(); err != nil {
		return err
	}
	if p.mixed && opts.Include != nil {
		return &OptionError{Option: "Include", With: "GGUF.Mix", Err: ErrConflict,
			Reason: fmt.Sprintf("the rules of the %s mix choose the tensors to quantize", opts.GGUF.Mix),
			Fixes:  []Fix{unset("Include"), {Option: "GGUF.TypeFor", Choose: "rules naming each tensor's type"}}}
	}
	if err := p.checkMixOptions(); err != nil {
		return err
	}
	if opts.GGUF.KeepSplit && in.GGUF() == nil {
		return &OptionError{Option: "GGUF.KeepSplit", Err: ErrGGUFInputOnly,
			Reason: "writes the splits of a split GGUF input, and the input is no GGUF file (splitting by size works for any input)",
			Fixes:  []Fix{unset("GGUF.KeepSplit")}}
	}
	if opts.Imatrix != nil && p.model == nil {
		p.imatrixNames()
	}
	return nil
}

// names makes a decision of every tensor of the input under its output
// name: the llama.cpp model file's (which drops some), then Options.Rename's;
// renamed maps output names to input names where they differ.
func (p *plan) names() (ds []*decision, renamed map[string]string, err error) {
	renamed = map[string]string{}
	for _, info := range p.in.Tensors() {
		d := &decision{info: info, source: info.Name}
		if p.model != nil {
			mp, err := p.model.Tensor(info.Name)
			if err != nil {
				return nil, nil, err
			}
			if mp.Name == "" {
				p.dropped = append(p.dropped, dropped{info: info, why: mp.Dropped})
				continue
			}
			d.info.Name, d.xform, d.f32 = mp.Name, mp.Transform, mp.Float32
		}
		if p.opts.Rename != nil {
			if n := p.opts.Rename(d.info.Name); n != d.info.Name {
				if n == "" {
					return nil, nil, &OptionError{Option: "Rename",
						Reason: fmt.Sprintf("maps tensor %s to an empty name", info.Name)}
				}
				d.info.Name = n
			}
		}
		if d.info.Name != info.Name {
			renamed[d.info.Name] = info.Name
		}
		ds = append(ds, d)
	}
	return ds, renamed, nil
}

// decideAll decides and declares every tensor of ds, then the llama.cpp
// model file's extra tensors; a plan that casts nothing is a
// *NothingCastError.
func (p *plan) decideAll(ds []*decision) error {
	if p.mixed {
		if err := p.planMix(ds); err != nil {
			return err
		}
	}
	seen := map[string]string{}
	why := map[string]int{}
	for _, d := range ds {
		if err := p.add(d, seen, why); err != nil {
			return err
		}
	}
	if err := p.addExtras(seen); err != nil {
		return err
	}
	p.checkPatterns()
	if len(p.converted) > 0 || (p.mixed && p.in.GGUF() != nil) {
		return nil // a GGUF input may already hold every type the mix gives
	}
	mix := ""
	if p.mixed {
		mix = p.opts.GGUF.Mix.String()
	}
	return nothingCast(why, mix)
}

// declareMeta adds our metadata keys of the output: the datatype, the
// layout, the weights' stored tensors, what was transposed, rotated or
// searched, and the input tensors left out.
func (p *plan) declareMeta() {
	p.meta[layout.KeyDataType] = p.dataTypeName()
	p.meta[layout.KeyLayout] = p.lay.Name()
	p.meta[layout.KeyWeights] = jsonString(p.weights)
	if len(p.swapped) > 0 {
		p.meta[layout.KeyTransposed] = jsonString(p.swapped)
	}
	if len(p.rotated) > 0 {
		// The SQNRs without rotation are patched in once known.
		p.meta[layout.KeyRotated] = layout.DeclareRotated(p.rotated)
	}
	if p.opts.ScaleSearch {
		p.meta[layout.KeyScaleSearch] = layout.ScaleSearchOn
	}
	if len(p.dropped) > 0 {
		why := map[string]string{}
		for _, d := range p.dropped {
			why[d.info.Name] = d.why
		}
		p.meta[layout.KeyDropped] = jsonString(why)
	}
}

// add decides one tensor and declares its output.
func (p *plan) add(d *decision, seen map[string]string, why map[string]int) error {
	info := d.info
	d.result = TensorResult{Name: info.Name, Shape: info.Shape, Source: info.Type, BytesIn: info.Size}
	if err := p.decide(d); err != nil {
		return err
	}
	var specs []layout.Spec
	if d.cast {
		specs = d.specs
		for k, v := range d.meta {
			p.meta[k] = withSlack(v)
		}
		for _, sp := range specs {
			p.weights[info.Name] = append(p.weights[info.Name], sp.Name)
		}
		d.conv = len(p.converted)
		p.converted = append(p.converted, layout.Converted{Name: info.Name, Shape: info.Shape})
		if d.swap {
			p.swapped = append(p.swapped, info.Name)
		}
		d.result.DataType = d.dt.Name()
	} else {
		sp, err := p.keptSpec(d)
		if err != nil {
			return err
		}
		specs = []layout.Spec{sp}
		d.specs = specs
		p.kept = append(p.kept, info.Name)
		d.result.Bits = float64(sp.DType.BitSize())
		d.result.Stored = sp.DType.String()
		if d.raw {
			d.result.Bits = measure.StoredBits(info.Size, info.Shape)
		}
		if p.lay.Container() == layout.GGUF {
			d.result.Stored = sp.GGML.String()
		}
		why[d.result.Note]++
	}
	for _, sp := range specs {
		if p.lay.Container() == layout.GGUF && len(sp.Name) > gguf.MaxNameLen {
			return fmt.Errorf("tensor %s: %w: it has %d bytes, GGUF names hold at most %d",
				sp.Name, ErrNameTooLong, len(sp.Name), gguf.MaxNameLen)
		}
		if other, dup := seen[sp.Name]; dup {
			if p.opts.Rename != nil {
				return &OptionError{Option: "Rename", Reason: fmt.Sprintf(
					"maps tensors %s and %s to the same output tensor %q", other, d.source, sp.Name)}
			}
			return fmt.Errorf("output tensor %q of %s collides with one of %s", sp.Name, d.source, other)
		}
		seen[sp.Name] = d.source
		p.specs = append(p.specs, sp)
	}
	d.index = len(p.tensors)
	p.tensors = append(p.tensors, d)
	return nil
}

// nothingCast is the error for a plan that casts nothing, with the
// reasons why the tensors were kept, most frequent first.
func nothingCast(why map[string]int, mix string) error {
	e := &NothingCastError{Mix: mix}
	for w, n := range why {
		e.Kept = append(e.Kept, KeptCount{Why: strings.TrimPrefix(w, "kept: "), Tensors: n})
	}
	slices.SortFunc(e.Kept, func(a, b KeptCount) int {
		return cmp.Or(cmp.Compare(b.Tensors, a.Tensors), cmp.Compare(a.Why, b.Why))
	})
	return e
}

// NothingCastError reports a conversion that would cast no tensor. It
// matches ErrNothingCast.
type NothingCastError struct {
	// Kept counts the tensors kept for each reason, most frequent first.
	Kept []KeptCount
	// Mix is the GGUF mix whose rules chose no tensor, or "".
	Mix string
}

// KeptCount is the number of tensors kept for one reason.
type KeptCount struct {
	Why     string
	Tensors int
}

// Error lists the reasons, a line each.
func (e *NothingCastError) Error() string {
	var b strings.Builder
	b.WriteString(ErrNothingCast.Error() + "; every tensor was kept:")
	for _, k := range e.Kept {
		fmt.Fprintf(&b, "\n  %d × %s", k.Tensors, k.Why)
	}
	if e.Mix != "" {
		fmt.Fprintf(&b, "\n(the %s mix quantizes what llama-quantize does: tensors of 2 or more "+
			"dimensions named ...weight, not norms; a single GGUF type, such as q8_0 or q4_k, "+
			"casts other weights whose rows hold its blocks)", e.Mix)
	}
	return b.String()
}

// Unwrap returns ErrNothingCast.
func (e *NothingCastError) Unwrap() error { return ErrNothingCast }
