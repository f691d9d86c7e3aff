package convert

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// GGUF output with per-tensor types: a llama-quantize mix (package
// ggufmix) chooses each tensor's ggml type, -type-for overrides it, and an
// importance matrix (package imatrix) weights the quantizers' error.

// ImportanceUsed and the other values of TensorResult.Importance say what
// became of a tensor's importance vector when Options.Imatrix was given.
const (
	// ImportanceUsed: the quantizer weighted its error by the tensor's
	// importance vector.
	ImportanceUsed = "used"
	// ImportanceMissing: the matrix has no entry for the tensor, which was
	// quantized without one (llama-quantize: "did not find weights").
	ImportanceMissing = "missing: quantized without"
	// ImportanceIgnored: the entry's size does not match the token
	// embedding, which llama-quantize quantizes without it too.
	ImportanceIgnored = "size mismatch on the token embedding: quantized without"
	// ImportanceUnused: the tensor's type has no search that takes it
	// (Q8_0, MXFP4, the plain floats).
	ImportanceUnused = "not used by this type's quantizer"
)

// mixApplies reports whether the GGUF output's types come from
// Options.GGUFMix: always when DataType is nil, and for a name that is
// both a mix and a datatype (q8_0, q4_k) when the output is a llama.cpp
// model file (a known architecture, or a GGUF input with one).
func (p *plan) mixApplies() bool {
	o := p.opts
	if o.GGUFMix.IsZero() || p.lay.Container() != layout.GGUF {
		return false
	}
	if o.DataType == nil {
		return true
	}
	if p.model != nil {
		return true
	}
	if g := p.in.GGUF(); g != nil {
		a := g.Architecture()
		return a != "" && a != "tcast"
	}
	return false
}

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
		if v, ok := g.Get(arch + "." + key); ok {
			if n, ok := v.Int(); ok && n > 0 && n < 1<<31 {
				return int(n)
			}
		}
		return 0
	}
	return ggufmix.Model{Arch: arch, Layers: num("block_count"), Heads: num("attention.head_count"),
		KVHeads: num("attention.head_count_kv"), Experts: num("expert_count")}
}

// planMix chooses the type of every tensor of ds (by output name) with the
// mix.
func (p *plan) planMix(ds []*decision) error {
	ts := make([]ggufmix.Tensor, len(ds))
	for i, d := range ds {
		ts[i] = ggufmix.Tensor{Name: d.info.Name, Shape: d.info.Shape}
	}
	mo := ggufmix.Options{Overrides: p.opts.TypeFor, Imatrix: p.opts.Imatrix != nil, Pure: p.opts.GGUFPure}
	choices, err := ggufmix.Plan(p.opts.GGUFMix, p.mixModel(), ts, mo)
	if err != nil {
		return fmt.Errorf("mix %s: %w", p.opts.GGUFMix, err)
	}
	for i, d := range ds {
		d.mix = &choices[i]
	}
	return nil
}

// ggufDataType returns the gguf layout's datatype of ggml type t.
func (p *plan) ggufDataType(t gguf.Type) (*tcast.DataType, error) {
	return layout.DataType(p.lay, strings.ToLower(t.String()))
}

// decideMix decides a tensor by its mix choice: the type, or why it is
// kept (as F32, as llama-quantize's input has it).
func (p *plan) decideMix(d *decision, keep func(string) error) (*tcast.DataType, error) {
	c := d.mix
	if !c.Quantize {
		if c.Type == gguf.TypeF32 {
			d.f32 = true
		}
		return nil, keep(c.Reason)
	}
	dt, err := p.ggufDataType(c.Type)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %s: %w", d.info.Name, c.Reason, err)
	}
	d.result.Reason = c.Reason
	return dt, nil
}

