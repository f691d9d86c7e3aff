package kernels

import (
	"math"
	"unsafe"
)

// The passes of the scale searches. Each goes over a sub-block x (16, 32 or
// 256 elements) with weights w (finite, w ≥ 0) once for up to 16 candidate
// scales (and offsets), and returns each candidate's sums: candidate c
// sums element by element in order of i, in float32, the sums of products
// of the fits with fused multiply-adds (fma32, one rounding per term; the
// error passes without). A vector kernel keeps the candidates in the lanes of a
// register and broadcasts each element, so its sums are these bits.

// passLanes is the number of candidates a pass measures at once.
const passLanes = 16

// lanes holds one float32 per candidate of a pass.
type lanes = [passLanes]float32

// clampRoundPass is clampRound as the passes compute it: v at least lo (a
// NaN gives lo), at most hi, rounded to nearest even.
func clampRoundPass(v, lo, hi float32) float32 {
	if !(v >= lo) {
		v = lo
	}
	if v > hi {
		v = hi
	}
	return rnd(v)
}

// affineStats are the sums over a sub-block an affine fit needs besides its
// candidates' own: Σw, Σwx and Σwx², the top code n, and whether the
// offset must be at most 0 (minBelow: 1, else 0).
type affineStats struct {
	n, sw, sx, sxx, minBelow float32
}

// affineFitGo fits, for each candidate c < k with inverse scale t[c] and
// origin o[c], the least-squares scale d[c] and offset m[c] to the codes
// q = clamp(round(t·(x−o)), 0, n), with the sums sq = Σwq, sqq = Σwq² and
// sxq = Σwqx over them:
//
//	det = sw·sqq − sq²
//	d = (sw·sxq − sx·sq)/det, m = (sqq·sx − sq·sxq)/det
//	m, d = 0, sxq/sqq when minBelow and m > 0
//
// and sets e[c] to its error sxx − 2d·sxq − 2m·sx + d²·sqq + 2d·m·sq + m²·sw
// (in that order), or +Inf unless det > 0 and d > 0; it returns sqq and sq
// in sqq[c], sq[c].
func affineFitGo(x, w []float32, k int, t, o *lanes, st *affineStats, d, m, e, sqq, sq *lanes) {
	for c := 0; c < k; c += 2 {
		c1 := min(c+1, k-1)
		a0, b0, f0, a1, b1, f1 := affineSums2Go(x, w, t[c], o[c], t[c1], o[c1], st.n)
		sq[c], sqq[c], sq[c1], sqq[c1] = a0, b0, a1, b1
		affineSolve(st, c, b0, a0, f0, d, m, e)
		affineSolve(st, c1, b1, a1, f1, d, m, e)
	}
}

// affineSolve is affineFitGo's least-squares solve of candidate c from its
// sums b = Σwq², a = Σwq and f = Σwqx.
func affineSolve(st *affineStats, c int, b, a, f float32, d, m, e *lanes) {
	det := st.sw*b - a*a
	dc := (st.sw*f - st.sx*a) / det
	mc := (b*st.sx - a*f) / det
	if st.minBelow != 0 && mc > 0 {
		mc, dc = 0, f/b
	}
	d[c], m[c] = dc, mc
	if det > 0 && dc > 0 {
		e[c] = st.sxx - 2*dc*f - 2*mc*st.sx + dc*dc*b + 2*dc*mc*a + mc*mc*st.sw
	} else {
		e[c] = float32(math.Inf(1))
	}
}

