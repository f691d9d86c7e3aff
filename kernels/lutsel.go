package kernels

import (
	"fmt"
	"math"
	"math/bits"
)

// Table selection of codebooks: every group of values is encoded by each of
// several lookup tables, and the table whose decoded values are nearest by
// squared error is chosen for the group.
//
// A LUTSelector handles sign-magnitude tables that share their sign bit and
// sign rule (the implicit codebooks): the union of all tables' bounds cuts
// the magnitude axis into cells within which every table encodes to the same
// code, so one search per value finds its cell, and each table's error is
// then a lookup and a multiply-add per value.

// maxLUTTables is the most tables a LUTSelector chooses among.
const maxLUTTables = 256

// LUTSelector chooses, for each group of values, the one of its tables that
// represents the group with the least squared error, and encodes the group
// with it. Build it with NewLUTSelector; it is immutable and safe for
// concurrent use.
type LUTSelector struct {
	cells   *LUTEncoder // magnitude → cell
	nt      int         // tables
	ncell   int
	mags    []float32 // cell-major: the entry magnitude of cell c in table k at c·nt + k
	codes   []uint8   // table-major, lutCellStride per table: the code (no sign) of cell c in table k
	zero    []uint8   // per table: the code of a NaN
	signBit uint8
	negZero bool
	// vec6 is the cell search of the vector kernels (six levels, eight past
	// 64 cells; the sign rule of the tables).
	vec6 *lutSearch
	// mags64 is mags as float64, for the kernels of power-of-two scales;
	// minMag and maxMag are the least non-zero and the largest magnitude.
	mags64         []float64
	minMag, maxMag float32
	magBits        int // the most significant bits of a magnitude
}

// lutCellStride is the bytes per table of LUTSelector.codes: the 64 cells
// the vector kernels handle, or 256.
func lutCellStride(ncell int) int {
	if ncell <= lutVecEntries {
		return lutVecEntries
	}
	return MaxLUTEntries
}

// NewLUTSelector returns the selector among len(mags) sign-magnitude tables
// over the cells that bounds (strictly ascending magnitudes, finite or +Inf
// last) cut the magnitudes into: a magnitude falls in cell c, the number of
// bounds ≤ it, where table k's entry has the magnitude mags[k][c] and the
// code codes[k][c] (without the sign bit). Table k encodes a NaN as
// zero[k]. signBit is added to the code of a negative value, and of −0 too
// when negZero is set. There must be 1 to maxLUTTables tables, each with
// len(bounds)+1 ≤ MaxLUTEntries finite magnitudes and codes.
//
// Malformed arguments are a programming error and panic.
func NewLUTSelector(bounds []float32, mags [][]float32, codes [][]uint8, zero []uint8, signBit uint8, negZero bool) *LUTSelector {
	nt, ncell := len(mags), len(bounds)+1
	if nt < 1 || nt > maxLUTTables || len(codes) != nt || len(zero) != nt || ncell > MaxLUTEntries {
		panic(fmt.Sprintf("kernels: NewLUTSelector: %d tables of magnitudes, %d of codes, %d NaN codes, %d cells", nt, len(codes), len(zero), ncell))
	}
	cellCodes := make([]uint8, ncell)
	for c := range cellCodes {
		cellCodes[c] = uint8(c)
	}
	s := &LUTSelector{cells: NewLUTEncoder(bounds, cellCodes, 0, false, 0), nt: nt, ncell: ncell,
		mags: make([]float32, ncell*nt), codes: make([]uint8, nt*lutCellStride(ncell)),
		zero: append([]uint8(nil), zero...), signBit: signBit, negZero: negZero}
	stride := lutCellStride(ncell)
	for k := range nt {
		if len(mags[k]) != ncell || len(codes[k]) != ncell {
			panic(fmt.Sprintf("kernels: NewLUTSelector: table %d has %d magnitudes and %d codes for %d cells", k, len(mags[k]), len(codes[k]), ncell))
		}
		for c, m := range mags[k] {
			if m != m || math.IsInf(float64(m), 0) {
				panic(fmt.Sprintf("kernels: NewLUTSelector: table %d: magnitude %v", k, m))
			}
			s.mags[c*nt+k] = m
			s.maxMag = max(s.maxMag, m)
			s.magBits = max(s.magBits, sigBits(m))
			if m != 0 && (s.minMag == 0 || m < s.minMag) {
				s.minMag = m
			}
		}
		copy(s.codes[k*stride:], codes[k])
	}
	s.vec6 = newLUTSearch(s.cells.keys, cellCodes, signBit, negZero, 0, 6)
	s.mags64 = make([]float64, len(s.mags))
	for i, m := range s.mags {
		s.mags64[i] = float64(m)
	}
	return s
}

