package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
)

// quantizeFlags are the flags of tcast convert named as llama-quantize
// names its own, so that its command lines carry over (the Go flag
// package takes -flag and --flag alike).
type quantizeFlags struct {
	outputType, tokenType                ggufTypeFlag
	leaveOutput, allowRequantize, dryRun bool
	keepSplit                            bool
	typeFile, pruneLayers, targetSize    string
	targetBPW                            float64
	kv                                   kvFlag
	includeWeights, excludeWeights       listFlag
}

// define declares the flags in fs; -tensor-type and -pure are the names
// llama-quantize gives -type-for and -gguf-pure.
func (q *quantizeFlags) define(fs *flag.FlagSet, f *convertFlags) {
	fs.BoolVar(&q.leaveOutput, "leave-output-tensor", false, "with a GGUF mix, leave output.weight as the input has it (llama-quantize --leave-output-tensor)")
	fs.Var(&q.outputType, "output-tensor-type", "with a GGUF mix, give output.weight (or the token embedding doubling as it) type `TYPE` (q8_0, q6_k, f16, ...)")
	fs.Var(&q.tokenType, "token-embedding-type", "with a GGUF mix, give token_embd.weight type `TYPE` (q8_0, q4_k, f16, ...)")
	fs.Var(typeForFlag{&f.typeFor}, "tensor-type", "the same as -type-for `RE=TYPE` (llama-quantize's name for it; repeatable)")
	fs.StringVar(&q.typeFile, "tensor-type-file", "", "read -type-for rules from `FILE`: RE=TYPE values separated by spaces or newlines (llama-quantize --tensor-type-file)")
	fs.StringVar(&q.pruneLayers, "prune-layers", "", "drop blocks `L0,L1,...` of a GGUF model and number the later ones down (llama-quantize --prune-layers)")
	fs.Var(&q.kv, "override-kv", "set metadata key `KEY=TYPE:VALUE` of the GGUF output, TYPE int, float, bool or str (repeatable; llama-quantize --override-kv)")
	fs.BoolVar(&q.dryRun, "dry-run", false, "print each tensor's type and size in the output and the total, and write nothing (-o not needed)")
	fs.Var(&q.includeWeights, "include-weights", "use -imatrix only for the weights whose name contains `NAME` (repeatable)")
	fs.Var(&q.excludeWeights, "exclude-weights", "do not use -imatrix for the weights whose name contains `NAME` (repeatable)")
	fs.BoolVar(&q.allowRequantize, "allow-requantize", false, "let a GGUF mix quantize tensors of a GGUF input that are quantized already to another type (their errors add up)")
	fs.BoolVar(&q.keepSplit, "keep-split", false, "write a split GGUF input (NAME-00001-of-0000N.gguf, ...) in the same splits, in the -o directory (llama-quantize --keep-split)")
	fs.BoolVar(&f.pure, "pure", false, "the same as -gguf-pure (llama-quantize's name for it)")
	fs.Func("target-bpw", "with a GGUF mix, choose the types of the tensors the mix quantizes so that the file holds at most `B` bits per weight, with the least error (weighed by -imatrix)", func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return errors.New("want a number of bits per weight above 0, such as 4.5")
		}
		q.targetBPW = v
		return nil
	})
	fs.StringVar(&q.targetSize, "target-size", "", "as -target-bpw, for a file of at most `SIZE` (e.g. 4GB, 700MiB)")
}

// apply sets the options the flags give, but the importance matrix's
// (selectWeights).
func (q *quantizeFlags) apply(opts *convert.Options) error {
	g := &opts.GGUF
	g.OutputType, g.TokenEmbeddingType = q.outputType.t, q.tokenType.t
	g.KeepOutput, g.AllowRequantize, g.KV, g.KeepSplit = q.leaveOutput, q.allowRequantize, q.kv, q.keepSplit
	opts.DryRun = q.dryRun
	g.TargetBPW = q.targetBPW
	if q.targetSize != "" {
		n, err := parseSize(q.targetSize)
		if err != nil {
			return usagef("-target-size: %v", err)
		}
		g.TargetSize = n
	}
	if q.typeFile != "" {
		rules, err := readTypeFile(q.typeFile)
		if err != nil {
			return err
		}
		g.TypeFor = append(g.TypeFor, rules...)
	}
	if q.pruneLayers != "" {
		layers, err := parseLayers(q.pruneLayers)
		if err != nil {
			return usagef("-prune-layers %s: %v", q.pruneLayers, err)
		}
		g.PruneLayers = layers
	}
	return nil
}

