package convert

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/sparsity"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// run casts one weight whole and fills in its report, or dequantizes a kept
// tensor with no stored dtype (one of a quantized source) to F32; kept
// tensors with one are copied piece by piece (copyPieces).
func (p *plan) run(d *decision) ([]layout.Tensor, error) {
	x, err := p.sourceValues(d)
	if err != nil {
		return nil, err
	}
	if !d.cast {
		return []layout.Tensor{{Spec: d.specs[0], Data: float32Bytes(x)}}, nil
	}
	if d.swap {
		x, _ = layout.TransposeLast2(x, d.info.Shape)
	}
	if !d.rot.IsZero() {
		return p.runRotated(d, x)
	}
	copts, err := p.castOptions(d, x)
	if err != nil {
		return nil, err
	}
	t, v, err := p.cast(d.dt, x, d.shape, &copts)
	if err != nil {
		return nil, err
	}
	e := measure.Compare(x, v)
	if d.info.Quantized() && !exact(e) {
		t, v, e = p.exactCast(d, x, copts, t, v, e)
	}
	out, err := p.encode(d, t)
	if err != nil {
		return nil, err
	}
	p.record(d, x, v, e, copts.Keep)
	return out, nil
}

// encode has the layout encode weight d's cast t, and checks that it wrote
// what it declared.
func (p *plan) encode(d *decision, t *tcast.Tensor) ([]layout.Tensor, error) {
	d.meta = map[string]string{}
	out, err := p.lay.Encode(d.info.Name, t, d.meta)
	if err != nil {
		return nil, err
	}
	return out, p.checkEncoded(d, out)
}

// sourceValues reads tensor d's values as the output holds them: its
// source dequantized, through the llama.cpp model file's change.
func (p *plan) sourceValues(d *decision) ([]float32, error) {
	x, _, err := p.in.Float32(d.source)
	if err != nil {
		return nil, err
	}
	return d.xform.Apply(x, d.info.Shape)
}

// castOptions returns the options of weight d's cast: its importance, its
// pruning scores, and for a layout that prunes the N:M mask, chosen along
// the weight's input (last) axis, with which the dense datatype is cast.
func (p *plan) castOptions(d *decision, x []float32) (tcast.Options, error) {
	copts := tcast.Options{Form: tcast.Actual, Axis: p.opts.Axis, Mode: p.opts.Mode, Importance: d.imp,
		ScaleSearch: p.opts.ScaleSearch}
	var err error
	if s := d.dt.Spec(); p.opts.Pruning != nil && s != nil && s.IsSparse() {
		if copts.Pruning, err = p.opts.Pruning(d.info.Name, d.shape); err != nil {
			return copts, err
		}
	}
	if !p.pruned {
		return copts, nil
	}
	var po sparsity.Options
	if p.opts.Pruning != nil {
		if po, err = p.opts.Pruning(d.info.Name, d.shape); err != nil {
			return copts, err
		}
	}
	copts.Keep, err = sparsity.NM(x, d.shape, -1, p.prune.Pattern, po)
	return copts, err
}

// exactCast tries, for weight d whose quantized source the cast (t, v, e)
// did not hold exactly, the casts with power-of-two scales: the source may
// be the target's values times such scales (MXFP4 → NVFP4, FP8 with
// power-of-two block scales → MXFP8). It returns the first that is exact,
// else the cast it was given.
func (p *plan) exactCast(d *decision, x []float32, copts tcast.Options, t *tcast.Tensor, v []float32,
	e tcast.Errors) (*tcast.Tensor, []float32, tcast.Errors) {
	tried := map[scale.Mode]bool{}
	if s := d.dt.Spec(); s != nil && s.IsExponent() {
		tried[copts.Mode] = true // power-of-two scales already: the same cast
	}
	for _, m := range []scale.Mode{copts.Mode, scale.RCeil, scale.Ceil} {
		if tried[m] {
			continue
		}
		tried[m] = true
		o := copts
		o.Mode, o.PowerOfTwoScales = m, true
		t2, v2, err := p.cast(d.dt, x, d.shape, &o)
		if err != nil {
			break
		}
		if e2 := measure.Compare(x, v2); exact(e2) {
			return t2, v2, e2
		}
	}
	return t, v, e
}

