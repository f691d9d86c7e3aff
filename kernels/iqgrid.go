package kernels

import (
	"math"
	"math/bits"
	"sync"
)

// The grids of ggml's IQ1, IQ2 and IQ3 types: each block stores, for every
// 8 (IQ1, IQ2) or 4 (IQ3) elements, the index of a point of a fixed grid,
// a vector of small integers (iqgrid_data.go, read from ggml), times a
// scale and a sign per element. A grid is a subset of a lattice, every
// combination of its few levels: the quantizers round each element to its
// nearest level, and when that lattice point is not on the grid, try the
// grid points nearest it.

// iqGrid is one grid.
type iqGrid struct {
	width int       // values a point: 8 or 4
	bits  uint      // bits a value's level index takes in a code
	lev   []float32 // the levels, ascending
	mid   []float32 // the midpoints between adjacent levels
	istep float32   // 1 / the spacing of the first 7 levels
	codes []uint16  // each point's code: its values' level indices
	vals  []float32 // each point's values, width a point

	once  sync.Once
	index []int16  // lattice code → its point, or −1 off the grid
	near  []uint16 // lattice code c off the grid → at iqNear·c, the points nearest it
	nearc []uint16 // and their codes
}

// newIQGrid returns the grid of the given levels and point codes.
func newIQGrid(width int, levels []int8, codes []uint16) *iqGrid {
	g := &iqGrid{width: width, bits: 2, codes: codes}
	if len(levels) > 4 {
		g.bits = 3
	}
	for i, l := range levels {
		g.lev = append(g.lev, float32(l))
		if i > 0 {
			g.mid = append(g.mid, (float32(l)+float32(levels[i-1]))/2)
		}
	}
	if n := len(levels); n > 4 {
		g.istep = 6 / float32(int(levels[6])-int(levels[0]))
	}
	g.vals = make([]float32, len(codes)*width)
	mask := uint16(1)<<g.bits - 1
	for p, c := range codes {
		for j := range width {
			g.vals[p*width+j] = g.lev[c>>(g.bits*uint(j))&mask]
		}
	}
	return g
}

var (
	iq2xxsGrid = newIQGrid(8, iq2xxsLevels[:], iq2xxsPoints[:])
	iq2xsGrid  = newIQGrid(8, iq2xsLevels[:], iq2xsPoints[:])
	iq2sGrid   = newIQGrid(8, iq2sLevels[:], iq2sPoints[:])
	iq3xxsGrid = newIQGrid(4, iq3xxsLevels[:], iq3xxsPoints[:])
	iq3sGrid   = newIQGrid(4, iq3sLevels[:], iq3sPoints[:])
	iq1sGrid   = newIQGrid(8, iq1sLevels[:], iq1sPoints[:])
)

// iqNear is how many of the nearest grid points the quantizers try for a
// lattice point off the grid.
const iqNear = 8

// prepare builds the lattice's index and the lists of nearest points, once:
// the quantizers call it, the decoders need neither.
func (g *iqGrid) prepare() {
	g.once.Do(func() {
		n := 1 << (g.bits * uint(g.width))
		g.index = make([]int16, n)
		for i := range g.index {
			g.index[i] = -1
		}
		for p, c := range g.codes {
			g.index[c] = int16(p)
		}
		g.near = make([]uint16, n*iqNear)
		g.nearc = make([]uint16, n*iqNear)
		v := make([]float32, g.width)
		for c := range n {
			if g.index[c] >= 0 || !g.decode(uint16(c), v) {
				continue
			}
			for i, p := range g.nearest(v) {
				g.near[c*iqNear+i], g.nearc[c*iqNear+i] = p, g.codes[p]
			}
		}
	})
}

// decode writes the levels of the lattice code c to v, and reports whether
// every level index of c is one of the grid's.
func (g *iqGrid) decode(c uint16, v []float32) bool {
	mask := uint16(1)<<g.bits - 1
	for j := range g.width {
		k := int(c >> (g.bits * uint(j)) & mask)
		if k >= len(g.lev) {
			return false
		}
		v[j] = g.lev[k]
	}
	return true
}

// nearest returns the iqNear grid points nearest v by squared distance,
// the nearer first (of equal distances, the lower index).
func (g *iqGrid) nearest(v []float32) []uint16 {
	var d [iqNear]float32
	var p [iqNear]uint16
	n := 0
	for q := range g.codes {
		var e float32
		for j, x := range g.vals[q*g.width : (q+1)*g.width] {
			e += (x - v[j]) * (x - v[j])
		}
		if n == iqNear && e >= d[n-1] {
			continue
		}
		i := min(n, iqNear-1)
		for i > 0 && d[i-1] > e {
			d[i], p[i] = d[i-1], p[i-1]
			i--
		}
		d[i], p[i] = e, uint16(q)
		n = min(n+1, iqNear)
	}
	return append([]uint16(nil), p[:n]...)
}

