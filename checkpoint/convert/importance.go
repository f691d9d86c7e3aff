package convert

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmodel"
	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// An importance matrix outside GGUF output: the codebook datatypes of
// several tables search (each subtile takes the table of least
// importance-weighted squared error), so they take it in any layout, and so
// do the datatypes whose scales the scale search chooses (Options.ScaleSearch:
// each block's candidate scales are weighed by it); a datatype that takes
// its scales by rule, without the search, has nothing to weigh.

// ErrImatrixUnused is matched by the error of an importance matrix given
// for output where no quantizer would use it: a layout other than gguf
// with a datatype that does not search (tcast.DataType's
// UsesImportanceWith).
var ErrImatrixUnused = errors.New("the importance matrix would not be used")

// searchers are the quantizers that take an importance matrix, for
// messages.
const searchers = "the GGUF types of the gguf layout (q4_k_m, iq4_xs, ...), the codebook " +
	"datatypes of several tables (mxfi4, mxfp4e, icb44fi2_e32s8, ...) and, with the scale " +
	"search, the MX, NVFP4, integer-group and FP8 datatypes (mxfp4, nvfp4, int4_g128, " +
	"fp8e4_block128, ...)"

// imatrixApplies reports, as an *OptionError for Options.Imatrix that
// matches ErrImatrixUnused and says what to do, when an importance matrix
// would weigh nothing in a conversion to layout lay (nil: the tcast layout)
// with datatype dt and, when scaleSearch, the scale search
// (Options.ScaleSearch): GGUF output always takes one (its searching
// types), other layouts only with a datatype that searches, its tables or,
// with scaleSearch, its scales.
func imatrixApplies(lay layout.Layout, dt *tcast.DataType, scaleSearch bool) error {
	if (lay != nil && lay.Container() == layout.GGUF) || dt.UsesImportanceWith(&tcast.Options{ScaleSearch: scaleSearch}) {
		return nil
	}
	why := "pruning without a datatype quantizes nothing"
	fix := Fix{Option: "DataType", Choose: "a datatype that searches"}
	switch {
	case dt != nil && dt.SearchesScales():
		why, fix = dt.String()+" takes its scales by rule", Fix{Option: "ScaleSearch", Value: "true"}
	case dt != nil:
		why = dt.String() + " does not search (its scales come by rule, from one table at most, " +
			"and the scale search does not apply to it)"
	}
	return &OptionError{Option: "Imatrix", Err: ErrImatrixUnused,
		Reason: "weights the error of quantizers that search: " + searchers + "; " + why,
		Fixes:  []Fix{unset("Imatrix"), fix}}
}

// imatrixNames prepares the lookup of importance vectors for output that is
// not a llama.cpp model file (other layouts, generic GGUF): entries are
// keyed by llama.cpp's GGUF names, so a Hugging Face weight of an
// architecture package ggufmodel knows (config.json) is looked up under its
// GGUF name.
func (p *plan) imatrixNames() {
	if m, err := ggufmodel.Detect(p.in.Config()); err == nil {
		p.impNames = m
	}
}

// imatrixName returns the name under which the matrix holds weight d's
// importance (measure.Entry): the GGUF name of its source tensor, else its
// output name, else its source name.
func (p *plan) imatrixName(d *decision) string {
	return measure.Entry(p.opts.Imatrix, p.impNames, d.source, d.info.Name, d.source)
}

// tcastImportance is importance for a layout other than gguf: weight d gets
// its importance vector, not transposed by the layout, when its datatype's
// scales are searched (Options.ScaleSearch), or when it is a codebook
// datatype of several tables whose subtiles run along its rows (the last
// axis). A missing entry quantizes without, as for GGUF output.
func (p *plan) tcastImportance(d *decision) error {
	im := p.opts.Imatrix
	if im == nil || !d.cast {
		return nil
	}
	rank := len(d.shape)
	axis, _ := tcast.AxisIndex(p.opts.Axis, rank)
	uses := (d.dt.UsesImportance() && axis == rank-1) || (p.opts.ScaleSearch && d.dt.SearchesScales())
	if !uses || d.swap {
		d.result.Importance = ImportanceUnused
		return nil
	}
	return p.useImportance(d, p.imatrixName(d))
}

// lookupName returns the name weight d's importance entry would have: the
// GGUF name of its source tensor when the architecture is known, else its
// output name.
func (p *plan) lookupName(d *decision) string {
	if p.impNames != nil {
		if mp, err := p.impNames.Tensor(d.source); err == nil && mp.Name != "" {
			return mp.Name
		}
	}
	return d.info.Name
}

