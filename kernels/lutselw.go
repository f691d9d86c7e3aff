package kernels

import (
	"fmt"
	"math"
)

// SelectWeighted is Select with the squared error of x_i weighted by w[i]
// (one finite non-negative weight per value; len(w) ≥ len(x)): for group g
// every table k is scored by
//
//	e_k = Σ_i float64(w_i)·(float64(mag_k(|x_i·mul|)·scale) − float64(|x_i|))²
//
// summed in float64 in the order of i, each square and product rounded (no
// fused multiply-add), a value of weight 0 adding nothing (not even the NaN
// of 0·∞ where an entry overflows when scaled), except that a group whose weights are all equal is
// scored by Select's unweighted error, so it gets Select's choice. The
// table of least error is chosen, the first on ties (a NaN error never wins
// over an earlier table); codes and meta are written as Select writes them.
// The AVX-512 kernels of Select have weighted variants, under the same
// conditions, which equal the Go loop bit for bit. It panics on malformed
// arguments.
func (s *LUTSelector) SelectWeighted(codes, meta []uint8, x, w []float32, group, block int, muls, scales []float32) {
	if group < 1 || block < 1 || block%group != 0 || len(codes) < len(x) || len(w) < len(x) || len(meta) < (len(x)+group-1)/group ||
		len(muls) < (len(x)+block-1)/block || len(scales) < (len(x)+block-1)/block {
		panic(fmt.Sprintf("kernels: LUTSelector.SelectWeighted: %d codes, %d weights, %d meta fields, %d multipliers and %d scales for %d values in groups of %d, blocks of %d",
			len(codes), len(w), len(meta), len(muls), len(scales), len(x), group, block))
	}
	lutSelectWeighted(s, codes[:len(x)], meta, x, w[:len(x)], group, block, muls, scales)
}

// lutSelectWeightedGo is SelectWeighted (len(codes) = len(w) = len(x)): per
// group, the cells of its values, the tables' (weighted) errors in one
// pass, the choice, then the codes, as lutSelectGo does.
func lutSelectWeightedGo(s *LUTSelector, codes, meta []uint8, x, w []float32, group, block int, muls, scales []float32) {
	nt, stride := s.nt, lutCellStride(s.ncell)
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
	signBit := s.signBit
	var anyZero uint32 // 1 when −0 takes the sign bit too
	if s.negZero {
		anyZero = 1
	}
	g, b, inBlock := 0, 0, 0
	for lo := 0; lo < len(x); lo += group {
		hi := min(lo+group, len(x))
		mul, scale := muls[b], scales[b]
		xs, ws, cs := x[lo:hi], w[lo:hi], cells[:hi-lo]
		flat := true
		for i, v := range xs {
			y := v * mul
			k := int64(math.Float32bits(y) & 0x7fffffff)
			if y != y {
				k = 0 // a NaN falls in the cell of 0
			}
			cs[i] = uint8(s.cellOf(k))
			flat = flat && ws[i] == ws[0]
		}
		clear(acc)
		for i, v := range xs {
			c := int(cs[i])
			a := float64(math.Float32frombits(math.Float32bits(v) & 0x7fffffff))
			row := s.mags[c*nt : c*nt+nt : c*nt+nt]
			if flat {
				for k, m := range row {
					d := float64(m*scale) - a
					acc[k] += float64(d * d)
				}
				continue
			}
			wi := float64(ws[i])
			if wi == 0 {
				continue // nothing, not even the NaN of 0·∞
			}
			for k, m := range row {
				d := float64(m*scale) - a
				acc[k] += float64(wi * float64(d*d))
			}
		}
		bk, best := 0, acc[0]
		for k, e := range acc[1:] {
			if e < best {
				best, bk = e, k+1
			}
		}
		meta[g] = uint8(bk)
		tc := s.codes[bk*stride : bk*stride+stride]
		zero := s.zero[bk]
		for i, v := range xs {
			y := math.Float32bits(v * mul)
			c := tc[cs[i]]
			nz := ((y&0x7fffffff)+0x7fffffff)>>31 | anyZero
			neg := uint8(0) - uint8(y>>31&nz)
			c |= signBit & neg
			if y&0x7fffffff > 0x7f800000 { // NaN
				c = zero
			}
			codes[lo+i] = c
		}
		g++
		if inBlock += hi - lo; inBlock >= block {
			b, inBlock = b+1, 0
		}
	}
}
