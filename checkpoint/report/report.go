// Package report compares converted checkpoints with their source and
// draws the comparison as one self-contained HTML page: per layer, the SQNR
// and bits per value of each recipe (each converted checkpoint); a
// histogram of the relative error of the worst tensors; the worst tensors
// first in a table; the keep mask of sparse weights as a density picture.
// The page holds its CSS and SVG inline, runs no script and loads nothing:
// it opens offline. It is well-formed XML as well as HTML, and the same
// checkpoints always give the same bytes.
//
// Build measures (reading every tensor of the source and of each converted
// checkpoint, as verify.Checkpoints does); WriteHTML draws; Compare lines the
// recipes up tensor by tensor as a table (tcast verify -compare).
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
	"github.com/tensorcast-go/tensorcast/sparsity"
)

// Options control Build and WriteHTML. The zero value draws the defaults
// given with each field.
type Options struct {
	// Title heads the page; "" gives "tcast report: " and the source's
	// file name.
	Title string
	// Labels name the recipes, one per converted checkpoint in order; a
	// missing or empty label is the checkpoint's file name without its
	// extension.
	Labels []string
	// Histograms is the number of tensors whose relative error histogram is
	// drawn, the worst (lowest SQNR of any recipe) first; 0 means 6, a
	// negative number none.
	Histograms int
	// Worst is the number of rows of the table of worst tensors; 0 means
	// 20, a negative number no table.
	Worst int
	// Masks is the number of sparse weights whose keep mask is drawn, in
	// the source's order; 0 means 8, a negative number none.
	Masks int
	// Rotations is the number of rows of the table of rotated tensors
	// (each with its SQNR without and with the rotation), recipe by recipe
	// in the source's order; 0 means 500, a negative number no table.
	Rotations int
	// Imatrix, when set, adds each converted tensor's importance-weighted
	// SQNR (Tensor.WeightedSQNR) and each recipe's mean of it, measured as
	// verify.Checkpoints measures it (its entries found as convert finds
	// them); Recipe.Unmatched says when it has no entry for any converted
	// weight of the recipe.
	Imatrix *imatrix.Imatrix
}

func (o *Options) histograms() int { return pick(o.Histograms, 6) }
func (o *Options) worst() int      { return pick(o.Worst, 20) }
func (o *Options) masks() int      { return pick(o.Masks, 8) }
func (o *Options) rotations() int  { return pick(o.Rotations, 500) }

