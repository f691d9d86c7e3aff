package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/report"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

const reportUsage = "tcast report -o REPORT.html [-title TITLE] [-label NAMES] [-imatrix FILE] [-histograms N] [-worst N] [-masks N] [-force]\n" +
	"             ORIG CONVERTED...\n\n" +
	"Compares each CONVERTED checkpoint (a recipe: any layout tcast reads, GGUF included) with its source\n" +
	"ORIG, tensor by tensor as tcast verify does, and writes one self-contained HTML page (inline CSS and\n" +
	"SVG, no script, opens offline): what each recipe did (datatype, scale search, rotation, as its\n" +
	"metadata records them); per layer, the SQNR and bits per value of each recipe; the worst\n" +
	"tensors first; for a recipe with -rotate, each rotated tensor's SQNR without and with the rotation\n" +
	"(the one without as convert recorded it); a histogram of the relative error of the worst tensors under every recipe; the keep\n" +
	"mask of sparse weights as a density picture. tcast convert -report FILE writes the same page for\n" +
	"the conversion it makes. With -imatrix, each converted tensor's SQNR weighted by the importance\n" +
	"matrix is shown too, per tensor and per recipe."

func runReport(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fset.String("o", "", "write the page to `REPORT.html`")
	title := fset.String("title", "", "the page's `TITLE` (default: tcast report: ORIG's file name)")
	labels := fset.String("label", "", "comma-separated `NAMES` of the recipes, one per CONVERTED (default: their file names)")
	hists := fset.Int("histograms", 0, "draw the relative error histograms of the `N` worst tensors (0: 6, negative: none)")
	worst := fset.Int("worst", 0, "list the `N` worst tensors (0: 20, negative: none)")
	masks := fset.Int("masks", 0, "draw the keep masks of at most `N` sparse weights (0: 8, negative: none)")
	force := fset.Bool("force", false, "replace an existing FILE")
	imPath := fset.String("imatrix", "", "also show each converted tensor's SQNR weighted by llama.cpp's importance matrix `FILE` (GGUF, .dat or .npz), found as tcast verify -imatrix finds it")
	pos, err := parseArgs(fset, reportUsage, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("want ORIG and at least one CONVERTED checkpoint, got %s", count(len(pos), "argument"))
	}
	if *out == "" {
		return usagef("-o is required")
	}
	o := report.Options{Title: *title, Histograms: *hists, Worst: *worst, Masks: *masks}
	if *imPath != "" {
		if o.Imatrix, err = imatrix.Read(*imPath); err != nil {
			return usagef("-imatrix: %v", err)
		}
	}
	if o.Labels, err = recipeLabels(*labels, len(pos)-1); err != nil {
		return err
	}
	if err := checkReportOutput(*out, *force, pos...); err != nil {
		return err
	}
	if err := writeReport(*out, *force, pos[0], pos[1:], o, stderr); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s compared with %s\n", *out, count(len(pos)-1, "recipe"), pos[0])
	return nil
}

// recipeLabels splits -label's comma-separated names, one per converted
// checkpoint (nil for none given).
func recipeLabels(labels string, converted int) ([]string, error) {
	if labels == "" {
		return nil, nil
	}
	names := strings.Split(labels, ",")
	if len(names) != converted {
		return nil, usagef("-label gives %s for %s", count(len(names), "name"), count(converted, "converted checkpoint"))
	}
	return names, nil
}

// checkReportOutput refuses, before any work, a report path that is or is
// inside one of the checkpoints (or their files), that is a directory, or
// that exists without force.
func checkReportOutput(path string, force bool, checkpoints ...string) error {
	var inputs []string
	for _, c := range checkpoints {
		inputs = append(inputs, checkpointInputs(c)...)
	}
	if err := atomicfile.CheckOutput(path, inputs...); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("report %s: is a directory, and the report is one HTML file: name the file, e.g. %s", path, filepath.Join(path, "report.html"))
	case !isHTMLName(path):
		return usagef("report %s: the report is an HTML page: name a .html file, e.g. %s", path,
			strings.TrimSuffix(path, filepath.Ext(path))+".html")
	case err == nil && !force:
		return atomicfile.Exists(path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return nil
}

// isHTMLName reports whether path ends in .html or .htm.
func isHTMLName(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".html" || ext == ".htm"
}

// writeReport builds the report of converted against orig and writes its
// page to path, with its warnings to stderr (nil: none).
func writeReport(path string, force bool, orig string, converted []string, o report.Options, stderr io.Writer) error {
	r, err := report.Build(orig, converted, o)
	if err != nil {
		return explainVerify(err)
	}
	for _, rec := range r.Recipes {
		if stderr != nil {
			warnUnmatched(stderr, "report", rec.Unmatched)
		}
	}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		return err
	}
	return writeFile(path, b.Bytes(), force, append([]string{orig}, converted...)...)
}
