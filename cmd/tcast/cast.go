package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/castdir"
	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/sparsity"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

const castUsage = "tcast cast -dtype NAME [-axis N] [-scale-mode MODE] [-round MODE] [-seed N] [-overflow MODE] [-full-range] [-keep MASK.npy] [-scale-search] [-allow-nonfinite] [-force]\n" +
	"           [-sparsity N:M [-sparsity-criterion CRITERION] [-act-norms FILE]]\n" +
	"           [-cpuprofile FILE] [-memprofile FILE] -o DIR IN.npy\n\n" +
	"NAME is a datatype (tcast datatypes lists them: mxfp4, nvfp4, mxint8, int4_g128, ...), a number\n" +
	"format (tcast formats lists them: e4m3fn, bfloat16, ...) or a code such as e2m1_e8m0_t32.\n" +
	"DIR gets codes.npy, dequant.npy, packed.npy, info.json and, as the datatype has them, scale.npy,\n" +
	"zero.npy, tensor_scale.npy, meta.npy and mask.npy (tcast decompress rebuilds the values from DIR;\n" +
	"docs/CASTDIR.md describes the files). DIR appears whole or not at all; an existing DIR is refused\n" +
	"unless -force is given, which replaces it.\n\n" +
	"An input holding NaN or Inf values is refused: cast names the file and its counts of NaN, +Inf and\n" +
	"-Inf, writes nothing and exits with status 1. -allow-nonfinite casts it per the block policy (a block\n" +
	"holding one becomes NaN as a whole in most datatypes; docs/NUMERICS.md); when finite values became\n" +
	"NaN or Inf so, the error is not finite: max abs error +Inf, SQNR lost, and info.json's\n" +
	"max_abs_error and sqnr_db are null beside nonfinite_outputs."

var roundingNames = map[string]dtype.Rounding{
	"even": dtype.RoundEven, "away": dtype.RoundAway, "zero": dtype.RoundZero, "stochastic": dtype.RoundStochastic,
}

var overflowNames = map[string]dtype.Overflow{"sat": dtype.Saturate, "ieee": dtype.OverflowIEEE}

// castFlags are the flags of tcast cast, and the values parsed from them.
type castFlags struct {
	name, modeName, round, overflow, keepFile, sparse string
	criterion, actNorms, out                          string
	axis                                              int
	seed                                              uint64
	fullRange, search, force, allowNonFinite          bool
	prof                                              *profileFlags

	rmode dtype.Rounding
	ov    dtype.Overflow
	smode scale.Mode
	dt    *tc.DataType  // the datatype, nil for a format that is none
	plain *dtype.Format // the format cast without a scale, nil for a scaled datatype
}

// define declares the flags in fs.
func (f *castFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "dtype", "", "datatype `NAME` (see tcast datatypes and tcast formats)")
	fs.IntVar(&f.axis, "axis", -1, "scaled axis `N`; negative values count from the end")
	fs.StringVar(&f.modeName, "scale-mode", "floor", "power-of-two scale selection `MODE`: "+modeList())
	fs.StringVar(&f.round, "round", "even", "rounding `MODE`: even, away, zero or stochastic")
	fs.Uint64Var(&f.seed, "seed", 0, "seed `N` of stochastic rounding")
	fs.StringVar(&f.overflow, "overflow", "sat", "overflow `MODE` of unscaled formats: sat (to ±max finite) or ieee (to Inf/NaN); scaled datatypes always saturate")
	fs.BoolVar(&f.fullRange, "full-range", false, "let signed integers use their most negative code")
	fs.StringVar(&f.keepFile, "keep", "", "bool or uint8 .npy `MASK` of the input's shape, or one that broadcasts to it (e.g. [rows, 1]): false (zero) elements are left out of the scales and stored as zero (scaled datatypes)")
	fs.StringVar(&f.sparse, "sparsity", "", "prune to `N:M` sparsity (e.g. 2:4) along the scaled axis: N kept of every M; the datatype's tile then counts kept values (mxfp4 becomes e2m1_e8m0_t32n2m4)")
	fs.StringVar(&f.criterion, "sparsity-criterion", "magnitude", "`CRITERION` by which N:M sparsity ranks elements: magnitude, or wanda (|w|·norm, with -act-norms)")
	fs.StringVar(&f.actNorms, "act-norms", "", "1-D float .npy `FILE` of activation norms, one per index along the scaled axis (the input channels), for -sparsity-criterion wanda")
	fs.BoolVar(&f.search, "scale-search", false, "search each block's scale among a few candidates around the rule's for the least squared error (MX, NVFP4, integer-group and FP8 datatypes; docs/NUMERICS.md §11)")
	fs.StringVar(&f.out, "o", "", "output `DIR` (must not exist unless -force is given)")
	fs.BoolVar(&f.force, "force", false, "replace an existing output DIR (the whole directory)")
	fs.BoolVar(&f.allowNonFinite, "allow-nonfinite", false, "cast an input holding NaN or Inf values per the block policy (a block holding one becomes NaN in most datatypes); by default cast refuses it and writes nothing")
	f.prof = addProfileFlags(fs)
}

