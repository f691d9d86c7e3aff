package convert

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmodel"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// An importance matrix outside GGUF output: the codebook datatypes of
// several tables search (each subtile takes the table of least
// importance-weighted squared error), so they take it in any layout; a
// datatype that takes its scales by rule has nothing to weigh.

// ErrImatrixUnused is the error (wrapped, with what to do) of an importance
// matrix given for output where no quantizer would use it: a layout other
// than gguf with a datatype that does not search (tcast.DataType's
// UsesImportance).
var ErrImatrixUnused = errors.New("-imatrix would not be used")

// ImatrixApplies reports, as an *OptionError for -imatrix that matches
// ErrImatrixUnused and says what to do, when an importance matrix would weigh nothing in
// a conversion to layout lay (nil: the tcast layout) with datatype dt: GGUF output always takes one
// (its searching types), other layouts only with a datatype that searches.
func ImatrixApplies(lay layout.Layout, dt *tcast.DataType) error {
	if (lay != nil && lay.Container() == layout.GGUF) || dt.UsesImportance() {
		return nil
	}
	why := "pruning without a datatype quantizes nothing"
	if dt != nil {
		why = dt.Name() + " does not search (its scales come by rule, from one table at most)"
	}
	return &OptionError{Flag: "-imatrix", Err: ErrImatrixUnused,
		Reason: "weights the error of quantizers that search, the GGUF types of -layout gguf (q4_k_m, iq4_xs, ...) and the codebook datatypes of several tables (mxfi4, mxfp4e, icb44fi2_e32s8, ...); " + why + ": drop -imatrix, or choose such a datatype or -layout gguf"}
}

// imatrixNames prepares the lookup of importance vectors for output that is
// not GGUF: entries are keyed by llama.cpp's GGUF names, so a Hugging Face
// weight of an architecture package ggufmodel knows (config.json) is looked
// up under its GGUF name.
func (p *plan) imatrixNames() {
	if m, err := ggufmodel.Detect(p.in.Config()); err == nil {
		p.impNames = m
	}
}

// imatrixName returns the name under which the matrix holds weight d's
// importance: the GGUF name of its source tensor when the architecture is
// known and the matrix has it, else its output name, else its source name
// ("" when the matrix has none of them).
func (p *plan) imatrixName(d *decision) string {
	im := p.opts.Imatrix
	if p.impNames != nil {
		if mp, err := p.impNames.Tensor(d.source); err == nil && mp.Name != "" && im.Has(mp.Name) {
			return mp.Name
		}
	}
	for _, n := range []string{d.info.Name, d.source} {
		if im.Has(n) {
			return n
		}
	}
	return ""
}

// tcastImportance is importance for a layout other than gguf: weight d gets
// its importance vector when its datatype searches and its subtiles run
// along its rows (the last axis, not transposed by the layout). A missing
// entry quantizes without, as for GGUF output.
func (p *plan) tcastImportance(d *decision) error {
	im := p.opts.Imatrix
	if im == nil || !d.cast {
		return nil
	}
	rank := len(d.shape)
	if axis, _ := tcast.AxisIndex(p.opts.Axis, rank); !d.dt.UsesImportance() || d.swap || axis != rank-1 {
		d.result.Importance = ImportanceUnused
		return nil
	}
	name := p.imatrixName(d)
	if name == "" {
		d.result.Importance = ImportanceMissing
		return nil
	}
	cols, experts := matrices(d.shape)
	v, err := im.Vector(name, cols, experts)
	var se *imatrix.SizeError
	switch {
	case errors.As(err, &se) && ggufmix.CategoryOf(name) == ggufmix.TokenEmbd:
		d.result.Importance = ImportanceIgnored
		return nil
	case err != nil:
		return fmt.Errorf("tensor %s: -imatrix %s: %w", d.info.Name, filepath.Base(im.Path), err)
	}
	d.imp = v
	rows := 1
	for _, n := range d.shape[:rank-1] {
		rows *= n
	}
	d.impRows = rows / (len(v) / cols)
	d.result.Importance = ImportanceUsed
	return nil
}
