package convert

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// GGUF output with per-tensor types: a llama-quantize mix (package
// ggufmix) chooses each tensor's ggml type, GGUF.TypeFor overrides it, and an
// importance matrix (package imatrix) weights the quantizers' error.

// ImportanceStatus says what became of a tensor's importance vector when
// Options.Imatrix was given (TensorResult.Importance). It is written as its
// sentence (String) in JSON.
type ImportanceStatus uint8

const (
	// ImportanceNone: no importance matrix was given, or the tensor was
	// kept.
	ImportanceNone ImportanceStatus = iota
	// ImportanceUsed: the quantizer weighted its error by the tensor's
	// importance vector.
	ImportanceUsed
	// ImportanceMissing: the matrix has no entry for the tensor, which was
	// quantized without one (llama-quantize: "did not find weights").
	ImportanceMissing
	// ImportanceIgnored: the entry's size does not match the token
	// embedding, which llama-quantize quantizes without it too.
	ImportanceIgnored
	// ImportanceUnused: the tensor's type has no search that takes it
	// (Q8_0, MXFP4, the plain floats), or, outside GGUF output, its
	// codebook datatype's subtiles do not run along its rows (an axis
	// other than the last, a transposing layout).
	ImportanceUnused
	// ImportanceZeroCount: the entry's activation counts are all 0 (no
	// calibration token reached the weight), so its values say nothing;
	// the weight is quantized without it (llama-quantize would weigh every
	// column 1).
	ImportanceZeroCount
	// ImportanceAllZero: the entry's values are all 0 (its activations
	// were all zero), which would weigh every error 0; the weight is
	// quantized without it.
	ImportanceAllZero
)

// importanceText are the sentences of the statuses, as reports show them.
var importanceText = [...]string{
	ImportanceNone:      "",
	ImportanceUsed:      "used",
	ImportanceMissing:   "missing: quantized without",
	ImportanceIgnored:   "size mismatch on the token embedding: quantized without",
	ImportanceUnused:    "not used by this type's quantizer",
	ImportanceZeroCount: "zero counts: quantized without",
	ImportanceAllZero:   "all zero: quantized without",
}

// String returns the status as reports show it ("used", "missing:
// quantized without", ...), "" for ImportanceNone.
func (s ImportanceStatus) String() string {
	if int(s) < len(importanceText) {
		return importanceText[s]
	}
	return fmt.Sprintf("ImportanceStatus(%d)", s)
}

