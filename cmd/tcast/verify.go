package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/report"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
)

const verifyUsage = "tcast verify [-min-sqnr DB] [-imatrix FILE] [-json] ORIG CONVERTED\n" +
	"       tcast verify -compare [-label NAMES] [-min-sqnr DB] [-imatrix FILE] [-json] ORIG CONVERTED...\n\n" +
	"Reads every tensor of CONVERTED, dequantized, and compares it with the same tensor of its source ORIG\n" +
	"(any layout tcast reads, GGUF included): per tensor its datatype, bits per value and SQNR. With\n" +
	"-compare, each CONVERTED is a recipe compared with ORIG, and the recipes are printed side by side:\n" +
	"what each did (datatype, scale search, rotation, from its metadata), a\n" +
	"row per tensor with each recipe's datatype, bits per value and SQNR (and for a recipe with\n" +
	"-rotate, the SQNR without the rotation its checkpoint records), and a last row with each\n" +
	"recipe's mean bits per value and SQNR over its converted tensors (by elements). It fails on values\n" +
	"lost to NaN or Inf, and with -min-sqnr on a converted tensor below DB, under any recipe."

func runVerify(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	minSQNR := fs.Float64("min-sqnr", 0, "fail if a converted tensor's SQNR is below `DB`")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	imPath := fs.String("imatrix", "", "also give each converted tensor's SQNR weighted as its quantizer weighed the error with llama.cpp's importance matrix `FILE` (GGUF, .dat or .npz; for Q2_K, Q3_K, Q4_K and Q5_K the importance times sqrt(σ²+x²): ggml's rule), by its converted name (a Hugging Face name of a known architecture by its GGUF name); with -compare, under every recipe")
	compare := fs.Bool("compare", false, "compare several CONVERTED checkpoints (recipes) of ORIG side by side")
	labels := fs.String("label", "", "with -compare, comma-separated `NAMES` of the recipes, one per CONVERTED (default: their file names)")
	pos, err := parseArgs(fs, verifyUsage, args, stdout)
	if err != nil {
		return err
	}
	// Without -min-sqnr only values lost to NaN or Inf fail.
	threshold := false
	fs.Visit(func(f *flag.Flag) { threshold = threshold || f.Name == "min-sqnr" })
	why := "with values lost to NaN/Inf"
	if threshold {
		why = fmt.Sprintf("below -min-sqnr %.2f dB or %s", *minSQNR, why)
	}
	if *compare {
		var im *imatrix.Imatrix
		if *imPath != "" {
			if im, err = imatrix.Read(*imPath); err != nil {
				return usagef("-imatrix: %v", err)
			}
		}
		return runCompare(pos, *labels, im, *asJSON, threshold, *minSQNR, why, stdout, stderr)
	}
	if *labels != "" {
		return usagef("-label names the recipes of -compare: add -compare")
	}
	if len(pos) > 2 {
		return usagef("want ORIG and CONVERTED, got %s: add -compare to compare several CONVERTED with ORIG side by side", count(len(pos), "argument"))
	}
	if len(pos) != 2 {
		return usagef("want ORIG and CONVERTED, got %s", count(len(pos), "argument"))
	}
	v := verifyPair{minSQNR: *minSQNR, threshold: threshold, why: why, asJSON: *asJSON,
		imPath: *imPath}
	return v.run(pos[0], pos[1], stdout, stderr)
}

// verifyPair is verify of one converted checkpoint: its flags, and why a
// tensor fails, in words.
type verifyPair struct {
	minSQNR   float64
	threshold bool // -min-sqnr was given
	why       string
	asJSON    bool
	imPath    string
}

