package convert

import (
	"errors"

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
// importance (imatrixEntry): the GGUF name of its source tensor, else its
// output name, else its source name.
func (p *plan) imatrixName(d *decision) string {
	return imatrixEntry(p.opts.Imatrix, p.impNames, d.source, d.info.Name, d.source)
}

// imatrixEntry returns the name under which im holds the importance of a
// weight whose source tensor is source, as convert and verify look it up:
// its GGUF name when m (the architecture of the source's config.json, nil
// when ggufmodel does not know it) maps it and im has it, else the first
// of names that im has, "" when im has none of them.
func imatrixEntry(im *imatrix.Imatrix, m *ggufmodel.Model, source string, names ...string) string {
	if m != nil {
		if mp, err := m.Tensor(source); err == nil && mp.Name != "" && im.Has(mp.Name) {
			return mp.Name
		}
	}
	for _, n := range names {
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
	return p.useImportance(d, p.imatrixName(d))
}
