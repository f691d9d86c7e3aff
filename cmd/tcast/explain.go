package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/report"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

// The library names options by their Go fields (convert.Options.Imatrix);
// the command speaks of flags. This file turns the typed errors and
// warnings of packages convert, verify and report into the command's
// words.

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
}

// boolFlags are the options set by a flag of no value.
var boolFlags = map[string]bool{"GGUF.Generic": true, "GGUF.Pure": true, "ScaleSearch": true,
	"AllowNonFinite": true, "Force": true}

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

// optionMessage says e with flags: "-rotate does not go with -imatrix:
// WHY; drop -rotate, or drop -imatrix".
func optionMessage(e *convert.OptionError) string {
	var b strings.Builder
	b.WriteString(flagOf(e.Option))
	switch {
	case e.With != "":
		b.WriteString(" does not go with " + flagOf(e.With) + ": ")
	case e.Value != "":
		b.WriteString(": " + e.Value + " ")
	default:
		b.WriteString(" ")
	}
	b.WriteString(e.Reason)
	writeFixes(&b, e.Fixes)
	return b.String()
}

// outputMessage says e with flags: "-o x.gguf names a GGUF file, ...; use
// -layout gguf, or give -o a directory or a .safetensors file".
func outputMessage(e *convert.OutputError) string {
	var b strings.Builder
	b.WriteString("-o " + e.Path + " " + e.Reason)
	writeFixes(&b, e.Fixes)
	if e.Want != "" {
		sep := "; "
		if len(e.Fixes) > 0 {
			sep = ", or "
		}
		b.WriteString(sep + "give -o " + e.Want)
	}
	return b.String()
}

// warningMessage says w with flags.
func warningMessage(w convert.Warning) string {
	var b strings.Builder
	if w.Option != "" {
		b.WriteString(flagOf(w.Option) + " ")
		if w.Value != "" {
			b.WriteString(w.Value + " ")
		}
	}
	b.WriteString(w.Text)
	writeFixes(&b, w.Fixes)
	return b.String()
}

// writeFixes appends "; FIX, or FIX" to b.
func writeFixes(b *strings.Builder, fs []convert.Fix) {
	for i, f := range fs {
		if i == 0 {
			b.WriteString("; ")
		} else {
			b.WriteString(", or ")
		}
		b.WriteString(fixMessage(f))
	}
}

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
