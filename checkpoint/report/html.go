package report

import (
	"bufio"
	_ "embed"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The page is page.html.tmpl, rendered by html/template from a view of the
// report that holds what the page shows, formatted: the numbers as the page
// prints them, the charts' geometry in pixels. The template escapes every
// text; the page's CSS is part of the template.

//go:embed page.html.tmpl
var pageText string

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"breaks": nameBreaks,
}).Parse(pageText))

// WriteHTML writes the report as one self-contained HTML page.
func (r *Report) WriteHTML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if err := pageTemplate.Execute(bw, r.view()); err != nil {
		return err
	}
	return bw.Flush()
}

// view is what the page shows.
type view struct {
	Title, Source string
	Recipes       []recipeRow
	Rotated       bool   // some recipe rotated weights
	Unrecorded    bool   // some rotated recipe does not record its SQNR without rotation
	Searched      bool   // some recipe searched its scales
	Imatrix       string // the importance matrix's file name, "" without one
	Layers        *layersView
	Worst         *worstView
	Rotations     *rotationsView
	Histograms    *histogramsView
	Masks         []maskView
}

// view returns the page's view of the report.
func (r *Report) view() *view {
	v := &view{Title: r.Title, Source: r.Source, Rotated: r.rotated(), Layers: r.layers(),
		Worst: r.worst(), Rotations: r.rotations(), Histograms: r.histograms(), Masks: r.masks()}
	if im := r.Options.Imatrix; im != nil {
		v.Imatrix = filepath.Base(im.Path)
	}
	for i := range r.Recipes {
		row := r.recipeRow(i)
		v.Searched = v.Searched || r.Recipes[i].ScaleSearch
		v.Unrecorded = v.Unrecorded || row.Without == "not recorded"
		v.Recipes = append(v.Recipes, row)
	}
	return v
}

// palette colours the recipes, in order (then again).
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"}

func colour(i int) string { return palette[i%len(palette)] }

// nameBreaks splits a tensor name or a path after each dot and slash: the
// page allows a line break between the parts, so that a long name wraps
// between its parts rather than inside them.
func nameBreaks(s string) []string {
	var parts []string
	for {
		i := strings.IndexAny(s, "./")
		if i < 0 {
			return append(parts, s)
		}
		parts, s = append(parts, s[:i+1]), s[i+1:]
	}
}

// num formats a coordinate or value with at most d decimals, no trailing
// zeros.
func num(v float64, d int) string {
	s := strconv.FormatFloat(v, 'f', d, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// dB formats a tensor's SQNR: "exact" for none, "lost" for −Inf (finite
// values became NaN or Inf).
func dB(p *float64) string {
	switch {
	case p == nil:
		return "exact"
	case math.IsInf(*p, -1): // finite values lost to NaN or Inf: the error is not finite
		return "lost"
	}
	return num(*p, 2)
}

// mean formats a recipe's mean SQNR, "-" for none.
func mean(db *float64) string {
	if db == nil {
		return "-"
	}
	return num(*db, 2)
}

// signed formats a difference in dB with its sign. It is template.HTML
// only so that the page keeps its plain '+' (html/template writes it
// &#43;): digits, a sign and a point hold nothing to escape.
func signed(v float64) template.HTML {
	s := num(v, 2)
	if s != "0" && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return template.HTML(s)
}

// gainOf formats with − without, signed, "-" when either is missing.
func gainOf(with, without *float64) template.HTML {
	if with == nil || without == nil {
		return "-"
	}
	return signed(*with - *without)
}

func shapeString(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(parts, "×") + "]"
}

// rotated reports whether any recipe rotated weights.
func (r *Report) rotated() bool {
	return slices.ContainsFunc(r.Recipes, func(rec Recipe) bool { return rec.Rotation != "" })
}
