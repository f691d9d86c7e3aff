package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	tc "github.com/tensorcast-go/tensorcast/tcast"
)

// datatypeEntry is one line of tcast datatypes.
type datatypeEntry struct {
	Name         string   `json:"name"`
	Aliases      []string `json:"aliases,omitempty"`
	Code         string   `json:"code"`
	Element      string   `json:"element"`
	Index        string   `json:"index,omitempty"` // a codebook datatype's index format
	Scale        string   `json:"scale,omitempty"`
	BitsPerValue float64  `json:"bits_per_value"`
	Note         string   `json:"note,omitempty"`
}

func runDatatypes(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("datatypes", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the datatypes as JSON")
	pos, err := parseArgs(fs, "tcast datatypes [-json] [NAME...]\n\n"+
		"Lists the registered datatypes, or the named ones (a name, alias or code such as e2m1_e8m0_t32).\n"+
		"BITS/VALUE leaves out per-tensor and per-channel scales, whose cost depends on the shape.", args, stdout)
	if err != nil {
		return err
	}
	dts := tc.Registered()
	if len(pos) > 0 {
		dts = nil
		for _, n := range pos {
			d, err := tc.Lookup(n)
			if err != nil {
				return usagef("%s", dataTypeMessage(err))
			}
			dts = append(dts, d)
		}
	}
	entries := make([]datatypeEntry, len(dts))
	for i, d := range dts {
		e := datatypeEntry{Name: d.Name(), Aliases: d.Aliases(), Code: d.Code(), Element: d.Element(),
			BitsPerValue: d.BitsPerValue(), Note: d.Note()}
		if d.Codebook() != nil {
			e.Index = d.Elem().Name()
		}
		if s := d.Spec(); s != nil {
			e.Scale = s.String()
		}
		entries[i] = e
	}
	if *asJSON {
		js, err := json.MarshalIndent(entries, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", js)
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tALIASES\tCODE\tBITS/VALUE\tNOTE")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%s\n", e.Name, strings.Join(e.Aliases, ","), e.Code, e.BitsPerValue, e.Note)
	}
	return tw.Flush()
}
