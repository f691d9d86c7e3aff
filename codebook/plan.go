package codebook

import (
	"math"
	"slices"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// signedPlan speeds up the squared-error selection among the tables of a
// codebook whose tables are all signed with the same sign bit and sign rule
// (every implicit codebook). The union of all tables' bounds cuts the
// magnitude axis into cells within which every table encodes to the same
// code; one search per value finds its cell, and each table's error is then
// a lookup and a multiply-add per value. It selects exactly what the
// general path selects.
type signedPlan struct {
	cells   *kernels.LUTEncoder // |x·mul| → cell
	mags    []float32           // cell-major: the magnitude of cell c's entry in table k at c·K + k
	codes   [][]uint8           // per table, the code (without sign) of each cell
	signBit uint8
	negPos  bool
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
	idx := make([]uint8, len(all)+1)
	for i := range idx {
		idx[i] = uint8(i)
	}
	p := &signedPlan{cells: kernels.NewLUTEncoder(all, idx, 0, false, 0), signBit: uint8(t0.Len() / 2), negPos: t0.negPos}
	nt := len(c.tables)
	p.mags = make([]float32, len(idx)*nt)
	for k, t := range c.tables {
		codes := make([]uint8, len(idx))
		for cell := range idx {
			// The cell's lowest value encodes like the whole cell.
			lo := float32(0)
			if cell > 0 {
				lo = all[cell-1]
			}
			codes[cell] = t.enc.Encode(lo)
			p.mags[cell*nt+k] = t.values[codes[cell]]
		}
		p.codes = append(p.codes, codes)
	}
	return p
}

// selectSSE is Codebook.selectSSE through the plan.
func (p *signedPlan) selectSSE(s *Selector, codes, meta []uint8, x []float32, group int, mul, scale float32) {
	c := s.c
	chunk := max(group, selectChunk/group*group)
	n := min(chunk, len(x))
	cell := grow(s.u8[1], n)
	ax := grow(s.f32[0], n)
	at := grow(s.f32[1], n)
	nt := len(c.tables)
	accs := grow(s.f64, nt)
	s.u8[1], s.f32[0], s.f32[1], s.f64 = cell, ax, at, accs
	for clo := 0; clo < len(x); clo += chunk {
		chi := min(clo+chunk, len(x))
		xc := x[clo:chi]
		for i, v := range xc {
			ax[i] = float32(math.Abs(float64(v)))
			at[i] = float32(math.Abs(float64(v * mul)))
		}
		p.cells.EncodeSlice(cell[:len(xc)], at[:len(xc)])
		for lo := 0; lo < len(xc); lo += group {
			hi := min(lo+group, len(xc))
			cs, as := cell[lo:hi], ax[lo:hi]
			acc := accs[:nt]
			clear(acc)
			if nt%4 == 0 {
				p.errors4(acc, cs, as, scale)
			} else {
				for i, a := range as {
					row := p.mags[int(cs[i])*nt : int(cs[i])*nt+nt]
					for k, m := range row {
						d := float64(m*scale) - float64(a)
						acc[k] += float64(d * d) // the conversion keeps the product rounded: no fused multiply-add
					}
				}
			}
			best, bk := acc[0], 0
			for k, e := range acc[1:] {
				if e < best {
					best, bk = e, k+1
				}
			}
			meta[(clo+lo)/group] = uint8(bk)
			tc := p.codes[bk]
			zero := c.tables[bk].zero
			for i, v := range xc[lo:hi] {
				t := v * mul
				o := clo + lo + i
				if t != t {
					codes[o] = zero
					continue
				}
				// The sign bit without a branch: set for a negative t, and
				// for −0 unless the tables take −0 as +0.
				b := math.Float32bits(t)
				neg := b >> 31
				if p.negPos {
					neg &= (b&0x7fffffff + 0x7fffffff) >> 31 // magnitude not zero
				}
				codes[o] = tc[cs[i]] | p.signBit&-uint8(neg)
			}
		}
	}
}

// errors4 adds to acc[k] the squared errors of table k over the values
// (magnitudes as, cells cs), four tables at a time in registers.
func (p *signedPlan) errors4(acc []float64, cs []uint8, as []float32, scale float32) {
	nt := len(acc)
	for k := 0; k < nt; k += 4 {
		var e0, e1, e2, e3 float64
		for i, a := range as {
			row := p.mags[int(cs[i])*nt+k : int(cs[i])*nt+k+4 : int(cs[i])*nt+k+4]
			fa := float64(a)
			d0 := float64(row[0]*scale) - fa
			d1 := float64(row[1]*scale) - fa
			d2 := float64(row[2]*scale) - fa
			d3 := float64(row[3]*scale) - fa
			e0 += float64(d0 * d0)
			e1 += float64(d1 * d1)
			e2 += float64(d2 * d2)
			e3 += float64(d3 * d3)
		}
		acc[k] += e0
		acc[k+1] += e1
		acc[k+2] += e2
		acc[k+3] += e3
	}
}