// Tables returns the number of tables.
func (s *LUTSelector) Tables() int { return s.nt }

// Select encodes x group by group: x is a run of groups of group values and
// of blocks of block values (a multiple of group; the last group and block
// may be shorter), block b with the multiplier muls[b] (applied before
// encoding) and the scale scales[b] (applied to the entries when decoding).
// For group g every table k is scored by the squared error
//
//	e_k = Σ_i (float64(mag_k(|x_i·mul|)·scale) − float64(|x_i|))²
//
// summed in float64 in the order of i, each product rounded (no fused
// multiply-add), where mag_k(v) is the magnitude of the entry table k
// encodes v to (that of 0 for a NaN). The table of least error is chosen, the first on ties (a NaN
// error never wins over an earlier table): meta[g] receives k and codes[i]
// the code of x_i·mul in table k (its NaN code for a NaN). codes must hold
// len(x) entries, meta a field per group and muls and scales a number per
// block. It panics on malformed arguments.
func (s *LUTSelector) Select(codes, meta []uint8, x []float32, group, block int, muls, scales []float32) {
	if group < 1 || block < 1 || block%group != 0 || len(codes) < len(x) || len(meta) < (len(x)+group-1)/group ||
		len(muls) < (len(x)+block-1)/block || len(scales) < (len(x)+block-1)/block {
		panic(fmt.Sprintf("kernels: LUTSelector.Select: %d codes, %d meta fields, %d multipliers and %d scales for %d values in groups of %d, blocks of %d",
			len(codes), len(meta), len(muls), len(scales), len(x), group, block))
	}
	lutSelect(s, codes[:len(x)], meta, x, group, block, muls, scales)
}

// pow2Exact reports whether every block of muls and scales has a scale s
// that is a positive power of two, normal in float32, by which every
// magnitude scales exactly (m·s neither overflows nor leaves the normal
// range), and the multiplier 1/s. For such blocks float64(m·s) −
// float64(|v|) is s·(m − |v|·mul) exactly, so every error is s² times the
// error of the unscaled magnitudes against |v|·mul, exactly, and the choice
// is the same: the kernels of power-of-two scales work that way.
func (s *LUTSelector) pow2Exact(muls, scales []float32) bool {
	for i, sc := range scales {
		b := math.Float32bits(sc)
		if b&0x807fffff != 0 || b == 0 || b >= 0x7f800000 ||
			float64(muls[i])*float64(sc) != 1 || s.maxMag*sc > math.MaxFloat32 ||
			s.minMag*sc < 0x1p-126 && s.minMag != 0 {
			return false
		}
	}
	return true
}

// exactScales reports whether every scale s of scales is a positive normal
// float32 that scales every magnitude m exactly: the significant bits of m
// and s fit in float32's 24, and m·s is normal and finite. Then
// float64(m·s) = float64(m)·float64(s), which the kernels of exact scales
// compute.
func (s *LUTSelector) exactScales(scales []float32) bool {
	for _, sc := range scales {
		b := math.Float32bits(sc)
		if b>>23 == 0 || b >= 0x7f800000 || sigBits(sc)+s.magBits > 24 ||
			float64(s.maxMag)*float64(sc) > math.MaxFloat32 ||
			s.minMag != 0 && float64(s.minMag)*float64(sc) < 0x1p-126 {
			return false
		}
	}
	return true
}

// sigBits returns the number of significant bits of |x| (0 for a zero):
// the bits from its leading one to its last one.
func sigBits(x float32) int {
	b := math.Float32bits(x) & 0x7fffffff
	m := b & 0x7fffff
	if b>>23 != 0 {
		m |= 0x800000 // the implicit bit of a normal number
	}
	if m == 0 {
		return 0
	}
	return bits.Len32(m) - bits.TrailingZeros32(m)
}