// MarshalText returns String.
func (s ImportanceStatus) MarshalText() ([]byte, error) {
	if int(s) >= len(importanceText) {
		return nil, fmt.Errorf("convert: unknown ImportanceStatus %d", s)
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a status written by MarshalText.
func (s *ImportanceStatus) UnmarshalText(b []byte) error {
	i := slices.Index(importanceText[:], string(b))
	if i < 0 {
		return fmt.Errorf("convert: unknown importance status %q", b)
	}
	*s = ImportanceStatus(i)
	return nil
}

// Matched reports whether the status means the matrix had an entry for the
// tensor.
func (s ImportanceStatus) Matched() bool {
	switch s {
	case ImportanceUsed, ImportanceIgnored, ImportanceZeroCount, ImportanceAllZero:
		return true
	}
	return false
}

// mixApplies reports whether the GGUF output's types come from
// Options.GGUF.Mix: always when DataType is nil, and for a name that is
// both a mix and a datatype (q8_0, q4_k) when the output is a llama.cpp
// model file (a known architecture, or a GGUF input with one).
func (p *plan) mixApplies() bool {
	o := p.opts
	if o.GGUF.Mix.IsZero() || p.lay.Container() != layout.GGUF {
		return false
	}
	return o.DataType == nil || p.modelFile()
}

// modelFile reports whether the GGUF output is a llama.cpp model file: a
// checkpoint of a known architecture, or a GGUF input with one.
func (p *plan) modelFile() bool {
	if p.lay.Container() != layout.GGUF {
		return false
	}
	if p.model != nil {
		return true
	}
	if g := p.in.GGUF(); g != nil {
		a := g.Architecture()
		return a != "" && a != genericArch
	}
	return false
}

// checkModelType refuses Q8_K as the type of a llama.cpp model file's
// weights: it is ggml's intermediate for dot products (the activations'
// side), and llama.cpp has no kernels that take it as a weight. Generic
// GGUF output holds it.
func (p *plan) checkModelType() error {
	if p.mixed || !p.modelFile() {
		return nil
	}
	if t, ok := layout.GGUFTypeOf(p.opts.DataType); ok && t == gguf.TypeQ8_K {
		return &OptionError{Option: "DataType", Value: p.opts.DataType.String(), Err: ErrNotForLlamaCpp,
			Reason: "is ggml's intermediate for dot products, which llama.cpp cannot compute with as " +
				"a weight type, and this output is a llama.cpp model file",
			Fixes: []Fix{{Option: "DataType", Value: "q8_0"}, {Option: "GGUF.Generic", Value: "true"}}}
	}
	return nil
}

// ErrNotForLlamaCpp is matched by the error of an option that would make a
// llama.cpp model file llama.cpp cannot run (DataType q8_k).
var ErrNotForLlamaCpp = errors.New("llama.cpp cannot run the file")

// mixModel describes the model for the mix rules: from config.json for a
// llama.cpp model file, from the GGUF input's keys, or nothing (the rules
// infer the layer count from the names).
func (p *plan) mixModel() ggufmix.Model {
	if m := p.model; m != nil {
		return ggufmix.Model{Arch: m.Arch, Layers: m.Layers, Heads: m.Heads, KVHeads: m.KVHeads}
	}
	g := p.in.GGUF()
	if g == nil {
		return ggufmix.Model{}
	}
	arch := g.Architecture()
	num := func(key string) int {
		v, ok := g.Get(arch + "." + key)
		if !ok {
			return 0
		}
		if n, ok := v.Uint(); ok && n < 1<<31 {
			return int(n) // llama.cpp's converter writes these as uint32
		}
		if n, ok := v.Int(); ok && n > 0 && n < 1<<31 {
			return int(n)
		}
		return 0
	}
	return ggufmix.Model{Arch: arch, Layers: num("block_count"), Heads: num("attention.head_count"),
		KVHeads: num("attention.head_count_kv"), Experts: num("expert_count")}
}

// planMix chooses the type of every tensor of ds (by output name) with the
// mix, and refuses a choice llama-quantize refuses without an importance
// matrix.
func (p *plan) planMix(ds []*decision) error {
	ts := make([]ggufmix.Tensor, len(ds))
	for i, d := range ds {
		ts[i] = ggufmix.Tensor{Name: d.info.Name, Shape: d.info.Shape}
		if t, ok := p.inputType(d); ok {
			ts[i].Keep = t // llama-quantize keeps a GGUF input's type
		} else if t, ok := layout.GGUFType(d.info.DType); ok && p.opts.GGUF.KeepOutput &&
			ggufmix.CategoryOf(d.info.Name) == ggufmix.Output {
			ts[i].Keep = t // the head left as the checkpoint has it (F16, BF16)
		}
	}
	g := &p.opts.GGUF
	mo := ggufmix.Options{Overrides: g.TypeFor, Imatrix: p.opts.Imatrix != nil, Pure: g.Pure,
		OutputType: g.OutputType, TokenEmbeddingType: g.TokenEmbeddingType, KeepOutput: g.KeepOutput}
	choices, err := ggufmix.Plan(g.Mix, p.mixModel(), ts, mo)
	if err != nil {
		return fmt.Errorf("mix %s: %w", g.Mix, err)
	}
	for i, d := range ds {
		if f, ok := p.fitted[d.info.Name]; ok {
			choices[i] = f // the size target's choice
		}
		d.mix = &choices[i]
	}
	return p.checkNeedsImatrix(ds)
}

// inputType returns the ggml type of tensor d in a GGUF input; false for
// any other input.
func (p *plan) inputType(d *decision) (gguf.Type, bool) {
	g := p.in.GGUF()
	if g == nil {
		return 0, false
	}
	ti, ok := g.Tensor(d.source)
	return ti.Type, ok
}

// ErrImatrixRequired is matched by the error of Convert for a mix that
// gives a tensor a type llama-quantize quantizes only with an importance
// matrix (ggufmix.Decision.NeedsImatrix), given none.
var ErrImatrixRequired = errors.New("the mix needs an importance matrix")

// checkNeedsImatrix refuses the first tensor whose type needs an
// importance matrix (ggufmix.Decision.NeedsImatrix) when none is given,
// or the matrix given has no entry for it, as llama-quantize does; a dry
// run without a matrix warns instead.
func (p *plan) checkNeedsImatrix(ds []*decision) error {
	im := p.opts.Imatrix
	i := slices.IndexFunc(ds, func(d *decision) bool {
		return d.mix.Quantize && d.mix.NeedsImatrix && (im == nil || p.imatrixName(d) == "")
	})
	if i < 0 {
		return nil
	}
	c := ds[i].mix
	why := fmt.Sprintf("is needed: the %s mix gives tensor %s type %s, which llama-quantize "+
		"quantizes only with an importance matrix (without one the model's output is garbage)",
		p.opts.GGUF.Mix, c.Name, c.Type)
	fixes := []Fix{{Option: "Imatrix", Choose: "the importance matrix of this model (docs/GGUF.md §2.6)"},
		{Option: "GGUF.Mix", Choose: "a mix that needs none (Q2_K, Q3_K_S, ...)"}}
	switch {
	case im != nil:
		why = fmt.Sprintf("has no entry for tensor %s, which the %s mix gives type %s: llama-quantize "+
			"quantizes that type only with an importance matrix", c.Name, p.opts.GGUF.Mix, c.Type)
		fixes[0].Choose = "a matrix computed for this model, with every weight"
	case p.opts.DryRun:
		p.warn(Warning{Option: "Imatrix", Text: why + "; the conversion itself will need one"})
		return nil
	}
	return &OptionError{Option: "Imatrix", Err: ErrImatrixRequired, Reason: why, Fixes: fixes}
}

// ggufDataType returns the gguf layout's datatype of ggml type t.
func (p *plan) ggufDataType(t gguf.Type) (*tcast.DataType, error) {
	return layout.DataType(p.lay, strings.ToLower(t.String()))
}

// decideMix decides a tensor by its mix choice: the type, or why it is
// kept (as F32 from a checkpoint, as llama.cpp's converter writes it; as
// stored from a GGUF input, as llama-quantize keeps it, also when the mix
// gives a quantized tensor the type it has).
func (p *plan) decideMix(d *decision, keep func(string) error) (*tcast.DataType, error) {
	c := d.mix
	in, fromGGUF := p.inputType(d)
	if !c.Quantize || (fromGGUF && in.Quantized() && c.Type == in) {
		d.f32 = c.Type == gguf.TypeF32
		d.raw = fromGGUF && in.Quantized()
		why := c.Reason
		if c.Quantize {
			d.result.Reason = c.Reason
			why = "already " + in.String() + ", copied as stored"
		}
		return nil, keep(why)
	}
	if fromGGUF && in.Quantized() && !p.opts.GGUF.AllowRequantize {
		return nil, &OptionError{Option: "GGUF.AllowRequantize", Err: ErrRequantize,
			Reason: fmt.Sprintf("is needed to quantize tensor %s, %s in the input, to %s (%s): its error "+
				"would add to the input's (llama-quantize refuses it too); quantize the F16, BF16 or F32 "+
				"model the input came from instead", d.info.Name, in, c.Type, c.Reason),
			Fixes: []Fix{{Option: "GGUF.AllowRequantize", Value: "true"}}}
	}
	dt, err := p.ggufDataType(c.Type)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %s: %w", d.info.Name, c.Reason, err)
	}
	d.result.Reason = c.Reason
	return dt, nil
}

// ErrRequantize is matched by the error of Convert for a mix that would
// quantize a GGUF input's quantized tensor to another type without
// GGUF.AllowRequantize.
var ErrRequantize = errors.New("requantizing is not allowed")

// overrideType applies the first GGUF.TypeFor rule matching a cast weight of
// a GGUF output without a mix (one datatype for every weight), as ggufmix
// decides and words it: the rule's type, which must fit the row length
// (there is no mix to fall back by).
func (p *plan) overrideType(d *decision, dt *tcast.DataType) (*tcast.DataType, error) {
	c, ok, err := ggufmix.Overridden(p.opts.GGUF.TypeFor, ggufmix.Tensor{Name: d.info.Name, Shape: d.info.Shape}, false)
	if err != nil || !ok {
		return dt, err
	}
	odt, err := p.ggufDataType(c.Type)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %s: %w", d.info.Name, c.Reason, err)
	}
	d.result.Reason = c.Reason
	return odt, nil
}

