package convert

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// plural returns one for n == 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// check is the first step of a conversion: the options, and the output's
// name, before anything is read.
func (c *conversion) check() error {
	opts := &c.opts
	if opts.Layout == nil {
		opts.Layout, _ = layout.Get("tcast")
	}
	if err := opts.Check(); err != nil {
		return err
	}
	_, pruned := layout.PruningOf(opts.Layout)
	if opts.DataType == nil && !pruned && opts.GGUF.Mix.IsZero() {
		return &OptionError{Option: "DataType", Err: ErrNoDataType,
			Reason: "is nil, which only a layout that prunes (layout.Pruner) takes",
			Fixes:  []Fix{{Option: "DataType", Choose: "the datatype to cast to"}}}
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.DataType != nil {
		if err := layout.Accepts(opts.Layout, opts.DataType); err != nil {
			return err
		}
	}
	if err := opts.probe(); err != nil {
		return err
	}
	if opts.DryRun && c.out == "" {
		return nil // nothing is written, and no output named
	}
	var err error
	if c.dest, c.isDir, err = destination(c.out, opts.Layout); err != nil {
		return err
	}
	if opts.ShardSize > 0 && !c.isDir {
		return &OptionError{Option: "ShardSize",
			Reason: "splits the output into files in a directory (safetensors shards, or GGUF splits), " +
				"and the output " + c.out + " is not one (a name ending in / is)",
			Fixes: []Fix{unset("ShardSize")}}
	}
	if opts.ShardSize > 0 && opts.GGUF.KeepSplit {
		return &OptionError{Option: "GGUF.KeepSplit", With: "ShardSize", Err: ErrConflict,
			Reason: "the splits are either the input's or of ShardSize", Fixes: []Fix{unset("GGUF.KeepSplit"), unset("ShardSize")}}
	}
	return nil
}

// probe casts one row with the layout's own quantizer, which refuses
// options it cannot honour (GGUF's Q8_0 has no scale modes), so that they
// are refused before anything is read.
func (o *Options) probe() error {
	lay, probe := o.Layout, o.DataType
	if probe == nil && !o.GGUF.Mix.IsZero() {
		var err error
		if probe, err = layout.DataType(lay, strings.ToLower(o.GGUF.Mix.Base().String())); err != nil {
			return err
		}
	}
	c, ok := lay.(layout.Caster)
	if !ok || probe == nil {
		return nil
	}
	// One row of 256, a whole block of every layout's types.
	row := make([]float32, 256)
	_, err := c.Cast(row, []int{1, 256}, probe, &tcast.Options{Form: tcast.Actual, Mode: o.Mode})
	return err
}

// ErrNoDataType is matched by the error of Convert for Options without a
// DataType (or a GGUF mix) where the layout does not prune.
var ErrNoDataType = errors.New("no datatype to cast to")

// ErrGGUFOnly is matched by the error of an option of GGUF output only
// (a GGUF mix, GGUF.Pure, GGUF.TypeFor) given for another layout.
var ErrGGUFOnly = errors.New("the option applies to GGUF output only")

// ErrConflict is matched by the error of two options that do not go
// together (OptionError.With names the second).
var ErrConflict = errors.New("the options do not go together")

// Check reports options that do not go together and need no input to
// tell, as an *OptionError: the GGUF options (GGUF.Mix, GGUF.Pure,
// GGUF.TypeFor) without a GGUF layout, an Imatrix no quantizer would use
// (ErrImatrixUnused), a Rotate or ScaleSearch that cannot apply. Convert
// calls it before it reads anything; Imatrix is only tested for nil, so a
// caller may check before it reads the matrix. Layout nil is the tcast
// layout.
func (o *Options) Check() error {
	if err := o.checkRotate(); err != nil {
		return err
	}
	if err := o.checkMode(); err != nil {
		return err
	}
	if err := o.checkScaleSearch(); err != nil {
		return err
	}
	if err := o.GGUF.checkTarget(); err != nil {
		return err
	}
	if o.Layout != nil && o.Layout.Container() == layout.GGUF {
		return nil
	}
	if o.Imatrix != nil {
		if err := imatrixApplies(o.Layout, o.DataType, o.ScaleSearch); err != nil {
			return err
		}
	}
	toGGUF := []Fix{{Option: "Layout", Value: "gguf"}}
	if !o.GGUF.Mix.IsZero() {
		return &OptionError{Option: "GGUF.Mix", Value: o.GGUF.Mix.String(), Err: ErrGGUFOnly,
			Reason: "is a GGUF mix, which applies to GGUF output", Fixes: toGGUF}
	}
	g := &o.GGUF
	if option, ok := firstSet(optionSet{"GGUF.TypeFor", len(g.TypeFor) > 0}, optionSet{"GGUF.Pure", g.Pure},
		optionSet{"GGUF.Generic", g.Generic}, optionSet{"GGUF.Pre", g.Pre != ""},
		optionSet{"GGUF.AllowRequantize", g.AllowRequantize}, optionSet{"GGUF.PruneLayers", len(g.PruneLayers) > 0},
		optionSet{"GGUF.KV", len(g.KV) > 0}, optionSet{"GGUF.KeepSplit", g.KeepSplit},
		optionSet{"GGUF.TargetBPW", g.TargetBPW > 0}, optionSet{"GGUF.TargetSize", g.TargetSize > 0}); ok {
		return &OptionError{Option: option, Err: ErrGGUFOnly, Reason: "applies to GGUF output", Fixes: toGGUF}
	}
	if option, ok := firstSet(g.typeOptions()...); ok {
		return &OptionError{Option: option, Err: ErrGGUFOnly, Reason: "applies to GGUF output", Fixes: toGGUF}
	}
	return nil
}

// optionSet names an option and says whether it is set, for the checks
// that refuse options where they cannot apply.
type optionSet struct {
	option string
	set    bool
}

// firstSet returns the first of fs that is set.
func firstSet(fs ...optionSet) (string, bool) {
	for _, f := range fs {
		if f.set {
			return f.option, true
		}
	}
	return "", false
}

// typeOptions are the options that set single tensors' types in a mix.
func (g *GGUFOptions) typeOptions() []optionSet {
	return []optionSet{{"GGUF.OutputType", g.OutputType != nil},
		{"GGUF.TokenEmbeddingType", g.TokenEmbeddingType != nil}, {"GGUF.KeepOutput", g.KeepOutput}}
}

// ErrModeUnused is matched by the error of Convert for a Mode other than
// floor with a datatype whose scales are no powers of two (NVFP4's UE4M3,
// float scales of integer groups and FP8, GGUF's types but MXFP4), which
// the mode does not choose.
var ErrModeUnused = errors.New("the scale mode would change nothing")

// checkMode refuses a Mode that no scale of the datatype follows.
func (o *Options) checkMode() error {
	dt := o.DataType
	if o.Mode == scale.Floor || dt == nil {
		return nil
	}
	if s := dt.Spec(); s != nil && s.IsExponent() {
		return nil
	}
	return &OptionError{Option: "Mode", Value: o.Mode.String(), Err: ErrModeUnused,
		Reason: fmt.Sprintf("chooses power-of-two scales, and %s has none (its scales are %s)", dt, scaleKind(dt)),
		Fixes:  []Fix{unset("Mode"), {Option: "DataType", Choose: "a datatype of E8M0 scales (mxfp4, mxfp8, mxint8, ...)"}}}
}

// scaleKind names the scales of dt for messages.
func scaleKind(dt *tcast.DataType) string {
	if s := dt.Spec(); s != nil && s.Scale != nil {
		return s.Scale.Name()
	}
	return "none: it is a plain number format"
}

// ErrRotateUnrecorded is matched by the error of Convert for Rotate with
// a layout that cannot record the rotation (layout.RecordsRotation).
var ErrRotateUnrecorded = errors.New("the layout cannot record a rotation")

// checkRotate refuses Rotate where the output could not say that its
// weights are rotated, or with options that do not go with it.
func (o *Options) checkRotate() error {
	if o.Rotate.IsZero() {
		return nil
	}
	if o.Layout != nil && !layout.RecordsRotation(o.Layout) {
		return &OptionError{Option: "Rotate", Err: ErrRotateUnrecorded,
			Reason: "rotates the weights before the cast, which only the tcast layout records (so that " +
				"package load rotates them back); the " + o.Layout.Name() +
				" layout's loaders would take the rotated values for the weights",
			Fixes: []Fix{unset("Rotate"), {Option: "Layout", Value: "tcast"}}}
	}
	conflict := func(with, why string) error {
		return &OptionError{Option: "Rotate", With: with, Reason: why, Err: ErrConflict,
			Fixes: []Fix{unset("Rotate"), unset(with)}}
	}
	switch {
	case o.Imatrix != nil:
		return conflict("Imatrix", "an importance matrix weights the columns of the unrotated "+
			"weight, which a rotation mixes")
	case o.DataType == nil:
		return &OptionError{Option: "Rotate", Err: ErrNoDataType,
			Reason: "rotates weights before a cast, and there is no datatype to cast to",
			Fixes:  []Fix{{Option: "DataType", Choose: "the datatype to cast to"}}}
	case o.Pruning != nil:
		return conflict("Pruning", "pruning scores score the unrotated weight's columns, "+
			"which a rotation mixes")
	}
	return nil
}

// ErrScaleSearchUnused is matched by the error of Convert for ScaleSearch
// where it would change nothing: a datatype without scales chosen by rule
// (tcast.DataType.SearchesScales), no datatype, or GGUF output.
var ErrScaleSearchUnused = errors.New("the scale search would change nothing")

// scaleSearchers are the datatypes whose scales the search chooses, for
// messages.
const scaleSearchers = "an MX, NVFP4, symmetric integer-group or FP8 datatype " +
	"(mxfp4, nvfp4, int4_g128, fp8e4_block128, ...)"

// checkScaleSearch refuses ScaleSearch where no weight would be cast with
// a searched scale.
func (o *Options) checkScaleSearch() error {
	if !o.ScaleSearch {
		return nil
	}
	e := &OptionError{Option: "ScaleSearch", Err: ErrScaleSearchUnused}
	switch {
	case o.Layout != nil && o.Layout.Container() == layout.GGUF:
		e.Reason = "does not apply to the gguf layout, whose types are quantized by llama.cpp's own " +
			"quantizers (the K-quants and IQ types search already, weighted by an importance matrix)"
		e.Fixes = []Fix{unset("ScaleSearch"), {Option: "Layout", Choose: "another layout"}}
	case o.DataType == nil:
		e.Reason = "searches the scales of a cast, and there is no datatype to cast to"
		e.Fixes = []Fix{{Option: "DataType", Choose: scaleSearchers}}
	case !o.DataType.SearchesScales():
		e.Value = o.DataType.Name()
		e.Reason = "has no scale chosen by rule to search (it has no scale, a zero point, " +
			"subtile offsets or a codebook)"
		e.Fixes = []Fix{unset("ScaleSearch"), {Option: "DataType", Choose: scaleSearchers}}
	default:
		return nil
	}
	return e
}

// destination returns where a conversion to out in layout l writes, and
// whether that is a directory: out itself when it names a file of the
// layout's container (.safetensors, .gguf), else the directory out. An out
// that names a file of another kind is an *OutputError.
func destination(out string, l layout.Layout) (string, bool, error) {
	ext := strings.ToLower(filepath.Ext(out))
	want := ".safetensors"
	if l.Container() == layout.GGUF {
		want = ".gguf"
	}
	oe := &OutputError{Path: out, Layout: l.Name(), Want: "a directory or a " + want + " file"}
	switch {
	case strings.HasSuffix(out, string(os.PathSeparator)):
		return filepath.Clean(out), true, nil
	case ext == want:
		return out, false, nil
	case ext == ".gguf":
		oe.Reason = "names a GGUF file, but the " + l.Name() + " layout writes safetensors"
		oe.Fixes = []Fix{{Option: "Layout", Value: "gguf"}}
		return "", false, oe
	case ext == ".safetensors":
		oe.Reason = "names a safetensors file, but the gguf layout writes GGUF"
		return "", false, oe
	case fileExts[ext]:
		oe.Reason = "names a " + ext + " file, and a checkpoint is not written as one"
		return "", false, oe
	}
	return out, true, nil
}

// fileExts are extensions of files that are no checkpoint output: an -o
// ending in one is a mistake, not a directory name.
var fileExts = map[string]bool{".npy": true, ".npz": true, ".json": true, ".bin": true, ".pt": true, ".pth": true,
	".gguf": true, ".txt": true, ".md": true, ".html": true, ".htm": true, ".csv": true, ".log": true, ".yaml": true,
	".yml": true, ".zip": true, ".tar": true, ".gz": true, ".onnx": true, ".ckpt": true, ".h5": true}

// fileName is the weight file inside a directory output.
func fileName(l layout.Layout) string {
	if l.Container() == layout.GGUF {
		return "model.gguf"
	}
	return "model.safetensors"
}

// ErrUnsafeOutput is matched by the error of Convert and Decompress for an
// output that would write over or inside their input.
var ErrUnsafeOutput = atomicfile.ErrInput
