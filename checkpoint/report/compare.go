package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Comparison lines up the recipes of a report tensor by tensor: one row
// per tensor of the source, in its order, and in each row a cell per
// recipe. It is what tcast verify -compare prints.
type Comparison struct {
	Source string `json:"source"`
	// Imatrix is the importance matrix file the weighted SQNR was measured
	// with (Options.Imatrix), "" for none.
	Imatrix string           `json:"imatrix,omitempty"`
	Recipes []RecipeSummary  `json:"recipes"`
	Tensors []ComparedTensor `json:"tensors"`
}

// RecipeSummary is a recipe's line of a Comparison: its means over its
// converted tensors (Recipe.Bits and Recipe.SQNR).
type RecipeSummary struct {
	Label    string   `json:"label"`
	Path     string   `json:"path"`
	Layout   string   `json:"layout"`
	DataType string   `json:"datatype"`
	Bits     float64  `json:"bits_per_value"`
	SQNR     *float64 `json:"sqnr_db,omitempty"`
	// Recipe says what the recipe did (Recipe.Describe).
	Recipe       string   `json:"recipe"`
	ScaleSearch  bool     `json:"scale_search,omitempty"`
	Rotation     string   `json:"rotation,omitempty"`
	WeightedSQNR *float64 `json:"weighted_sqnr_db,omitempty"`
	// SQNRUnrotated and HasUnrotated are Recipe's: the mean SQNR without
	// the rotation, for a recipe that rotated weights.
	SQNRUnrotated *float64 `json:"sqnr_unrotated_db,omitempty"`
	HasUnrotated  bool     `json:"has_sqnr_unrotated,omitempty"`
}

// ComparedTensor is one tensor of the source under every recipe.
type ComparedTensor struct {
	Name  string `json:"name"` // the source's name
	Shape []int  `json:"shape"`
	// Recipes holds a cell per recipe, in the order of
	// Comparison.Recipes; nil where the recipe left the tensor out (a
	// llama.cpp model GGUF drops a tied output head).
	Recipes []*Cell `json:"recipes"`
}

// Cell is a tensor under one recipe.
type Cell struct {
	DataType  string   `json:"datatype"` // the converted tensor's datatype, or the stored type of a kept one
	Converted bool     `json:"converted"`
	Bits      float64  `json:"bits_per_value"`
	SQNR      *float64 `json:"sqnr_db,omitempty"` // nil: exact, or an all-zero source; −Inf (null in JSON) when Lost > 0
	Lost      int      `json:"nonfinite_outputs,omitempty"`
	Rotation  string   `json:"rotation,omitempty"` // the weight's rotation before its cast, "" for none
	// WeightedSQNR is the importance-weighted SQNR (Options.Imatrix).
	WeightedSQNR *float64 `json:"weighted_sqnr_db,omitempty"`
	// SQNRUnrotated and HasUnrotated are Tensor's: a rotated weight's SQNR
	// without the rotation, as its checkpoint records it.
	SQNRUnrotated *float64 `json:"sqnr_unrotated_db,omitempty"`
	HasUnrotated  bool     `json:"has_sqnr_unrotated,omitempty"`
}

// Compare lines up the report's recipes. A tensor some recipes left out
// keeps its place among the source's tensors.
func (r *Report) Compare() *Comparison {
	c := &Comparison{Source: r.Source}
	if r.Options.Imatrix != nil {
		c.Imatrix = r.Options.Imatrix.Path
	}
	row := map[string]int{} // tensor name → index in c.Tensors
	for i, rec := range r.Recipes {
		c.Recipes = append(c.Recipes, RecipeSummary{Label: rec.Label, Path: rec.Path, Layout: rec.Layout,
			DataType: rec.DataType, Bits: rec.Bits, SQNR: rec.SQNR, Recipe: rec.Describe(), ScaleSearch: rec.ScaleSearch,
			Rotation: rec.Rotation, WeightedSQNR: rec.WeightedSQNR, SQNRUnrotated: rec.SQNRUnrotated, HasUnrotated: rec.HasUnrotated})
		// Each recipe's tensors are the source's in its order, but for those
		// it left out: a tensor not seen yet goes after the last one seen.
		at := 0
		for _, t := range rec.Tensors {
			j, ok := row[t.Name]
			if !ok {
				j = at
				c.Tensors = slices.Insert(c.Tensors, j, ComparedTensor{Name: t.Name, Shape: t.Shape,
					Recipes: make([]*Cell, len(r.Recipes))})
				for k := range c.Tensors[j+1:] {
					row[c.Tensors[j+1+k].Name]++
				}
				row[t.Name] = j
			}
			at = j + 1
			c.Tensors[j].Recipes[i] = &Cell{DataType: t.DataType, Converted: t.Converted, Bits: t.Bits, SQNR: t.SQNR, Lost: t.Lost,
				Rotation: t.Rotation, WeightedSQNR: t.WeightedSQNR, SQNRUnrotated: t.SQNRUnrotated, HasUnrotated: t.HasUnrotated}
		}
	}
	return c
}

