package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tensorcast-go/tensorcast/checkpoint/castdir"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/sparsity"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

const inspectUsage = "tcast inspect [-json] [-stats=false] CHECKPOINT|CASTDIR\n" +
	"       tcast inspect -mask NAME [-mask-rows N] [-mask-cols N] CHECKPOINT|CASTDIR\n\n" +
	"CHECKPOINT is a .safetensors file, a model.safetensors.index.json, a .gguf file, or a directory\n" +
	"holding one, in any layout tcast reads (tcast, compressed-tensors, gpt-oss, modelopt, fp8-block,\n" +
	"gguf or plain float; detected from the files), or a directory written by tcast cast.\n" +
	"Prints each tensor's name, dtype, shape and bytes; for float tensors (F64, F32, F16, BF16, F8_*)\n" +
	"the min, max, mean and std of the finite values, the fraction of zeros and the NaN and Inf counts;\n" +
	"for the stored parts of quantized weights the weight, datatype and part they hold\n" +
	"(and a mask's density: the fraction of kept elements), with the statistics of each dequantized\n" +
	"weight; then totals. Statistics are computed by default; -stats=false reads the headers only.\n" +
	"-mask NAME draws the keep mask of weight NAME (an N:M sparse or masked weight) as text: one\n" +
	"character per element, or per block of them showing the fraction kept."

func runInspect(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("inspect", flag.ContinueOnError)
	asJSON := fset.Bool("json", false, "print the report as JSON")
	withStats := fset.Bool("stats", true, "compute value statistics (reads every tensor); false reads the headers only")
	maskOf := fset.String("mask", "", "draw the mask of weight `NAME` (a sparse or masked weight) as text instead of the report; in a cast directory, its one weight")
	maxRows := fset.Int("mask-rows", 32, "at most `N` lines in the -mask picture")
	maxCols := fset.Int("mask-cols", 64, "at most `N` characters per line in the -mask picture")
	pos, err := parseArgs(fset, inspectUsage, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one checkpoint (a .safetensors, index or .gguf file, or a directory) or cast directory; got %s", count(len(pos), "argument"))
	}
	path := pos[0]
	if *maskOf != "" {
		return printMask(stdout, path, *maskOf, sparsity.PictureOptions{MaxRows: *maxRows, MaxCols: *maxCols})
	}
	var rep *load.Report
	if castdir.Is(path) {
		d, err := castdir.Open(path)
		if err != nil {
			return err
		}
		if rep, err = load.InspectCastDir(d, load.InspectOptions{Stats: *withStats}); err != nil {
			return err
		}
	} else {
		c, err := load.Open(path)
		if err != nil {
			return err
		}
		defer c.Close()
		if rep, err = load.Inspect(c, load.InspectOptions{Stats: *withStats}); err != nil {
			return err
		}
	}
	if *asJSON {
		js, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(js, '\n'))
		return err
	}
	return printInspect(stdout, rep)
}

// printMask draws the mask of weight name of the checkpoint or cast
// directory at path.
func printMask(w io.Writer, path, name string, o sparsity.PictureOptions) error {
	var t *tc.Tensor
	if castdir.Is(path) {
		d, err := castdir.Open(path)
		if err != nil {
			return err
		}
		if t, err = d.Tensor(); err != nil {
			return err
		}
		name = d.Name()
	} else {
		c, err := load.Open(path)
		if err != nil {
			return err
		}
		defer c.Close()
		if t, err = c.Tensor(name); errors.Is(err, load.ErrNotFound) {
			return fmt.Errorf("%w; tcast inspect %s lists its weights", err, path)
		} else if err != nil {
			return err
		}
	}
	if t.Mask == nil {
		return fmt.Errorf("%s: weight %s has no mask; -mask draws the keep mask of an N:M sparse or masked weight (tcast inspect %s lists each weight's datatype)", path, name, path)
	}
	_, err := fmt.Fprintf(w, "%s: %s", name, sparsity.Picture(t.Mask, o))
	return err
}

