package codebook

import (
	"slices"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// signedPlan speeds up the squared-error selection among the tables of a
// codebook whose tables are all signed with the same sign bit and sign rule
// (every implicit codebook). The union of all tables' bounds cuts the
// magnitude axis into cells within which every table encodes to the same
// code; one search per value finds its cell, and each table's error is then
// a lookup and a multiply-add per value (kernels.LUTSelector). It selects
// exactly what the general path selects.
type signedPlan struct {
	sel *kernels.LUTSelector
}

func (c *Codebook) newSignedPlan() *signedPlan {
	t0 := c.tables[0]
	var all []float32
	for _, t := range c.tables {
		if !t.signed || t.Len() != t0.Len() || t.negPos != t0.negPos {
			return nil
		}
		all = append(all, t.bounds...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	if len(all)+1 > kernels.MaxLUTEntries {
		return nil
	}
	nt := len(c.tables)
	mags, codes, zero := make([][]float32, nt), make([][]uint8, nt), make([]uint8, nt)
	for k, t := range c.tables {
		for cell := range len(all) + 1 {
			// The cell's lowest value encodes like the whole cell.
			lo := float32(0)
			if cell > 0 {
				lo = all[cell-1]
			}
			code := t.enc.Encode(lo)
			codes[k] = append(codes[k], code)
			mags[k] = append(mags[k], t.values[code])
		}
		zero[k] = t.zero
	}
	return &signedPlan{sel: kernels.NewLUTSelector(all, mags, codes, zero, uint8(t0.Len()/2), !t0.negPos)}
}