// cellOf returns the cell of the magnitude key k (the bits of |y|, not a
// NaN).
func (s *LUTSelector) cellOf(k int64) int { return s.cells.indexKey(k) }

// lutSelectGo is the reference of Select (len(codes) = len(x)): per group,
// the cells of its values (in a buffer on the stack for groups up to 64),
// the tables' errors in one pass, the choice, then the codes.
func lutSelectGo(s *LUTSelector, codes, meta []uint8, x []float32, group, block int, muls, scales []float32) {
	nt := s.nt
	var accBuf [16]float64
	acc := accBuf[:]
	if nt > len(acc) {
		acc = make([]float64, nt)
	}
	acc = acc[:nt]
	var cellBuf [64]uint8
	cells := cellBuf[:]
	if group > len(cells) {
		cells = make([]uint8, group)
	}
	g, b, inBlock := 0, 0, 0
	for lo := 0; lo < len(x); lo += group {
		hi := min(lo+group, len(x))
		mul, scale := muls[b], scales[b]
		xs, cs := x[lo:hi], cells[:hi-lo]
		s.groupCells(cs, xs, mul)
		var bk int
		if nt == 2 {
			// Two tables (the MSFP-like codebooks): the sums in registers.
			var e0, e1 float64
			for i, v := range xs {
				a := float64(math.Float32frombits(math.Float32bits(v) & 0x7fffffff))
				row := (*[2]float32)(s.mags[2*int(cs[i]):])
				d0 := float64(row[0]*scale) - a
				d1 := float64(row[1]*scale) - a
				e0 += float64(d0 * d0)
				e1 += float64(d1 * d1)
			}
			if e1 < e0 {
				bk = 1
			}
		} else {
			clear(acc)
			for i, v := range xs {
				c := int(cs[i])
				a := float64(math.Float32frombits(math.Float32bits(v) & 0x7fffffff))
				row := s.mags[c*nt : c*nt+nt : c*nt+nt]
				for k, m := range row {
					d := float64(m*scale) - a
					acc[k] += float64(d * d) // the conversion keeps the product rounded: no fused multiply-add
				}
			}
			best := acc[0]
			for k, e := range acc[1:] {
				if e < best {
					best, bk = e, k+1
				}
			}
		}
		meta[g] = uint8(bk)
		s.groupCodes(codes[lo:hi], cs, xs, mul, bk)
		g++
		if inBlock += hi - lo; inBlock >= block {
			b, inBlock = b+1, 0
		}
	}
}

// groupCells writes to cs the cells of the magnitudes of xs·mul, a NaN in
// the cell of 0 (the Go references of Select and SelectWeighted).
func (s *LUTSelector) groupCells(cs []uint8, xs []float32, mul float32) {
	for i, v := range xs {
		y := v * mul
		k := int64(math.Float32bits(y) & 0x7fffffff)
		if y != y {
			k = 0 // a NaN falls in the cell of 0
		}
		cs[i] = uint8(s.cellOf(k))
	}
}

// groupCodes writes to codes the codes of xs·mul in table bk, given their
// cells cs: the cell's code with the sign bit, a NaN the table's code of
// zero (the Go references of Select and SelectWeighted).
func (s *LUTSelector) groupCodes(codes, cs []uint8, xs []float32, mul float32, bk int) {
	stride := lutCellStride(s.ncell)
	tc := s.codes[bk*stride : bk*stride+stride]
	zero, signBit := s.zero[bk], s.signBit
	var anyZero uint32 // 1 when −0 takes the sign bit too
	if s.negZero {
		anyZero = 1
	}
	for i, v := range xs {
		y := math.Float32bits(v * mul)
		c := tc[cs[i]]
		// The sign bit: set when y's sign is, and y is not −0 or −0
		// takes it too.
		nz := ((y&0x7fffffff)+0x7fffffff)>>31 | anyZero
		neg := uint8(0) - uint8(y>>31&nz)
		c |= signBit & neg
		if y&0x7fffffff > 0x7f800000 { // NaN
			c = zero
		}
		codes[i] = c
	}
}