// affineSums2Go returns, for two candidates (t0, o0) and (t1, o1), the sums
// a = Σwq, b = Σwq² and f = Σwqx of the codes q = clamp(round(t·(x−o)), 0,
// n), each added in order of the elements, b and f with fma32. The two
// candidates' chains of additions are interleaved so that they overlap.
func affineSums2Go(x, w []float32, t0, o0, t1, o1, n float32) (a0, b0, f0, a1, b1, f1 float32) {
	if inUnitWeights(w) && len(x) <= qkk && n < 256 {
		return affineSums2Unit(x, t0, o0, t1, o1, n)
	}
	w = w[:len(x)]
	for i, v := range x {
		q0 := clampRoundPass(t0*(v-o0), 0, n)
		q1 := clampRoundPass(t1*(v-o1), 0, n)
		wq0, wq1 := w[i]*q0, w[i]*q1
		a0 += wq0
		a1 += wq1
		// fma32, inline.
		if s := float64(wq0)*float64(q0) + float64(b0); fma32Easy(s) {
			b0 = float32(s)
		} else {
			b0 = fma32Tie(wq0, q0, b0)
		}
		if s := float64(wq1)*float64(q1) + float64(b1); fma32Easy(s) {
			b1 = float32(s)
		} else {
			b1 = fma32Tie(wq1, q1, b1)
		}
		if s := float64(wq0)*float64(v) + float64(f0); fma32Easy(s) {
			f0 = float32(s)
		} else {
			f0 = fma32Tie(wq0, v, f0)
		}
		if s := float64(wq1)*float64(v) + float64(f1); fma32Easy(s) {
			f1 = float32(s)
		} else {
			f1 = fma32Tie(wq1, v, f1)
		}
	}
	return
}

// affineErrsGo sets e[c], for each candidate c < k with scale d[c], offset
// m[c] and inverse scale id[c] (as inv gives it), to the error Σ w·(x − x̂)²
// with x̂ = float32(d·q) + m and the codes q = clamp(round((x−m)·id), 0, n).
func affineErrsGo(x, w []float32, k int, d, m, id *lanes, n float32, e *lanes) {
	w = w[:len(x)]
	for c := range k {
		var s float32
		for i, v := range x {
			q := clampRoundPass((v-m[c])*id[c], 0, n)
			r := v - (float32(d[c]*q) + m[c])
			s += w[i] * r * r
		}
		e[c] = s
	}
}

// affineSums2Unit is affineSums2Go with every weight 1. Then q and q² are
// integers and their sums stay below 2^24 (n < 256, at most 256 elements),
// so they are exact in float32: adding q·q with one rounding (fma32) or two
// gives the same bits, and only f needs the fused sum.
func affineSums2Unit(x []float32, t0, o0, t1, o1, n float32) (a0, b0, f0, a1, b1, f1 float32) {
	for i := 0; i < len(x); i++ {
		// The loop without calls (the compiler keeps the sums in
		// registers); a step fma32Easy rejects leaves it for fma32.
		for ; i < len(x); i++ {
			v := x[i]
			q0 := clampRoundPass(t0*(v-o0), 0, n)
			q1 := clampRoundPass(t1*(v-o1), 0, n)
			s0 := float64(q0)*float64(v) + float64(f0)
			s1 := float64(q1)*float64(v) + float64(f1)
			if !fma32Easy(s0) || !fma32Easy(s1) {
				break
			}
			a0 += q0
			a1 += q1
			b0 += q0 * q0
			b1 += q1 * q1
			f0, f1 = float32(s0), float32(s1)
		}
		if i == len(x) {
			break
		}
		v := x[i]
		q0 := clampRoundPass(t0*(v-o0), 0, n)
		q1 := clampRoundPass(t1*(v-o1), 0, n)
		a0 += q0
		a1 += q1
		b0 += q0 * q0
		b1 += q1 * q1
		f0, f1 = fma32(q0, v, f0), fma32(q1, v, f1)
	}
	return
}