// run verifies conv against orig and prints the report, failing on the
// tensors that fail.
func (v *verifyPair) run(orig, conv string, stdout, stderr io.Writer) error {
	var o verify.Options
	var err error
	if v.imPath != "" {
		if o.Imatrix, err = imatrix.Read(v.imPath); err != nil {
			return usagef("-imatrix: %v", err)
		}
	}
	rep, err := verify.Checkpoints(orig, conv, o)
	if err != nil {
		return explainVerify(err)
	}
	warnUnmatched(stderr, "verify", rep.Unmatched)
	var failed []string
	for _, r := range rep.Tensors {
		if r.Lost > 0 || v.threshold && r.Converted && r.SQNR != nil && *r.SQNR < v.minSQNR {
			failed = append(failed, r.Name)
		}
	}
	if v.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep.Tensors); err != nil {
			return err
		}
	} else {
		printVerify(stdout, rep, v.imPath)
		fmt.Fprintf(stdout, "%s checked, %d %s\n", count(len(rep.Tensors), "tensor"), len(failed),
			v.why)
	}
	if rep.Swapped {
		fmt.Fprintf(stderr, "tcast verify: warning: %s holds quantized tensors and %s none, so nothing was converted: "+
			"did you swap them? The source comes first: tcast verify %[2]s %[1]s\n", orig, conv)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s %s, first %s", count(len(failed), "tensor"), v.why, failed[0])
	}
	return nil
}

// printVerify prints verify's table, and the mean weighted SQNR with the
// importance matrix imPath.
func printVerify(w io.Writer, rep *verify.Report, imPath string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	head := "tensor\tconverted\tdatatype\tbits/value\tSQNR dB\tMSE\tmax abs err\tlost to NaN/Inf\t"
	if imPath != "" {
		head += "weighted SQNR dB\t"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rep.Tensors {
		sq := sqnrCell(r.SQNR, r.Lost) // MSE and max abs err are +Inf when values were lost
		fmt.Fprintf(tw, "%s\t%v\t%s\t%.3f\t%s\t%.3g\t%.3g\t%d\t", r.Name, r.Converted, r.DataType, r.Bits, sq, r.MSE, r.MaxAbsErr, r.Lost)
		if imPath != "" {
			w := "-"
			if r.WeightedSQNR != nil && r.Lost == 0 {
				w = fmt.Sprintf("%.2f", *r.WeightedSQNR)
			}
			fmt.Fprintf(tw, "%s\t", w)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if m, n := rep.WeightedSQNR(); m != nil {
		fmt.Fprintf(w, "%d tensors weighted by %s: weighted SQNR %.2f dB (mean by elements)\n", n, imPath, *m)
	}
}

// runCompare is tcast verify -compare: the recipes pos[1:] of the source
// pos[0] side by side (report.Comparison).
func runCompare(pos []string, labels string, im *imatrix.Imatrix, asJSON, threshold bool, minSQNR float64, why string, stdout, stderr io.Writer) error {
	if len(pos) < 2 {
		return usagef("-compare wants ORIG and at least one CONVERTED checkpoint, got %s", count(len(pos), "argument"))
	}
	o := report.Options{Imatrix: im}
	var err error
	if o.Labels, err = recipeLabels(labels, len(pos)-1); err != nil {
		return err
	}
	r, err := report.Build(pos[0], pos[1:], o)
	if err != nil {
		return explainVerify(err)
	}
	for _, rec := range r.Recipes {
		warnUnmatched(stderr, "verify", rec.Unmatched)
	}
	c := r.Compare()
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(c); err != nil {
			return err
		}
	} else if err := c.WriteText(stdout); err != nil {
		return err
	}
	n, first := 0, ""
	for _, t := range c.Tensors {
		for i, cell := range t.Recipes {
			if cell != nil && (cell.Lost > 0 || threshold && cell.Converted && cell.SQNR != nil && *cell.SQNR < minSQNR) {
				if n == 0 {
					first = fmt.Sprintf("%s in %s", t.Name, c.Recipes[i].Path)
				}
				n++
			}
		}
	}
	if n > 0 {
		return fmt.Errorf("%s %s, first %s", count(n, "tensor"), why, first)
	}
	return nil
}
