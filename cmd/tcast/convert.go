package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/checkpoint/report"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/sparsity"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

const convertUsage = "tcast convert IN -dtype NAME -o OUT [-layout LAYOUT] [-include RE] [-exclude RE] [-axis N]\n" +
	"                    [-scale-mode MODE] [-workers K] [-shard-size SIZE] [-rename RE=REPL] [-force] [-json]\n" +
	"                    [-sparsity N:M [-sparsity-criterion magnitude|wanda] [-act-norms NORMS.npz]\n" +
	"                     [-sparsity-format dense|sparse-bitmask|sparse-24-bitmask]]\n" +
	"                    [-gguf-generic] [-gguf-pre NAME] [-gguf-pure] [-type-for RE=TYPE ...] [-imatrix FILE]\n" +
	"                    [-scale-search] [-rotate hadamard[:BLOCK]] [-allow-nonfinite] [-report FILE.html] [-cpuprofile FILE] [-memprofile FILE]\n" +
	"                    [-dry-run] [-output-tensor-type TYPE] [-token-embedding-type TYPE] [-leave-output-tensor]\n" +
	"                    [-tensor-type RE=TYPE] [-tensor-type-file FILE] [-prune-layers L0,L1,...] [-override-kv KEY=TYPE:VALUE]\n" +
	"                    [-include-weights NAME | -exclude-weights NAME] [-allow-requantize] [-pure] [-keep-split]\n" +
	"                    [-target-bpw B | -target-size SIZE]\n\n" +
	"IN is a checkpoint: a .safetensors file, a model.safetensors.index.json, a .gguf file, or a directory\n" +
	"holding one, plain or quantized in any layout tcast reads (quantized weights are dequantized exactly,\n" +
	"then cast). OUT is a directory (weights, shards and config files go in it), or a .safetensors file\n" +
	"(layouts without config files), or with -layout gguf a .gguf file. OUT is never an input or next to\n" +
	"one unless named so; an existing OUT is replaced as a whole only with -force.\n\n" +
	"Layouts and the datatypes they take:\n" +
	"  tcast               any datatype (tcast datatypes), packed with its metadata (docs/FORMAT.md)\n" +
	"  compressed-tensors  int4/int8 (symmetric) and uint4/uint8 (zero point) group or channel scales,\n" +
	"                      fp8e4 per tensor, channel or 128×128 block, nvfp4, mxfp4, mxfp8e4 (vLLM)\n" +
	"  gpt-oss             mxfp4 (Hugging Face transformers gpt-oss)\n" +
	"  modelopt            nvfp4 (NVIDIA ModelOpt, TensorRT-LLM, vLLM)\n" +
	"  fp8-block           fp8e4_block128 (DeepSeek-style FP8, transformers FineGrainedFP8)\n" +
	"  gguf                mxfp4, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, q8_k,\n" +
	"                      iq4_nl, iq4_xs, iq3_s, iq3_xxs, iq2_s, iq2_xs, iq2_xxs, iq1_m, iq1_s,\n" +
	"                      tq1_0, tq2_0, q1_0, q2_0, f32, f16, bf16 (llama.cpp)\n\n" +
	"With -layout gguf, a checkpoint whose config.json has model_type llama, mistral, qwen2, qwen3 or gemma\n" +
	"becomes the model file llama.cpp runs: GGUF tensor names (token_embd.weight, blk.N.attn_q.weight, ...),\n" +
	"the architecture's hyper-parameters and the tokenizer from tokenizer.json and tokenizer_config.json;\n" +
	"a value llama.cpp needs and the input lacks is an error naming it (docs/GGUF.md).\n\n" +
	"With -layout gguf, -dtype also names llama-quantize's mixes (Q4_K_M, Q4_K_S, Q5_K_M, Q5_K_S, Q3_K_M,\n" +
	"Q3_K_L, Q3_K_S, Q2_K, Q6_K, Q8_0, Q4_0, IQ4_NL, IQ4_XS, ..., any case): each tensor gets the type the\n" +
	"mix's rules give it (more bits for attn_v and ffn_down in some layers, Q6_K for the output head, a\n" +
	"type that fits rows not divisible by 256), shown with the reason in the report; general.file_type is\n" +
	"the mix's. A name that is both a type and a mix (q8_0, q6_k, q4_k) is the mix for a llama.cpp model\n" +
	"file and the type for generic GGUF output. -type-for RE=TYPE overrides types by GGUF name, -gguf-pure\n" +
	"gives every quantized weight the mix's base type, and -imatrix FILE (llama-imatrix's GGUF or .dat\n" +
	"output, or the .npz of docs/GGUF.md §2.6) weights the error of the quantizers that search (K-quants,\n" +
	"IQ4_NL, IQ4_XS, Q4_0, Q4_1, Q5_0, Q5_1).\n" +
	"-imatrix works with any layout for the codebook datatypes of several tables (mxfi4, mxfp4e,\n" +
	"icb44fi2_e32s8, ...), whose subtiles then choose their tables by importance-weighted error; a\n" +
	"Hugging Face weight of a known architecture is looked up under its GGUF name (blk.N.attn_q.weight).\n\n" +
	"llama-quantize's flags work under their own names, with one dash or two: -output-tensor-type and\n" +
	"-token-embedding-type set those tensors' types, -leave-output-tensor keeps output.weight as it is,\n" +
	"-tensor-type is -type-for and -tensor-type-file reads its rules from a file, -prune-layers drops blocks\n" +
	"of a GGUF model, -override-kv sets metadata, -include-weights / -exclude-weights choose the -imatrix\n" +
	"entries used, -pure is -gguf-pure, and -dry-run prints each tensor's type and size and writes nothing.\n" +
	"A GGUF input's tensors that a mix keeps, or gives the type they have, are copied as stored (-dtype COPY\n" +
	"keeps all); quantizing an already quantized tensor to another type needs -allow-requantize. Q2_K_S\n" +
	"needs -imatrix with an entry for each of its Q2_K tensors, as in llama-quantize.\n\n" +
	"-target-bpw B (or -target-size SIZE) with a mix chooses the type of every tensor the mix quantizes,\n" +
	"but those set by -type-for, -output-tensor-type and -token-embedding-type, so that the file holds at\n" +
	"most B bits per weight (llama.cpp's BPW: the file's bits over the model's weights) with the least total\n" +
	"error: each tensor's error in each type from IQ1_S to Q8_0 is measured on sampled rows, weighed by\n" +
	"-imatrix (without one, no IQ type that needs it); the report gives each tensor's choice.\n\n" +
	"A split GGUF model (NAME-00001-of-0000N.gguf, ...) is read as one: give its first split, any split or\n" +
	"its directory. -shard-size SIZE with -layout gguf and -o DIR/ writes llama.cpp's splits of at most\n" +
	"SIZE of tensor data (DIR/model-00001-of-0000N.gguf, ...; llama.cpp loads them by the first), and\n" +
	"-keep-split writes a split input in its own splits; the directory appears whole or not at all.\n\n" +
	"-scale-search lets every block of an MX, NVFP4, symmetric integer-group or FP8 datatype (mxfp4, nvfp4,\n" +
	"int4_g128, fp8e4_block128, ...) try a few scales around the rule's (E8M0 ±1, neighbouring UE4M3 codes\n" +
	"and NVFP4's 4/6 scale, clipping ratios) and keep the one of least squared error, weighted by -imatrix\n" +
	"when given (docs/NUMERICS.md §11). Only the scale values change: every loader reads the output as a\n" +
	"plain cast. Not with -layout gguf, whose quantizers are llama.cpp's.\n\n" +
	"With -sparsity N:M the weights are pruned to N kept of every M along their input axis. The tcast\n" +
	"layout stores an N:M datatype (the tile counts kept values). compressed-tensors prunes, then casts\n" +
	"the dense datatype, and stores the mask as -sparsity-format says: sparse-24-bitmask (the default for\n" +
	"2:4) or sparse-bitmask (the default otherwise), read by compressed-tensors up to 0.14 only, with no\n" +
	"-dtype (each weight keeps its BF16/F16/F32 format), -dtype bfloat16/float16/float32, fp8e4_* or\n" +
	"int8_*; or dense, the pruned weights in the usual form with any datatype, which current vLLM loads.\n\n" +
	"By default 2-D and larger float weights are cast along their last axis, except biases, norms,\n" +
	"embeddings and the output head, tensors shorter than one block along the axis, and tensors the\n" +
	"datatype would store in more bits than the source; the report says why each tensor was kept.\n\n" +
	"A weight to cast whose source holds NaN or Inf values is refused: convert names each such weight with\n" +
	"its counts of NaN, +Inf and -Inf, writes nothing and exits with status 1. -allow-nonfinite casts them\n" +
	"per the block policy of docs/NUMERICS.md (a block holding a NaN or an Inf decodes to NaN in most\n" +
	"datatypes; with one scale per tensor, as fp8e4_tensor, the whole weight does), with a warning;\n" +
	"-exclude RE keeps them as they are. Kept tensors (norms, biases, ...) are copied bit for bit, NaN\n" +
	"and Inf included, and never refused."

