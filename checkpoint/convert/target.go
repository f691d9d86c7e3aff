package convert

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// targetSampleElems is about how many elements of each tensor a size
// target quantizes to each candidate type to estimate its error there:
// whole rows, spread evenly over the tensor.
const targetSampleElems = 1 << 15

// ErrInvalidTarget is matched by the error of a size target that is not
// a positive size (GGUFOptions.TargetBPW, TargetSize).
var ErrInvalidTarget = errors.New("the size target is not a positive size")

// checkTarget refuses a size target that is negative or not a number,
// both targets at once, and a target with Pure.
func (g *GGUFOptions) checkTarget() error {
	option := map[bool]string{true: "GGUF.TargetBPW", false: "GGUF.TargetSize"}[g.TargetBPW > 0]
	switch {
	case g.TargetBPW < 0 || math.IsNaN(g.TargetBPW) || math.IsInf(g.TargetBPW, 0):
		return &OptionError{Option: "GGUF.TargetBPW", Value: fmt.Sprint(g.TargetBPW), Err: ErrInvalidTarget,
			Reason: "is not a number of bits per weight above 0", Fixes: []Fix{{Option: "GGUF.TargetBPW", Value: "4.5"}}}
	case g.TargetSize < 0:
		return &OptionError{Option: "GGUF.TargetSize", Value: fmt.Sprint(g.TargetSize), Err: ErrInvalidTarget,
			Reason: "is not a size in bytes above 0"}
	case g.TargetBPW > 0 && g.TargetSize > 0:
		return &OptionError{Option: "GGUF.TargetBPW", With: "GGUF.TargetSize", Err: ErrConflict,
			Reason: "both set the file's size", Fixes: []Fix{unset("GGUF.TargetBPW"), unset("GGUF.TargetSize")}}
	case g.Pure && g.targeted():
		return &OptionError{Option: option, With: "GGUF.Pure", Err: ErrConflict,
			Reason: "a size target chooses the types, and a pure mix gives every weight its base type",
			Fixes:  []Fix{unset(option), unset("GGUF.Pure")}}
	}
	return nil
}

// targeted reports whether a size target is set.
func (g *GGUFOptions) targeted() bool { return g.TargetBPW > 0 || g.TargetSize > 0 }

// fitTarget chooses the types of the tunable tensors of the plan, made
// with the mix's types, for the size target (ggufmix.Fit): the file, its
// header and other tensors included (all splits, with ShardSize or
// KeepSplit), must meet it. It returns the choices by output name.
func (p *plan) fitTarget() (map[string]ggufmix.Decision, error) {
	g := &p.opts.GGUF
	var ds []*decision
	var mix []ggufmix.Decision
	var elems int64
	for _, d := range p.tensors {
		if d.mix != nil {
			ds, mix = append(ds, d), append(mix, *d.mix)
		}
		elems += measure.Elements(d.info.Shape)
	}
	total, option, value := g.TargetSize, "GGUF.TargetSize", fmt.Sprint(g.TargetSize)
	if g.TargetBPW > 0 {
		total, option, value = bpwBytes(g.TargetBPW, elems), "GGUF.TargetBPW", fmt.Sprint(g.TargetBPW)
	}
	w, err := ggufWriter(p.specs, p.outputKV(), p.meta)
	if err != nil {
		return nil, err
	}
	cands, err := p.targetCosts(ds, mix, w.Alignment())
	if err != nil {
		return nil, err
	}
	fixed, err := p.fixedBytes(w, ds, cands, total)
	if err != nil {
		return nil, err
	}
	err = ggufmix.Fit(mix, cands, total-fixed)
	if te := (*ggufmix.TargetError)(nil); errors.As(err, &te) {
		least := te.Least + fixed
		bpw := leastBPW(least, elems)
		fix := fmt.Sprint(least)
		if g.TargetBPW > 0 {
			fix = fmt.Sprint(bpw)
		}
		return nil, &OptionError{Option: option, Value: value, Err: err,
			Reason: fmt.Sprintf("is below the smallest file the candidate types make of this model "+
				"(with the token embedding and output head in the mix's types): %d bytes, %v bits per weight",
				least, bpw),
			Fixes: []Fix{{Option: option, Value: fix}, {Option: "GGUF.Mix", Choose: "a mix of fewer bits"}}}
	} else if err != nil {
		return nil, err
	}
	fitted := map[string]ggufmix.Decision{}
	for i, m := range mix {
		if len(cands[i]) > 0 {
			fitted[m.Name] = m
		}
	}
	return fitted, nil
}