func runCast(args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("cast", flag.ContinueOnError)
	var f castFlags
	f.define(fs)
	pos, err := parseArgs(fs, castUsage, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) == 1 && f.out != "" {
		pr, err := f.prof.start(f.force, f.out, func() []string { return []string{pos[0], f.keepFile} })
		if err != nil {
			return err
		}
		defer func() { err = pr.stop(err) }()
	}
	if err := f.check(pos); err != nil {
		return err
	}
	in := pos[0]
	arr, src, err := readInput(in)
	if err != nil {
		return err
	}
	act, err := f.cast(in, arr, src)
	if err != nil {
		return err
	}
	wopts := castdir.WriteOptions{Force: f.force, Input: in, InputDType: arr.DType.String(), Keep: f.keepFile,
		Elem: f.elem(), ScaleSearch: f.search, AllowNonFinite: f.allowNonFinite}
	if err := castdir.Write(f.out, src, act, wopts); err != nil {
		return err
	}
	return f.report(in, arr.Shape, len(src), stdout, stderr)
}

// check parses the names of the flags and checks that they go together,
// before the input is read.
func (f *castFlags) check(pos []string) error {
	switch {
	case len(pos) != 1:
		return usagef("want exactly one input .npy file, got %d", len(pos))
	case f.name == "":
		return usagef("-dtype is required")
	case f.out == "":
		return usagef("-o DIR is required")
	case strings.EqualFold(filepath.Ext(f.out), ".npy"):
		return usagef("-o %s: cast writes a directory of .npy files and info.json; give a directory name", f.out)
	}
	var ok bool
	if f.rmode, ok = roundingNames[f.round]; !ok {
		return usagef("-round %q: want even, away, zero or stochastic", f.round)
	}
	if f.ov, ok = overflowNames[f.overflow]; !ok {
		return usagef("-overflow %q: want sat or ieee", f.overflow)
	}
	var err error
	if f.smode, err = scale.ParseMode(f.modeName); err != nil {
		return usagef("-scale-mode %q: want one of %s", f.modeName, modeList())
	}
	if f.dt, f.plain, err = resolveDataType(f.name); err != nil {
		return usagef("-dtype: %s", dataTypeMessage(err))
	}
	return f.checkScaled()
}

// checkScaled checks the flags that need a scaled datatype, and adds
// -sparsity to it.
func (f *castFlags) checkScaled() error {
	scaled := f.plain == nil
	if f.smode != scale.Floor && (!scaled || !f.dt.Spec().IsExponent()) {
		what := "it has no scale"
		if scaled {
			what = "its scales are " + f.dt.Spec().Scale.Name()
		}
		return usagef("-scale-mode %s chooses power-of-two scales, and %s has none (%s): drop -scale-mode, "+
			"or choose a datatype of E8M0 scales (mxfp4, mxfp8, mxint8, ...)", f.smode, f.name, what)
	}
	if scaled && f.ov == dtype.OverflowIEEE {
		return usagef("-overflow ieee: %s is a scaled datatype, whose elements always saturate", f.dt)
	}
	if !scaled && f.keepFile != "" {
		return usagef("-keep: %s is not a scaled datatype; a mask needs one", f.name)
	}
	if f.sparse != "" {
		p, err := parseSparsityFlag(f.sparse)
		if err != nil {
			return err
		}
		if !scaled {
			return usagef("-sparsity: %s is not a scaled datatype; N:M sparsity needs a tile or channel scale", f.name)
		}
		if f.dt, err = tc.WithSparsity(f.dt, p); err != nil {
			return usagef("-sparsity: %s", withSparsityMessage(err))
		}
	}
	if f.search && (!scaled || !f.dt.SearchesScales()) {
		return usagef("-scale-search: %s has no scale chosen by rule to search (no scale, a zero point, subtile offsets or a codebook); drop -scale-search, or choose an MX, NVFP4, symmetric integer-group or FP8 datatype (mxfp4, nvfp4, int4_g128, fp8e4_block128, ...)", f.name)
	}
	return checkCriterion(f.criterion, f.actNorms, scaled && f.dt.Spec().IsSparse(), "FILE.npy")
}