// convertFlags are the flags of tcast convert.
type convertFlags struct {
	name, out, lay, include, exclude, mode, shard string
	sparse, criterion, actNorms, sparseFormat     string
	ggufPre, imPath, rot, reportPath              string
	axis, workers                                 int
	force, asJSON, ggufGeneric, pure              bool
	scaleSearch, allowNonFinite                   bool
	typeFor                                       ggufmix.Overrides
	renames                                       renameFlag
	prof                                          *profileFlags
	quant                                         quantizeFlags
}

// define declares the flags in fs.
func (f *convertFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "dtype", "", "datatype `NAME` (see tcast datatypes, and the layouts above)")
	fs.StringVar(&f.out, "o", "", "output `OUT`: a directory, a .safetensors or a .gguf file")
	fs.StringVar(&f.lay, "layout", "tcast", "output `LAYOUT`: "+strings.Join(layout.Names(), ", "))
	fs.StringVar(&f.include, "include", "", "also cast tensors whose name matches `RE` (an error if one cannot be)")
	fs.StringVar(&f.exclude, "exclude", "", "keep tensors whose name matches `RE`")
	fs.IntVar(&f.axis, "axis", -1, "scaled axis `N`: 0 is the first, negative counts from the end")
	fs.StringVar(&f.mode, "scale-mode", "floor", "power-of-two scale `MODE`: floor, ceil, even, rceil, midmax, option3, topbinade")
	fs.IntVar(&f.workers, "workers", 0, "`K` goroutines casting and writing; a large tensor is split among them by rows (0: all cores)")
	fs.BoolVar(&f.force, "force", false, "replace an existing output (as a whole)")
	fs.StringVar(&f.shard, "shard-size", "", "split the output into shards of at most `SIZE` (e.g. 5GB, 500MB, 2GiB) with an index, or with -layout gguf into llama.cpp's splits, in the -o directory")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fs.StringVar(&f.sparse, "sparsity", "", "prune the cast weights to `N:M` sparsity (e.g. 2:4) along the scaled axis; the datatype's tile then counts kept values")
	fs.StringVar(&f.criterion, "sparsity-criterion", "magnitude", "`CRITERION` by which N:M sparsity ranks weights: magnitude, or wanda (|w|·norm, with -act-norms)")
	fs.StringVar(&f.actNorms, "act-norms", "", "`NORMS.npz` of activation norms for -sparsity-criterion wanda: for every weight cast, a 1-D array named as the weight, one norm per index along the scaled axis")
	fs.StringVar(&f.sparseFormat, "sparsity-format", "", "how -layout compressed-tensors stores pruned weights: `FORMAT` dense, sparse-bitmask or sparse-24-bitmask (default: sparse-24-bitmask for 2:4, sparse-bitmask otherwise)")
	fs.BoolVar(&f.ggufGeneric, "gguf-generic", false, "with -layout gguf, keep the input's tensor names and write no llama.cpp model metadata (general.architecture tcast)")
	fs.StringVar(&f.ggufPre, "gguf-pre", "", "with -layout gguf, the llama.cpp pre-tokenizer `NAME` (llama-bpe, qwen2, gpt-2, ...) of a byte-level BPE tokenizer.json it does not recognise")
	fs.Var(typeForFlag{&f.typeFor}, "type-for", "with -layout gguf, give tensors whose GGUF name matches `RE=TYPE` that type (repeatable; the first match wins; e.g. ffn_down=q6_k)")
	fs.StringVar(&f.imPath, "imatrix", "", "llama.cpp's importance matrix `FILE` (GGUF, legacy .dat, or .npz) weighting the error of the quantizers that search (-layout gguf's types, codebook datatypes, -scale-search)")
	fs.BoolVar(&f.pure, "gguf-pure", false, "with a GGUF mix, give every weight it quantizes the mix's base type (llama-quantize --pure)")
	fs.StringVar(&f.rot, "rotate", "", "rotate each cast weight along the scaled axis before the cast: `hadamard[:BLOCK]`, a normalised Walsh–Hadamard matrix on blocks of BLOCK values (a power of two; default the datatype's block, or 128); tcast layout only, undone by decompress, verify and load")
	fs.BoolVar(&f.scaleSearch, "scale-search", false, "search each block's scale among a few candidates around the rule's for the least (importance-weighted) squared error: MX, NVFP4, integer-group and FP8 datatypes; not -layout gguf")
	fs.BoolVar(&f.allowNonFinite, "allow-nonfinite", false, "cast weights whose source holds NaN or Inf values per the block policy (a block holding one becomes NaN in most datatypes), with a warning; by default convert refuses them, naming each, and writes nothing")
	fs.StringVar(&f.reportPath, "report", "", "also write the HTML report of the conversion to `FILE` (as tcast report -o FILE IN OUT)")
	f.prof = addProfileFlags(fs)
	f.quant.define(fs, f)
	fs.Var(&f.renames, "rename", "rename output tensors: `RE=REPL` replaces matches of RE with REPL (repeatable; e.g. to fit GGUF's 63-byte names)")
}

