package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/checkpoint/report"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/internal/filetype"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

// This file is where the library's typed errors become tcast's messages:
// the library names files, tensors, offsets and Options fields; tcast
// adds the flag and the next step. message is the entry point of every
// error a command returns; nextStep holds one case per error type (add
// new types there), and wrongKind the message for a file of the wrong
// kind. The option errors of convert become usage errors that name flags
// (explainConvert, below) before they get here.

// message returns the line tcast prints (after "tcast CMD: ") for err, the
// error of command cmd: what the file at fault is when it is of the wrong
// kind, else the error followed by the next step to take, if one applies.
func message(cmd string, err error) string {
	if m := wrongKind(cmd, err); m != "" {
		return m
	}
	if step := nextStep(cmd, err); step != "" {
		if nc := (*convert.NothingCastError)(nil); errors.As(err, &nc) {
			return err.Error() + "\n" + step // after the list of reasons, on a line of its own
		}
		return err.Error() + "; " + step
	}
	return err.Error()
}

// nextStep returns what to do about err, or "" when its message says it
// already or no step applies. The first case that matches decides.
func nextStep(cmd string, err error) string {
	var (
		ne *imatrix.NotImatrixError
		fe *fileerr.FormatError
		nc *convert.NothingCastError
	)
	var nf *tc.NonFiniteError
	switch {
	case errors.Is(err, atomicfile.ErrExists):
		return "pass -force to replace it, or choose another output"
	case errors.As(err, &nf) && len(nf.Tensors) == 1 && nf.Tensors[0].Name == "":
		return "pass -allow-nonfinite to cast them per the block policy (docs/NUMERICS.md)"
	case errors.As(err, &nf):
		return "pass -allow-nonfinite to cast them per the block policy (docs/NUMERICS.md), " +
			"or keep them as they are with -exclude RE"
	case errors.As(err, &nc):
		return "choose another -layout, -dtype or -axis, or name tensors to cast with -include"
	case errors.Is(err, convert.ErrNoModelFile):
		return "or write a generic GGUF with -gguf-generic"
	case errors.Is(err, ggufmix.ErrNoFallback):
		return "give that tensor a type whose block divides its rows with -type-for NAME=TYPE " +
			"(q4_0, q8_0, f16, ...), or choose another -dtype"
	case errors.Is(err, convert.ErrNameTooLong):
		return "shorten names with -rename RE=REPL"
	case errors.As(err, &ne):
		return "" // the message says what the file must be
	case errors.Is(err, npy.ErrNotMask) && cmd == "cast":
		return "save the mask with numpy as bool or uint8 in C order (numpy.ascontiguousarray)"
	case errors.Is(err, npy.ErrNotMask):
		return ""
	case errors.Is(err, npy.ErrNotVector) && cmd == "convert":
		return "give an .npz holding one 1-D norm vector per weight, named as the weight, " +
			"as numpy.savez writes it"
	case errors.Is(err, npy.ErrNotVector):
		return "give one norm per index along the scaled axis"
	case errors.As(err, &fe):
		return formatStep(fe)
	}
	return ""
}

// damaged is the step for a file whose content is broken.
const damaged = "download or export it again"

// formatStep is the next step for a file a reader refused: by what the
// problem is (its Kind) and, where the remedy differs, by the reader.
func formatStep(fe *fileerr.FormatError) string {
	switch {
	case fe.Format == "castdir":
		return "the cast directory is damaged or was edited: write it again with tcast cast"
	case fe.Kind == fileerr.MissingFile && fe.Format == "gguf":
		return "download every split of the model (NAME-00001-of-0000N.gguf, ...) into " + filepath.Dir(fe.Path)
	case fe.Kind == fileerr.MissingFile:
		return "download every shard the index lists into " + filepath.Dir(fe.Path)
	case fe.Kind == fileerr.LinkOutside:
		return "copy the file into that directory instead of linking it"
	case isFileSystem(fe.Err):
		return "" // a file that cannot be read, not one whose content is wrong
	case fe.Kind == fileerr.TooLarge && fe.Format == "npz":
		return "the archive is damaged; recreate it with numpy.savez"
	case fe.Kind == fileerr.TooLarge && fe.Format == "safetensors":
		return "the file is damaged or hostile; split a real checkpoint of that many tensors " +
			"into shards"
	case fe.Kind == fileerr.TooLarge:
		return "the file is damaged or hostile: it claims more than tcast reads " +
			"(docs/FORMAT.md, Limits on input files)"
	case fe.Kind == fileerr.Unsupported && fe.Format == "gguf":
		return "tcast reads little-endian GGUF version 3: convert the file with a current llama.cpp"
	case fe.Kind == fileerr.Unsupported && (fe.Format == "npy" || fe.Format == "npz"):
		return "save the array again with numpy.save, as a bool, integer or float array"
	case fe.Kind == fileerr.Unsupported:
		return "tcast does not read this variant of the format (docs/FORMAT.md)"
	case fe.Kind == fileerr.Truncated:
		return "the file is truncated: " + damaged
	case fe.Kind == fileerr.NotFormat:
		return "if it is one, it is damaged: " + damaged
	}
	return "the file is damaged or not what its name says: " + damaged
}

