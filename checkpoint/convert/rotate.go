package convert

import (
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// decideRotation gives weight d, cast along axis index axis, the rotation
// of Options.Rotate with its block, and records it; a weight the rotation
// cannot take is an *OptionError for Options.Rotate that says what to do.
func (p *plan) decideRotation(d *decision, axis int) error {
	if p.opts.Rotate.IsZero() {
		return nil
	}
	rot, err := p.opts.Rotate.WithDefaultBlock(lastTile(d.dt))
	if err != nil {
		return &OptionError{Option: "Rotate", Value: p.opts.Rotate.String(), Err: err,
			Reason: fmt.Sprintf("cannot rotate tensor %s (%s): %v", d.info.Name, d.dt, err)}
	}
	if err := rot.Check(d.shape, axis); err != nil {
		return rotateLengthError(d, rot, axis, err)
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
	e := measure.Compare(x, v)
	_, v0, err := p.cast(d.dt, x, d.shape, &copts)
	if err != nil {
		return nil, err
	}
	out, err := p.encode(d, t)
	if err != nil {
		return nil, err
	}
	d.result.setErrors(e)
	d.result.SQNRUnrotated = measure.Compare(x, v0).SQNR
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

// rotateLengthError is the *OptionError of rotation rot that cannot rotate
// weight d along axis (rot.Check's err): the fixes are a block that divides
// the axis, when there is one, and keeping the weight.
func rotateLengthError(d *decision, rot rotate.Rotation, axis int, err error) error {
	e := &OptionError{Option: "Rotate", Value: rot.String(), Err: err,
		Reason: fmt.Sprintf("cannot rotate tensor %s %v: %v", d.info.Name, d.shape, err)}
	var le *rotate.LengthError
	if !errors.As(err, &le) {
		return e
	}
	e.Reason = fmt.Sprintf("cannot rotate tensor %s %v: axis %d holds %d values, not a multiple of "+
		"the block of %d", d.info.Name, d.shape, axis, le.Length, rot.Block)
	if fit := le.Length & -le.Length; fit >= 2 { // the largest power of two dividing it
		e.Fixes = append(e.Fixes, Fix{Option: "Rotate",
			Value: rotate.Rotation{Kind: rot.Kind, Block: min(fit, rot.Block)}.String()})
	}
	e.Fixes = append(e.Fixes, Fix{Option: "Exclude", Value: "^" + regexp.QuoteMeta(d.info.Name) + "$"})
	return e
}
