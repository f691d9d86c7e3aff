package report

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
)

// palette colours the recipes, in order (then again).
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"}

func colour(i int) string { return palette[i%len(palette)] }

// style is the page's CSS. It holds no '<' or '&', so that the page stays
// well-formed XML.
const style = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1000px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:14px;margin:14px 0 4px;font-family:ui-monospace,monospace;font-weight:normal}
p.note{color:#555;font-size:13px;margin:4px 0 10px}
table{border-collapse:collapse;font-size:13px}
th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:right}
th{background:#f6f6f6}
td.l,th.l{text-align:left}
td.name{font-family:ui-monospace,monospace;text-align:left;overflow-wrap:break-word}
td.l{white-space:nowrap}
td.bad{color:#b00}
span.key{display:inline-block;width:12px;height:12px;margin-right:6px;vertical-align:-1px}
span.dash{display:inline-block;width:18px;height:0;border-top:2px dashed;margin-right:6px;vertical-align:3px}
svg{display:block;margin:6px 0 14px}
svg text{font-size:11px;fill:#333}
.grid{stroke:#e4e4e4;stroke-width:1}
.axis{stroke:#888;stroke-width:1}
div.masks{display:flex;flex-wrap:wrap;gap:8px 24px}
`

// WriteHTML writes the report as one self-contained HTML page.
func (r *Report) WriteHTML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := &page{w: bw}
	p.printf("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
	p.printf("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
	p.printf("<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", esc(r.Title), style)
	p.printf("<h1>%s</h1>\n<p class=\"note\">source %s</p>\n", esc(r.Title), esc(r.Source))
	r.summary(p)
	r.layers(p)
	r.worst(p)
	r.rotations(p)
	r.histograms(p)
	r.masks(p)
	p.printf("</body>\n</html>\n")
	if p.err != nil {
		return p.err
	}
	return bw.Flush()
}

// page writes HTML and keeps the first error.
type page struct {
	w   io.Writer
	err error
}

func (p *page) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func esc(s string) string { return html.EscapeString(s) }

// nameCell escapes a tensor name or a path for a name cell, with a line
// break allowed after each dot and slash, so that a long name wraps between
// its parts rather than inside them.
func nameCell(s string) string {
	return nameBreaks.Replace(esc(s))
}

var nameBreaks = strings.NewReplacer(".", ".<wbr/>", "/", "/<wbr/>")

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

// summary is the table of recipes.
func (r *Report) summary(p *page) {
	extra := ""
	rotated := r.rotated()
	if rotated {
		extra = "<th>SQNR dB without rotation</th><th>rotation gain dB</th>"
	}
	if r.Options.Imatrix != nil {
		extra += "<th>weighted SQNR dB</th>"
	}
	p.printf("<h2>Recipes</h2>\n<table>\n<tr><th class=\"l\">recipe</th><th class=\"l\">datatype; scales; rotation</th><th class=\"l\">layout</th><th class=\"l\">checkpoint</th><th>tensors converted</th><th>bits/value</th><th>SQNR dB</th>%s</tr>\n", extra)
	searched, unrecorded := false, false
	for i, rec := range r.Recipes {
		n := 0
		for _, t := range rec.Tensors {
			if t.Converted {
				n++
			}
		}
		searched = searched || rec.ScaleSearch
		p.printf("<tr><td class=\"l\"><span class=\"key\" style=\"background:%s\"></span>%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"name\">%s</td><td>%d of %d</td><td>%s</td><td>%s</td>",
			colour(i), esc(rec.Label), esc(rec.Describe()), esc(rec.Layout), nameCell(rec.Path), n, len(rec.Tensors), num(rec.Bits, 3), mean(rec.SQNR))
		if rotated {
			switch {
			case rec.Rotation == "":
				p.printf("<td>-</td><td>-</td>")
			case !rec.HasUnrotated:
				unrecorded = true
				p.printf("<td>not recorded</td><td>-</td>")
			default:
				p.printf("<td>%s</td><td>%s</td>", mean(rec.SQNRUnrotated), gainOf(rec.SQNR, rec.SQNRUnrotated))
			}
		}
		if r.Options.Imatrix != nil {
			p.printf("<td>%s</td>", mean(rec.WeightedSQNR))
		}
		p.printf("</tr>\n")
	}
	p.printf("</table>\n<p class=\"note\">bits/value counts every stored byte of a converted weight (values, scales, masks); SQNR is 10·log10(signal/error power); both are means over the converted tensors weighted by their numbers of elements.</p>\n")
	if searched {
		p.printf("<p class=\"note\">scale search: the checkpoint records (tcast.scale_search) that each block's scale was searched among the candidates around the datatype's rule, for the lowest squared error; the scales decode as any others.</p>\n")
	}
	if r.Options.Imatrix != nil {
		p.printf("<p class=\"note\">weighted SQNR weighs each element's signal and error by its column's importance in %s; a dash where the matrix has no entry for the tensor.</p>\n", esc(filepath.Base(r.Options.Imatrix.Path)))
	}
	if rotated {
		p.printf("<p class=\"note\">rotated: the weights were multiplied by a normalised Walsh–Hadamard block (hadamard:BLOCK, along their rows) before the cast (tcast.rotated); the SQNR is measured after the rotation is undone. SQNR without rotation is what the same cast gives the rotated weights unrotated, as the conversion measured and recorded it (the other converted tensors count with their SQNR), and the gain is the difference.")
		if unrecorded {
			p.printf(" A checkpoint converted before tcast recorded it shows “not recorded”: compare with a recipe converted without -rotate.")
		}
		p.printf("</p>\n")
	}
}

// rotated reports whether any recipe rotated weights.
func (r *Report) rotated() bool {
	return slices.ContainsFunc(r.Recipes, func(rec Recipe) bool { return rec.Rotation != "" })
}

// gainOf formats with − without, signed, "-" when either is missing.
func gainOf(with, without *float64) string {
	if with == nil || without == nil {
		return "-"
	}
	return signed(*with - *without)
}

// signed formats a difference in dB with its sign.
func signed(v float64) string {
	s := num(v, 2)
	if s != "0" && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// mean formats a recipe's mean SQNR, "-" for none.
func mean(db *float64) string {
	if db == nil {
		return "-"
	}
	return num(*db, 2)
}

// layerStats returns the layer labels (numbers, then "other" for the
// tensors in none) and, per recipe, the mean SQNR and bits per value of its
// converted tensors in each (NaN where it has none), and the mean SQNR
// they give without rotation (Tensor.Unrotated; nil for a recipe that
// rotated nothing or does not record it).
func (r *Report) layerStats() (labels []string, sqnr, bits, unrot [][]float64) {
	var layers []int
	for _, rec := range r.Recipes {
		for _, t := range rec.Tensors {
			if t.Converted && !slices.Contains(layers, t.Layer) {
				layers = append(layers, t.Layer)
			}
		}
	}
	// Numbered layers in order, then the tensors of no layer.
	slices.SortFunc(layers, func(a, b int) int {
		if (a < 0) != (b < 0) {
			return cmp.Compare(b, a)
		}
		return cmp.Compare(a, b)
	})
	for _, l := range layers {
		if l < 0 {
			labels = append(labels, "other")
		} else {
			labels = append(labels, strconv.Itoa(l))
		}
	}
	for _, rec := range r.Recipes {
		sq, bt, un := make([]float64, len(layers)), make([]float64, len(layers)), make([]float64, len(layers))
		for i, l := range layers {
			var s, sn, b, bn, u, unn float64
			for _, t := range rec.Tensors {
				if !t.Converted || t.Layer != l {
					continue
				}
				n := float64(measure.Elements(t.Shape))
				b, bn = b+t.Bits*n, bn+n
				if t.SQNR != nil && t.Lost == 0 { // a tensor that lost values has no finite SQNR
					s, sn = s+*t.SQNR*n, sn+n
				}
				if v, _ := t.Unrotated(); v != nil {
					u, unn = u+*v*n, unn+n
				}
			}
			sq[i], bt[i], un[i] = math.NaN(), math.NaN(), math.NaN()
			if sn > 0 {
				sq[i] = s / sn
			}
			if bn > 0 {
				bt[i] = b / bn
			}
			if unn > 0 {
				un[i] = u / unn
			}
		}
		if !rec.HasUnrotated {
			un = nil
		}
		sqnr, bits, unrot = append(sqnr, sq), append(bits, bt), append(unrot, un)
	}
	return labels, sqnr, bits, unrot
}

// layers draws the per-layer charts.
func (r *Report) layers(p *page) {
	labels, sqnr, bits, unrot := r.layerStats()
	if len(labels) == 0 {
		return
	}
	withUnrot := slices.ContainsFunc(unrot, func(u []float64) bool { return u != nil })
	p.printf("<h2>Per layer</h2>\n<p class=\"note\">Mean over each layer's converted tensors (layer: the first number in a tensor's name), one line per recipe.")
	if withUnrot {
		p.printf(" A short-dashed line with open dots gives the SQNR of a rotated recipe without the rotation.")
	}
	p.printf("</p>\n")
	r.legend(p, unrot)
	var sl, bl []line
	for i := range r.Recipes {
		dash := dashes(i, len(r.Recipes))
		sl = append(sl, line{v: sqnr[i], colour: colour(i), dash: dash})
		bl = append(bl, line{v: bits[i], colour: colour(i), dash: dash})
	}
	for i, u := range unrot {
		if u != nil {
			sl = append(sl, line{v: u, colour: colour(i), dash: unrotDash, thin: true, hollow: true, what: "without rotation"})
		}
	}
	lineChart(p, "sqnr", "SQNR (dB)", "layer", labels, sl)
	lineChart(p, "bits", "bits per value", "layer", labels, bl)
}

// unrotDash is the dash pattern of a recipe's line without rotation.
const unrotDash = " stroke-dasharray=\"3 3\""

// line is a series of a line chart.
type line struct {
	v      []float64 // NaN: no point
	colour string
	dash   string // stroke-dasharray attributes, "" for solid
	thin   bool   // 1.5 wide, not 2
	hollow bool   // dots with a white fill
	what   string // said after the value in a dot's title
}

// dashLen is the length of a dash of a line chart's dashed lines.
const dashLen = 6

// dashes returns the dash attributes of line i of n: the first is solid,
// line i > 0 draws one dash in every n, in its own slot i−1, so that lines
// that coincide (the same datatype with and without the scale search has
// the same bits per value) show each colour in turn, the first's in the
// last slot.
func dashes(i, n int) string {
	if i == 0 {
		return ""
	}
	period := dashLen * n
	return fmt.Sprintf(" stroke-dasharray=\"%d %d\" stroke-dashoffset=\"%d\"", dashLen, period-dashLen, (period-dashLen*(i-1))%period)
}

// legend lists the recipes with their colours, and the lines without
// rotation of those whose unrot is not nil.
func (r *Report) legend(p *page, unrot [][]float64) {
	p.printf("<p class=\"note\">")
	for i, rec := range r.Recipes {
		p.printf("<span class=\"key\" style=\"background:%s\"></span>%s (%s)&#160;&#160; ", colour(i), esc(rec.Label), esc(rec.Describe()))
	}
	for i, u := range unrot {
		if u != nil {
			p.printf("<span class=\"dash\" style=\"border-color:%s\"></span>%s without rotation&#160;&#160; ", colour(i), esc(r.Recipes[i].Label))
		}
	}
	p.printf("</p>\n")
}

// Chart geometry.
const (
	chartW, chartH                     = 900, 260
	padL, padR, padT, padB             = 60, 16, 12, 40
	plotW, plotH                       = chartW - padL - padR, chartH - padT - padB
	histW, histH                       = 900, 220
	maskW, maskH                       = 440, 220
	maskCellMax                        = 12
	bgColour, maskEmpty, maskFullColor = "#ffffff", "#f2f2f2", "#08306b"
)

// niceTicks returns round tick values covering [lo, hi]: steps of 1, 2 or
// 5 times a power of ten, about five of them.
func niceTicks(lo, hi float64) []float64 {
	if hi <= lo {
		d := math.Max(math.Abs(lo)*0.1, 1)
		lo, hi = lo-d, hi+d
	}
	// step = m·10^e; ticks are k·m·10^e, computed from integers so that
	// they are the nearest float64 to the decimal (0.15, not
	// 0.15000000000000002).
	raw := (hi - lo) / 5
	e := int(math.Floor(math.Log10(raw)))
	m := 10
	for _, c := range []int{1, 2, 5} {
		if float64(c)*math.Pow(10, float64(e)) >= raw {
			m = c
			break
		}
	}
	at := func(k int) float64 {
		if e < 0 {
			return float64(k*m) / math.Pow(10, float64(-e))
		}
		return float64(k*m) * math.Pow(10, float64(e))
	}
	step := at(1)
	k := int(math.Floor(lo / step))
	var ticks []float64
	for ; at(k) <= hi; k++ {
		ticks = append(ticks, at(k))
	}
	if ticks[len(ticks)-1] < hi {
		ticks = append(ticks, at(k))
	}
	return ticks
}

// decimals returns the decimals that tell ticks step apart.
func decimals(step float64) int {
	return max(0, int(-math.Floor(math.Log10(step)+1e-9)))
}

// lineChart draws one line per series over categories.
func lineChart(p *page, id, yLabel, xLabel string, cats []string, series []line) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, v := range s.v {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 0) {
		return
	}
	ticks := niceTicks(lo, hi)
	y0, y1 := ticks[0], ticks[len(ticks)-1]
	yAt := func(v float64) float64 { return padT + plotH*(1-(v-y0)/(y1-y0)) }
	xAt := func(i int) float64 { return padL + plotW*(float64(i)+0.5)/float64(len(cats)) }
	p.printf("<svg id=\"%s\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s by %s\">\n",
		id, chartW, chartH, chartW, chartH, esc(yLabel), xLabel)
	p.printf("<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", chartW, chartH, bgColour)
	dec := 0
	if len(ticks) > 1 {
		dec = decimals(ticks[1] - ticks[0])
	}
	for _, t := range ticks {
		y := num(yAt(t), 1)
		p.printf("<line class=\"grid\" x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\"/><text x=\"%d\" y=\"%s\" text-anchor=\"end\" dominant-baseline=\"middle\">%s</text>\n",
			padL, y, padL+plotW, y, padL-6, y, num(t, dec))
	}
	p.printf("<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", padL, padT+plotH, padL+plotW, padT+plotH)
	// At most about 30 category labels.
	every := (len(cats) + 29) / 30
	for i, c := range cats {
		if i%every == 0 || c == "other" {
			p.printf("<text x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", num(xAt(i), 1), padT+plotH+14, esc(c))
		}
	}
	p.printf("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", padL+plotW/2, chartH-6, esc(xLabel))
	p.printf("<text x=\"14\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 14 %d)\">%s</text>\n", padT+plotH/2, padT+plotH/2, esc(yLabel))
	for _, s := range series {
		c := s.colour
		width, dot, what := "2", "fill=\""+c+"\"", ""
		if s.thin {
			width = "1.5"
		}
		if s.hollow {
			dot = "fill=\"" + bgColour + "\" stroke=\"" + c + "\" stroke-width=\"1.5\""
		}
		if s.what != "" {
			what = " " + esc(s.what)
		}
		// Runs of consecutive points are lines; every point is a dot.
		var run []string
		flush := func() {
			if len(run) > 1 {
				p.printf("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"%s\"/>\n", c, width, s.dash, strings.Join(run, " "))
			}
			run = run[:0]
		}
		for i, v := range s.v {
			if math.IsNaN(v) {
				flush()
				continue
			}
			run = append(run, num(xAt(i), 1)+","+num(yAt(v), 1))
		}
		flush()
		for i, v := range s.v {
			if !math.IsNaN(v) {
				p.printf("<circle cx=\"%s\" cy=\"%s\" r=\"3.5\" %s><title>%s %s: %s%s</title></circle>\n",
					num(xAt(i), 1), num(yAt(v), 1), dot, esc(xLabel), esc(cats[i]), num(v, 3), what)
			}
		}
	}
	p.printf("</svg>\n")
}

// ranked is one converted tensor of one recipe.
type ranked struct {
	recipe int
	t      *Tensor
}

// rank returns the converted tensors of every recipe, worst first: values
// lost to NaN/Inf, then by SQNR (exact last), then by name and recipe.
func (r *Report) rank() []ranked {
	var out []ranked
	for i := range r.Recipes {
		for j := range r.Recipes[i].Tensors {
			if t := &r.Recipes[i].Tensors[j]; t.Converted {
				out = append(out, ranked{i, t})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b ranked) int {
		if c := cmp.Compare(b.t.Lost, a.t.Lost); c != 0 {
			return c
		}
		switch {
		case a.t.SQNR == nil && b.t.SQNR != nil:
			return 1
		case a.t.SQNR != nil && b.t.SQNR == nil:
			return -1
		case a.t.SQNR != nil:
			if c := cmp.Compare(*a.t.SQNR, *b.t.SQNR); c != 0 {
				return c
			}
		}
		if c := strings.Compare(a.t.Name, b.t.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.recipe, b.recipe)
	})
	return out
}

// worst draws the table of the worst tensors.
func (r *Report) worst(p *page) {
	n := r.Options.worst()
	rs := r.rank()
	if n == 0 || len(rs) == 0 {
		return
	}
	extra := ""
	rotated := r.rotated()
	if rotated {
		extra = "<th>without rotation (gain)</th>"
	}
	if r.Options.Imatrix != nil {
		extra += "<th>weighted SQNR dB</th>"
	}
	p.printf("<h2>Worst tensors</h2>\n<table>\n<tr><th>#</th><th class=\"l\">tensor</th><th class=\"l\">recipe</th><th class=\"l\">datatype</th><th class=\"l\">shape</th><th>bits/value</th><th>SQNR dB</th>%s<th>max abs err</th><th>lost</th></tr>\n", extra)
	for i, x := range rs[:min(n, len(rs))] {
		t := x.t
		bad := ""
		if t.Lost > 0 {
			bad = " class=\"bad\""
		}
		dt := t.DataType
		if t.Rotation != "" {
			dt += ", rotated " + t.Rotation
		}
		p.printf("<tr><td>%d</td><td class=\"name\">%s</td><td class=\"l\"><span class=\"key\" style=\"background:%s\"></span>%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%s</td><td>%s</td>",
			i+1, nameCell(t.Name), colour(x.recipe), esc(r.Recipes[x.recipe].Label), esc(dt), shapeString(t.Shape),
			num(t.Bits, 3), dB(t.SQNR))
		if rotated {
			switch {
			case t.Rotation == "":
				p.printf("<td>-</td>")
			case !t.HasUnrotated:
				p.printf("<td>not recorded</td>")
			default:
				g := ""
				if v, ok := t.Gain(); ok {
					g = " (" + signed(v) + ")"
				}
				p.printf("<td>%s%s</td>", dB(t.SQNRUnrotated), g)
			}
		}
		if r.Options.Imatrix != nil {
			p.printf("<td>%s</td>", mean(t.WeightedSQNR))
		}
		p.printf("<td>%s</td><td%s>%d</td></tr>\n", strconv.FormatFloat(t.MaxAbsErr, 'g', 4, 64), bad, t.Lost)
	}
	p.printf("</table>\n")
	if len(rs) > n {
		p.printf("<p class=\"note\">%d more converted tensors not shown.</p>\n", len(rs)-n)
	}
}

// rotations draws, for each recipe that rotated weights, a row per rotated
// tensor in the source's order with its SQNR without and with the
// rotation.
func (r *Report) rotations(p *page) {
	n := r.Options.rotations()
	if n == 0 || !r.rotated() {
		return
	}
	p.printf("<h2>Rotation</h2>\n<p class=\"note\">Each rotated tensor's SQNR without the rotation (the same cast of the weight unrotated, as the conversion measured and recorded it) and with it (measured here, after the rotation is undone); the gain is the difference.</p>\n")
	p.printf("<table>\n<tr><th class=\"l\">tensor</th><th class=\"l\">recipe</th><th class=\"l\">datatype</th><th class=\"l\">rotation</th><th class=\"l\">shape</th><th>SQNR dB without rotation</th><th>SQNR dB with rotation</th><th>gain dB</th></tr>\n")
	shown, more := 0, 0
	for i, rec := range r.Recipes {
		for j := range rec.Tensors {
			t := &rec.Tensors[j]
			if t.Rotation == "" {
				continue
			}
			if shown == n {
				more++
				continue
			}
			shown++
			without, g := "not recorded", "-"
			if t.HasUnrotated {
				without = dB(t.SQNRUnrotated)
				if v, ok := t.Gain(); ok {
					g = signed(v)
				}
			}
			p.printf("<tr><td class=\"name\">%s</td><td class=\"l\"><span class=\"key\" style=\"background:%s\"></span>%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
				nameCell(t.Name), colour(i), esc(rec.Label), esc(t.DataType), esc(t.Rotation), shapeString(t.Shape), without, dB(t.SQNR), g)
		}
	}
	p.printf("</table>\n")
	if more > 0 {
		p.printf("<p class=\"note\">%d more rotated tensors not shown.</p>\n", more)
	}
}

func shapeString(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(parts, "×") + "]"
}

// histograms draws the relative error histograms of the worst tensors,
// each with one outline per recipe.
func (r *Report) histograms(p *page) {
	n := r.Options.histograms()
	var names []string
	for _, x := range r.rank() {
		if len(names) == n {
			break
		}
		if x.t.Errors != nil && !slices.Contains(names, x.t.Name) {
			names = append(names, x.t.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	p.printf("<h2>Relative error</h2>\n<p class=\"note\">Fraction of each tensor's elements by relative error |converted − source| / |source|, in binades (powers of 2); exact elements and those of a zero source are counted apart. The worst tensors first.</p>\n")
	r.legend(p, nil)
	for k, name := range names {
		var hs []*Histogram
		var idx []int
		for i := range r.Recipes {
			for j := range r.Recipes[i].Tensors {
				if t := &r.Recipes[i].Tensors[j]; t.Name == name && t.Errors != nil {
					hs, idx = append(hs, t.Errors), append(idx, i)
				}
			}
		}
		p.printf("<h3>%s</h3>\n", esc(name))
		histogram(p, fmt.Sprintf("hist%d", k), hs, idx)
		var notes []string
		for i, h := range hs {
			tot := float64(h.Total())
			if tot == 0 {
				continue
			}
			notes = append(notes, fmt.Sprintf("%s: %s%% exact, %s%% of a zero source",
				esc(r.Recipes[idx[i]].Label), num(100*float64(h.Exact)/tot, 2), num(100*float64(h.Undefined)/tot, 2)))
		}
		p.printf("<p class=\"note\">%s</p>\n", strings.Join(notes, "; "))
	}
}

// histRange returns the binades [lo, hi) the histograms draw: those that
// count any element, widened to at least 12 binades and one on either side
// where there is room.
func histRange(hs []*Histogram) (lo, hi int) {
	lo, hi = histBins, 0
	for _, h := range hs {
		for b, c := range h.Counts {
			if c > 0 {
				lo, hi = min(lo, b), max(hi, b+1)
			}
		}
	}
	if lo >= hi {
		return 0, histBins
	}
	lo, hi = max(lo-1, 0), min(hi+1, histBins)
	for hi-lo < 12 {
		if lo > 0 {
			lo--
		}
		if hi-lo < 12 && hi < histBins {
			hi++
		}
	}
	return lo, hi
}

// histogram draws histograms as step outlines over the same binades.
func histogram(p *page, id string, hs []*Histogram, recipes []int) {
	const pw, ph = histW - padL - padR, histH - padT - padB
	top := 0.0
	for _, h := range hs {
		tot := float64(h.Total())
		for _, c := range h.Counts {
			if tot > 0 {
				top = math.Max(top, float64(c)/tot)
			}
		}
	}
	if top == 0 {
		top = 1
	}
	ticks := niceTicks(0, top)
	yTop := ticks[len(ticks)-1]
	b0, b1 := histRange(hs)
	e0, e1 := float64(histMinExp+b0), float64(histMinExp+b1)
	xAt := func(e float64) float64 { return padL + pw*(e-e0)/(e1-e0) }
	yAt := func(f float64) float64 { return padT + ph*(1-f/yTop) }
	p.printf("<svg id=\"%s\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"relative error histogram\">\n",
		id, histW, histH, histW, histH)
	p.printf("<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", histW, histH, bgColour)
	dec := decimals((ticks[1] - ticks[0]) * 100)
	for _, t := range ticks {
		y := num(yAt(t), 1)
		p.printf("<line class=\"grid\" x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\"/><text x=\"%d\" y=\"%s\" text-anchor=\"end\" dominant-baseline=\"middle\">%s%%</text>\n",
			padL, y, padL+pw, y, padL-6, y, num(100*t, dec))
	}
	p.printf("<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", padL, padT+ph, padL+pw, padT+ph)
	// Ticks at the powers of ten in range: 10^k sits at binade k·log2(10).
	for k := -8; k <= 2; k++ {
		e := float64(k) * math.Log2(10)
		if e < e0 || e > e1 {
			continue
		}
		x := num(xAt(e), 1)
		p.printf("<line class=\"axis\" x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\"/><text x=\"%s\" y=\"%d\" text-anchor=\"middle\">1e%d</text>\n",
			x, padT+ph, x, padT+ph+4, x, padT+ph+16, k)
	}
	p.printf("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">relative error</text>\n", padL+pw/2, histH-6)
	for i, h := range hs {
		tot := float64(h.Total())
		if tot == 0 {
			continue
		}
		c := colour(recipes[i])
		pts := []string{num(xAt(e0), 1) + "," + num(yAt(0), 1)}
		for b := b0; b < b1; b++ {
			y := num(yAt(float64(h.Counts[b])/tot), 1)
			pts = append(pts, num(xAt(float64(histMinExp+b)), 1)+","+y, num(xAt(float64(histMinExp+b+1)), 1)+","+y)
		}
		pts = append(pts, num(xAt(e1), 1)+","+num(yAt(0), 1))
		p.printf("<polygon fill=\"%s\" fill-opacity=\"0.15\" stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"/>\n", c, c, strings.Join(pts, " "))
	}
	p.printf("</svg>\n")
}

// masks draws the keep masks of sparse weights: a cell per block of
// elements, darker the more it keeps.
func (r *Report) masks(p *page) {
	n := r.Options.masks()
	type pic struct {
		recipe int
		t      *Tensor
	}
	var pics []pic
	for i := range r.Recipes {
		for j := range r.Recipes[i].Tensors {
			if t := &r.Recipes[i].Tensors[j]; t.Mask != nil && len(pics) < n {
				pics = append(pics, pic{i, t})
			}
		}
	}
	if len(pics) == 0 {
		return
	}
	p.printf("<h2>Sparsity masks</h2>\n<p class=\"note\">Fraction of elements kept, per block of elements (rows: the leading axes; columns: the last axis); white none, dark blue all.</p>\n<div class=\"masks\">\n")
	for k, x := range pics {
		g := x.t.Mask
		p.printf("<div><h3>%s</h3><p class=\"note\">%s: %d of %d kept (density %s), %d×%d elements per cell</p>\n",
			esc(x.t.Name), esc(r.Recipes[x.recipe].Label), g.Kept, g.Len, num(float64(g.Kept)/math.Max(float64(g.Len), 1), 4), g.BlockRows, g.BlockCols)
		rows := len(g.Cells)
		cols := 0
		if rows > 0 {
			cols = len(g.Cells[0])
		}
		cell := maskCellMax
		if cols > 0 {
			cell = min(cell, maskW/cols)
		}
		if rows > 0 {
			cell = min(cell, maskH/rows)
		}
		cell = max(cell, 1)
		w, h := max(cols*cell, 1), max(rows*cell, 1)
		p.printf("<svg id=\"mask%d\" class=\"mask\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"keep mask\">\n",
			k, w, h, w, h)
		p.printf("<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", w, h, maskEmpty)
		for ri, line := range g.Cells {
			for ci, f := range line {
				if f > 0 {
					p.printf("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" fill-opacity=\"%s\"/>\n",
						ci*cell, ri*cell, cell, cell, maskFullColor, num(f, 3))
				}
			}
		}
		p.printf("</svg></div>\n")
	}
	p.printf("</div>\n")
}