// isFileSystem reports whether err is the operating system's error of
// opening or reading a file, or the refusal of a path that is no regular
// file.
func isFileSystem(err error) bool {
	var (
		pe *fs.PathError
		nr *inputfile.NotRegularError
	)
	return errors.As(err, &pe) || errors.As(err, &nr)
}

// Nouns of the kinds of file, as messages name them.
var (
	// isNoun says what a file Detect recognised is.
	isNoun = map[filetype.Type]string{
		filetype.Safetensors: "a safetensors checkpoint",
		filetype.GGUF:        "a GGUF file",
		filetype.Index:       "a sharded checkpoint's index",
		filetype.Config:      "a model configuration",
		filetype.JSON:        "a JSON file",
		filetype.NPY:         "a NumPy .npy array",
		filetype.Zip:         "a zip archive (an .npz, or a PyTorch .pt/.bin)",
		filetype.Pickle:      "a Python pickle (a PyTorch .bin/.pt)",
		filetype.Checkpoint:  "a checkpoint directory",
		filetype.CastDir:     "a cast directory (written by tcast cast)",
		filetype.Dir:         "a directory",
	}
	// wantNoun says what each reader reads, by FormatError.Format.
	wantNoun = map[string]string{
		"npy": "an .npy array", "npz": "an .npz archive",
		"gguf": "a GGUF file", "safetensors": "a checkpoint", "load": "a checkpoint",
	}
	// takes says what each command, or a command's flag, reads.
	takes = map[string]string{
		"cast":       "tcast cast takes one .npy array",
		"convert":    "tcast convert takes a checkpoint",
		"inspect":    "tcast inspect takes a checkpoint or a cast directory",
		"verify":     "tcast verify takes checkpoints or cast directories",
		"report":     "tcast report takes checkpoints",
		"decompress": "tcast decompress takes a cast directory or a checkpoint",
		"convert -act-norms": "-act-norms takes an .npz of 1-D norm vectors, " +
			"one per weight (numpy.savez)",
		"cast -act-norms": "-act-norms takes a 1-D float .npy array",
		"cast -keep":      "-keep takes a mask: a bool or uint8 .npy array",
	}
)

// readerKinds are the kinds of file each reader reads, by
// FormatError.Format: a reader's NotFormat error for a file Detect says
// is of one of them says nothing Detect can add to.
var readerKinds = map[string][]filetype.Type{
	"npy": {filetype.NPY}, "npz": {filetype.Zip},
	"gguf": {filetype.GGUF}, "safetensors": {filetype.Safetensors}, "load": checkpointKinds,
}

// checkpointKinds are the kinds of file and directory that hold a
// checkpoint.
var checkpointKinds = []filetype.Type{
	filetype.Safetensors, filetype.GGUF, filetype.Index, filetype.Checkpoint,
}

