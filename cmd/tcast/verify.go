package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
)

const verifyUsage = "tcast verify [-min-sqnr DB] [-imatrix FILE] [-json] ORIG CONVERTED"

func runVerify(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	minSQNR := fs.Float64("min-sqnr", 0, "fail if a converted tensor's SQNR is below `DB`")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	imPath := fs.String("imatrix", "", "also give each converted tensor's SQNR weighted by llama.cpp's importance matrix `FILE` (GGUF, .dat or .npz), by its converted name (a Hugging Face name of a known architecture by its GGUF name)")
	pos, err := parseArgs(fs, verifyUsage, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want ORIG and CONVERTED, got %s", count(len(pos), "argument"))
	}
	vo := convert.VerifyOptions{Warn: func(msg string) { fmt.Fprintf(stderr, "tcast verify: warning: %s\n", msg) }}
	if *imPath != "" {
		if vo.Imatrix, err = imatrix.Read(*imPath); err != nil {
			return usagef("-imatrix: %v", err)
		}
	}
	res, err := convert.VerifyWith(pos[0], pos[1], vo)
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
	var failed []string
	for _, r := range res {
		if r.Lost > 0 || threshold && r.Converted && r.SQNR != nil && *r.SQNR < *minSQNR {
			failed = append(failed, r.Name)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
		head := "tensor\tconverted\tSQNR dB\tMSE\tmax abs err\tlost to NaN/Inf\t"
		if vo.Imatrix != nil {
			head += "weighted SQNR dB\t"
		}
		fmt.Fprintln(tw, head)
		for _, r := range res {
			sq := "exact"
			if r.SQNR != nil {
				sq = fmt.Sprintf("%.2f", *r.SQNR)
			}
			fmt.Fprintf(tw, "%s\t%v\t%s\t%.3g\t%.3g\t%d\t", r.Name, r.Converted, sq, r.MSE, r.MaxAbsErr, r.Lost)
			if vo.Imatrix != nil {
				w := "-"
				if r.WeightedSQNR != nil {
					w = fmt.Sprintf("%.2f", *r.WeightedSQNR)
				}
				fmt.Fprintf(tw, "%s\t", w)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		if m, n := convert.MeanWeightedSQNR(res); m != nil {
			fmt.Fprintf(stdout, "%d tensors weighted by %s: weighted SQNR %.2f dB (mean by elements)\n", n, *imPath, *m)
		}
		fmt.Fprintf(stdout, "%s checked, %d %s\n", count(len(res), "tensor"), len(failed), why)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s %s, first %s", count(len(failed), "tensor"), why, failed[0])
	}
	return nil
}