func runConvert(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	var f convertFlags
	f.define(fs)
	pos, err := parseArgs(fs, convertUsage, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one input checkpoint, got %s", count(len(pos), "argument"))
	}
	if f.out == "" && !f.quant.dryRun {
		return usagef("-o is required (or -dry-run, to see the output's types and sizes only)")
	}
	if f.quant.dryRun && f.reportPath != "" {
		return usagef("-report reads the output, and -dry-run writes none: drop one of them")
	}
	opts, err := f.options(stderr)
	if err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		// The pipeline's garbage is whole tensors; collecting at 50% growth
		// instead of 100% keeps peak memory near (workers+1) tensors at no
		// measurable cost in speed.
		debug.SetGCPercent(50)
	}
	if err := f.checkReport(pos[0]); err != nil {
		return err
	}
	pr, err := f.prof.start(f.force, f.out, func() []string { return checkpointInputs(pos[0]) })
	if err != nil {
		return err
	}
	res, err := convert.Convert(pos[0], f.out, opts)
	if err = pr.stop(err); err != nil {
		return explainConvert(err)
	}
	return f.finish(res, pos[0], opts, stdout, stderr)
}

// options turns the flags into the options of convert.Convert, parsing
// every name once.
func (f *convertFlags) options(stderr io.Writer) (convert.Options, error) {
	opts := convert.Options{Axis: cliAxis(f.axis), Workers: f.workers, Force: f.force,
		ScaleSearch: f.scaleSearch, AllowNonFinite: f.allowNonFinite,
		GGUF: convert.GGUFOptions{Generic: f.ggufGeneric, Pre: f.ggufPre, Pure: f.pure, TypeFor: f.typeFor}}
	var err error
	if opts.Layout, err = layout.Get(f.lay); err != nil {
		return opts, usagef("-layout: %v", err)
	}
	if opts.Rotate, err = rotate.Parse(f.rot); err != nil {
		return opts, usagef("-rotate: %v", err)
	}
	steps := []func(*convert.Options) error{f.dataType, f.quant.apply, f.imatrix, f.quant.selectWeights,
		f.sparsity, f.pruning, f.rest}
	for _, step := range steps {
		if err := step(&opts); err != nil {
			return opts, err
		}
	}
	if !f.asJSON {
		opts.Progress = progressPrinter(stderr)
	}
	if testHookProgress != nil {
		show := opts.Progress
		opts.Progress = func(p convert.Progress) {
			if show != nil {
				show(p)
			}
			testHookProgress(p)
		}
	}
	return opts, nil
}