// WriteText writes the comparison as a text table: a row of labels, a
// row saying what each recipe did (its datatypes, "scale search",
// "rotated hadamard:32"), then a row per tensor with each recipe's
// datatype, bits per value and SQNR in dB ("exact" for none, "-" where the
// recipe left the tensor out; a kept tensor's datatype is "kept" and its
// stored type, a rotated weight's is followed by its rotation, a tensor
// with values lost to NaN or Inf is marked "lost N"), for a recipe that
// rotated weights the SQNR a rotated weight's cast gives without the
// rotation ("-" for a weight not rotated, "?" where the checkpoint does
// not record it), and with an importance matrix its weighted SQNR ("-" for
// none); then a last row with each recipe's datatypes and mean bits per
// value and SQNRs over its converted tensors, by elements.
func (c *Comparison) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	c.writeTextHead(tw)
	for _, t := range c.Tensors {
		fmt.Fprintf(tw, "%s\t", t.Name)
		for i, cell := range t.Recipes {
			c.writeTextCell(tw, cell, c.Recipes[i].Rotation != "")
		}
		fmt.Fprintln(tw)
	}
	c.writeTextMeans(tw)
	return tw.Flush()
}

// writeTextHead writes WriteText's rows of labels, of recipes and of
// column names.
func (c *Comparison) writeTextHead(tw io.Writer) {
	weighted := c.Imatrix != ""
	var labels, recipes, head strings.Builder
	labels.WriteString("\t")
	recipes.WriteString("recipe\t")
	head.WriteString("tensor\t")
	for _, r := range c.Recipes {
		pad := "\t\t\t"
		head.WriteString("datatype\tbits/value\tSQNR dB\t")
		if r.Rotation != "" {
			pad += "\t"
			head.WriteString("unrotated dB\t")
		}
		if weighted {
			pad += "\t"
			head.WriteString("weighted dB\t")
		}
		fmt.Fprintf(&labels, "%s%s", r.Label, pad)
		fmt.Fprintf(&recipes, "%s%s", r.Recipe, pad)
	}
	fmt.Fprintln(tw, labels.String())
	fmt.Fprintln(tw, recipes.String())
	fmt.Fprintln(tw, head.String())
}

// writeTextCell writes the columns of one recipe's cell of a tensor's row,
// "-" in each for a nil cell; rotated says whether the recipe rotated
// weights.
func (c *Comparison) writeTextCell(tw io.Writer, cell *Cell, rotated bool) {
	weighted := c.Imatrix != ""
	if cell == nil {
		fmt.Fprint(tw, "-\t-\t-\t")
		if rotated {
			fmt.Fprint(tw, "-\t")
		}
		if weighted {
			fmt.Fprint(tw, "-\t")
		}
		return
	}
	dt := cell.DataType
	if !cell.Converted {
		dt = "kept " + dt
	}
	if cell.Rotation != "" {
		dt += " " + cell.Rotation
	}
	sq := sqnrText(cell.SQNR)
	if cell.Lost > 0 {
		sq = fmt.Sprintf("lost %d", cell.Lost)
	}
	fmt.Fprintf(tw, "%s\t%.3f\t%s\t", dt, cell.Bits, sq)
	if rotated {
		fmt.Fprintf(tw, "%s\t", unrotatedText(cell.Rotation != "", cell.HasUnrotated, cell.SQNRUnrotated))
	}
	if weighted {
		fmt.Fprintf(tw, "%s\t", weightedText(cell.WeightedSQNR))
	}
}

// writeTextMeans writes WriteText's last row: each recipe's datatypes and
// means.
func (c *Comparison) writeTextMeans(tw io.Writer) {
	fmt.Fprint(tw, "mean by elements, converted tensors\t")
	for _, r := range c.Recipes {
		dt := r.DataType
		if dt == "" {
			dt = "none converted"
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%s\t", dt, r.Bits, sqnrText(r.SQNR))
		if r.Rotation != "" {
			fmt.Fprintf(tw, "%s\t", unrotatedText(true, r.HasUnrotated, r.SQNRUnrotated))
		}
		if c.Imatrix != "" {
			fmt.Fprintf(tw, "%s\t", weightedText(r.WeightedSQNR))
		}
	}
	fmt.Fprintln(tw)
}

// unrotatedText is an SQNR without rotation as the text table prints it:
// "-" for a tensor not rotated, "?" when the checkpoint does not record
// it, "exact" for none.
func unrotatedText(rotated, recorded bool, db *float64) string {
	switch {
	case !rotated:
		return "-"
	case !recorded:
		return "?"
	}
	return sqnrText(db)
}

// weightedText is a weighted SQNR as the tables print it, "-" for none
// (no entry in the importance matrix, or exact).
func weightedText(db *float64) string {
	if db == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *db)
}

// sqnrText is an SQNR in dB as the tables print it, "exact" for none.
func sqnrText(db *float64) string {
	if db == nil {
		return "exact"
	}
	return fmt.Sprintf("%.2f", *db)
}

// MarshalJSON writes c; with Lost > 0 (the error is not finite) sqnr_db is
// null, as in verify.Result's JSON.
func (c Cell) MarshalJSON() ([]byte, error) {
	type plain Cell
	if c.Lost == 0 {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		plain
		SQNR *float64 `json:"sqnr_db"`
	}{plain: plain(c)})
}
