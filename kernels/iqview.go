package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// The per-element view of the IQ grid types: one code per element, an
// index into the type's values (ascending), and one float32 scale per
// sub-block, the scale ggml's decoder multiplies by; value = scale ·
// values[code], exactly ggml's float. For the signed grids the values are
// the levels negated, from the largest, then the levels; for IQ1 each
// level shifted by −1/8, then by +1/8.

// IQView is the per-element view of an IQ grid type.
type IQView struct {
	// Sub is the number of elements per scale, and Values the value of
	// each code.
	Sub    int
	Values []float32
	// Unpack lays one block x out as its codes q (256) and sub-block
	// scales s.
	Unpack func(x []byte, q []int, s []float32)
	// Pack writes block y of codes q and scales s, or returns why they are
	// not a block's: a code out of range, levels that are not a point of
	// the grid, an odd count of signs where the type implies the eighth,
	// shifts that differ within a shift group, scales that are not one
	// float16 d's.
	Pack func(y []byte, q []int, s []float32) string
}

// newIQView returns the view of f.
func newIQView(f *iqFormat) *IQView {
	return &IQView{Sub: f.sub, Values: f.viewLevels(), Unpack: f.unpackView,
		Pack: func(y []byte, q []int, s []float32) string {
			f.grid.prepare()
			return f.packView(y, q, s)
		}}
}

// viewLevels returns the values of f's view codes.
func (f *iqFormat) viewLevels() []float32 {
	lev := f.grid.lev
	var out []float32
	if f.signs == 0 {
		for _, l := range lev {
			out = append(out, l-iq1Delta, l+iq1Delta)
		}
		return out
	}
	for i := range lev {
		out = append(out, -lev[len(lev)-1-i])
	}
	return append(out, lev...)
}

// viewCode returns the code of level k, negated or shifted down when neg.
func (f *iqFormat) viewCode(k int, neg bool) int {
	n := len(f.grid.lev)
	switch {
	case f.signs == 0 && neg:
		return 2 * k
	case f.signs == 0:
		return 2*k + 1
	case neg:
		return n - 1 - k
	}
	return n + k
}

// viewLevel is the inverse of viewCode, and false for a code out of range.
func (f *iqFormat) viewLevel(c int) (k int, neg, ok bool) {
	n := len(f.grid.lev)
	switch {
	case c < 0 || c >= 2*n:
		return 0, false, false
	case f.signs == 0:
		return c / 2, c%2 == 0, true
	case c < n:
		return n - 1 - c, true, true
	}
	return c - n, false, true
}

// subScale returns the float32 scale of sub-block code l under d, as
// ggml's decoder computes it.
func (f *iqFormat) subScale(d float32, l int) float32 {
	switch f.unit {
	case 1.0 / 8:
		return d * (0.5 + float32(l)) * 0.25
	case 1.0 / 4:
		return d * (0.5 + float32(l)) * 0.5
	}
	return d * float32(2*l+1)
}

// unpackView lays block x out as codes q and sub-block scales s.
func (f *iqFormat) unpackView(x []byte, q []int, s []float32) {
	var r iqRes
	f.parse(x, &r)
	d := float16To32(r.hd)
	for b := range qkk / f.sub {
		s[b] = f.subScale(d, int(r.l[b]))
	}
	g, n := f.grid, f.grid.width
	mask := uint16(1)<<g.bits - 1
	for i := range qkk {
		k := int(g.codes[r.p[i/n]] >> (g.bits * uint(i%n)) & mask)
		neg := r.neg[i/8]>>(i%8)&1 != 0
		if f.signs == 0 {
			neg = r.dneg[i/8]
		}
		q[i] = f.viewCode(k, neg)
	}
}

// packView is the inverse of unpackView: it writes block y of codes q and
// scales s, or says why they are not such a block.
func (f *iqFormat) packView(y []byte, q []int, s []float32) string {
	var r iqRes
	if msg := f.splitScales(s, &r); msg != "" {
		return msg
	}
	g, n := f.grid, f.grid.width
	for k := 0; k < qkk; k += n {
		var c uint16
		for j := range n {
			lv, neg, ok := f.viewLevel(q[k+j])
			if !ok {
				return fmt.Sprintf("code %d of element %d is not one of the %d", q[k+j], k+j, 2*len(g.lev))
			}
			c |= uint16(lv) << (g.bits * uint(j))
			if neg {
				r.neg[(k+j)/8] |= 1 << ((k + j) % 8)
			}
		}
		p := g.index[c]
		if p < 0 {
			return fmt.Sprintf("the levels of elements %d..%d are not a point of the grid", k, k+n-1)
		}
		r.p[k/n] = uint16(p)
	}
	if f.signs == 7 {
		for g8, neg := range r.neg {
			if bits.OnesCount8(neg)&1 != 0 {
				return fmt.Sprintf("elements %d..%d have an odd count of negative signs", 8*g8, 8*g8+7)
			}
		}
	}
	if f.signs == 0 {
		for o := 0; o < qkk; o += f.dgrp {
			for k := o / 8; k < (o+f.dgrp)/8; k++ {
				if r.neg[k] != 0 && r.neg[k] != 0xff || r.neg[k] != r.neg[o/8] {
					return fmt.Sprintf("elements %d..%d do not share one shift", o, o+f.dgrp-1)
				}
				r.dneg[k] = r.neg[k] != 0
			}
		}
		r.neg = [32]uint8{}
	}
	f.pack(y, &r)
	return ""
}

