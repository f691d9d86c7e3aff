// Package verify compares a converted checkpoint with its source, tensor
// by tensor: Checkpoints reads every tensor of both (with package load, so
// either may be in any layout, GGUF included), dequantizes the converted
// ones and gives each tensor's datatype, bits per value and error (SQNR,
// MSE, maximum absolute error, values lost to NaN or Inf), and with an
// importance matrix the importance-weighted SQNR that the GGUF quantizers
// minimise.
//
// A conversion records what it did to tensor names and values (renames,
// a llama.cpp model's permuted query and key rows, dropped tensors):
// Checkpoints undoes it, so a GGUF model file made from a Hugging Face
// checkpoint verifies against that checkpoint.
package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmodel"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
)

// Options control Checkpoints. The zero value compares the values alone.
type Options struct {
	// Imatrix, when set, adds each converted tensor's importance-weighted
	// SQNR (Result.WeightedSQNR): the measure the GGUF quantizers minimise
	// when convert is given the importance matrix, and a way to compare
	// conversions with and without it.
	Imatrix *imatrix.Imatrix
	// Observe, when set, is called for each float tensor compared, in the
	// source's order, with its result and both sets of values: the
	// source's (after the conversion's transform) and the converted
	// checkpoint's, dequantized. The slices are valid only during the call.
	// The HTML report (package report) measures its error histograms so.
	Observe func(r *Result, want, got []float32)
}

// Report is what Checkpoints found.
type Report struct {
	// Tensors holds a result for every tensor compared, in the source's
	// order.
	Tensors []Result
	// Swapped is set when the source holds quantized tensors and the
	// converted checkpoint none: the two look given the wrong way round
	// (or the second is a dequantized copy of the first).
	Swapped bool
	// Unmatched is set when Options.Imatrix has no entry for any
	// converted weight, which leaves every WeightedSQNR nil.
	Unmatched *ImatrixUnmatched
}

// ImatrixUnmatched says that an importance matrix has no entry for any
// converted weight: likely the matrix of another model.
type ImatrixUnmatched struct {
	Path    string // the matrix's file (imatrix.Imatrix.Path)
	Weights int    // the converted weights looked up
	Entry   string // the matrix's first entry, an example of its names
}

// Result compares one tensor of a converted checkpoint with its source.
type Result struct {
	Name      string `json:"name"`
	Shape     []int  `json:"shape"`
	Converted bool   `json:"converted"`
	DataType  string `json:"datatype,omitempty"` // the converted tensor's datatype or stored type
	// Bits is what the tensor costs per value in the converted
	// checkpoint: every byte stored for it (values, scales, masks), as
	// convert's report counts a cast weight's bits.
	Bits      float64  `json:"bits_per_value"`
	SQNR      *float64 `json:"sqnr_db"` // nil: exact, or an all-zero source
	MSE       float64  `json:"mse"`
	MaxAbsErr float64  `json:"max_abs_error"`
	// Lost counts finite source values that came back NaN or infinite; any is
	// a failure, and makes the error not finite: SQNR −Inf, MSE and
	// MaxAbsErr +Inf, written as null in JSON (MarshalJSON).
	Lost int `json:"nonfinite_outputs"`
	// WeightedSQNR is the SQNR in dB with each element weighted by its
	// column's importance (Options.Imatrix) and, for a GGUF type whose
	// quantizer searches, as that quantizer weighs it (gguf.Weigh): the
	// error it minimised. Its importance entry is found as
	// convert finds it: for a Hugging Face source of an architecture
	// package ggufmodel knows, by its GGUF name, else by the converted
	// tensor's name, else by the source's; nil without an importance
	// matrix, for a tensor it has no entry for, or when the tensor is
	// exact.
	WeightedSQNR *float64 `json:"weighted_sqnr_db,omitempty"`
}

// WeightedSQNR returns the mean of the results' WeightedSQNR by elements
// (as convert's summary gives its means), nil when none has one, and the
// number of tensors that have one.
func (r *Report) WeightedSQNR() (*float64, int) {
	var m measure.MeanSQNR
	n := 0
	for _, t := range r.Tensors {
		if t.WeightedSQNR != nil && t.Lost == 0 { // a weight that lost values has no finite error
			m.Add(t.WeightedSQNR, measure.Elements(t.Shape))
			n++
		}
	}
	return m.Mean(), n
}

// ErrMismatch is matched by the error of Checkpoints when the two
// checkpoints do not hold the same tensors (names, shapes, or non-float
// bytes).
var ErrMismatch = errors.New("checkpoints differ")

// Checkpoints reads every tensor of the converted checkpoint conv,
// dequantized, and compares it with the same tensor of orig. Both are
// opened with load.Open, so either may be in any layout, GGUF included.
// Tensors that are neither quantized nor float must match byte for byte.
// For a llama.cpp model GGUF, tensors are paired by their source names,
// the source's values go through the change the conversion made (query
// and key rows permuted, Gemma's norms plus one) before they are compared,
// and the tensors it leaves out (a tied output head) are skipped.
func Checkpoints(orig, conv string, o Options) (*Report, error) {
	src, err := load.Open(orig)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	c, err := load.Open(conv)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	p := &pairing{orig: orig, conv: conv, src: src, c: c, o: o}
	if err := p.readRecords(); err != nil {
		return nil, err
	}
	return p.run()
}

// pairing is one run of Checkpoints.
type pairing struct {
	orig, conv string
	src, c     *load.Checkpoint
	o          Options
	// What the conversion recorded: renames (converted name → source
	// name), value transforms by converted name, dropped source tensors.
	renamed, dropped map[string]string
	xf               map[string]ggufmodel.Transform
	convName         map[string]string // source name → converted name
	impNames         *ggufmodel.Model  // the source's architecture, for importance entries
	weights, found   int               // converted weights looked up in the matrix, and found
}

