package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
)

const verifyUsage = "tcast verify [-min-sqnr DB] [-json] ORIG CONVERTED"

func runVerify(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	minSQNR := fs.Float64("min-sqnr", 0, "fail if a converted tensor's SQNR is below `DB`")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, err := parseArgs(fs, verifyUsage, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want ORIG and CONVERTED, got %d arguments", len(pos))
	}
	res, err := convert.Verify(pos[0], pos[1])
	if err != nil {
		return err
	}
	var failed []string
	for _, r := range res {
		if r.Lost > 0 || r.Converted && r.SQNR != nil && *r.SQNR < *minSQNR {
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
		fmt.Fprintln(tw, "tensor\tconverted\tSQNR dB\tMSE\tmax abs err\tlost to NaN/Inf\t")
		for _, r := range res {
			sq := "exact"
			if r.SQNR != nil {
				sq = fmt.Sprintf("%.2f", *r.SQNR)
			}
			fmt.Fprintf(tw, "%s\t%v\t%s\t%.3g\t%.3g\t%d\t\n", r.Name, r.Converted, sq, r.MSE, r.MaxAbsErr, r.Lost)
		}
		tw.Flush()
		fmt.Fprintf(stdout, "%d tensors checked, %d below %.2f dB or with values lost to NaN/Inf\n", len(res), len(failed), *minSQNR)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d tensors below -min-sqnr %.2f dB or with values lost to NaN/Inf, first %s", len(failed), *minSQNR, failed[0])
	}
	return nil
}