// importance finds the importance vector of a weight cast to a GGUF type:
// one per matrix (per expert of a 3-D expert weight), matrix after matrix.
// A missing entry, and a size mismatch on the token embedding, quantize
// without (as llama-quantize does, and the report says so); any other size
// mismatch is an error naming the tensor.
func (p *plan) importance(d *decision) error {
	im := p.opts.Imatrix
	if im != nil && p.lay.Container() != layout.GGUF {
		return p.tcastImportance(d)
	}
	if im == nil || !d.cast {
		return nil
	}
	typ := d.specs[0].GGML
	if !gguf.Searches(typ) {
		d.result.Importance = ImportanceUnused
		return nil
	}
	return p.useImportance(d, p.imatrixName(d))
}

// useImportance gives weight d the importance vector the matrix holds
// under name ("" or an absent name: none, and the report says it is
// missing): one per matrix (per expert of a 3-D expert weight), matrix
// after matrix. A size mismatch on the token embedding quantizes without;
// any other is an error naming the tensor.
func (p *plan) useImportance(d *decision, name string) error {
	v, rows, status, err := p.importanceOf(d, name, d.shape)
	d.imp, d.impRows, d.result.Importance = v, rows, status
	return err
}

// importanceOf returns the importance vectors the matrix holds under name
// for weight d of shape (one per rows rows, nil for none) and what became
// of them: see useImportance.
func (p *plan) importanceOf(d *decision, name string, shape []int) (v []float32, rows int, _ ImportanceStatus, _ error) {
	im := p.opts.Imatrix
	if name == "" || !im.Has(name) {
		return nil, 0, ImportanceMissing, nil
	}
	if why := degenerate(im, name); why != ImportanceNone {
		return nil, 0, why, nil
	}
	cols, experts := measure.Matrices(shape)
	v, err := im.Vector(name, cols, experts)
	var se *imatrix.SizeError
	switch {
	case errors.As(err, &se) && ggufmix.CategoryOf(name) == ggufmix.TokenEmbd:
		return nil, 0, ImportanceIgnored, nil
	case err != nil:
		return nil, 0, ImportanceNone, &OptionError{Option: "Imatrix", Value: filepath.Base(im.Path), Err: err,
			Reason: fmt.Sprintf("does not fit tensor %s: %v", d.info.Name, err),
			Fixes:  []Fix{{Option: "Imatrix", Choose: "the matrix computed for this model"}}}
	}
	rows = 1
	for _, n := range shape[:len(shape)-1] {
		rows *= n
	}
	return v, rows / (len(v) / cols), ImportanceUsed, nil
}