// record fills in weight d's report from its source x, its cast values v
// and their errors e; keep is the mask of a pruning layout.
func (p *plan) record(d *decision, x, v []float32, e tcast.Errors, keep *mask.Mask) {
	d.result.setErrors(e)
	if d.imp != nil {
		var ws measure.Weighted
		addRows(&ws, d, 0, x, v)
		d.result.WeightedSQNR = ws.SQNR()
	}
	if d.info.Quantized() && exact(e) {
		d.result.Note = fmt.Sprintf("exact: %s holds every value of the source's %s", d.dt.Name(), d.info.Type)
	}
	if !p.pruned {
		return
	}
	for _, y := range v {
		if y == 0 {
			d.zeros++
		}
	}
	d.result.Note = fmt.Sprintf("pruned %v (%s), density %.4g", p.prune.Pattern, p.prune.Resolved(),
		sparsity.MaskDensity(keep))
}

// checkEncoded checks that a layout wrote the tensors and metadata it
// declared for weight d.
func (p *plan) checkEncoded(d *decision, out []layout.Tensor) error {
	for i, o := range out {
		if i >= len(d.specs) || !specEqual(o.Spec, d.specs[i]) {
			return fmt.Errorf("layout %s wrote %s %v, not the tensor it declared", p.lay.Name(), o.Name, o.Shape)
		}
	}
	for k := range d.meta {
		if _, ok := p.meta[k]; !ok {
			return fmt.Errorf("layout %s wrote metadata %q it did not declare", p.lay.Name(), k)
		}
	}
	return nil
}

// metaSlack is the room a declared JSON metadata value leaves for the value
// Encode writes (a weight's description records the scale mode actually
// used, whose name may be longer than the declared one): trailing
// whitespace, which JSON readers ignore.
const metaSlack = 16

// withSlack returns a declared metadata value with room to grow: JSON values
// get trailing spaces, others (fixed-width codes) stay as they are.
func withSlack(v string) string {
	if strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") {
		return v + strings.Repeat(" ", metaSlack)
	}
	return v
}

// fit returns the final metadata value v at the length of the declared one,
// which the header reserved.
func fit(v, declared string) (string, error) {
	if len(v) == len(declared) {
		return v, nil
	}
	if len(v) < len(declared) && (strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[")) {
		return v + strings.Repeat(" ", len(declared)-len(v)), nil
	}
	return "", fmt.Errorf("the value written (%d bytes) does not fit the %d declared", len(v), len(declared))
}

// cast casts x with the layout's own quantizer when it has one, and returns
// the tensor and its dequantized values.
func (p *plan) cast(dt *tcast.DataType, x []float32, shape []int, o *tcast.Options) (*tcast.Tensor, []float32, error) {
	var t *tcast.Tensor
	var err error
	if c, ok := p.lay.(layout.Caster); ok {
		t, err = c.Cast(x, shape, dt, o)
	} else {
		t, err = tcast.Cast(x, shape, dt, o)
	}
	if err != nil {
		return nil, nil, err
	}
	v, err := tcast.Decompress(t)
	return t, v, err
}

// exact reports whether a cast lost nothing.
func exact(e tcast.Errors) bool { return e.SQNR == nil && e.MaxAbs == 0 && e.Lost == 0 }

func specEqual(a, b layout.Spec) bool {
	return a.Name == b.Name && a.DType == b.DType && a.GGML == b.GGML && slices.Equal(a.Shape, b.Shape)
}

// float32Bytes returns v as little-endian float32 bytes.
func float32Bytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		b := math.Float32bits(x)
		out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
	}
	return out
}