// splitScales finds the float16 d and scale codes l of sub-block scales
// s, into r. A block's d may be negative, a zero of either sign, infinite
// or NaN (its scales are then all that value, whatever the codes).
func (f *iqFormat) splitScales(s []float32, r *iqRes) string {
	top := 0
	for b, v := range s {
		if abs32(v) > abs32(s[top]) || v != v {
			top = b
		}
	}
	if v := s[top]; v == 0 || !finite(v) {
		r.hd = float32ToFloat16(v, false)
		if !f.codesOf(s, float16To32(r.hd), r) {
			return fmt.Sprintf("the sub-block scales %v are not one d's", s)
		}
		return ""
	}
	for lt := range f.lmax + 1 {
		hd := float32ToFloat16(s[top]/f.subScale(1, lt), true)
		if f.codesOf(s, float16To32(hd), r) {
			r.hd = hd
			return ""
		}
	}
	return fmt.Sprintf("the sub-block scales %v are not those of one float16 d and codes 0..%d",
		s, f.lmax)
}

// codesOf sets r.l to the codes giving each scale of s under d (any code
// when all give it), and reports whether every one has one.
func (f *iqFormat) codesOf(s []float32, d float32, r *iqRes) bool {
	for b, v := range s {
		ok := false
		for l := range f.lmax + 1 {
			if w := f.subScale(d, l); math.Float32bits(w) == math.Float32bits(v) || w != w && v != v {
				r.l[b], ok = uint8(l), true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// The parsers: each reads a block's fields into r, the inverse of its
// packer.

func parseIQ2XXS(x []byte, r *iqRes) {
	r.hd = binary.LittleEndian.Uint16(x)
	for ib := range 8 {
		q := x[2+8*ib:]
		aux := binary.LittleEndian.Uint32(q[4:])
		r.l[ib] = uint8(aux >> 28)
		for l := range 4 {
			r.p[4*ib+l] = uint16(q[l])
			r.neg[4*ib+l] = iqSigns[aux>>(7*l)&127]
		}
	}
}

func parseIQ2XS(x []byte, r *iqRes) {
	r.hd = binary.LittleEndian.Uint16(x)
	for k := range 32 {
		v := binary.LittleEndian.Uint16(x[2+2*k:])
		r.p[k], r.neg[k] = v&511, iqSigns[v>>9]
	}
	for ib := range 8 {
		r.l[2*ib], r.l[2*ib+1] = x[66+ib]&15, x[66+ib]>>4
	}
}

func parseIQ2S(x []byte, r *iqRes) {
	r.hd = binary.LittleEndian.Uint16(x)
	for k := range 32 {
		r.p[k] = uint16(x[2+k]) | uint16(x[66+k/4]>>(2*(k%4))&3)<<8
		r.neg[k] = x[34+k]
	}
	for ib := range 8 {
		r.l[2*ib], r.l[2*ib+1] = x[74+ib]&15, x[74+ib]>>4
	}
}

func parseIQ3XXS(x []byte, r *iqRes) {
	r.hd = binary.LittleEndian.Uint16(x)
	for k := range 64 {
		r.p[k] = uint16(x[2+k])
	}
	for ib := range 8 {
		aux := binary.LittleEndian.Uint32(x[66+4*ib:])
		r.l[ib] = uint8(aux >> 28)
		for l := range 4 {
			r.neg[4*ib+l] = iqSigns[aux>>(7*l)&127]
		}
	}
}

func parseIQ3S(x []byte, r *iqRes) {
	r.hd = binary.LittleEndian.Uint16(x)
	for k := range 64 {
		r.p[k] = uint16(x[2+k]) | uint16(x[66+k/8]>>(k%8)&1)<<8
	}
	copy(r.neg[:], x[74:106])
	for i := range 4 {
		r.l[2*i], r.l[2*i+1] = x[106+i]&15, x[106+i]>>4
	}
}

func parseIQ1S(x []byte, r *iqRes) {
	r.hd = binary.LittleEndian.Uint16(x)
	for ib := range 8 {
		qh := binary.LittleEndian.Uint16(x[34+2*ib:])
		r.l[ib] = uint8(qh >> 12 & 7)
		for l := range 4 {
			r.p[4*ib+l] = uint16(x[2+4*ib+l]) | qh>>(3*l)&7<<8
			r.dneg[4*ib+l] = qh&0x8000 != 0
		}
	}
}

func parseIQ1M(x []byte, r *iqRes) {
	for k := range 4 {
		r.hd |= binary.LittleEndian.Uint16(x[48+2*k:]) >> 12 << (4 * k)
	}
	for k := range 32 {
		h := x[32+k/2] >> (4 * (k % 2))
		r.p[k] = uint16(x[k]) | uint16(h&7)<<8
		r.dneg[k] = h&8 != 0
	}
	for b := range 16 {
		r.l[b] = uint8(binary.LittleEndian.Uint16(x[48+2*(b/4):]) >> (3 * (b % 4)) & 7)
	}
}