// dataType sets the datatype, or the GGUF mix, that -dtype names.
func (f *convertFlags) dataType(opts *convert.Options) error {
	_, isPruner := opts.Layout.(layout.Pruner)
	switch {
	case f.name == "" && f.sparse != "" && isPruner:
		return nil // prune only: each weight keeps its source's float format
	case f.name == "" && f.sparse != "":
		return usagef("-sparsity without -dtype: only -layout compressed-tensors writes pruned weights without quantizing them; give -dtype (e.g. -dtype mxfp4) or -layout compressed-tensors")
	case f.name == "":
		return usagef("-dtype is required (or, with -layout compressed-tensors, -sparsity N:M to prune without quantizing)")
	}
	var err error
	if opts.DataType, opts.GGUF.Mix, err = convert.DataTypeOrMix(opts.Layout, f.name); err != nil {
		return usagef("-dtype: %s%s", dataTypeMessage(err), dtypeHint(f.name, f.lay))
	}
	return nil
}

// imatrix checks the options that need no input, then reads -imatrix.
func (f *convertFlags) imatrix(opts *convert.Options) error {
	if f.imPath != "" {
		opts.Imatrix = &imatrix.Imatrix{Path: f.imPath} // read once the options go together
	}
	if err := opts.Check(); err != nil {
		return explainConvert(err)
	}
	if f.imPath == "" {
		return nil
	}
	var err error
	if opts.Imatrix, err = imatrix.Read(f.imPath); err != nil {
		return usagef("-imatrix: %v", err)
	}
	return nil
}