// wrongKind returns the message for err when it refuses a file of the
// wrong kind (a reader's NotFormat error, a directory where a file is
// read): what the file is, when Detect can tell, what was wanted and what
// the command (or its flag) takes; "" for other errors.
func wrongKind(cmd string, err error) string {
	var (
		ff *flagFileError
		fe *fileerr.FormatError
		nr *inputfile.NotRegularError
		ne *imatrix.NotImatrixError
	)
	flag := ""
	if errors.As(err, &ff) {
		flag = ff.flag
	}
	switch {
	case errors.As(err, &ne):
		return "" // says what an importance matrix is
	case errors.As(err, &fe) && fe.Kind == fileerr.NotFormat && wantNoun[fe.Format] != "":
		is := filetype.Detect(fe.Path)
		if isNoun[is] == "" || slices.Contains(readerKinds[fe.Format], is) {
			// Nothing to add to what the reader says but what the
			// command takes.
			return err.Error() + withTakes(cmd, flag, filetype.Unknown) + "; " + formatStep(fe)
		}
		want := wantNoun[fe.Format]
		if fe.Index != "" {
			want = "the safetensors file " + fileerr.Name(fe.Index) + " names as a shard"
		}
		return fileerr.Name(fe.Path) + " is " + isNoun[is] + ", not " + want +
			withTakes(cmd, flag, is)
	case errors.As(err, &nr) && nr.Mode.IsDir():
		is := filetype.Detect(nr.Path)
		return fileerr.Name(nr.Path) + " is " + isNoun[is] + ", not a regular file" +
			withTakes(cmd, flag, is)
	}
	return ""
}

// withTakes is "; " and what command cmd (or its flag, if not "") takes,
// then, for the command's input, what to use for a file of kind is
// instead, when one applies.
func withTakes(cmd, flag string, is filetype.Type) string {
	if flag != "" {
		if t := takes[cmd+" "+flag]; t != "" {
			return "; " + t
		}
		return ""
	}
	t := takes[cmd]
	if t == "" {
		return ""
	}
	var use string
	switch {
	case is == filetype.NPY && cmd != "cast":
		use = "cast arrays with tcast cast"
	case slices.Contains(checkpointKinds, is) && cmd == "cast":
		use = "use tcast convert for checkpoints"
	case is == filetype.Zip && cmd == "cast":
		use = "save one of its arrays with numpy.save"
	case (is == filetype.Zip || is == filetype.Pickle) && cmd != "cast":
		use = "save a PyTorch checkpoint as safetensors first"
	case (is == filetype.Config || is == filetype.JSON) && cmd == "cast":
		use = "give the .npy array to cast"
	case is == filetype.Config || is == filetype.JSON:
		use = "give the directory that holds the checkpoint, or its .safetensors file or index"
	case is == filetype.Dir && cmd != "cast":
		use = "it holds no .safetensors file, index or .gguf file: give the directory of a checkpoint"
	case is == filetype.CastDir && (cmd == "convert" || cmd == "report" || cmd == "cast"):
		use = "tcast inspect, verify and decompress read cast directories"
	}
	if use == "" {
		return "; " + t
	}
	return "; " + t + ": " + use
}

// flagFileError is the error of reading the file a flag names: its message
// is the flag's and the error's, and a file of the wrong kind is said to be
// what the flag takes.
type flagFileError struct {
	flag string // "-act-norms"
	err  error
}

func (e *flagFileError) Error() string { return e.flag + ": " + e.err.Error() }
func (e *flagFileError) Unwrap() error { return e.err }

// flagFile returns err, the error of reading the file of flag, as a
// *flagFileError (nil for nil).
func flagFile(flag string, err error) error {
	if err == nil {
		return nil
	}
	return &flagFileError{flag, err}
}

// The library names options by their Go fields (convert.Options.Imatrix);
// the command speaks of flags. What follows turns the option errors and
// warnings of packages convert, verify and report into the command's
// words: usage errors that name flags, and fixes said as flags.

// optionFlags are the flags that set each field of convert.Options, by the
// name the library's errors give it.
var optionFlags = map[string]string{
	"DataType":       "-dtype",
	"Layout":         "-layout",
	"Include":        "-include",
	"Exclude":        "-exclude",
	"Axis":           "-axis",
	"Mode":           "-scale-mode",
	"Workers":        "-workers",
	"Force":          "-force",
	"ShardSize":      "-shard-size",
	"Rename":         "-rename",
	"Pruning":        "-sparsity-criterion wanda",
	"GGUF.Generic":   "-gguf-generic",
	"GGUF.Pre":       "-gguf-pre",
	"GGUF.Mix":       "-dtype",
	"GGUF.Pure":      "-gguf-pure",
	"GGUF.TypeFor":   "-type-for",
	"Imatrix":        "-imatrix",
	"Rotate":         "-rotate",
	"ScaleSearch":    "-scale-search",
	"AllowNonFinite": "-allow-nonfinite",
	"DryRun":         "-dry-run",

	"GGUF.OutputType":         "-output-tensor-type",
	"GGUF.TokenEmbeddingType": "-token-embedding-type",
	"GGUF.KeepOutput":         "-leave-output-tensor",
	"GGUF.AllowRequantize":    "-allow-requantize",
	"GGUF.PruneLayers":        "-prune-layers",
	"GGUF.KV":                 "-override-kv",
	"GGUF.KeepSplit":          "-keep-split",
	"GGUF.TargetBPW":          "-target-bpw",
	"GGUF.TargetSize":         "-target-size",
}