// elem returns the element options of the flags.
func (f *castFlags) elem() dtype.Options {
	return dtype.Options{Rounding: f.rmode, Overflow: f.ov, Seed: f.seed, FullRange: f.fullRange}
}

// cast casts the input array src (arr's header) in the Actual form.
func (f *castFlags) cast(in string, arr *npy.Array, src []float32) (*tc.Tensor, error) {
	rank := max(len(arr.Shape), 1) // a 0-d array is one element along one axis
	normAxis, ok := tc.AxisIndex(cliAxis(f.axis), rank)
	if !ok {
		return nil, usagef("-axis %d out of range for the rank-%d input %s", f.axis, len(arr.Shape), in)
	}
	if f.plain != nil {
		// The dtype codecs honour every element option (IEEE overflow, one
		// stochastic stream); the axis and scale mode are only recorded.
		act, err := tc.CastFormat(src, arr.Shape, f.plain, f.elem())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in, err)
		}
		act.DataType, act.Axis, act.Mode = f.dt, normAxis, f.smode
		return act, nil
	}
	opts := tc.Options{Form: tc.Actual, Axis: cliAxis(f.axis), Mode: f.smode, Rounding: f.rmode, Seed: f.seed,
		FullRange: f.fullRange, ScaleSearch: f.search}
	var err error
	if f.keepFile != "" {
		if opts.Keep, err = readKeep(f.keepFile, arr.Shape); err != nil {
			return nil, err
		}
	}
	if opts.Pruning, err = f.pruning(arr.Shape, normAxis); err != nil {
		return nil, err
	}
	act, err := tc.Cast(src, arr.Shape, f.dt, &opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in, err)
	}
	return act, nil
}

// pruning reads -act-norms, one norm per index along the scaled axis.
func (f *castFlags) pruning(shape []int, axis int) (sparsity.Options, error) {
	var pruning sparsity.Options
	if f.actNorms == "" {
		return pruning, nil
	}
	n := 1
	if len(shape) > 0 {
		n = shape[axis]
	}
	var err error
	if pruning.Norms, err = npy.ReadVectorFile(f.actNorms, n); err != nil {
		return pruning, flagFile("-act-norms", err)
	}
	return pruning, nil
}

// report prints the line of the cast directory written, and the note of a
// TensorCast spelling the user wrote.
func (f *castFlags) report(in string, shape []int, n int, stdout, stderr io.Writer) error {
	d, err := castdir.Open(f.out)
	if err != nil {
		return err
	}
	info := &d.Info
	sqnr := "exact"
	switch db := info.Stats.SQNR; {
	case info.Stats.Lost > 0: // the error is not finite (max abs error +Inf)
		sqnr = fmt.Sprintf("SQNR lost: %d finite values became NaN or Inf", info.Stats.Lost)
	case db != nil:
		sqnr = fmt.Sprintf("SQNR %.2f dB", *db)
	}
	what := info.DataType.Name
	if f.dt != nil {
		what = f.dt.String() // as the user named it (mxfp4 for mxfp4e2)
	}
	if info.DataType.Code != what {
		what += " = " + info.DataType.Code
	}
	if info.ScaleSearch {
		what += ", scale search"
	}
	clipped := ""
	if f.plain != nil {
		clipped = fmt.Sprintf(", %d clipped", info.Stats.Clipped)
	}
	fmt.Fprintf(stdout, "%s: %d values %v → %s (%.4g bits per value) in %s: %s; codes %s; max abs error %g, %s%s\n",
		in, n, shape, what, info.BitsPerValue, f.out, strings.Join(d.Files(), ", "), info.CodesDType,
		info.Stats.MaxAbsError, sqnr, clipped)
	// A TensorCast spelling whose meaning differs elsewhere, when the user
	// wrote it (mxfp4e2, not its OCP alias mxfp4).
	if n := info.DataType.Note; strings.Contains(n, "TensorCast") && (f.dt == nil || f.dt.String() == f.dt.Name()) {
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
		return nil, nil, err
	}
	if dt.Spec() == nil {
		return dt, dt.Elem(), nil
	}
	return dt, nil, nil
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

// readKeep reads a bool or uint8 mask that broadcasts to shape, and returns
// it broadcast.
func readKeep(path string, shape []int) (*mask.Mask, error) {
	m, err := npy.ReadMaskFile(path)
	if err != nil {
		return nil, flagFile("-keep", err)
	}
	b, err := m.Broadcast(shape)
	if err != nil {
		return nil, fmt.Errorf("%s: mask has shape %v, which does not broadcast to the input's %v", path, m.Shape(), shape)
	}
	return b, nil
}