// sparsity applies -sparsity and -sparsity-format: to the layout when it
// prunes, else to the datatype.
func (f *convertFlags) sparsity(opts *convert.Options) error {
	if f.sparseFormat != "" && f.sparse == "" {
		return usagef("-sparsity-format %s: give -sparsity N:M too (e.g. -sparsity 2:4)", f.sparseFormat)
	}
	if f.sparse != "" {
		p, err := parseSparsityFlag(f.sparse)
		if err != nil {
			return err
		}
		pruner, isPruner := opts.Layout.(layout.Pruner)
		switch {
		case isPruner:
			fm, err := layout.ParseSparseFormat(f.sparseFormat)
			if err != nil {
				return sparsityUsage(err)
			}
			if opts.Layout, err = pruner.WithPruning(layout.Pruning{Pattern: p, Format: fm}); err != nil {
				return sparsityUsage(err)
			}
		case f.sparseFormat != "":
			return usagef("-sparsity-format applies to -layout compressed-tensors; the %s layout stores N:M sparsity in its datatype: drop -sparsity-format", f.lay)
		default:
			if opts.DataType, err = tc.WithSparsity(opts.DataType, p); err != nil {
				return usagef("-sparsity: %s", withSparsityMessage(err))
			}
		}
	}
	if opts.DataType == nil {
		return nil
	}
	if err := layout.Accepts(opts.Layout, opts.DataType); err != nil {
		var se *layout.SparsityError
		var sd *layout.SparseDataTypeError
		switch {
		case errors.As(err, &se):
			return usagef("%s", layoutSparsityMessage(se))
		case errors.As(err, &sd):
			return usagef("%s", sparseDataTypeMessage(sd))
		}
		return usagef("-dtype %s: %v", f.name, err)
	}
	return nil
}

// pruning checks -sparsity-criterion and reads -act-norms.
func (f *convertFlags) pruning(opts *convert.Options) error {
	_, pruned := layout.PruningOf(opts.Layout)
	isSparse := pruned || (opts.DataType != nil && opts.DataType.Spec() != nil && opts.DataType.Spec().IsSparse())
	if err := checkCriterion(f.criterion, f.actNorms, isSparse, "FILE.npz"); err != nil {
		return err
	}
	if f.criterion != "wanda" {
		return nil
	}
	var err error
	opts.Pruning, err = wandaNorms(f.actNorms, f.axis)
	return err
}

// rest parses -scale-mode, -include, -exclude, -workers, -rename and
// -shard-size.
func (f *convertFlags) rest(opts *convert.Options) error {
	var err error
	if opts.Mode, err = scale.ParseMode(f.mode); err != nil {
		return usagef("-scale-mode: %v", err)
	}
	for _, re := range []struct {
		flag string
		src  string
		dst  **regexp.Regexp
	}{{"-include", f.include, &opts.Include}, {"-exclude", f.exclude, &opts.Exclude}} {
		if re.src == "" {
			continue
		}
		if *re.dst, err = regexp.Compile(re.src); err != nil {
			return usagef("%s: %v", re.flag, err)
		}
	}
	if f.workers < 0 {
		return usagef("-workers must be 0 or more")
	}
	if len(f.renames) > 0 {
		opts.Rename = convert.Rewrite(f.renames)
	}
	if f.shard != "" {
		if opts.ShardSize, err = parseSize(f.shard); err != nil {
			return usagef("-shard-size: %v", err)
		}
	}
	return nil
}

// checkReport checks -report before anything is converted.
func (f *convertFlags) checkReport(in string) error {
	if f.reportPath == "" {
		return nil
	}
	if err := checkReportOutput(f.reportPath, f.force, in); err != nil {
		return err
	}
	if overlaps(f.reportPath, f.out) {
		return usagef("-report %s: write the report outside the output %s", f.reportPath, f.out)
	}
	return nil
}

// finish prints the warnings, writes the -report and prints the report.
func (f *convertFlags) finish(res *convert.Result, in string, opts convert.Options, stdout, stderr io.Writer) error {
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "tcast convert: warning: %s\n", warningMessage(w))
	}
	if f.reportPath != "" {
		err := writeReport(f.reportPath, f.force, in, []string{res.Output}, report.Options{Imatrix: opts.Imatrix}, nil)
		if err != nil {
			return fmt.Errorf("-report %s: %w", f.reportPath, err)
		}
		fmt.Fprintf(stderr, "tcast convert: wrote the report %s\n", f.reportPath)
	}
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(cliResult(res, opts))
	}
	if res.DryRun {
		printDryRun(stdout, res)
		return nil
	}
	printReport(stdout, res, opts.DataType)
	return nil
}

// typeForFlag collects -type-for rules; its errors leave out the value,
// which the flag package's message gives already.
type typeForFlag struct{ *ggufmix.Overrides }