// affinePairErrsGo sets e[c], for each candidate c < k with scale d[c],
// offset m[c] and inverse scale id[c] (inv(d)), to the error Σ w·(x − x̂)²
// of the codes q = clamp(round(u), 0, n), measured in code steps: with
// u = fma32(id, x, κ), κ = −(m·id) (x's position in code steps) and
// r = u − q, s = Σ w·r² in order of the elements (s = fma32(w·r, r, s)),
// and e = (d·d)·s. A candidate with d = 0 codes every element as 0: its
// error is (sxx − 2m·sx) + m·m·sw from the sub-block's sums st.
func affinePairErrsGo(x, w []float32, k int, d, m, id *lanes, st *affineStats, e *lanes) {
	for c := 0; c < k; c += 2 {
		c1 := min(c+1, k-1)
		s0, s1 := pairErrs2Go(x, w, id[c], -(m[c] * id[c]), id[c1], -(m[c1] * id[c1]), st.n)
		e[c] = pairErrOf(st, d[c], m[c], s0)
		e[c1] = pairErrOf(st, d[c1], m[c1], s1)
	}
}

// pairErrOf is affinePairErrsGo's error of scale dc and offset mc from the
// sum s of the squared distances in code steps.
func pairErrOf(st *affineStats, dc, mc, s float32) float32 {
	if dc == 0 {
		return st.sxx - 2*mc*st.sx + mc*mc*st.sw
	}
	return dc * dc * s
}

// pairErrs2Go returns affinePairErrsGo's sums s of two candidates with
// inverse scales t0, t1 and offsets in code steps k0, k1, interleaved so
// that their chains of additions overlap; the loop has no calls (the
// compiler keeps the sums in registers): a step whose float64 sums
// fma32Easy rejects leaves it for fma32.
func pairErrs2Go(x, w []float32, t0, k0, t1, k1, n float32) (s0, s1 float32) {
	w = w[:len(x)]
	for i := 0; i < len(x); i++ {
		for ; i < len(x); i++ {
			v, wi := x[i], w[i]
			u0 := float64(t0)*float64(v) + float64(k0)
			u1 := float64(t1)*float64(v) + float64(k1)
			if !fma32Easy(u0) || !fma32Easy(u1) {
				break
			}
			r0 := float32(u0) - clampRoundPass(float32(u0), 0, n)
			r1 := float32(u1) - clampRoundPass(float32(u1), 0, n)
			e0 := float64(wi*r0)*float64(r0) + float64(s0)
			e1 := float64(wi*r1)*float64(r1) + float64(s1)
			if !fma32Easy(e0) || !fma32Easy(e1) {
				break
			}
			s0, s1 = float32(e0), float32(e1)
		}
		if i == len(x) {
			break
		}
		v, wi := x[i], w[i]
		u0, u1 := fma32(t0, v, k0), fma32(t1, v, k1)
		r0 := u0 - clampRoundPass(u0, 0, n)
		r1 := u1 - clampRoundPass(u1, 0, n)
		s0, s1 = fma32(wi*r0, r0, s0), fma32(wi*r1, r1, s1)
	}
	return
}