// degenerate returns the status of an entry that records no activations
// (ImportanceZeroCount: every count 0; ImportanceAllZero: every value 0),
// whose weight is quantized without it, and ImportanceNone for any other.
func degenerate(im *imatrix.Imatrix, name string) ImportanceStatus {
	switch noCounts, allZero := measure.Unrecorded(im, name); {
	case noCounts:
		return ImportanceZeroCount
	case allZero:
		return ImportanceAllZero
	}
	return ImportanceNone
}

// addRows adds rows of weight d, whose importance vectors it holds, to s,
// weighted as d's quantizer weighs them.
func addRows(s *measure.Weighted, d *decision, r0 int, x, y []float32) {
	t, _ := layout.GGUFTypeOf(d.dt) // 0 (F32) for the datatypes of other layouts
	s.AddType(t, d.imp, d.shape[len(d.shape)-1], d.impRows, r0, x, y)
}

// fileType returns the mix that labels a GGUF output (general.file_type):
// Options.GGUF.Mix when it chooses the types, else the mix of
// Options.DataType's ggml type (ggufmix.ForType), whatever GGUF.TypeFor does
// to single tensors; false when there is none.
func (p *plan) fileType() (ggufmix.Mix, bool) {
	if p.mixed {
		return p.opts.GGUF.Mix, true
	}
	t, ok := layout.GGUFTypeOf(p.opts.DataType)
	if !ok {
		return ggufmix.Mix{}, false
	}
	return ggufmix.ForType(t)
}

// tailKV is the typed metadata a GGUF output gets after the model's (or
// the input's): general.file_type of a mix, when the model's keys do not
// carry it (a GGUF input's own with COPY), and the importance matrix's
// quantize.imatrix.* keys.
func (p *plan) tailKV() []gguf.KV {
	if p.lay.Container() != layout.GGUF {
		return nil
	}
	var kv []gguf.KV
	switch {
	case p.mixed && p.opts.GGUF.Mix.Copies():
		if v, ok := p.in.GGUF().Get(gguf.KeyFileType); ok {
			kv = append(kv, gguf.KV{Key: gguf.KeyFileType, Value: v}) // llama-quantize keeps it
		}
	case p.mixed && p.model == nil:
		kv = append(kv, gguf.KV{Key: gguf.KeyFileType, Value: gguf.Uint32(p.opts.GGUF.Mix.FileType())})
	}
	if p.opts.Imatrix != nil {
		kv = append(kv, p.opts.Imatrix.Metadata()...)
	}
	return kv
}

// outputKV is the typed metadata of GGUF output: the model's or input's
// keys, tailKV's and GGUF.KV's.
func (p *plan) outputKV() []gguf.KV {
	return gguf.SetKV(append(slices.Clip(p.ggufKV), p.tailKV()...), p.opts.GGUF.KV...)
}