func (f typeForFlag) Set(v string) error {
	err := f.Overrides.Set(v)
	if oe := (*ggufmix.OverrideError)(nil); errors.As(err, &oe) {
		return errors.New(overrideMessage(oe))
	}
	return err
}

// overrideMessage says what is wrong with a -type-for value, without the
// value, and for a type only generic GGUF output takes how to get it.
func overrideMessage(oe *ggufmix.OverrideError) string {
	msg := oe.Detail()
	if oe.Generic != "" {
		msg += ", or -dtype " + oe.Generic + " for generic GGUF output"
	}
	return msg
}

// renameFlag collects -rename RE=REPL rules.
type renameFlag []convert.RenameRule

func (r *renameFlag) String() string { return "" }

func (r *renameFlag) Set(v string) error {
	re, repl, ok := strings.Cut(v, "=")
	if !ok || re == "" {
		return fmt.Errorf("%q: want RE=REPL, e.g. model.layers.=blk.", v)
	}
	p, err := regexp.Compile(re)
	if err != nil {
		return err
	}
	*r = append(*r, convert.RenameRule{Pattern: p, Replace: repl})
	return nil
}

// testHookProgress, when set (by tests only), is called after each tensor
// is written.
var testHookProgress func(convert.Progress)

// cliAxis maps the -axis flag (0 is the first axis, as in NumPy) to
// tcast.Options.Axis (whose zero value is the last axis).
func cliAxis(a int) int {
	if a == 0 {
		return tc.FirstAxis
	}
	return a
}

// parseSparsityFlag reads the N:M pattern of a -sparsity flag; a bad one is
// a usage error saying what the flag takes.
func parseSparsityFlag(s string) (sparsity.Pattern, error) {
	p, err := sparsity.ParsePattern(s)
	if err != nil {
		var pe *sparsity.PatternError
		if errors.As(err, &pe) {
			return p, usagef("-sparsity: %q: %s; give N:M with 1 ≤ N < M ≤ 16 and M a power of two, such as 2:4", pe.Pattern, pe.Reason)
		}
		return p, usagef("-sparsity: %v", err)
	}
	return p, nil
}

// checkCriterion checks the -sparsity-criterion and -act-norms flags of cast
// and convert: wanda needs N:M pruning (sparse) and a norms file, named file
// in the message; magnitude takes no norms.
func checkCriterion(criterion, actNorms string, sparse bool, file string) error {
	switch criterion {
	case "magnitude":
		if actNorms != "" {
			return usagef("-act-norms goes with -sparsity-criterion wanda")
		}
	case "wanda":
		if !sparse {
			return usagef("-sparsity-criterion wanda: give -sparsity N:M (or an N:M datatype)")
		}
		if actNorms == "" {
			return usagef("-sparsity-criterion wanda needs -act-norms %s", file)
		}
	default:
		return usagef("-sparsity-criterion %q: want magnitude or wanda", criterion)
	}
	return nil
}

// wandaNorms reads an .npz of activation-norm vectors, one per weight name
// and as long as the weight along the scaled axis,
// and returns the convert option that hands each weight its norms.
func wandaNorms(path string, axis int) (func(string, []int) (sparsity.Options, error), error) {
	norms, err := npy.ReadVectorsNPZ(path)
	if err != nil {
		return nil, flagFile("-act-norms", err) // errors.go gives the next step
	}
	return func(name string, shape []int) (sparsity.Options, error) {
		v, ok := norms[name]
		if !ok {
			return sparsity.Options{}, fmt.Errorf("%s holds no activation norms for %s (keep the tensor with -exclude)", path, name)
		}
		a := axis
		if a < 0 {
			a += len(shape)
		}
		if a >= 0 && a < len(shape) && len(v) != shape[a] {
			return sparsity.Options{}, fmt.Errorf("%s: %s: %d activation norms for a weight of shape %v, want %d (one per index along axis %d, the scaled axis)", path, name, len(v), shape, shape[a], axis)
		}
		return sparsity.Options{Norms: v}, nil
	}, nil
}