// pick returns v, def for 0, and 0 for a negative v.
func pick(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// Report is what the page shows: a source and the recipes compared with it.
type Report struct {
	Title   string   `json:"title"`
	Source  string   `json:"source"`
	Recipes []Recipe `json:"recipes"`
	// Options are those Build was given, for WriteHTML.
	Options Options `json:"-"`
}

// Recipe is one converted checkpoint compared with the source.
type Recipe struct {
	Label    string   `json:"label"`
	Path     string   `json:"path"`
	Layout   string   `json:"layout"`
	DataType string   `json:"datatype"` // the datatypes of its converted weights, comma-separated
	Tensors  []Tensor `json:"tensors"`
	// Bits and SQNR are the means by elements of the converted tensors'
	// bits per value and SQNR (nil when none has one).
	Bits float64  `json:"bits_per_value"`
	SQNR *float64 `json:"sqnr_db,omitempty"`
	// ScaleSearch says that the checkpoint records its scales as searched
	// (metadata tcast.scale_search) rather than chosen by the datatypes'
	// rule.
	ScaleSearch bool `json:"scale_search,omitempty"`
	// Rotation lists the rotations its weights went through before the
	// cast (metadata tcast.rotated: "hadamard:32"), comma-separated, ""
	// for none.
	Rotation string `json:"rotation,omitempty"`
	// WeightedSQNR is the mean by elements of the converted tensors'
	// WeightedSQNR (Options.Imatrix), nil when none has one.
	WeightedSQNR *float64 `json:"weighted_sqnr_db,omitempty"`
	// SQNRUnrotated is, for a recipe that rotated weights, the mean SQNR
	// the same converted tensors give without the rotation: SQNR's mean,
	// with each rotated tensor's SQNRUnrotated in place of its SQNR, so
	// that SQNR − SQNRUnrotated is what the rotation gained. HasUnrotated
	// says that every rotated tensor's record gives it (checkpoints written
	// before it was recorded do not).
	SQNRUnrotated *float64 `json:"sqnr_unrotated_db,omitempty"`
	HasUnrotated  bool     `json:"has_sqnr_unrotated,omitempty"`
	// Unmatched is set when Options.Imatrix has no entry for any of the
	// recipe's converted weights.
	Unmatched *verify.ImatrixUnmatched `json:"-"`
}

// Describe says what the recipe did: its datatypes, then "scale search"
// when its scales were searched and "rotated" and the rotations when its
// weights were rotated ("mxfp4e2; scale search; rotated hadamard:32");
// "none converted" for a checkpoint without a converted tensor.
func (r *Recipe) Describe() string {
	s := r.DataType
	if s == "" {
		s = "none converted"
	}
	if r.ScaleSearch {
		s += "; scale search"
	}
	if r.Rotation != "" {
		s += "; rotated " + r.Rotation
	}
	return s
}

// Tensor is one tensor of a recipe.
type Tensor struct {
	Name  string `json:"name"` // the source's name
	Shape []int  `json:"shape"`
	// Layer is the first number among the name's dot-separated parts
	// (model.layers.3.mlp.up_proj.weight is in layer 3), -1 for none.
	Layer     int     `json:"layer"`
	DataType  string  `json:"datatype"` // the converted tensor's datatype or stored type
	Converted bool    `json:"converted"`
	Bits      float64 `json:"bits_per_value"` // stored bits per value, every part counted
	// SQNR and MaxAbsErr are verify.Result's: nil SQNR for an exact
	// tensor; SQNR −Inf and MaxAbsErr +Inf (null in JSON) for one whose
	// finite values became NaN or Inf (Lost > 0), whose error is not finite.
	SQNR      *float64 `json:"sqnr_db,omitempty"`
	MaxAbsErr float64  `json:"max_abs_error"`
	Lost      int      `json:"nonfinite_outputs,omitempty"`
	// Rotation is the rotation the weight went through before its cast
	// ("hadamard:32"), "" for none. Its values are compared after the
	// rotation is undone.
	Rotation string `json:"rotation,omitempty"`
	// SQNRUnrotated is, for a rotated weight, the SQNR in dB the same cast
	// gives it without the rotation, as the conversion measured it and
	// recorded it (layout.RotationInfo.SQNRUnrotated); nil when that cast is
	// exact, or when the record does not say (HasUnrotated false: a
	// checkpoint written before it was recorded).
	SQNRUnrotated *float64 `json:"sqnr_unrotated_db,omitempty"`
	HasUnrotated  bool     `json:"has_sqnr_unrotated,omitempty"`
	// WeightedSQNR is the importance-weighted SQNR of a converted weight
	// (Options.Imatrix; verify.Result.WeightedSQNR).
	WeightedSQNR *float64 `json:"weighted_sqnr_db,omitempty"`
	// Errors is the histogram of the relative errors of a converted float
	// tensor, nil for the others.
	Errors *Histogram `json:"relative_errors,omitempty"`
	// Mask is the keep mask's density picture of a sparse weight.
	Mask *sparsity.DensityGrid `json:"mask,omitempty"`
}

// Histogram counts a tensor's elements by relative error
// |converted − source| / |source| in binades: Counts[i] holds the errors in
// [2^(MinExp+i), 2^(MinExp+i+1)), the first bin also those below, the last
// also those above.
type Histogram struct {
	MinExp int     `json:"min_exp"`
	Counts []int64 `json:"counts"`
	// Exact counts the elements equal to their source (±0 equal), Undefined
	// those whose source is 0 and converted value is not, or that are not
	// finite on either side.
	Exact     int64 `json:"exact"`
	Undefined int64 `json:"undefined"`
}

// Histogram bins: 2^-24 (float32's relative precision and below) to 2^4.
const (
	histMinExp = -24
	histBins   = 28
)

// Total returns the number of elements counted.
func (h *Histogram) Total() int64 {
	n := h.Exact + h.Undefined
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// newHistogram counts the relative errors of got against want.
func newHistogram(want, got []float32) *Histogram {
	h := &Histogram{MinExp: histMinExp, Counts: make([]int64, histBins)}
	for i, w := range want {
		g := got[i]
		d := math.Abs(float64(g) - float64(w))
		switch {
		case g == w:
			h.Exact++
		case w == 0 || math.IsNaN(d) || math.IsInf(d, 0):
			h.Undefined++
		default:
			// r = f·2^e with f in [0.5, 1): r lies in [2^(e-1), 2^e).
			_, e := math.Frexp(d / math.Abs(float64(w)))
			h.Counts[min(max(e-1-histMinExp, 0), histBins-1)]++
		}
	}
	return h
}

// layerRE finds the layer number of a tensor name.
var layerRE = regexp.MustCompile(`(?:^|\.)(\d+)(?:\.|$)`)

// layerOf returns the first number among name's dot-separated parts, -1
// for none: 3 for model.layers.3.mlp.up_proj.weight and blk.3.attn_q.weight.
func layerOf(name string) int {
	m := layerRE.FindStringSubmatch(name)
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return n
}

// Build compares each converted checkpoint with the source orig (both
// opened with load.Open: any layout, GGUF included) and returns the report.
// Every tensor is read once from each; tensors are paired as
// verify.Checkpoints pairs them. A converted checkpoint that does not hold
// the source's tensors is a *MismatchError.
func Build(orig string, converted []string, o Options) (*Report, error) {
	if len(converted) == 0 {
		return nil, fmt.Errorf("report of %s: no converted checkpoint to compare", orig)
	}
	r := &Report{Title: o.Title, Source: orig, Options: o}
	if r.Title == "" {
		r.Title = "tcast report: " + filepath.Base(orig)
	}
	for i, conv := range converted {
		rec, err := buildRecipe(orig, conv, o)
		if errors.Is(err, verify.ErrMismatch) {
			return nil, &MismatchError{Recipe: conv, Source: orig, Err: err}
		}
		if err != nil {
			return nil, err
		}
		if i < len(o.Labels) && o.Labels[i] != "" {
			rec.Label = o.Labels[i]
		}
		r.Recipes = append(r.Recipes, *rec)
	}
	return r, nil
}

// MismatchError reports a converted checkpoint that does not hold the
// source's tensors (names, shapes, or non-float bytes): not a conversion
// of it. Err matches verify.ErrMismatch.
type MismatchError struct {
	Recipe, Source string // the converted checkpoint and the source
	Err            error
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s is not a conversion of %s: %v", e.Recipe, e.Source, e.Err)
}

// Unwrap returns Err.
func (e *MismatchError) Unwrap() error { return e.Err }

// Unrotated returns the SQNR in dB the tensor's cast gives without
// rotation: SQNRUnrotated for a rotated tensor, SQNR for another; ok is
// false for a rotated tensor whose record does not say.
func (t *Tensor) Unrotated() (db *float64, ok bool) {
	if t.Rotation == "" {
		return t.SQNR, true
	}
	return t.SQNRUnrotated, t.HasUnrotated
}

// Gain returns by how many dB the rotation raised the tensor's SQNR
// (SQNR − SQNRUnrotated); ok is false for a tensor not rotated, or either
// SQNR missing (exact, or not recorded).
func (t *Tensor) Gain() (db float64, ok bool) {
	if t.Rotation == "" || t.SQNR == nil || t.SQNRUnrotated == nil || t.Lost > 0 {
		return 0, false
	}
	return *t.SQNR - *t.SQNRUnrotated, true
}

// MarshalJSON writes t; with Lost > 0 (the error is not finite) sqnr_db and
// max_abs_error are null, as in verify.Result's JSON.
func (t Tensor) MarshalJSON() ([]byte, error) {
	type plain Tensor
	if t.Lost == 0 {
		return json.Marshal(plain(t))
	}
	return json.Marshal(struct {
		plain
		SQNR      *float64 `json:"sqnr_db"`
		MaxAbsErr *float64 `json:"max_abs_error"`
	}{plain: plain(t)})
}