// level returns the index of the level nearest t (the lower of two as
// near), of a grid of 8 levels evenly spaced but for a wider last gap (the
// IQ3 grids): ceil(u − 0.5) for u the steps from the first level, the
// nearest step, the lower on a tie (the subtraction and the scaling by a
// power of two are exact near the midpoints), and between the last two
// levels their midpoint.
func (g *iqGrid) level(t float32) int {
	y := float64((t-g.lev[0])*g.istep - 0.5)
	if y < -1 {
		y = -1
	} else if y > 8 {
		y = 8
	}
	k := -int(math.Floor(-y))
	k = min(max(k, 0), 7)
	if k == 7 && t <= g.mid[6] {
		k = 6
	}
	return k
}

// pick returns the grid point nearest the width values a under weights w,
// of values s·(L+delta) for the point's levels L, and its weighted squared
// error: the lattice point of the nearest levels when it is on the grid,
// else the best of the grid points nearest it.
func (g *iqGrid) pick(a, w []float32, s, delta float32) (int, float32) {
	if g.width == 8 {
		return g.pick8((*[8]float32)(a), (*[8]float32)(w), s, delta)
	}
	return g.pick4((*[4]float32)(a), (*[4]float32)(w), s, delta)
}

// pick8 is pick for the grids of 8 values of 3 levels.
func (g *iqGrid) pick8(a, w *[8]float32, s, delta float32) (int, float32) {
	inv := 1 / s
	m0, m1 := g.mid[0], g.mid[1]
	var c uint16
	for j := range 8 {
		t := a[j]*inv - delta
		c |= uint16(above(t, m0)+above(t, m1)) << (2 * j)
	}
	if p := g.index[c]; p >= 0 {
		return int(p), g.err(int(p), a[:], w[:], s, delta)
	}
	// The error of each level at each place, then each candidate's.
	v0 := float32(s * (g.lev[0] + delta))
	v1 := float32(s * (g.lev[1] + delta))
	v2 := float32(s * (g.lev[2] + delta))
	var t [8][4]float32
	for j := range 8 {
		d0, d1, d2 := a[j]-v0, a[j]-v1, a[j]-v2
		t[j] = [4]float32{w[j] * d0 * d0, w[j] * d1 * d1, w[j] * d2 * d2}
	}
	best, be := 0, float32(math.Inf(1))
	nc := (*[iqNear]uint16)(g.nearc[int(c)*iqNear:])
	for i, q := range nc {
		e := t[0][q&3] + t[1][q>>2&3] + t[2][q>>4&3] + t[3][q>>6&3] +
			t[4][q>>8&3] + t[5][q>>10&3] + t[6][q>>12&3] + t[7][q>>14&3]
		if e < be {
			best, be = i, e
		}
	}
	return int(g.near[int(c)*iqNear+best]), be
}

// above returns 1 if t > m, else 0, without a branch: on the
// quantizers' data a branch there is mispredicted often.
func above(t, m float32) int {
	var b int
	if t > m {
		b = 1
	}
	return b
}

// pick4 is pick for the grids of 4 values of 8 levels. Off the grid each
// candidate's error is summed from the scaled levels of its code.
func (g *iqGrid) pick4(a, w *[4]float32, s, delta float32) (int, float32) {
	inv := 1 / s
	var c uint16
	for j := range 4 {
		c |= uint16(g.level(a[j]*inv-delta)) << (3 * j)
	}
	if p := g.index[c]; p >= 0 {
		return int(p), g.err(int(p), a[:], w[:], s, delta)
	}
	var sv [8]float32
	for k, l := range g.lev[:8] {
		sv[k] = float32(s * (l + delta))
	}
	best, be := 0, float32(math.Inf(1))
	nc := (*[iqNear]uint16)(g.nearc[int(c)*iqNear:])
	for i, q := range nc {
		d0, d1 := a[0]-sv[q&7], a[1]-sv[q>>3&7]
		d2, d3 := a[2]-sv[q>>6&7], a[3]-sv[q>>9&7]
		// Each product rounded (no fused multiply-add), as in err.
		e := float32(w[0]*d0*d0) + float32(w[1]*d1*d1) +
			float32(w[2]*d2*d2) + float32(w[3]*d3*d3)
		if e < be {
			best, be = i, e
		}
	}
	return int(g.near[int(c)*iqNear+best]), be
}

// err returns Σ w·(a − s·(L+delta))² over point p's levels L, each
// product rounded to float32 (the conversions forbid fused multiply-adds,
// so every architecture picks the same points).
func (g *iqGrid) err(p int, a, w []float32, s, delta float32) float32 {
	var e float32
	for j, l := range g.vals[p*g.width : (p+1)*g.width] {
		d := a[j] - float32(s*(l+delta))
		e += float32(w[j] * d * d)
	}
	return e
}

// iqSigns is ggml's ksigns_iq2xs: the 8 sign bits whose low 7 are i and
// whose count is even.
var iqSigns = func() (t [128]uint8) {
	for i := range t {
		t[i] = uint8(i) | uint8(bits.OnesCount8(uint8(i))&1)<<7
	}
	return t
}()
