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
	"github.com/tensorcast-go/tensorcast/tcast"
)

// plural returns one for n == 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// OptionError reports options of Convert that do not go together, named
// by the tcast convert flag that sets them: the message is the flag, then
// the reason, which says what to do ("-imatrix applies to GGUF output:
// add -layout gguf").
type OptionError struct {
	// Flag is the flag of the option ("-type-for").
	Flag string
	// Subject is what the flag is refused for when the sentence is about
	// it (a datatype), or "": the message is then "FLAG: SUBJECT REASON"
	// ("-scale-search: bfloat16 has no scale ...").
	Subject string
	// Reason continues the sentence after the flag (or the subject).
	Reason string
	// Err is a sentinel the error also matches (ErrImatrixUnused), or nil.
	Err error
}

func (e *OptionError) Error() string {
	if e.Subject != "" {
		return e.Flag + ": " + e.Subject + " " + e.Reason
	}
	return e.Flag + " " + e.Reason
}

// Unwrap returns Err.
func (e *OptionError) Unwrap() error { return e.Err }

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
	if opts.DataType == nil && !pruned && opts.GGUFMix.IsZero() {
		return errors.New("no datatype to cast to")
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
	var err error
	if c.dest, c.isDir, err = Destination(c.out, opts.Layout); err != nil {
		return err
	}
	if opts.ShardSize > 0 && (!c.isDir || opts.Layout.Container() != layout.Safetensors) {
		return fmt.Errorf("-shard-size splits safetensors output in a directory; -o %s is not one", c.out)
	}
	return nil
}