// dtypeHint says which layout takes a datatype name another layout refused.
func dtypeHint(name, lay string) string {
	for _, other := range layout.Names() {
		if other == lay {
			continue
		}
		l, _ := layout.Get(other)
		if dt, ok := l.(layout.DataTyper); ok {
			if _, err := dt.DataType(name); err == nil {
				if _, err := tc.Lookup(name); err != nil {
					return fmt.Sprintf("; %s is a datatype of the %s layout: add -layout %s", name, other, other)
				}
			}
		}
	}
	if m, err := ggufmix.Lookup(name); err == nil && lay != "gguf" {
		return fmt.Sprintf("; %s is a GGUF mix (llama-quantize's %s): add -layout gguf", name, m)
	}
	return ""
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressOpen reports a progress bar's line that no newline ended yet,
// for the message of an interrupt.
var progressOpen atomic.Bool

// progressPrinter draws a progress bar on a terminal; elsewhere (a log file,
// a pipe) it prints a plain line at most every ten seconds and at the end.
func progressPrinter(w io.Writer) func(convert.Progress) {
	tty := isTerminal(w)
	var last time.Duration
	return func(p convert.Progress) {
		frac := 1.0
		if p.TotalBytes > 0 {
			frac = float64(p.Bytes) / float64(p.TotalBytes)
		}
		rate := float64(p.Bytes) / max(p.Elapsed.Seconds(), 1e-9) / 1e6
		eta := 0.0
		if p.Bytes > 0 {
			eta = p.Elapsed.Seconds() * (1/frac - 1)
		}
		line := fmt.Sprintf("%d/%d tensors, %.1f/%.1f MB, %.0f MB/s, ETA %.0fs",
			p.Tensors, p.TotalTensors, float64(p.Bytes)/1e6, float64(p.TotalBytes)/1e6, rate, eta)
		done := p.Tensors == p.TotalTensors
		if !tty {
			if done || p.Elapsed-last >= 10*time.Second {
				last = p.Elapsed
				fmt.Fprintln(w, line)
			}
			return
		}
		const width = 30
		n := int(frac * width)
		fmt.Fprintf(w, "\r[%s%s] %s ", strings.Repeat("#", n), strings.Repeat("-", width-n), line)
		progressOpen.Store(!done)
		if done {
			fmt.Fprintln(w)
		}
	}
}

// printReport prints the per-tensor table (with why a tensor was kept) and
// the totals, naming the datatype asked for as the user did (asked, nil
// for none).
func printReport(out io.Writer, r *convert.Result, asked *tc.DataType) {
	shown := func(name string) string {
		if asked != nil && name == asked.Name() {
			return asked.String()
		}
		return name
	}
	// The table goes out in a few writes, not one per cell.
	w := bufio.NewWriter(out)
	defer w.Flush()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "tensor\tshape\tdatatype\tbits/value\tSQNR dB\tmax abs err\tnote")
	for _, t := range r.Tensors {
		dt, sqnr, maxErr := keptDType(t), "-", "-"
		if t.DataType != "" {
			dt = shown(t.DataType)
			sqnr = sqnrCell(t.SQNR, t.Lost)
			maxErr = fmt.Sprintf("%.3g", t.MaxAbsErr) // +Inf when values were lost
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%.3f\t%s\t%s\t%s\n",
			t.Name, t.Shape, dt, t.Bits, sqnr, maxErr, tensorNote(t))
	}
	tw.Flush()
	if r.Mix != "" || r.Imatrix != "" {
		fmt.Fprintln(w, ggufSummary(r))
	}
	lay := r.Layout + " layout"
	if r.Generic != "" {
		lay += ", generic GGUF"
	}
	dt := shown(r.DataType)
	if r.ScaleSearch {
		dt += ", scale search"
	}
	fmt.Fprintf(w, "%s → %s (%s, %s): %s; %d bytes in, %d bytes out, ratio %.2f, %.2f s, %.3f GB/s\n",
		r.Input, r.Output, lay, dt, tensorCounts(r, "cast"), r.BytesIn, r.BytesOut, r.Ratio(), r.Seconds, r.GBps())
	if s := r.Summarize(); r.ScaleSearch && s.SQNR != nil {
		fmt.Fprintf(w, "scale search: SQNR %.2f dB (mean by elements of the cast weights)\n", *s.SQNR)
	}
	if s := r.Summarize(); s.SQNRUnrotated != nil && s.SQNR != nil {
		fmt.Fprintf(w, "rotation: SQNR %.2f dB with it, %.2f dB without (mean by elements of the rotated weights)\n", *s.SQNR, *s.SQNRUnrotated)
	}
}

// tensorCounts says how many tensors the report holds, and how many were
// cast (as castWord says it), kept and dropped.
func tensorCounts(r *convert.Result, castWord string) string {
	cast, kept, dropped := 0, 0, 0
	for _, t := range r.Tensors {
		switch {
		case t.Dropped:
			dropped++
		case t.DataType != "":
			cast++
		default:
			kept++
		}
	}
	s := fmt.Sprintf("%d tensors, %d %s, %d kept", len(r.Tensors), cast, castWord, kept)
	if dropped > 0 {
		s += fmt.Sprintf(", %d dropped", dropped)
	}
	return s
}