// boolFlags are the options set by a flag of no value.
var boolFlags = map[string]bool{"GGUF.Generic": true, "GGUF.Pure": true, "ScaleSearch": true,
	"AllowNonFinite": true, "Force": true, "DryRun": true, "GGUF.KeepOutput": true,
	"GGUF.AllowRequantize": true, "GGUF.KeepSplit": true}

// flagOf returns the flag of option, or the option's Go name when no flag
// sets it.
func flagOf(option string) string {
	if f, ok := optionFlags[option]; ok {
		return f
	}
	return "Options." + option
}

// explainConvert returns err of package convert in the command's words:
// an option error as a usage error naming flags; any other error as it is
// (nextStep, in errors.go, gives the other typed errors their next step).
func explainConvert(err error) error {
	var (
		oe *convert.OptionError
		ou *convert.OutputError
	)
	switch {
	case errors.As(err, &oe):
		return usagef("%s", optionMessage(oe))
	case errors.As(err, &ou):
		return usagef("%s", outputMessage(ou))
	}
	return err
}

// flagWords say convert's options and fixes with the command's flags.
var flagWords = convert.Words{Option: flagOf, Fix: fixMessage, Output: "-o", Want: "give -o"}

// optionMessage says e with flags: "-rotate does not go with -imatrix:
// WHY; drop -rotate, or drop -imatrix".
func optionMessage(e *convert.OptionError) string { return e.Message(flagWords) }

// outputMessage says e with flags: "-o x.gguf names a GGUF file, ...; use
// -layout gguf, or give -o a directory or a .safetensors file".
func outputMessage(e *convert.OutputError) string { return e.Message(flagWords) }

// warningMessage says w with flags.
func warningMessage(w convert.Warning) string { return w.Message(flagWords) }

// fixMessage says a fix with flags: "drop -rotate", "use -layout gguf",
// "add -scale-search", "give -dtype a datatype that searches".
func fixMessage(f convert.Fix) string {
	flag := flagOf(f.Option)
	switch {
	case f.Choose != "":
		return "give " + flag + " " + f.Choose
	case f.Value != "" && boolFlags[f.Option]:
		return "add " + flag
	case f.Value != "":
		return "use " + flag + " " + shellWord(f.Value)
	}
	return "drop " + flag
}

// shellWord quotes s for a shell when it holds more than letters, digits
// and -_.:=/,+.
func shellWord(s string) string {
	plain := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("-_.:=/,+", r))
	}) < 0
	if plain && s != "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dataTypeMessage says an error of looking up -dtype: tcast's lookup error
// without the package's name, any other (a layout's, GGUF's datatypes and
// mixes) as it is.
func dataTypeMessage(err error) string {
	var le *tc.LookupError
	if errors.As(err, &le) && error(le) == err {
		return le.Detail()
	}
	return err.Error()
}

// withSparsityMessage says an error of tcast.WithSparsity without the
// package's name.
func withSparsityMessage(err error) string {
	var se *tc.SparsityError
	if errors.As(err, &se) {
		return se.Detail()
	}
	return err.Error()
}

// sparseDataTypeMessage says e with flags: the layout takes -dtype, but not
// with -sparsity.
func sparseDataTypeMessage(e *layout.SparseDataTypeError) string {
	return fmt.Sprintf("-sparsity: the %s layout stores no N:M sparsity (it takes -dtype %s without "+
		"-sparsity); drop -sparsity, or use -layout tcast (an N:M datatype) or -layout "+
		"compressed-tensors (which prunes and stores the mask)", e.Layout, e.Dense)
}