// ErrImatrixUnmatched is matched by the error of Convert for an importance
// matrix that has no entry for any of the weights that would use it: a
// matrix of another model.
var ErrImatrixUnmatched = errors.New("the importance matrix matches no weight")

// checkImatrix checks the plan's use of the importance matrix, once every
// weight is decided and before anything is written: a matrix no weight
// would use (ErrImatrixUnused) or whose entries match none of the weights
// that would use it (ErrImatrixUnmatched) is an *OptionError; entries that
// match no tensor of the input at all are a warning.
func (p *plan) checkImatrix() error {
	im := p.opts.Imatrix
	if im == nil || len(p.converted) == 0 {
		return nil // nothing cast: a GGUF input that holds the mix's types already
	}
	users, found, types := p.imatrixUsers()
	file := filepath.Base(im.Path)
	if len(users) == 0 {
		return &OptionError{Option: "Imatrix", Err: ErrImatrixUnused,
			Reason: fmt.Sprintf("weights the error of quantizers that search, and no weight of this "+
				"conversion is cast to one (they are cast to %s, which take no importance)",
				strings.Join(types, ", ")),
			Fixes: []Fix{unset("Imatrix"), {Option: "DataType", Choose: "a type that searches (a mix " +
				"such as q4_k_m, or q4_k, iq4_xs, ...; outside the gguf layout, a codebook datatype " +
				"of several tables along the last axis, or an MX, NVFP4, integer-group or FP8 " +
				"datatype with the scale search)"}}}
	}
	if len(found) == 0 {
		return p.imatrixUnmatched(users, file)
	}
	p.warnStrayEntries(file)
	return nil
}

// imatrixUsers returns the weights cast to a type that would use the
// importance matrix, those of them that found an entry in it, and the
// types of the weights cast to one that takes none.
func (p *plan) imatrixUsers() (users, found []*decision, unused []string) {
	for _, d := range p.tensors {
		if !d.cast || d.result.Importance == ImportanceNone {
			continue
		}
		if d.result.Importance == ImportanceUnused {
			t := d.dt.String()
			if !slices.Contains(unused, t) {
				unused = append(unused, t)
			}
			continue
		}
		users = append(users, d)
		if d.result.Importance.Matched() {
			found = append(found, d)
		}
	}
	return users, found, unused
}

// imatrixUnmatched is the error of an importance matrix, file, with no
// entry for any of its users, showing an entry's name and a user's.
func (p *plan) imatrixUnmatched(users []*decision, file string) error {
	var entry string
	if im := p.opts.Imatrix; len(im.Entries) > 0 {
		entry = im.Entries[0].Name
	}
	// A weight inside the layers is the likelier example to compare.
	example := users[0]
	for _, d := range users {
		if ggufmix.LayerOf(d.info.Name) >= 0 {
			example = d
			break
		}
	}
	return &OptionError{Option: "Imatrix", Value: file, Err: ErrImatrixUnmatched,
		Reason: fmt.Sprintf("has no entry for any of the %d weights that would use it (its "+
			"entries are named like %q, the weights like %q): is it the matrix of another model?",
			len(users), entry, p.lookupName(example)),
		Fixes: []Fix{{Option: "Imatrix", Choose: "the matrix computed for this model"}, unset("Imatrix")}}
}

// warnStrayEntries warns of the importance matrix's entries (file) that
// match no tensor of the input, kept, cast or dropped.
func (p *plan) warnStrayEntries(file string) {
	im := p.opts.Imatrix
	known := map[string]bool{}
	for _, d := range p.tensors {
		known[d.info.Name], known[d.source], known[p.lookupName(d)] = true, true, true
	}
	for _, d := range p.dropped {
		known[d.info.Name] = true
	}
	var stray []string
	for _, e := range im.Entries {
		if !known[e.Name] {
			stray = append(stray, e.Name)
		}
	}
	if len(stray) > 0 {
		p.warn(Warning{Option: "Imatrix", Value: file, Text: fmt.Sprintf(
			"has %d of its %d entries that match no tensor of the input (%s): is it the matrix of "+
				"a larger or another model?", len(stray), len(im.Entries), listSome(stray, 3))})
	}
}

// listSome quotes up to n of names, with "..." when there are more.
func listSome(names []string, n int) string {
	q := make([]string, 0, n+1)
	for _, s := range names[:min(n, len(names))] {
		q = append(q, fmt.Sprintf("%q", s))
	}
	if len(names) > n {
		q = append(q, "...")
	}
	return strings.Join(q, ", ")
}