// tensorNote is the note column of printReport's row of t: why it was
// kept, its importance, rotation and the values its source or cast lost.
func tensorNote(t convert.TensorResult) string {
	var notes []string
	for _, n := range []string{strings.TrimPrefix(t.Note, "kept: "), t.Reason} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	if t.Importance != convert.ImportanceNone {
		n := "importance " + t.Importance.String()
		if t.WeightedSQNR != nil && t.Lost == 0 {
			n += fmt.Sprintf(" (weighted SQNR %.2f dB)", *t.WeightedSQNR)
		}
		notes = append(notes, n)
	}
	if t.Rotation != "" {
		n := "rotated " + t.Rotation
		if u := t.SQNRUnrotated; u != nil && math.IsInf(*u, -1) {
			n += " (values lost without)"
		} else if u != nil {
			n += fmt.Sprintf(" (%.2f dB without)", *u)
		}
		notes = append(notes, n)
	}
	if t.SourceNaN+t.SourcePosInf+t.SourceNegInf > 0 {
		notes = append(notes, fmt.Sprintf("source holds %d NaN, %d +Inf, %d -Inf", t.SourceNaN, t.SourcePosInf, t.SourceNegInf))
	}
	if t.Lost > 0 {
		notes = append(notes, fmt.Sprintf("%d finite values became NaN or Inf", t.Lost))
	}
	return strings.Join(notes, "; ")
}

// keptDType names what the output stores a kept tensor as: "kept F32", or
// "BF16→F32" when that is not the source's dtype.
func keptDType(t convert.TensorResult) string {
	if t.Dropped {
		return "dropped"
	}
	if t.Stored == "" || t.Stored == t.Source {
		return "kept " + t.Source
	}
	return t.Source + "→" + t.Stored
}

// ggufSummary counts the tensors of each type of a GGUF mix, with the
// bits per value and the mean SQNR of the cast weights (by elements), and
// the weights that had an importance vector (convert.Summary).
func ggufSummary(r *convert.Result) string {
	var s convert.Summary
	if r.Summary != nil {
		s = *r.Summary // as Convert computed it
	} else {
		s = r.Summarize()
	}
	var b strings.Builder
	if r.Mix != "" {
		fmt.Fprintf(&b, "mix %s:", r.Mix)
	} else {
		b.WriteString("types:")
	}
	for i, tc := range s.Types {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s %d %s", sep, tc.Tensors, tc.DataType)
	}
	if s.Bits > 0 {
		fmt.Fprintf(&b, "; cast weights: %.3f bits per value", s.Bits)
	}
	if s.SQNR != nil {
		fmt.Fprintf(&b, ", SQNR %.2f dB (mean by elements)", *s.SQNR)
	}
	if r.Imatrix != "" {
		fmt.Fprintf(&b, "\nimportance matrix %s: %d weights used it", r.Imatrix, s.Importance[convert.ImportanceUsed])
		if s.WeightedSQNR != nil {
			fmt.Fprintf(&b, " (weighted SQNR %.2f dB, mean by elements)", *s.WeightedSQNR)
		}
		for _, k := range []convert.ImportanceStatus{convert.ImportanceMissing, convert.ImportanceIgnored, convert.ImportanceZeroCount, convert.ImportanceAllZero, convert.ImportanceUnused} {
			if s.Importance[k] > 0 {
				fmt.Fprintf(&b, ", %d %s", s.Importance[k], k)
			}
		}
	}
	return b.String()
}

// parseSize reads a byte count with an optional unit: B, KB, MB, GB, TB
// (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024).
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mul    int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mul := int64(1)
	num := strings.TrimSpace(s)
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(num), strings.ToUpper(u.suffix)) && (u.suffix != "B" || !strings.HasSuffix(strings.ToUpper(num), "IB")) {
			num, mul = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.mul
			break
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	// At least one byte (a fraction of one would truncate to 0, which is no
	// sharding), and NaN fails this comparison too.
	if b := n * float64(mul); err != nil || !(b >= 1) || b > 1<<62 {
		return 0, fmt.Errorf("%q is not a positive size such as 5GB or 500MiB", s)
	}
	return int64(n * float64(mul)), nil
}

// sqnrCell is an SQNR in dB as convert's and verify's tables print it:
// "exact" for none, "lost" for a tensor whose finite values became NaN or
// Inf (lost > 0: the error is not finite, SQNR −Inf).
func sqnrCell(db *float64, lost int) string {
	switch {
	case lost > 0:
		return "lost"
	case db == nil:
		return "exact"
	}
	return fmt.Sprintf("%.2f", *db)
}
