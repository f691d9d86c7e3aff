package convert

import (
	"time"

	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
)

// dryRun is the last step of a conversion with Options.DryRun, after
// plan: the report of what the output would hold, each tensor's size as
// its layout declares it, with nothing read or written.
func (c *conversion) dryRun() error {
	p := c.p
	res := c.newResult()
	for _, d := range p.tensors {
		r := d.result
		for _, sp := range d.specs {
			r.BytesOut += sp.Bytes(p.lay.Container())
		}
		if d.cast {
			r.Bits = measure.StoredBits(r.BytesOut, d.shape)
		}
		res.Tensors = append(res.Tensors, r)
		res.BytesOut += r.BytesOut
	}
	for _, d := range p.dropped {
		res.Tensors = append(res.Tensors, d.result())
	}
	res.Seconds = time.Since(c.start).Seconds()
	res.Warnings = p.warnings
	sum := res.Summarize()
	res.Summary = &sum
	c.res = res
	return nil
}
