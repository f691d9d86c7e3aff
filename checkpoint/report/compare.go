package report

import (
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
	Source  string           `json:"source"`
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
	SQNR      *float64 `json:"sqnr_db,omitempty"` // nil: exact, or an all-zero source
	Lost      int      `json:"nonfinite_outputs,omitempty"`
}

// Compare lines up the report's recipes. A tensor some recipes left out
// keeps its place among the source's tensors.
func (r *Report) Compare() *Comparison {
	c := &Comparison{Source: r.Source}
	row := map[string]int{} // tensor name → index in c.Tensors
	for i, rec := range r.Recipes {
		c.Recipes = append(c.Recipes, RecipeSummary{Label: rec.Label, Path: rec.Path, Layout: rec.Layout,
			DataType: rec.DataType, Bits: rec.Bits, SQNR: rec.SQNR})
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
			c.Tensors[j].Recipes[i] = &Cell{DataType: t.DataType, Converted: t.Converted, Bits: t.Bits, SQNR: t.SQNR, Lost: t.Lost}
		}
	}
	return c
}

// WriteText writes the comparison as a text table: a row per tensor with
// each recipe's datatype, bits per value and SQNR in dB ("exact" for none,
// "-" where the recipe left the tensor out; a kept tensor's datatype is
// "kept" and its stored type, a tensor with values lost to NaN or Inf is
// marked "lost N"), then a last row with each recipe's datatypes and mean
// bits per value and SQNR over its converted tensors, by elements.
func (c *Comparison) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	var labels, head strings.Builder
	labels.WriteString("\t")
	head.WriteString("tensor\t")
	for _, r := range c.Recipes {
		fmt.Fprintf(&labels, "%s\t\t\t", r.Label)
		head.WriteString("datatype\tbits/value\tSQNR dB\t")
	}
	fmt.Fprintln(tw, labels.String())
	fmt.Fprintln(tw, head.String())
	for _, t := range c.Tensors {
		fmt.Fprintf(tw, "%s\t", t.Name)
		for _, cell := range t.Recipes {
			if cell == nil {
				fmt.Fprint(tw, "-\t-\t-\t")
				continue
			}
			dt := cell.DataType
			if !cell.Converted {
				dt = "kept " + dt
			}
			sq := sqnrText(cell.SQNR)
			if cell.Lost > 0 {
				sq = fmt.Sprintf("lost %d", cell.Lost)
			}
			fmt.Fprintf(tw, "%s\t%.3f\t%s\t", dt, cell.Bits, sq)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "mean by elements, converted tensors\t")
	for _, r := range c.Recipes {
		dt := r.DataType
		if dt == "" {
			dt = "none converted"
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%s\t", dt, r.Bits, sqnrText(r.SQNR))
	}
	fmt.Fprintln(tw)
	return tw.Flush()
}

// sqnrText is an SQNR in dB as the tables print it, "exact" for none.
func sqnrText(db *float64) string {
	if db == nil {
		return "exact"
	}
	return fmt.Sprintf("%.2f", *db)
}
