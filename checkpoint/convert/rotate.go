package convert

import (
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// decideRotation gives weight d, cast along axis index axis, the rotation
// of Options.Rotate with its block, and records it; a weight the rotation
// cannot take is an *OptionError for -rotate that says what to do.
func (p *plan) decideRotation(d *decision, axis int) error {
	if p.opts.Rotate.IsZero() {
		return nil
	}
	rot, err := p.opts.Rotate.WithDefaultBlock(lastTile(d.dt))
	if err != nil {
		return &OptionError{Flag: "-rotate", Reason: fmt.Sprintf("%s: tensor %s (%s): %v", p.opts.Rotate, d.info.Name, d.dt.Name(), err)}
	}
	if err := rot.Check(d.shape, axis); err != nil {
		var le *rotate.LengthError
		if !errors.As(err, &le) {
			return &OptionError{Flag: "-rotate", Reason: fmt.Sprintf("tensor %s: %v", d.info.Name, err), Err: err}
		}
		fit := le.Length & -le.Length // the largest power of two dividing it
		exclude := fmt.Sprintf("-exclude '^%s$' (joined with | to a pattern of your own)", regexp.QuoteMeta(d.info.Name))
		hint := fmt.Sprintf("no block of 2 or more divides %d: keep the tensor with %s", le.Length, exclude)
		if fit >= 2 {
			hint = fmt.Sprintf("name a block that divides %d (hadamard:%d), or keep the tensor with %s", le.Length, min(fit, rot.Block), exclude)
		}
		return &OptionError{Flag: "-rotate", Err: err,
			Reason: fmt.Sprintf("%s: tensor %s %v: axis %d holds %d values, not a multiple of the block of %d: %s",
				rot, d.info.Name, d.shape, axis, le.Length, rot.Block, hint)}
	}
	d.rot, d.rotAxis = rot, axis
	if p.rotated == nil {
		p.rotated = map[string]layout.RotationInfo{}
	}
	p.rotated[d.info.Name] = layout.RotationInfo{Rotation: rot.String(), Axis: axis}
	d.result.Rotation = rot.String()
	return nil
}

// runRotated casts weight d, whose values as the output's readers give them
// are x (in the cast orientation), rotated; its report compares x with the
// cast rotated back, as package load reads it, and gives the SQNR of the
// same cast without rotation.
func (p *plan) runRotated(d *decision, x []float32) ([]layout.Tensor, error) {
	xr := slices.Clone(x)
	if err := d.rot.Apply(xr, d.shape, d.rotAxis); err != nil {
		return nil, err
	}
	copts := tcast.Options{Form: tcast.Actual, Axis: p.opts.Axis, Mode: p.opts.Mode, ScaleSearch: p.opts.ScaleSearch}
	t, v, err := p.cast(d.dt, xr, d.shape, &copts)
	if err != nil {
		return nil, err
	}
	if err := d.rot.Apply(v, d.shape, d.rotAxis); err != nil { // as load gives it back
		return nil, err
	}
	e := Compare(x, v)
	_, v0, err := p.cast(d.dt, x, d.shape, &copts)
	if err != nil {
		return nil, err
	}
	d.meta = map[string]string{}
	out, err := p.lay.Encode(d.info.Name, t, d.meta)
	if err != nil {
		return nil, err
	}
	if err := p.checkEncoded(d, out); err != nil {
		return nil, err
	}
	d.result.setErrors(e)
	d.result.SQNRUnrotated = Compare(x, v0).SQNR
	return out, nil
}

// recordUnrotated adds to patch the final value of the rotation record
// (layout.KeyRotated): the rotated weights' SQNRs without rotation, from
// their results, in the room the declared value left for them.
func (p *plan) recordUnrotated(res *Result, patch map[string]string) error {
	for _, t := range res.Tensors {
		if info, ok := p.rotated[t.Name]; ok && t.Rotation != "" {
			info.SQNRUnrotated = t.SQNRUnrotated
			p.rotated[t.Name] = info
		}
	}
	v, err := fit(layout.EncodeRotated(p.rotated), p.meta[layout.KeyRotated])
	if err != nil {
		return fmt.Errorf("metadata %s: %w", layout.KeyRotated, err)
	}
	patch[layout.KeyRotated] = v
	return nil
}
