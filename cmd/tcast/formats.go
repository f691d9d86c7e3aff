package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tensorcast-go/tensorcast/dtype"
)

func runFormats(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("formats", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the constants of every format as JSON")
	pos, err := parseArgs(fs, "tcast formats [-json] [NAME...]\n\n"+
		"Lists the named number formats, or the named ones (e4m3fn, float8_e5m2, e2m1, int4, ...), with their\n"+
		"constants: kind, bits, largest and smallest positive value, Inf, NaN codes and -0.", args, stdout)
	if err != nil {
		return err
	}
	names := pos
	if len(names) == 0 {
		names = dtype.Names()
	}
	var infos []dtype.Info
	for _, n := range names {
		f, err := dtype.Parse(n)
		if err != nil {
			return usagef("%v", err)
		}
		infos = append(infos, f.Info())
	}
	if *asJSON {
		js, err := json.MarshalIndent(infos, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", js)
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tBITS\tMAX\tMIN>0\tINF\tNaN\t-0\tNOTE")
	for _, in := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%g\t%g\t%v\t%d\t%v\t%s\n", in.Name, in.Kind, in.Bits, in.MaxFinite,
			in.MinSubnormal, in.HasInf, in.NaNCount, in.HasNegZero, in.Note)
	}
	return tw.Flush()
}