// overrideType applies the first -type-for rule matching a cast weight of
// a GGUF output without a mix (one datatype for every weight), as ggufmix
// decides and words it: the rule's type, which must fit the row length
// (there is no mix to fall back by).
func (p *plan) overrideType(d *decision, dt *tcast.DataType) (*tcast.DataType, error) {
	c, ok, err := ggufmix.Overridden(p.opts.TypeFor, ggufmix.Tensor{Name: d.info.Name, Shape: d.info.Shape}, false)
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
	cols, experts := matrices(d.shape)
	if !im.Has(d.info.Name) {
		d.result.Importance = ImportanceMissing
		return nil
	}
	v, err := im.Vector(d.info.Name, cols, experts)
	var se *imatrix.SizeError
	switch {
	case errors.As(err, &se) && ggufmix.CategoryOf(d.info.Name) == ggufmix.TokenEmbd:
		d.result.Importance = ImportanceIgnored
		return nil
	case err != nil:
		return fmt.Errorf("tensor %s: -imatrix %s: %w", d.info.Name, filepath.Base(im.Path), err)
	}
	d.imp = v
	rows := 1
	for _, n := range d.shape[:len(d.shape)-1] {
		rows *= n
	}
	d.impRows = rows / (len(v) / cols)
	d.result.Importance = ImportanceUsed
	return nil
}

// wsum is the importance-weighted signal and error energy of a weight's
// rows: Σ w·x² and Σ w·(x − x̂)², w the importance of x's column.
type wsum struct{ signal, noise float64 }

// add adds rows [r0, r0 + len(x)/cols) of a weight, x their source and y
// their dequantized values; imp holds one importance vector of cols values
// per rowsPer rows.
func (s *wsum) add(imp []float32, cols, rowsPer, r0 int, x, y []float32) {
	for r := 0; r*cols < len(x); r++ {
		k := (r0 + r) / rowsPer
		w := imp[k*cols : (k+1)*cols]
		// Elements whose error is not finite are left out: the plain sums
		// count them (Lost).
		var sig, noise [kernels.ErrorLanes]float64
		kernels.WeightedErrorSums(&sig, &noise, w, x[r*cols:(r+1)*cols], y[r*cols:(r+1)*cols])
		var rs, rn float64
		for l := range sig {
			rs += sig[l]
			rn += noise[l]
		}
		s.signal += rs
		s.noise += rn
	}
}

// addRows adds rows of weight d, whose importance vectors it holds.
func (s *wsum) addRows(d *decision, r0 int, x, y []float32) {
	s.add(d.imp, d.shape[len(d.shape)-1], d.impRows, r0, x, y)
}

// weightedSQNR returns the importance-weighted SQNR of got against want, a
// tensor of the given shape named name in the matrix, or nil when the
// matrix has no entry of that size for it or got is exact.
func weightedSQNR(im *imatrix.Imatrix, name string, shape []int, want, got []float32) *float64 {
	cols, experts := matrices(shape)
	if !im.Has(name) {
		return nil
	}
	imp, err := im.Vector(name, cols, experts)
	if err != nil {
		return nil
	}
	var s wsum
	s.add(imp, cols, len(want)/len(imp), 0, want, got)
	return s.sqnr()
}

// matrices returns the columns of a weight of the given shape and the
// number of matrices its importance covers: the experts of a 3-D expert
// weight, else 1.
func matrices(shape []int) (cols, experts int) {
	cols, experts = shape[len(shape)-1], 1
	if len(shape) == 3 {
		experts = shape[0]
	}
	return cols, experts
}

// sqnr returns the weighted SQNR in dB, nil when there is no error.
func (s wsum) sqnr() *float64 {
	if s.noise == 0 {
		return nil
	}
	v := 10 * math.Log10(s.signal/s.noise)
	return &v
}

// fileType returns the mix that labels a GGUF output (general.file_type):
// Options.GGUFMix when it chooses the types, else the mix of
// Options.DataType's ggml type (ggufmix.ForType), whatever -type-for does
// to single tensors; false when there is none.
func (p *plan) fileType() (ggufmix.Mix, bool) {
	if p.mixed {
		return p.opts.GGUFMix, true
	}
	t, ok := layout.GGUFTypeOf(p.opts.DataType)
	if !ok {
		return ggufmix.Mix{}, false
	}
	return ggufmix.ForType(t)
}

// tailKV is the typed metadata a GGUF output gets after the model's (or
// the input's): general.file_type of a mix, when the model's keys do not
// carry it, and the importance matrix's quantize.imatrix.* keys.
func (p *plan) tailKV() []gguf.KV {
	if p.lay.Container() != layout.GGUF {
		return nil
	}
	var kv []gguf.KV
	if m, ok := p.fileType(); ok && p.mixed && p.model == nil {
		kv = append(kv, gguf.KV{Key: gguf.KeyFileType, Value: gguf.Uint32(m.FileType())})
	}
	if p.opts.Imatrix != nil {
		kv = append(kv, p.opts.Imatrix.Metadata()...)
	}
	return kv
}