// bpwBytes is the file size of bpw bits per weight of elems weights (a
// hair above, for the bpw leastBPW gives).
func bpwBytes(bpw float64, elems int64) int64 {
	return int64(math.Floor(bpw*float64(elems)/8 + 1e-6))
}

// leastBPW returns the least number of bits per weight, in thousandths,
// whose file size for elems weights (bpwBytes) is least bytes or more.
func leastBPW(least, elems int64) float64 {
	k := math.Ceil(float64(8*least) / float64(elems) * 1000)
	for bpwBytes(k/1000, elems) < least {
		k++
	}
	return k / 1000
}

// splitHeader bounds what one more split adds to the files: its header
// (the split keys, general.quantization_version, the padding).
const splitHeader = 256

// fixedBytes returns what the planned file w holds besides the tensors of
// ds a size target chooses types for (those with candidates): the header,
// whose size no type changes, every other tensor, each padded to the
// alignment, and for split output the headers of as many splits as files
// of total bytes may take.
func (p *plan) fixedBytes(w *gguf.Writer, ds []*decision, cands [][]ggufmix.Candidate, total int64) (int64, error) {
	size, err := w.Size()
	for i, d := range ds {
		if len(cands[i]) > 0 {
			for _, sp := range d.specs {
				n, _ := sp.GGML.Size(measure.Elements(sp.Shape))
				size -= padded(n, w.Alignment())
			}
		}
	}
	if p.splits != nil {
		n := int64(slices.Max(append(slices.Clone(p.splits), 0))) + 1
		if s := p.opts.ShardSize; s > 0 {
			n = max(n, (total+s-1)/s) + 1 // a tensor that would pass the limit starts a split
		}
		size += n * splitHeader
	}
	return size, err
}

// padded is n bytes padded to the alignment.
func padded(n, align int64) int64 { return (n + align - 1) / align * align }