// sparsityFlags names the flag of each setting a *layout.SparsityError
// refuses (its Option).
var sparsityFlags = map[string]string{
	"Pruning.Pattern": "-sparsity",
	"Pruning.Format":  "-sparsity-format",
	"DataType":        "-dtype",
}

// sparsityHints says what to do instead, for each refused setting and the
// one it conflicts with (a *layout.SparsityError's Option and Conflict).
var sparsityHints = map[[2]string]string{
	{"Pruning.Pattern", ""}: "give N:M with 1 ≤ N < M ≤ 16, M a power of two, such as 2:4",
	{"Pruning.Format", ""}:  "give dense, sparse-bitmask or sparse-24-bitmask",
	{"Pruning.Format", "Pruning.Pattern"}: "use -sparsity-format sparse-bitmask (or dense) " +
		"for other N:M patterns, or -sparsity 2:4",
	{"Pruning.Format", "DataType"}: "write the pruned weights dense with -sparsity-format dense, " +
		"or choose a datatype stored whole: fp8e4 with a tensor, channel or 2-D block scale " +
		"(float-quantized) or int8 with a tensor, channel or group scale (int-quantized), " +
		"or no quantization (-dtype bfloat16, float16 or float32, or no -dtype)",
	{"DataType", ""}: "give the dense datatype with -sparsity N:M",
}

// layoutSparsityMessage says what e refuses in terms of the flags, and what to do
// instead.
func layoutSparsityMessage(e *layout.SparsityError) string {
	flag, ok := sparsityFlags[e.Option]
	if !ok {
		return e.Error()
	}
	msg := fmt.Sprintf("layout %s: %s %s: %s", e.Layout, flag, e.Value, e.Reason)
	if hint := sparsityHints[[2]string{e.Option, e.Conflict}]; hint != "" {
		msg += "; " + hint
	}
	return msg
}

// sparsityUsage is the usage error of err, a *layout.SparsityError.
func sparsityUsage(err error) error {
	var se *layout.SparsityError
	if errors.As(err, &se) {
		return usagef("%s", layoutSparsityMessage(se))
	}
	return usagef("%v", err)
}

// convertJSON is the JSON report of tcast convert: convert.Result with the
// warnings and the reason for generic GGUF in the command's words.
type convertJSON struct {
	*convert.Result
	Generic  string   `json:"gguf_generic,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// cliResult returns res as tcast convert -json prints it.
func cliResult(res *convert.Result, opts convert.Options) convertJSON {
	j := convertJSON{Result: res, Generic: res.Generic}
	if res.Generic != "" && opts.GGUF.Generic {
		j.Generic = "-gguf-generic asks for it"
	}
	for _, w := range res.Warnings {
		j.Warnings = append(j.Warnings, warningMessage(w))
	}
	return j
}

// explainVerify returns err of packages verify and report in the
// command's words: the flag, and what to do; any other error as it is.
func explainVerify(err error) error {
	var ie *verify.ImatrixError
	var me *verify.MissingError
	var re *report.MismatchError
	switch {
	case errors.As(err, &re):
		return fmt.Errorf("%s is not a conversion of %s: %w (compare only checkpoints converted from %[2]s, "+
			"or give the checkpoint %[1]s was converted from as the source)", re.Recipe, re.Source, explainVerify(re.Err))
	case errors.As(err, &ie):
		return fmt.Errorf("tensor %s: -imatrix %s: %w (give the matrix computed for this model)",
			ie.Tensor, filepath.Base(ie.Path), ie.Err)
	case errors.As(err, &me) && me.GGUF != "":
		return fmt.Errorf("%w: verify pairs them only when tcast convert made the GGUF from that checkpoint "+
			"(it records the names). Verify %s against the checkpoint it was converted from, "+
			"or convert %s to GGUF and verify that file", err, me.Conv, me.Orig)
	}
	return err
}

// warnUnmatched warns of an importance matrix that has no entry for any
// converted weight (nil u: none to warn of).
func warnUnmatched(w io.Writer, cmd string, u *verify.ImatrixUnmatched) {
	if u != nil {
		fmt.Fprintf(w, "tcast %s: warning: -imatrix %s has no entry for any of the %d converted weights "+
			"(its entries are named like %q): no weighted SQNR; is it the matrix of another model?\n",
			cmd, filepath.Base(u.Path), u.Weights, u.Entry)
	}
}