// readRecords reads what the conversion recorded in conv's metadata.
func (p *pairing) readRecords() error {
	for _, m := range []struct {
		key string
		dst any
	}{{layout.KeyRenamed, &p.renamed}, {layout.KeyTransforms, &p.xf}, {layout.KeyDropped, &p.dropped}} {
		if js, ok := p.c.Metadata()[m.key]; ok {
			if err := json.Unmarshal([]byte(js), m.dst); err != nil {
				return fmt.Errorf("%s: metadata %s: %w", p.conv, m.key, err)
			}
		}
	}
	// Importance entries are GGUF names: a Hugging Face source of a known
	// architecture is looked up under its tensors' GGUF names too.
	if p.o.Imatrix != nil {
		p.impNames, _ = ggufmodel.Detect(p.src.Config())
	}
	p.convName = map[string]string{}
	for n, o := range p.renamed {
		p.convName[o] = n
	}
	return nil
}

// run compares every tensor of the source that the conversion kept.
func (p *pairing) run() (*Report, error) {
	rep := &Report{}
	quantized, converted := 0, 0 // the source's quantized tensors, conv's
	for _, ti := range p.src.Tensors() {
		if _, ok := p.dropped[ti.Name]; ok {
			continue
		}
		r, err := p.tensor(ti)
		if err != nil {
			return nil, err
		}
		if ti.Quantized() {
			quantized++
		}
		if r.Converted {
			converted++
		}
		rep.Tensors = append(rep.Tensors, r)
	}
	rep.Swapped = quantized > 0 && converted == 0
	if im := p.o.Imatrix; im != nil && p.weights > 0 && p.found == 0 {
		rep.Unmatched = &ImatrixUnmatched{Path: im.Path, Weights: p.weights}
		if len(im.Entries) > 0 {
			rep.Unmatched.Entry = im.Entries[0].Name
		}
	}
	return rep, nil
}

// tensor compares the source's tensor ti with its converted tensor.
func (p *pairing) tensor(ti load.Info) (Result, error) {
	cname := ti.Name
	if n, ok := p.convName[ti.Name]; ok {
		cname = n
	}
	ci, err := p.c.Info(cname)
	if err != nil {
		return Result{}, p.missing(ti.Name)
	}
	r := Result{Name: ti.Name, Shape: ti.Shape, Converted: ci.Quantized(), DataType: ci.Type,
		Bits: measure.StoredBits(ci.Size, ti.Shape)}
	if !ti.Float || !ci.Float {
		return r, p.sameBytes(ti.Name, cname)
	}
	err = p.values(&r, cname)
	p.src.Release(ti.Name)
	p.c.Release(cname)
	return r, err
}

// sameBytes checks that a tensor that is not float is stored alike.
func (p *pairing) sameBytes(name, cname string) error {
	a, err := p.src.Bytes(name)
	if err != nil {
		return err
	}
	b, err := p.c.Bytes(cname)
	if err != nil {
		return err
	}
	if !slices.Equal(a, b) {
		return fmt.Errorf("%w: tensor %s differs between %s and %s", ErrMismatch, name, p.orig, p.conv)
	}
	return nil
}

// values measures the float tensor of r against converted tensor cname.
func (p *pairing) values(r *Result, cname string) error {
	want, _, err := p.src.Float32(r.Name)
	if err != nil {
		return err
	}
	// The transforms take a source's values to the model file's: a source
	// under other names than the converted file's (a Hugging Face one);
	// one of the same names (an F16 model file that convert made from it)
	// holds them transformed already.
	if t, ok := p.xf[cname]; ok && cname != r.Name {
		if want, err = t.Apply(want, r.Shape); err != nil {
			return fmt.Errorf("%s: tensor %s: %w", p.orig, r.Name, err)
		}
	}
	got, shape, err := p.c.Float32(cname)
	if err != nil {
		return err
	}
	if !slices.Equal(shape, r.Shape) {
		return fmt.Errorf("%w: tensor %s has shape %v in %s and %v in %s",
			ErrMismatch, r.Name, r.Shape, p.orig, shape, p.conv)
	}
	e := measure.Compare(want, got)
	r.SQNR, r.MSE, r.MaxAbsErr, r.Lost = e.SQNR, e.MSE, e.MaxAbs, e.Lost
	if p.o.Imatrix != nil && r.Converted && len(shape) >= 2 {
		if err := p.weigh(r, cname, want, got); err != nil {
			return err
		}
	}
	if p.o.Observe != nil {
		p.o.Observe(r, want, got)
	}
	return nil
}

// weigh gives converted weight r its importance-weighted SQNR.
func (p *pairing) weigh(r *Result, cname string, want, got []float32) error {
	im := p.o.Imatrix
	p.weights++
	entry := measure.Entry(im, p.impNames, r.Name, cname, r.Name)
	if entry != "" {
		p.found++
		if err := checkEntrySize(im, entry, r.Shape); err != nil {
			return &ImatrixError{Tensor: r.Name, Path: im.Path, Err: err}
		}
	}
	r.WeightedSQNR = measure.WeightedSQNR(im, entry, r.Shape, p.ggufType(cname), want, got)
	return nil
}

// ggufType returns the GGUF type the converted tensor name is stored as, 0
// (F32) for the datatypes of other layouts.
func (p *pairing) ggufType(name string) gguf.Type {
	ci, err := p.c.Info(name)
	if err != nil {
		return 0
	}
	if t, ok := layout.GGUFTypeOf(ci.DataType); ok {
		return t
	}
	t, _ := gguf.LookupType(ci.Type)
	return t
}