// targetCosts returns the candidate types of each tunable tensor of ds with
// their bytes (padded to align) and estimated errors, the tensors sampled
// on the plan's workers; nil for the others, and for a tensor a GGUF input
// holds quantized when requantizing is not allowed (its type stays the
// mix's).
func (p *plan) targetCosts(ds []*decision, mix []ggufmix.Decision, align int64) ([][]ggufmix.Candidate, error) {
	var todo []int
	for i, d := range ds {
		if in, ok := p.inputType(d); ok && in.Quantized() && !p.opts.GGUF.AllowRequantize {
			continue
		}
		if mix[i].Tunable() {
			todo = append(todo, i)
		}
	}
	workers := p.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	cands := make([][]ggufmix.Candidate, len(ds))
	errs := make([]error, len(ds))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(todo)) {
		wg.Go(func() {
			for k := int(next.Add(1)) - 1; k < len(todo); k = int(next.Add(1)) - 1 {
				i := todo[k]
				cands[i], errs[i] = p.candidates(ds[i], mix[i], align)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("tensor %s: size target: %w", ds[i].info.Name, err)
		}
	}
	return cands, nil
}

// candidates returns tensor d's candidate types (ggufmix.Candidates) with
// their bytes padded to align and the noise-to-signal ratio of its sampled rows in each:
// the squared error over the squared values, both weighed by the
// importance vector the quantizer takes (each element 1 without), over the
// finite elements.
func (p *plan) candidates(d *decision, m ggufmix.Decision, align int64) ([]ggufmix.Candidate, error) {
	shape := d.info.Shape
	cols := shape[len(shape)-1]
	n := measure.Elements(shape)
	rows := int(n / int64(cols))
	imp, impRows := p.targetImportance(d)
	sample := spreadRows(rows, max(1, targetSampleElems/cols))
	x, err := p.sampleValues(d, sample, cols)
	if err != nil {
		return nil, err
	}
	types := ggufmix.Candidates(m, cols, imp != nil)
	out := make([]ggufmix.Candidate, 0, len(types))
	y, unit := make([]float32, cols), ones(cols)
	for _, t := range types {
		size, _ := t.Size(n) // the candidates' blocks divide the rows
		rowBytes, _ := t.Size(int64(cols))
		blocks := make([]byte, rowBytes)
		var s measure.Weighted
		for k, r := range sample {
			xr, v := x[k*cols:(k+1)*cols], rowImportance(imp, r, impRows, cols)
			if err := gguf.Quantize(t, blocks, xr, v); err != nil {
				return nil, err
			}
			if err := gguf.Dequantize(t, y, blocks); err != nil {
				return nil, err
			}
			if v == nil {
				v = unit // the error weighed alike
			}
			s.AddWeighed(v, xr, y)
		}
		ratio := s.Noise // the error of a zero tensor is 0 in any type
		if s.Signal > 0 {
			ratio /= s.Signal
		}
		out = append(out, ggufmix.Candidate{Type: t, Bytes: padded(size, align), Err: ratio})
	}
	return out, nil
}

// rowImportance returns the importance vector of row r, or nil.
func rowImportance(imp []float32, r, impRows, cols int) []float32 {
	if imp == nil {
		return nil
	}
	return imp[r/impRows*cols:][:cols]
}

// ones returns n ones.
func ones(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// spreadRows returns k of the rows [0, rows), spread evenly (all of them
// when k ≥ rows).
func spreadRows(rows, k int) []int {
	k = min(k, rows)
	out := make([]int, k)
	for i := range out {
		out[i] = int((int64(2*i+1) * int64(rows)) / int64(2*k))
	}
	return out
}

// targetImportance returns the importance vectors weight d's quantizer
// would take (one per impRows rows), or nil where it takes none; an entry
// that does not fit is left to the plan's own look-up, which reports it.
func (p *plan) targetImportance(d *decision) (imp []float32, impRows int) {
	if p.opts.Imatrix == nil {
		return nil, 0
	}
	v, rows, _, _ := p.importanceOf(d, p.imatrixName(d), d.info.Shape)
	return v, rows
}

// sampleValues returns the given rows of weight d's values, row after row:
// read row by row from a float source stored whole (the rows of a model
// file's permuted query and key weights are the same rows in another
// order), else from its values as a whole cast reads them.
func (p *plan) sampleValues(d *decision, rows []int, cols int) ([]float32, error) {
	elem := map[safetensors.DType]int{safetensors.BF16: 2, safetensors.F16: 2, safetensors.F32: 4}[d.info.DType]
	n := measure.Elements(d.info.Shape)
	x := make([]float32, len(rows)*cols)
	if elem == 0 || d.data != nil || len(d.info.Stored) != 1 || d.xform.AddOne || n*int64(elem) != d.info.Size {
		all, err := p.sourceValues(d)
		if err != nil {
			return nil, err
		}
		for k, r := range rows {
			copy(x[k*cols:(k+1)*cols], all[r*cols:])
		}
		p.in.Release(d.source)
		return x, nil
	}
	rb := int64(cols * elem)
	for k, r := range rows {
		b, err := p.in.StoredRange(d.info.Stored[0], int64(r)*rb, rb)
		if err != nil {
			return nil, err
		}
		widen(d.info.DType, x[k*cols:(k+1)*cols], b)
	}
	p.in.Release(d.source) // the mapped pages the rows touched
	return x, nil
}