// checkPatterns warns of each GGUF.TypeFor, Include and Exclude pattern
// that matches no tensor of the output: for a llama.cpp model file, that
// patterns match its GGUF names, with the GGUF name of a tensor whose
// Hugging Face name it matches; for any output, a name it matches when
// case is ignored (patterns are case-sensitive, as docs/GGUF.md §1.6 says).
func (p *plan) checkPatterns() {
	type pattern struct {
		option, value string
		re            *regexp.Regexp
	}
	var ps []pattern
	for _, o := range p.opts.GGUF.TypeFor {
		ps = append(ps, pattern{"GGUF.TypeFor", o.Value, o.Pattern})
	}
	for _, f := range []struct {
		option string
		re     *regexp.Regexp
	}{{"Include", p.opts.Include}, {"Exclude", p.opts.Exclude}} {
		if f.re != nil {
			ps = append(ps, pattern{f.option, f.re.String(), f.re})
		}
	}
	for _, pt := range ps {
		if pt.re == nil || slices.ContainsFunc(p.tensors, func(d *decision) bool { return pt.re.MatchString(d.info.Name) }) {
			continue
		}
		p.warn(Warning{Option: pt.option, Value: strconv.Quote(pt.value), Text: p.unmatched(pt.re)})
	}
}

// unmatched says of a pattern that matches no tensor what it may have
// meant.
func (p *plan) unmatched(re *regexp.Regexp) string {
	msg := "matches no tensor"
	if p.modelFile() {
		msg += "; patterns match the llama.cpp model file's GGUF names (blk.N.ffn_down.weight, token_embd.weight)"
		if i := slices.IndexFunc(p.tensors, func(d *decision) bool { return d.source != "" && re.MatchString(d.source) }); i >= 0 {
			d := p.tensors[i]
			msg += fmt.Sprintf(": it matches the input's %s, which is %s here", d.source, d.info.Name)
		}
	}
	if ci, err := regexp.Compile("(?i)" + re.String()); err == nil {
		if i := slices.IndexFunc(p.tensors, func(d *decision) bool { return ci.MatchString(d.info.Name) }); i >= 0 {
			msg += fmt.Sprintf("; it would match %s if case were ignored: patterns are case-sensitive (write it in lower case, or add (?i))", p.tensors[i].info.Name)
		}
	}
	return msg
}

// ErrGGUFInputOnly is matched by the error of an option that applies to a
// GGUF input only (the COPY mix, GGUF.PruneLayers) given another input.
var ErrGGUFInputOnly = errors.New("the option applies to a GGUF input only")

// checkMixOptions refuses the options of a mix without one, and COPY for
// an input whose tensors have no GGUF types to keep.
func (p *plan) checkMixOptions() error {
	g := &p.opts.GGUF
	if option, ok := firstSet(append(g.typeOptions(), optionSet{"GGUF.Pure", g.Pure},
		optionSet{"GGUF.TargetBPW", g.TargetBPW > 0}, optionSet{"GGUF.TargetSize", g.TargetSize > 0})...); ok && !p.mixed {
		return &OptionError{Option: option, Err: ErrMixOnly,
			Reason: "applies to a GGUF mix, and this output is generic GGUF, where the datatype " +
				"already goes to every cast weight",
			Fixes: []Fix{unset(option)}}
	}
	if option, ok := firstSet(optionSet{"GGUF.TypeFor", len(g.TypeFor) > 0},
		optionSet{"GGUF.OutputType", g.OutputType != nil}, optionSet{"GGUF.TokenEmbeddingType", g.TokenEmbeddingType != nil},
		optionSet{"GGUF.Pure", g.Pure}, optionSet{"GGUF.TargetBPW", g.TargetBPW > 0},
		optionSet{"GGUF.TargetSize", g.TargetSize > 0}); ok && p.mixed && g.Mix.Copies() {
		return &OptionError{Option: option, With: "GGUF.Mix", Err: ErrConflict,
			Reason: "sets types, and the COPY mix keeps every tensor's type",
			Fixes:  []Fix{unset(option), {Option: "GGUF.Mix", Choose: "a mix that quantizes"}}}
	}
	if p.mixed && g.Mix.Copies() && p.in.GGUF() == nil {
		return &OptionError{Option: "GGUF.Mix", Value: g.Mix.String(), Err: ErrGGUFInputOnly,
			Reason: "keeps the type of every tensor of a GGUF input, and this input has no GGUF " +
				"types to keep; a checkpoint becomes a GGUF file of F16, BF16 or F32 weights",
			Fixes: []Fix{{Option: "GGUF.Mix", Value: "BF16"}, {Option: "GGUF.Mix", Value: "F16"}}}
	}
	return nil
}
