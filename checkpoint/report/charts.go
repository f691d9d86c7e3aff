package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
)

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

// frame is what every chart draws first: its SVG element, background,
// horizontal grid lines with their labels and the x axis.
type frame struct {
	ID, Label  string // the element's id and aria-label
	W, H       int
	Background string
	Ticks      []tick
	X0, X1     int // the plot's left and right edges
	TickX      int // where the tick labels end
	Bottom     int // the x axis
}

// tick is a horizontal grid line at Y, labelled.
type tick struct{ Y, Label string }

// newFrame returns the frame of a chart of w × h with the given ticks,
// placed by yAt and labelled by label.
func newFrame(id, label string, w, h int, ticks []float64, yAt func(float64) float64,
	tickLabel func(float64) string) frame {
	f := frame{ID: id, Label: label, W: w, H: h, Background: bgColour, X0: padL, X1: w - padR,
		TickX: padL - 6, Bottom: h - padB}
	for _, t := range ticks {
		f.Ticks = append(f.Ticks, tick{num(yAt(t), 1), tickLabel(t)})
	}
	return f
}

// layersView is the section of the per-layer charts.
type layersView struct {
	Unrotated bool // some recipe's line without rotation is drawn
	Legend    legendView
	SQNR      *lineChart
	Bits      *lineChart
}

// layers returns the per-layer charts, nil when no tensor was converted.
func (r *Report) layers() *layersView {
	labels, sqnr, bits, unrot := r.layerStats()
	if len(labels) == 0 {
		return nil
	}
	v := &layersView{Unrotated: slices.ContainsFunc(unrot, func(u []float64) bool { return u != nil }),
		Legend: r.legend(unrot)}
	var sl, bl []line
	for i := range r.Recipes {
		d := dashes(i, len(r.Recipes))
		sl = append(sl, line{v: sqnr[i], colour: colour(i), dash: d})
		bl = append(bl, line{v: bits[i], colour: colour(i), dash: d})
	}
	for i, u := range unrot {
		if u != nil {
			sl = append(sl, line{v: u, colour: colour(i), dash: unrotDash, thin: true, hollow: true,
				what: "without rotation"})
		}
	}
	v.SQNR = newLineChart("sqnr", "SQNR (dB)", "layer", labels, sl)
	v.Bits = newLineChart("bits", "bits per value", "layer", labels, bl)
	return v
}

// dash is a line's stroke-dasharray and stroke-dashoffset attributes, ""
// for none.
type dash struct{ Array, Offset string }

// unrotDash is the dash pattern of a recipe's line without rotation.
var unrotDash = dash{Array: "3 3"}

// line is a series of a line chart.
type line struct {
	v      []float64 // NaN: no point
	colour string
	dash   dash // none for solid
	thin   bool // 1.5 wide, not 2
	hollow bool // dots with a white fill
	what   string
}

// dashLen is the length of a dash of a line chart's dashed lines.
const dashLen = 6

// dashes returns the dashes of line i of n: the first is solid, line
// i > 0 draws one dash in every n, in its own slot i−1, so that lines that
// coincide (the same datatype with and without the scale search has the
// same bits per value) show each colour in turn, the first's in the last
// slot.
func dashes(i, n int) dash {
	if i == 0 {
		return dash{}
	}
	period := dashLen * n
	return dash{Array: fmt.Sprintf("%d %d", dashLen, period-dashLen),
		Offset: strconv.Itoa((period - dashLen*(i-1)) % period)}
}

// lineChart is a chart of one line per series over categories.
type lineChart struct {
	frame
	Cats           []label // the categories' labels, under the axis
	XLabel, YLabel label
	Series         []series
}

// label is a text at X, Y.
type label struct {
	X    string
	Y    int
	Text string
}

// series is one line of a line chart: its runs of consecutive points as
// polylines, and a dot for every point.
type series struct {
	Colour, Width string
	Dash          dash
	Hollow        bool
	Runs          []string
	Dots          []point
}

// point is a dot at X, Y, titled.
type point struct{ X, Y, Title string }

