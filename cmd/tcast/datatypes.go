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

// commonDataTypes are the datatypes tcast datatypes lists without -all,
// by the names people use for them.
var commonDataTypes = []string{"mxfp4", "mxfp6", "mxfp8", "mxint8", "nvfp4", "int4_g32", "int4_g128",
	"uint4_g128", "int8_channel", "fp8e4_tensor", "fp8e4_channel", "fp8e4_block128", "nf4", "mxfi4",
	"bfloat16", "float16"}

func runDatatypes(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("datatypes", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the datatypes as JSON (all of them, or the named ones)")
	all := fs.Bool("all", false, "list every registered datatype, not only the common ones")
	pos, err := parseArgs(fs, "tcast datatypes [-all] [-json] [NAME...]\n\n"+
		"Lists the common datatypes (with -all or -json every registered one), or the named ones (a name,\n"+
		"alias or code such as e2m1_e8m0_t32). BITS/VALUE leaves out per-tensor and per-channel scales,\n"+
		"whose cost depends on the shape.", args, stdout)
	if err != nil {
		return err
	}
	dts := tc.Registered()
	short := len(pos) == 0 && !*all && !*asJSON
	if short {
		pos = commonDataTypes
	}
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
		if short {
			e = shortEntry(d, e)
		}
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
	if err := tw.Flush(); err != nil || !short {
		return err
	}
	_, err = fmt.Fprintf(stdout, "\n%d common datatypes of %d: tcast datatypes -all lists every one, "+
		"tcast datatypes NAME... the ones named\n", len(entries), len(tc.Registered()))
	return err
}

// shortEntry names e, the line of datatype d, as the short list asks for
// it (mxfp4 rather than mxfp4e2), with d's other names as its aliases and
// no note on a TensorCast name it does not show.
func shortEntry(d *tc.DataType, e datatypeEntry) datatypeEntry {
	shown := d.String()
	if shown == e.Name {
		return e
	}
	aliases := []string{e.Name}
	for _, a := range e.Aliases {
		if a != shown {
			aliases = append(aliases, a)
		}
	}
	e.Name, e.Aliases = shown, aliases
	if strings.Contains(e.Note, "TensorCast") {
		e.Note = ""
	}
	return e
}