// selectWeights applies -include-weights and -exclude-weights to the
// importance matrix read.
func (q *quantizeFlags) selectWeights(opts *convert.Options) error {
	if len(q.includeWeights) == 0 && len(q.excludeWeights) == 0 {
		return nil
	}
	switch {
	case opts.Imatrix == nil:
		return usagef("-include-weights and -exclude-weights choose entries of -imatrix: give -imatrix FILE too")
	case len(q.includeWeights) > 0 && len(q.excludeWeights) > 0:
		return usagef("-include-weights and -exclude-weights do not go together (as in llama-quantize): give one of them")
	}
	sel := opts.Imatrix.Select(q.includeWeights, q.excludeWeights)
	if len(sel.Entries) == 0 {
		names := opts.Imatrix.Names()
		return usagef("-include-weights and -exclude-weights leave none of the %d entries of -imatrix %s "+
			"(entries are named like %s; the names are matched as substrings)", len(names), opts.Imatrix.Path,
			strings.Join(names[:min(2, len(names))], ", "))
	}
	opts.Imatrix = sel
	return nil
}

// readTypeFile reads -tensor-type-file: RE=TYPE rules separated by white
// space, as llama-quantize reads its file.
func readTypeFile(path string) ([]ggufmix.Override, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("-tensor-type-file: %v", err)
	}
	var rules []ggufmix.Override
	for i, field := range strings.Fields(string(b)) {
		o, err := ggufmix.ParseOverride(field)
		if oe := (*ggufmix.OverrideError)(nil); errors.As(err, &oe) {
			return nil, usagef("-tensor-type-file %s: rule %d, %q: %s", path, i+1, field, overrideMessage(oe))
		}
		rules = append(rules, o)
	}
	if len(rules) == 0 {
		return nil, usagef("-tensor-type-file %s holds no RE=TYPE rule", path)
	}
	return rules, nil
}

// parseLayers parses "L0,L1,..." into sorted, distinct block numbers.
func parseLayers(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, errors.New("want block numbers 0 or more separated by commas, e.g. 3,4")
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ggufTypeFlag is a flag naming one ggml type; nil until set.
type ggufTypeFlag struct{ t *gguf.Type }

func (f *ggufTypeFlag) Set(v string) error {
	t, err := ggufmix.ParseType(v)
	if oe := (*ggufmix.OverrideError)(nil); errors.As(err, &oe) {
		return errors.New(overrideMessage(oe))
	}
	f.t = &t
	return nil
}

func (f *ggufTypeFlag) String() string {
	if f == nil || f.t == nil {
		return ""
	}
	return strings.ToLower(f.t.String())
}

// kvFlag collects -override-kv values.
type kvFlag []gguf.KV

func (k *kvFlag) Set(v string) error {
	kv, err := gguf.ParseKV(v)
	if se := (*gguf.KVSyntaxError)(nil); errors.As(err, &se) {
		return errors.New(se.Reason)
	}
	*k = append(*k, kv)
	return nil
}

func (k *kvFlag) String() string { return "" }

// listFlag collects the values of a repeatable flag.
type listFlag []string

func (l *listFlag) Set(v string) error {
	if v == "" {
		return errors.New("empty name")
	}
	*l = append(*l, v)
	return nil
}

func (l *listFlag) String() string { return strings.Join(*l, ",") }

// printDryRun prints the report of -dry-run: each tensor's type and size
// in the output, and the totals.
func printDryRun(out io.Writer, r *convert.Result) {
	w := bufio.NewWriter(out)
	defer w.Flush()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "tensor\tshape\ttype\tbits/value\tbytes in\tbytes out\tnote")
	elements := int64(0)
	for _, t := range r.Tensors {
		dt := t.DataType
		if dt == "" {
			dt = keptDType(t)
		}
		n := int64(1)
		for _, d := range t.Shape {
			n *= int64(d)
		}
		if !t.Dropped {
			elements += n
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%.3f\t%d\t%d\t%s\n", t.Name, t.Shape, dt, t.Bits, t.BytesIn, t.BytesOut, tensorNote(t))
	}
	tw.Flush()
	if r.Mix != "" {
		fmt.Fprintln(w, ggufSummary(r))
	}
	bpw := 0.0
	if elements > 0 {
		bpw = float64(r.BytesOut) * 8 / float64(elements)
	}
	fmt.Fprintf(w, "dry run of %s (%s layout, %s): %s; %d bytes in, %d bytes of tensor data out "+
		"(%.2f MiB, %.3f bits per value), ratio %.2f; nothing was written\n",
		r.Input, r.Layout, r.DataType, tensorCounts(r, "to cast"), r.BytesIn, r.BytesOut,
		float64(r.BytesOut)/(1<<20), bpw, r.Ratio())
}