// newLineChart lays out the series over the categories, nil when no
// series has a point.
func newLineChart(id, yLabel, xLabel string, cats []string, lines []line) *lineChart {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range lines {
		for _, v := range s.v {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 0) {
		return nil
	}
	ticks := niceTicks(lo, hi)
	y0, y1 := ticks[0], ticks[len(ticks)-1]
	yAt := func(v float64) float64 { return padT + plotH*(1-(v-y0)/(y1-y0)) }
	xAt := func(i int) string { return num(padL+plotW*(float64(i)+0.5)/float64(len(cats)), 1) }
	dec := 0
	if len(ticks) > 1 {
		dec = decimals(ticks[1] - ticks[0])
	}
	c := &lineChart{frame: newFrame(id, yLabel+" by "+xLabel, chartW, chartH, ticks, yAt,
		func(t float64) string { return num(t, dec) }),
		XLabel: label{strconv.Itoa(padL + plotW/2), chartH - 6, xLabel},
		YLabel: label{"14", padT + plotH/2, yLabel}}
	every := (len(cats) + 29) / 30 // at most about 30 category labels
	for i, cat := range cats {
		if i%every == 0 || cat == "other" {
			c.Cats = append(c.Cats, label{xAt(i), padT + plotH + 14, cat})
		}
	}
	for _, l := range lines {
		c.Series = append(c.Series, l.series(xLabel, cats, xAt, yAt))
	}
	return c
}

// series lays out line l.
func (l *line) series(xLabel string, cats []string, xAt func(int) string, yAt func(float64) float64) series {
	s := series{Colour: l.colour, Width: "2", Dash: l.dash, Hollow: l.hollow}
	if l.thin {
		s.Width = "1.5"
	}
	what := ""
	if l.what != "" {
		what = " " + l.what
	}
	var run []string
	for i := 0; i <= len(l.v); i++ {
		if i == len(l.v) || math.IsNaN(l.v[i]) { // a gap, or the end, ends a run
			if len(run) > 1 {
				s.Runs = append(s.Runs, strings.Join(run, " "))
			}
			run = run[:0]
			continue
		}
		v := l.v[i]
		x, y := xAt(i), num(yAt(v), 1)
		run = append(run, x+","+y)
		s.Dots = append(s.Dots, point{x, y, xLabel + " " + cats[i] + ": " + num(v, 3) + what})
	}
	return s
}

// histogramsView is the section of the relative error histograms.
type histogramsView struct {
	Legend legendView
	Charts []histogramChart
}

// histogramChart is the histograms of one tensor under every recipe.
type histogramChart struct {
	frame
	Name       string
	Decades    []label // the powers of ten, labelled under ticks on the axis
	DecadeTick int     // the ticks' lower end
	XLabel     label
	Outlines   []outline
	Notes      []histogramNote
}

// outline is one recipe's histogram, a filled step outline.
type outline struct{ Colour, Points string }

// histogramNote says what share of a recipe's elements are exact and of
// a zero source.
type histogramNote struct{ Recipe, Exact, Zero string }

// histograms returns the relative error histograms of the worst tensors,
// each with one outline per recipe; nil for none.
func (r *Report) histograms() *histogramsView {
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
		return nil
	}
	v := &histogramsView{Legend: r.legend(nil)}
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
		c := newHistogramChart(fmt.Sprintf("hist%d", k), hs, idx)
		c.Name = name
		for i, h := range hs {
			if tot := float64(h.Total()); tot > 0 {
				c.Notes = append(c.Notes, histogramNote{r.Recipes[idx[i]].Label,
					num(100*float64(h.Exact)/tot, 2), num(100*float64(h.Undefined)/tot, 2)})
			}
		}
		v.Charts = append(v.Charts, *c)
	}
	return v
}

// newHistogramChart lays out histograms as step outlines over the same
// binades, coloured as the recipes.
func newHistogramChart(id string, hs []*Histogram, recipes []int) *histogramChart {
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
	xAt := func(e float64) string { return num(padL+pw*(e-e0)/(e1-e0), 1) }
	yAt := func(f float64) float64 { return padT + ph*(1-f/yTop) }
	dec := decimals((ticks[1] - ticks[0]) * 100)
	c := &histogramChart{frame: newFrame(id, "relative error histogram", histW, histH, ticks, yAt,
		func(t float64) string { return num(100*t, dec) + "%" }),
		DecadeTick: padT + ph + 4, XLabel: label{strconv.Itoa(padL + pw/2), histH - 6, "relative error"}}
	for k := -8; k <= 2; k++ { // 10^k sits at binade k·log2(10)
		if e := float64(k) * math.Log2(10); e >= e0 && e <= e1 {
			c.Decades = append(c.Decades, label{xAt(e), padT + ph + 16, "1e" + strconv.Itoa(k)})
		}
	}
	for i, h := range hs {
		tot := float64(h.Total())
		if tot == 0 {
			continue
		}
		pts := []string{xAt(e0) + "," + num(yAt(0), 1)}
		for b := b0; b < b1; b++ {
			y := num(yAt(float64(h.Counts[b])/tot), 1)
			pts = append(pts, xAt(float64(histMinExp+b))+","+y, xAt(float64(histMinExp+b+1))+","+y)
		}
		pts = append(pts, xAt(e1)+","+num(yAt(0), 1))
		c.Outlines = append(c.Outlines, outline{colour(recipes[i]), strings.Join(pts, " ")})
	}
	return c
}

// maskView is the picture of a sparse weight's keep mask: a cell per
// block of elements, darker the more it keeps.
type maskView struct {
	ID, Name, Recipe     string
	Kept, Len            int
	Density              string
	BlockRows, BlockCols int
	W, H                 int
	Empty, Full          string // the colours of no element kept and of all
	Cells                []maskCell
}

// maskCell is a cell that keeps some elements: Opacity is the fraction.
type maskCell struct {
	X, Y, Size int
	Opacity    string
}

// masks returns the pictures of the keep masks of sparse weights.
func (r *Report) masks() []maskView {
	n := r.Options.masks()
	var out []maskView
	for i := range r.Recipes {
		for j := range r.Recipes[i].Tensors {
			if t := &r.Recipes[i].Tensors[j]; t.Mask != nil && len(out) < n {
				out = append(out, r.mask(len(out), i, t))
			}
		}
	}
	return out
}

// mask returns picture k, of tensor t of recipe i.
func (r *Report) mask(k, i int, t *Tensor) maskView {
	g := t.Mask
	v := maskView{ID: fmt.Sprintf("mask%d", k), Name: t.Name, Recipe: r.Recipes[i].Label, Kept: g.Kept,
		Len: g.Len, Density: num(float64(g.Kept)/math.Max(float64(g.Len), 1), 4), BlockRows: g.BlockRows,
		BlockCols: g.BlockCols, Empty: maskEmpty, Full: maskFullColor}
	rows, cols := len(g.Cells), 0
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
	v.W, v.H = max(cols*cell, 1), max(rows*cell, 1)
	for ri, line := range g.Cells {
		for ci, f := range line {
			if f > 0 {
				v.Cells = append(v.Cells, maskCell{ci * cell, ri * cell, cell, num(f, 3)})
			}
		}
	}
	return v
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