// affineFit0Go is the first round of an affine fit: from the least value
// lo and the greatest hi of x (each plus 0, so a −0 is +0; lo at most 0
// when st.minBelow is set) and the candidates' nd[c] and shift[c], it fits
// the inverse scales t[c] = nd[c]·(1/(hi−lo)) with the origins
// o[c] = lo − shift[c]·(hi−lo) as affineFitGo does, after adding up
// st.sw = Σw, st.sx = Σwx and st.sxx = Σ(wx)x in order. It returns lo and
// hi in lohi.
func affineFit0Go(x, w []float32, k int, nd, shift *lanes, st *affineStats, lohi *[2]float32, d, m, e, sqq, sq *lanes) {
	lo, hi := x[0], x[0]
	for _, v := range x[1:] {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	lo, hi = lo+0, hi+0
	if st.minBelow != 0 && lo > 0 {
		lo = 0
	}
	w = w[:len(x)]
	var sw, sx, sxx float32
	for i, v := range x {
		sw += w[i]
		wx := w[i] * v
		sx += wx
		sxx += wx * v
	}
	st.sw, st.sx, st.sxx = sw, sx, sxx
	span := hi - lo
	r := 1 / span
	var t, o lanes
	for c := range k {
		t[c], o[c] = nd[c]*r, lo-shift[c]*span
	}
	lohi[0], lohi[1] = lo, hi
	affineFitGo(x, w, k, &t, &o, st, d, m, e, sqq, sq)
}

// symFitGo fits, for each candidate c < k with inverse scale t[c], the
// least-squares scale d[c] = sxq/sqq to the codes
// q = clamp(round(t·x), −neg, pos), with sxq = Σwqx and sqq = Σwq², and
// sets score[c] = sxq²/sqq (the error is Σwx² − score), or −Inf unless
// sqq > 0; it returns sqq in sqq[c].
func symFitGo(x, w []float32, k int, t *lanes, neg, pos float32, d, score, sqq *lanes) {
	for c := 0; c < k; c += 2 {
		c1 := min(c+1, k-1)
		var a0, b0, a1, b1 float32
		if inUnitWeights(w) && len(x) <= qkk && neg <= 128 && pos <= 128 {
			a0, b0, a1, b1 = symSums2Unit(x, t[c], t[c1], neg, pos)
		} else {
			a0, b0, a1, b1 = symSums2Go(x, w, t[c], t[c1], neg, pos)
		}
		symSolve(c, a0, b0, d, score, sqq)
		symSolve(c1, a1, b1, d, score, sqq)
	}
}

// symSolve sets candidate c's d = a/b, score a·a/b (−Inf unless b > 0) and
// sqq = b from its sums a = Σwqx and b = Σwq².
func symSolve(c int, a, b float32, d, score, sqq *lanes) {
	d[c], sqq[c] = a/b, b
	if b > 0 {
		score[c] = a * a / b
	} else {
		score[c] = float32(math.Inf(-1))
	}
}

// symSums2Go returns symFitGo's sums a = Σwqx and b = Σwq² (both fused)
// of two candidates t0, t1, interleaved.
func symSums2Go(x, w []float32, t0, t1, neg, pos float32) (a0, b0, a1, b1 float32) {
	w = w[:len(x)]
	for i, v := range x {
		q0 := clampRoundPass(t0*v, -neg, pos)
		q1 := clampRoundPass(t1*v, -neg, pos)
		wq0, wq1 := w[i]*q0, w[i]*q1
		a0, a1 = fma32(wq0, v, a0), fma32(wq1, v, a1)
		b0, b1 = fma32(wq0, q0, b0), fma32(wq1, q1, b1)
	}
	return
}

// symSums2Unit is symSums2Go with every weight 1: q² and Σq² are integers
// below 2^24 (|q| ≤ 128, at most 256 elements), exact in float32, so only a
// needs the fused sum; the loop has no calls (a step fma32Easy rejects
// leaves it for fma32).
func symSums2Unit(x []float32, t0, t1, neg, pos float32) (a0, b0, a1, b1 float32) {
	for i := 0; i < len(x); i++ {
		for ; i < len(x); i++ {
			v := x[i]
			q0 := clampRoundPass(t0*v, -neg, pos)
			q1 := clampRoundPass(t1*v, -neg, pos)
			s0 := float64(q0)*float64(v) + float64(a0)
			s1 := float64(q1)*float64(v) + float64(a1)
			if !fma32Easy(s0) || !fma32Easy(s1) {
				break
			}
			a0, a1 = float32(s0), float32(s1)
			b0 += q0 * q0
			b1 += q1 * q1
		}
		if i == len(x) {
			break
		}
		v := x[i]
		q0 := clampRoundPass(t0*v, -neg, pos)
		q1 := clampRoundPass(t1*v, -neg, pos)
		a0, a1 = fma32(q0, v, a0), fma32(q1, v, a1)
		b0 += q0 * q0
		b1 += q1 * q1
	}
	return
}

// symErrsGo sets e[c], for each candidate c < k with scale d[c] and inverse
// id[c], to the error Σ w·(x − d·q)² with q = clamp(round(x·id), −neg, pos),
// r = x − d·q and each w·r·r added with one rounding each (fma32).
func symErrsGo(x, w []float32, k int, d, id *lanes, neg, pos float32, e *lanes) {
	w = w[:len(x)]
	for c := 0; c < k; c += 2 {
		c1 := min(c+1, k-1)
		nd0, nd1, id0, id1 := -d[c], -d[c1], id[c], id[c1]
		var s0, s1 float32
		// The loop without calls; a step fma32Easy rejects leaves it.
		for i := 0; i < len(x); i++ {
			for ; i < len(x); i++ {
				v, wi := x[i], w[i]
				q0 := clampRoundPass(v*id0, -neg, pos)
				q1 := clampRoundPass(v*id1, -neg, pos)
				u0 := float64(nd0)*float64(q0) + float64(v)
				u1 := float64(nd1)*float64(q1) + float64(v)
				if !fma32Easy(u0) || !fma32Easy(u1) {
					break
				}
				r0, r1 := float32(u0), float32(u1)
				e0 := float64(wi*r0)*float64(r0) + float64(s0)
				e1 := float64(wi*r1)*float64(r1) + float64(s1)
				if !fma32Easy(e0) || !fma32Easy(e1) {
					break
				}
				s0, s1 = float32(e0), float32(e1)
			}
			if i == len(x) {
				break
			}
			v, wi := x[i], w[i]
			q0 := clampRoundPass(v*id0, -neg, pos)
			q1 := clampRoundPass(v*id1, -neg, pos)
			r0, r1 := fma32(nd0, q0, v), fma32(nd1, q1, v)
			s0, s1 = fma32(wi*r0, r0, s0), fma32(wi*r1, r1, s1)
		}
		e[c], e[c1] = s0, s1
	}
}

// signedMax returns the largest magnitude amax of x and the first element
// m with |m| = amax (x[0] when every element is a zero).
func signedMax(x []float32) (amax, m float32) {
	for _, v := range x {
		amax = max(amax, abs32(v))
	}
	for _, v := range x {
		if abs32(v) == amax {
			return amax, v
		}
	}
	return amax, 0
}

// symFit0Go is the first round of a symmetric fit: from the element m of
// largest magnitude (signedMax) it measures the candidates t[c] =
// numer[c]/m as symFitGo does, after adding up sxx = Σ(wx)x in order, and
// returns sxx and the largest magnitude in stats.
func symFit0Go(x, w []float32, k int, numer *lanes, neg, pos float32, d, score, sqq *lanes, stats *[2]float32) {
	amax, m := signedMax(x)
	w = w[:len(x)]
	var sxx float32
	for i, v := range x {
		sxx += w[i] * v * v
	}
	stats[0], stats[1] = sxx, amax
	var t lanes
	for c := range k {
		t[c] = numer[c] / m
	}
	symFitGo(x, w, k, &t, neg, pos, d, score, sqq)
}

// tableFit0Go is symFit0Go for table values (tableFitGo).
func tableFit0Go(x, w []float32, k int, numer *lanes, tab *table, d, score, sqq *lanes, stats *[2]float32) {
	amax, m := signedMax(x)
	w = w[:len(x)]
	var sxx float32
	for i, v := range x {
		sxx += w[i] * v * v
	}
	stats[0], stats[1] = sxx, amax
	var t lanes
	for c := range k {
		t[c] = numer[c] / m
	}
	tableFitGo(x, w, k, &t, tab, d, score, sqq)
}

// tableFitGo is symFitGo for the table values q = tab.v[tab.index(t·x)].
func tableFitGo(x, w []float32, k int, t *lanes, tab *table, d, score, sqq *lanes) {
	unit := inUnitWeights(w) && len(x) <= qkk // table values: |q| ≤ 128
	w = w[:len(x)]
	for c := 0; c < k; c += 2 {
		c1 := min(c+1, k-1)
		t0, t1 := t[c], t[c1]
		var a0, b0, a1, b1 float32
		if unit {
			// Table values are integers (|q| ≤ 128): q² and Σq² are exact
			// in float32, so only a needs the fused sum. The loop has no
			// calls; a step fma32Easy rejects leaves it.
			for i := 0; i < len(x); i++ {
				for ; i < len(x); i++ {
					v := x[i]
					q0, q1 := tab.v[tab.index(t0*v)], tab.v[tab.index(t1*v)]
					s0 := float64(q0)*float64(v) + float64(a0)
					s1 := float64(q1)*float64(v) + float64(a1)
					if !fma32Easy(s0) || !fma32Easy(s1) {
						break
					}
					a0, a1 = float32(s0), float32(s1)
					b0 += q0 * q0
					b1 += q1 * q1
				}
				if i == len(x) {
					break
				}
				v := x[i]
				q0, q1 := tab.v[tab.index(t0*v)], tab.v[tab.index(t1*v)]
				a0, a1 = fma32(q0, v, a0), fma32(q1, v, a1)
				b0 += q0 * q0
				b1 += q1 * q1
			}
		} else {
			for i, v := range x {
				q0, q1 := tab.v[tab.index(t0*v)], tab.v[tab.index(t1*v)]
				wq0, wq1 := w[i]*q0, w[i]*q1
				a0, a1 = fma32(wq0, v, a0), fma32(wq1, v, a1)
				b0, b1 = fma32(wq0, q0, b0), fma32(wq1, q1, b1)
			}
		}
		symSolve(c, a0, b0, d, score, sqq)
		symSolve(c1, a1, b1, d, score, sqq)
	}
}

// tableErrsGo sets e[c], for each candidate c < k with scale d[c] and
// inverse id[c], to the error Σ w·(x − d·q)² with the table values
// q = tab.v[tab.index(x·id)].
func tableErrsGo(x, w []float32, k int, d, id *lanes, tab *table, e *lanes) {
	w = w[:len(x)]
	for c := range k {
		var s float32
		for i, v := range x {
			r := v - d[c]*tab.v[tab.index(id[c]*v)]
			s += w[i] * r * r
		}
		e[c] = s
	}
}

// The final codes of a block: each element's code under its sub-block's
// stored scale, the sub-blocks being len(x)/k long for k of them (16, 32 or
// 256 elements). A NaN element is coded as 0; an infinity clamps.

// affineCodesGo sets codes[i] to clamp(round((v−m)·id), 0, n) with
// v = x[i] (NaN read as 0) and m, id = mi[2j], mi[2j+1] of its sub-block j.
func affineCodesGo(x, mi []float32, n float32, codes []uint8) {
	sub := len(x) / (len(mi) / 2)
	for i, v := range x[:len(codes)] {
		j := i / sub
		codes[i] = uint8(clampRoundPass((storeX(v)-mi[2*j])*mi[2*j+1], 0, n))
	}
}

// symCodesGo sets codes[i] to clamp(round(v·id), −neg, pos) + neg with
// v = x[i] (NaN read as 0) and id = ids[j] of its sub-block j.
func symCodesGo(x, ids []float32, neg, pos float32, codes []uint8) {
	sub := len(x) / len(ids)
	for i, v := range x[:len(codes)] {
		codes[i] = uint8(clampRoundPass(storeX(v)*ids[i/sub], -neg, pos) + neg)
	}
}

// tableCodesGo sets codes[i] to the table index tab.index(v·id) with
// v = x[i] (NaN read as 0) and id = ids[j] of its sub-block j.
func tableCodesGo(x, ids []float32, tab *table, codes []uint8) {
	sub := len(x) / len(ids)
	for i, v := range x[:len(codes)] {
		codes[i] = uint8(tab.index(storeX(v) * ids[i/sub]))
	}
}

// inUnitWeights reports whether w lies in unitWeights (a sub-block's part
// of the weights of a block without importance): every element is 1.
func inUnitWeights(w []float32) bool {
	if len(w) == 0 {
		return false
	}
	off := uintptr(unsafe.Pointer(&w[0])) - uintptr(unsafe.Pointer(&unitWeights[0]))
	return off < unsafe.Sizeof(unitWeights) && int(off/4)+len(w) <= len(unitWeights)
}