// printInspect prints the report as tables, without trailing blanks.
func printInspect(w io.Writer, rep *load.Report) error {
	var buf bytes.Buffer
	if err := printInspectTo(&buf, rep); err != nil {
		return err
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(strings.TrimSuffix(l, "\n"), " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

func printInspectTo(w io.Writer, rep *load.Report) error {
	head := rep.File
	if len(rep.Shards) > 0 {
		head += fmt.Sprintf(" (%d shards)", len(rep.Shards))
	}
	keys := slices.Sorted(maps.Keys(rep.Metadata))
	vals := make([]string, len(keys))
	inline := "; metadata: "
	for i, k := range keys {
		v := rep.Metadata[k]
		if r := []rune(v); len(r) > 100 {
			v = string(r[:97]) + "..."
		}
		if typ, ok := rep.MetadataTypes[k]; !ok || typ == "string" {
			v = strconv.Quote(v)
		}
		vals[i] = v
		if i > 0 {
			inline += ", "
		}
		inline += k + "=" + v
	}
	// A few short key/values go on the first line, more one a line (with
	// the GGUF type of each scalar).
	if len(keys) > 0 && len(keys) <= 4 && len(inline) <= 120 {
		head += inline
		keys = nil
	}
	if _, err := fmt.Fprintln(w, head); err != nil {
		return err
	}
	if rep.ScaleSearch {
		fmt.Fprintln(w, "scale search: each block's scale was chosen among candidates around its datatype's rule (convert -scale-search)")
	}
	if len(keys) > 0 {
		fmt.Fprintln(w, "metadata:")
		mw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for i, k := range keys {
			typ := rep.MetadataTypes[k]
			if typ != "" && !strings.HasPrefix(typ, "[") {
				k += " (" + typ + ")"
			}
			fmt.Fprintf(mw, "  %s\t%s\n", k, vals[i])
		}
		if err := mw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "name\tdtype\tshape\tbytes\tmin\tmax\tmean\tstd\tzeros\tnan\tinf\tnote")
	for _, t := range rep.Tensors {
		var note []string
		if p := t.PartOf; p != nil {
			note = append(note, fmt.Sprintf("weight %s: datatype %s, part %s", p.Weight, p.DataType, p.Part))
		}
		if t.Density != nil {
			note = append(note, fmt.Sprintf("density %.4f", *t.Density))
		}
		if t.Shard != "" {
			note = append(note, "in "+t.Shard)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", t.Name, t.DType, shapeString(t.Shape), t.Bytes, statsCells(t.Stats), strings.Join(note, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Converted) > 0 {
		fmt.Fprintln(w, "\nconverted weights (statistics of the dequantized values):")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "name\tdatatype\tshape\tbits/value\tmin\tmax\tmean\tstd\tzeros\tnan\tinf\tnote")
		for _, c := range rep.Converted {
			note := "code " + c.Code
			if c.Rotation != "" {
				note += "; rotated " + c.Rotation + " (undone when read)"
			}
			if c.Density != nil {
				note += fmt.Sprintf("; mask density %.4f", *c.Density)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%s\t%s\n", c.Name, c.DataType, shapeString(c.Shape), c.BitsPerValue, statsCells(c.Stats), note)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	tt := rep.Totals
	_, err := fmt.Fprintf(w, "\ntotal: %d tensors, %d bytes of data (%d with headers), %d parameters; converted weights: %d\n",
		tt.Tensors, tt.Bytes, tt.FileBytes, tt.Parameters, tt.Converted)
	return err
}

func shapeString(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// statsCells formats min, max, mean, std, zeros, nan and inf as tab-separated cells.
func statsCells(s *load.Stats) string {
	if s == nil {
		return "-\t-\t-\t-\t-\t-\t-"
	}
	num := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatFloat(*p, 'g', 4, 64)
	}
	return strings.Join([]string{num(s.Min), num(s.Max), num(s.Mean), num(s.Std),
		strconv.FormatFloat(s.Zeros, 'g', 4, 64), strconv.FormatInt(s.NaN, 10), strconv.FormatInt(s.Inf, 10)}, "\t")
}
