package report

import (
	"cmp"
	"html/template"
	"slices"
	"strconv"
	"strings"
)

// recipeRow is a recipe's row of the table of recipes.
type recipeRow struct {
	Colour, Label, Describe, Layout, Path string
	Converted, Tensors                    int
	Bits, SQNR                            string
	// Without and Gain are the SQNR without rotation and the gain, for a
	// page with a rotated recipe.
	Without  string
	Gain     template.HTML
	Weighted string // with an importance matrix
}

// recipeRow returns the row of recipe i.
func (r *Report) recipeRow(i int) recipeRow {
	rec := &r.Recipes[i]
	row := recipeRow{Colour: colour(i), Label: rec.Label, Describe: rec.Describe(), Layout: rec.Layout,
		Path: rec.Path, Tensors: len(rec.Tensors), Bits: num(rec.Bits, 3), SQNR: mean(rec.SQNR),
		Without: "-", Gain: "-", Weighted: mean(rec.WeightedSQNR)}
	for _, t := range rec.Tensors {
		if t.Converted {
			row.Converted++
		}
	}
	switch {
	case rec.Rotation == "":
	case !rec.HasUnrotated:
		row.Without = "not recorded"
	default:
		row.Without, row.Gain = mean(rec.SQNRUnrotated), gainOf(rec.SQNR, rec.SQNRUnrotated)
	}
	return row
}

// legendView lists the recipes with their colours, and the lines without
// rotation of some.
type legendView struct {
	Recipes   []recipeKey
	Unrotated []recipeKey // Describe unused
}

// recipeKey is a recipe's entry in a legend.
type recipeKey struct{ Colour, Label, Describe string }

// legend returns the legend of the recipes, with the lines without
// rotation of those whose unrot is not nil.
func (r *Report) legend(unrot [][]float64) legendView {
	var l legendView
	for i, rec := range r.Recipes {
		l.Recipes = append(l.Recipes, recipeKey{colour(i), rec.Label, rec.Describe()})
	}
	for i, u := range unrot {
		if u != nil {
			l.Unrotated = append(l.Unrotated, recipeKey{Colour: colour(i), Label: r.Recipes[i].Label})
		}
	}
	return l
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

// worstView is the table of the worst tensors.
type worstView struct {
	Rows []worstRow
	More int // converted tensors not shown
}

// worstRow is a tensor's row of the table of the worst tensors.
type worstRow struct {
	Rank                           int
	Name, Colour, Recipe, DataType string
	Shape, Bits, SQNR, Weighted    string
	Max                            template.HTML // +Inf for lost values
	Lost                           int
	Without                        string        // for a page with a rotated recipe
	Gain                           template.HTML // "" for none
}

// worst returns the table of the worst tensors, nil for none.
func (r *Report) worst() *worstView {
	n := r.Options.worst()
	rs := r.rank()
	if n == 0 || len(rs) == 0 {
		return nil
	}
	v := &worstView{More: max(len(rs)-n, 0)}
	for i, x := range rs[:min(n, len(rs))] {
		t := x.t
		row := worstRow{Rank: i + 1, Name: t.Name, Colour: colour(x.recipe), Recipe: r.Recipes[x.recipe].Label,
			DataType: t.DataType, Shape: shapeString(t.Shape), Bits: num(t.Bits, 3), SQNR: dB(t.SQNR),
			Weighted: mean(t.WeightedSQNR), Max: maxAbs(t.MaxAbsErr), Lost: t.Lost,
			Without: "-"}
		if t.Rotation != "" {
			row.DataType += ", rotated " + t.Rotation
			row.Without = "not recorded"
		}
		if t.Rotation != "" && t.HasUnrotated {
			row.Without = dB(t.SQNRUnrotated)
			if g, ok := t.Gain(); ok {
				row.Gain = signed(g)
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// rotationsView is the table of rotated tensors.
type rotationsView struct {
	Rows []rotationRow
	More int // rotated tensors not shown
}

// rotationRow is a rotated tensor's row.
type rotationRow struct {
	Name, Colour, Recipe, DataType, Rotation, Shape, Without, With string
	Gain                                                           template.HTML
}

// rotations returns, for each recipe that rotated weights, a row per
// rotated tensor in the source's order with its SQNR without and with the
// rotation; nil for none.
func (r *Report) rotations() *rotationsView {
	n := r.Options.rotations()
	if n == 0 || !r.rotated() {
		return nil
	}
	v := &rotationsView{}
	for i, rec := range r.Recipes {
		for j := range rec.Tensors {
			t := &rec.Tensors[j]
			switch {
			case t.Rotation == "":
			case len(v.Rows) == n:
				v.More++
			default:
				v.Rows = append(v.Rows, rotationRow{Name: t.Name, Colour: colour(i), Recipe: rec.Label,
					DataType: t.DataType, Rotation: t.Rotation, Shape: shapeString(t.Shape),
					Without: "not recorded", With: dB(t.SQNR), Gain: "-"})
				v.Rows[len(v.Rows)-1].setUnrotated(t)
			}
		}
	}
	return v
}

// setUnrotated gives the row the SQNR without rotation of t, when its
// record has it, and the gain.
func (row *rotationRow) setUnrotated(t *Tensor) {
	if !t.HasUnrotated {
		return
	}
	row.Without = dB(t.SQNRUnrotated)
	if g, ok := t.Gain(); ok {
		row.Gain = signed(g)
	}
}

// maxAbs formats a maximum absolute error, +Inf for values lost. It is
// template.HTML for the same reason as signed: a number keeps its '+'.
func maxAbs(v float64) template.HTML {
	return template.HTML(strconv.FormatFloat(v, 'g', 4, 64))
}