// probe casts one row with the layout's own quantizer, which refuses
// options it cannot honour (GGUF's Q8_0 has no scale modes), so that they
// are refused before anything is read.
func (o *Options) probe() error {
	lay, probe := o.Layout, o.DataType
	if probe == nil && !o.GGUFMix.IsZero() {
		var err error
		if probe, err = layout.DataType(lay, strings.ToLower(o.GGUFMix.Base().String())); err != nil {
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

// Check reports options that do not go together and need no input to
// tell, as an *OptionError: the GGUF options (GGUFMix, GGUFPure, TypeFor,
// Imatrix) without a GGUF layout, except Imatrix with a datatype that
// searches (ImatrixApplies). Convert calls it before it reads anything;
// Imatrix is only tested for nil, so a caller may check before it reads the
// matrix. Layout nil is the tcast layout.
func (o *Options) Check() error {
	if err := o.checkRotate(); err != nil {
		return err
	}
	if err := o.checkScaleSearch(); err != nil {
		return err
	}
	if o.Layout != nil && o.Layout.Container() == layout.GGUF {
		return nil
	}
	if o.Imatrix != nil {
		if err := imatrixApplies(o.Layout, o.DataType, o.dataTypeLabel(), o.ScaleSearch); err != nil {
			return err
		}
	}
	if !o.GGUFMix.IsZero() {
		return &OptionError{Flag: "-dtype", Reason: o.GGUFMix.String() + " names a GGUF mix: add -layout gguf"}
	}
	for _, f := range []struct {
		flag string
		set  bool
	}{{"-type-for", len(o.TypeFor) > 0}, {"-gguf-pure", o.GGUFPure}} {
		if f.set {
			return &OptionError{Flag: f.flag, Reason: "applies to GGUF output: add -layout gguf"}
		}
	}
	return nil
}

// ErrRotateUnrecorded is matched by the error of Convert for -rotate with a
// layout that cannot record the rotation (layout.RecordsRotation).
var ErrRotateUnrecorded = errors.New("the layout cannot record a rotation")

// checkRotate refuses Rotate where the output could not say that its
// weights are rotated, or with options that do not go with it.
func (o *Options) checkRotate() error {
	if o.Rotate.IsZero() {
		return nil
	}
	name := "tcast"
	if o.Layout != nil {
		name = o.Layout.Name()
		if !layout.RecordsRotation(o.Layout) {
			return &OptionError{Flag: "-rotate", Err: ErrRotateUnrecorded,
				Reason: "rotates the weights before the cast, which only the tcast layout records (so that tcast decompress, verify and load rotate them back); the " + name + " layout's loaders would take the rotated values for the weights: drop -rotate, or write -layout tcast"}
		}
	}
	if o.Imatrix != nil {
		return &OptionError{Flag: "-rotate", Reason: "does not go with -imatrix: an importance matrix weights the columns of the unrotated weight, which a rotation mixes; drop one of them"}
	}
	if o.DataType == nil {
		return &OptionError{Flag: "-rotate", Reason: "rotates weights before a cast: name the datatype with -dtype"}
	}
	if o.Pruning != nil {
		return &OptionError{Flag: "-rotate", Reason: "does not go with pruning scores (-sparsity-criterion wanda): they score the unrotated weight's columns, which a rotation mixes; drop one of them"}
	}
	return nil
}

// ErrScaleSearchUnused is matched by the error of Convert for ScaleSearch
// where it would change nothing: a datatype without scales chosen by rule
// (tcast.DataType.SearchesScales), no datatype, or GGUF output.
var ErrScaleSearchUnused = errors.New("-scale-search would change nothing")

// checkScaleSearch refuses ScaleSearch where no weight would be cast with
// a searched scale.
func (o *Options) checkScaleSearch() error {
	if !o.ScaleSearch {
		return nil
	}
	var why, subject string
	switch {
	case o.Layout != nil && o.Layout.Container() == layout.GGUF:
		why = "does not apply to -layout gguf, whose types are quantized by llama.cpp's own quantizers (the K-quants and IQ types search already, weighted by -imatrix): drop -scale-search, or write another layout"
	case o.DataType == nil:
		why = "searches the scales of a cast: name the datatype with -dtype"
	case !o.DataType.SearchesScales():
		subject = o.dataTypeLabel()
		why = "has no scale chosen by rule to search (it has no scale, a zero point, subtile offsets or a codebook): drop -scale-search, or choose an MX, NVFP4, symmetric integer-group or FP8 datatype (mxfp4, nvfp4, int4_g128, fp8e4_block128, ...)"
	default:
		return nil
	}
	return &OptionError{Flag: "-scale-search", Err: ErrScaleSearchUnused, Subject: subject, Reason: why}
}

// dataTypeLabel names DataType for messages as the user asked for it:
// "mxfp4 (mxfp4e2)" when DataTypeName is another name of it, else its name
// ("" for none).
func (o *Options) dataTypeLabel() string {
	if o.DataType == nil {
		return ""
	}
	if n := o.DataTypeName; n != "" && !strings.EqualFold(n, o.DataType.Name()) {
		return n + " (" + o.DataType.Name() + ")"
	}
	return o.DataType.Name()
}

// ErrUnsafeOutput is matched by the error of Convert and Decompress for an
// output that would write over or inside their input.
var ErrUnsafeOutput = atomicfile.ErrInput

// Destination returns where a conversion to out in layout l writes, and
// whether that is a directory: out itself when it names a file of the
// layout's container (.safetensors, .gguf), else the directory out.
func Destination(out string, l layout.Layout) (string, bool, error) {
	ext := strings.ToLower(filepath.Ext(out))
	want := ".safetensors"
	if l.Container() == layout.GGUF {
		want = ".gguf"
	}
	switch {
	case strings.HasSuffix(out, string(os.PathSeparator)):
		return filepath.Clean(out), true, nil
	case ext == want:
		return out, false, nil
	case ext == ".gguf":
		return "", false, fmt.Errorf("-o %s names a GGUF file, but the %s layout writes safetensors: add -layout gguf, or give a directory or a .safetensors file", out, l.Name())
	case ext == ".safetensors":
		return "", false, fmt.Errorf("-o %s names a safetensors file, but the gguf layout writes GGUF: give a .gguf file or a directory", out)
	case fileExts[ext]:
		return "", false, fmt.Errorf("-o %s: a checkpoint is not written as %s; give a directory or a %s file", out, ext, want)
	}
	return out, true, nil
}

// fileExts are extensions of files that are no checkpoint output: an -o
// ending in one is a mistake, not a directory name.
var fileExts = map[string]bool{".npy": true, ".npz": true, ".json": true, ".bin": true, ".pt": true, ".pth": true, ".gguf": true}

// fileName is the weight file inside a directory output.
func fileName(l layout.Layout) string {
	if l.Container() == layout.GGUF {
		return "model.gguf"
	}
	return "model.safetensors"
}
