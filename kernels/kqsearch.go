package kernels

import "math"

// The scale searches of the K-quant, legacy and IQ4 quantizers. Every
// quantizer minimises the weighted squared error Σ w·(x − x̂)² of its
// blocks, w being the importance of each element's column (1 without an
// importance vector). A sub-block's scale (and min) is fitted first, as a
// float, by trying a few candidate scales, fitting the least-squares scale
// (and min) to the codes each one rounds to, and refitting the best; the
// super-block then quantizes those scales to its integer sub-block scales
// (superScale), and each sub-block finally takes the best of the nearest
// integer scales under the stored super-block scale, with the nearest
// codes. All arithmetic is float32, element by element in order, so that a
// vector kernel working one sub-block per lane gives the same bits.

// magicRound is 1.5·2^23: adding and subtracting it rounds a float32 of
// magnitude below 2^22 to an integer, ties to even.
const magicRound = 12582912

// rnd rounds v (|v| < 2^22) to the nearest integer, ties to even.
func rnd(v float32) float32 { return (v + magicRound) - magicRound }

// clampRound returns v clamped to [lo, hi] (NaN gives lo) and rounded to
// the nearest integer, ties to even. lo and hi are integers below 2^22.
func clampRound(v, lo, hi float32) float32 {
	if !(v >= lo) {
		v = lo
	}
	if v > hi {
		v = hi
	}
	return rnd(v)
}

// finite reports whether v is neither NaN nor an infinity.
func finite(v float32) bool { return math.Float32bits(v)&0x7f800000 != 0x7f800000 }

// groupEps is the largest magnitude of a sub-block quantized as all zero:
// below it no scale is fitted.
const groupEps = 1e-15

// fit is the result of a sub-block fit: x ≈ d·q + m (m = 0 for the
// symmetric fits), with weighted error err, and the sums Σwq² (cqq), Σwq
// (cq) and Σw (cw) of its codes, the curvatures of the error in d and m.
type fit struct {
	d, m, err   float32
	cqq, cq, cw float32
	sx, sxx     float32 // an affine fit's Σwx and Σwx² (for its picks)
}

// affine is an affine (scale and min) search: x ≈ d·q + m, q in [0, n].
type affine struct {
	n        float32   // codes run from 0 to n
	deltas   []float32 // candidate inverse scales t = (n+δ)/(max−min)
	shifts   []float32 // origins below the min tried with each candidate, in code steps
	minBelow bool      // m must be ≤ 0 (the K-quants store −m ≥ 0)
	refine   int       // rounds of refits around the best
	local    []float32 // the refits' inverse scales, as factors of the best's
	offs     []float32 // the refits' origins, the best's offset plus these steps
	// picks are the pairs of integer scale and min its super-block search
	// tries (pickAffine), as indices 4i+j into {l0, l1, l0−1, l1+1} ×
	// {m0, m1, m0−1, m1+1}, in order; nil tries all 16.
	picks []uint8

	cands     []affineCand // the first candidates, from deltas and shifts (init)
	nd, shift lanes        // the same, by lane
}

// affineCand is a first candidate of an affine search: inverse scale
// nd/(max−min) (nd = n+δ) and origin min − shift·(max−min) (shift =
// sh/(n+δ), the origin sh code steps below the min).
type affineCand struct{ nd, shift float32 }

// init lays out a's first candidates: each delta, then it with each shift.
func (a *affine) init() *affine {
	a.cands = a.cands[:0]
	for _, dl := range a.deltas {
		a.cands = append(a.cands, affineCand{nd: a.n + dl})
		for _, sh := range a.shifts {
			a.cands = append(a.cands, affineCand{nd: a.n + dl, shift: sh / (a.n + dl)})
		}
	}
	if len(a.cands) > passLanes {
		panic("kernels: an affine search of more than 16 first candidates")
	}
	for c, cd := range a.cands {
		a.nd[c], a.shift[c] = cd.nd, cd.shift
	}
	if a.picks == nil {
		for c := range uint8(passLanes) {
			a.picks = append(a.picks, c)
		}
	}
	if len(a.picks) == 0 || len(a.picks) > passLanes {
		panic("kernels: an affine search of no or more than 16 pick pairs")
	}
	for _, c := range a.picks {
		if c >= passLanes {
			panic("kernels: an affine pick pair out of the 4×4 grid")
		}
	}
	return a
}

// fit fits x ≈ d·q + m minimising Σ w·(x − d·q − m)² over a's candidates,
// with d ≥ 0 and, when a.minBelow, m ≤ 0. x must be finite and w ≥ 0 with a
// positive sum.
func (a *affine) fit(x, w []float32) fit {
	var p fitLanes
	return a.fitWith(x, w, &p)
}

// fitLanes is the scratch of a fit: its candidates and their results.
type fitLanes struct {
	t, o, d, m, e, sqq, sq lanes
}

// fitWith is fit with the scratch p.
func (a *affine) fitWith(x, w []float32, p *fitLanes) fit {
	st := affineStats{n: a.n}
	if a.minBelow {
		st.minBelow = 1
	}
	var lohi [2]float32
	k := len(a.cands)
	affineFit0(x, w, k, &a.nd, &a.shift, &st, &lohi, &p.d, &p.m, &p.e, &p.sqq, &p.sq)
	lo, hi, sw, sx, sxx := lohi[0], lohi[1], st.sw, st.sx, st.sxx
	if !(hi-lo > groupEps) {
		// A constant: zero codes and the least-squares offset.
		m := sx / sw
		if a.minBelow && m > 0 {
			m = 0
		}
		return fit{d: 0, m: m, err: sxx - 2*m*sx + m*m*sw, cw: sw, sx: sx, sxx: sxx}
	}
	best := fit{err: float32(math.Inf(1))}
	for round := 0; ; round++ {
		if round > 0 {
			affineFit(x, w, k, &p.t, &p.o, &st, &p.d, &p.m, &p.e, &p.sqq, &p.sq)
		}
		for c := range k {
			if p.e[c] < best.err {
				best = fit{d: p.d[c], m: p.m[c], err: p.e[c], cqq: p.sqq[c], cq: p.sq[c], cw: sw, sx: sx, sxx: sxx}
			}
		}
		if round == a.refine || best.d == 0 {
			break
		}
		k = 0
		id := 1 / best.d
		for _, g := range a.offs {
			for _, f := range a.local {
				p.t[k], p.o[k] = id*f, best.m+g*best.d
				k++
			}
		}
	}
	if best.d == 0 { // no candidate fitted: the plain min-max scale
		best = fit{d: (hi - lo) / a.n, m: lo, cw: sw, sx: sx, sxx: sxx}
		var d, m, id, e lanes
		d[0], m[0], id[0] = best.d, best.m, inv(best.d)
		affineErrs(x, w, 1, &d, &m, &id, a.n, &e)
		best.err = e[0]
	}
	return best
}

// symmetric is a search for x ≈ d·q with q in [−neg, pos].
type symmetric struct {
	neg, pos float32
	deltas   []float32 // candidate t = −(neg+δ)/max: max near −neg
	posDelta []float32 // candidate t = (pos+δ)/max: max near pos
	refine   int       // rounds of refits around the best
	local    []float32 // the refits' inverse scales, as factors of the best's

	numer  []float32 // the first candidates' numerators: t = numer/max (init)
	numerL lanes     // the same, by lane
}

// init lays out s's first candidates: −(neg+δ) for each delta, then
// pos+δ for each posDelta.
func (s *symmetric) init() *symmetric {
	s.numer = s.numer[:0]
	for _, dl := range s.deltas {
		s.numer = append(s.numer, -(s.neg + dl))
	}
	for _, dl := range s.posDelta {
		s.numer = append(s.numer, s.pos+dl)
	}
	if len(s.numer) > passLanes {
		panic("kernels: a symmetric search of more than 16 first candidates")
	}
	copy(s.numerL[:], s.numer)
	return s
}

// fit fits x ≈ d·q minimising Σ w·(x − d·q)² over s's candidates; d may be
// negative. x must be finite and w ≥ 0.
func (s *symmetric) fit(x, w []float32) fit {
	var d, sc, sqq lanes
	var stats [2]float32
	k := len(s.numer)
	symFit0(x, w, k, &s.numerL, s.neg, s.pos, &d, &sc, &sqq, &stats)
	sxx := stats[0]
	best := fit{err: sxx}
	if stats[1] < groupEps {
		return best
	}
	var score float32
	for c := range k {
		if sc[c] > score {
			score = sc[c]
			best = fit{d: d[c], err: sxx - score, cqq: sqq[c]}
		}
	}
	var ts []float32
	var buf [2 * passLanes]float32
	measure := func(ts []float32) {
		var t, d, sc, sqq lanes
		for len(ts) > 0 {
			k := copy(t[:], ts)
			symFit(x, w, k, &t, s.neg, s.pos, &d, &sc, &sqq)
			for c := range k {
				if sc[c] > score {
					score = sc[c]
					best = fit{d: d[c], err: sxx - score, cqq: sqq[c]}
				}
			}
			ts = ts[k:]
		}
	}
	for range s.refine {
		if best.d == 0 {
			break
		}
		id := 1 / best.d
		ts = buf[:0]
		for _, f := range s.local {
			ts = append(ts, id*f)
		}
		measure(ts)
	}
	return best
}

// superScale chooses the super-block scale D of sub-block scales s (signed
// or not) stored as integers l in [lo, hi] with s ≈ D·l, minimising
// Σ a·(s − D·l)², a being each sub-block's curvature (the weight of its
// scale's error). The sub-block scale m of largest magnitude is tried at
// each level t of levels (D = m/t), each followed by a least-squares refit
// of D to the integers it rounds to. It returns D, 0 when every s is 0.
func superScale(s, a []float32, lo, hi float32, levels []float32) float32 {
	var amax, m float32
	for _, v := range s {
		if x := abs32(v); x > amax {
			amax, m = x, v
		}
	}
	if amax == 0 {
		return 0
	}
	best, bestD := float32(math.Inf(1)), m/levels[0]
	for _, t := range levels {
		id := t / m
		var sl, ll float32
		for j, v := range s {
			l := clampRound(v*id, lo, hi)
			sl += a[j] * v * l
			ll += a[j] * l * l
		}
		if !(ll > 0) {
			continue
		}
		D := sl / ll
		var e float32
		for j, v := range s {
			l := clampRound(v*id, lo, hi)
			r := v - D*l
			e += a[j] * r * r
		}
		if e < best {
			best, bestD = e, D
		}
	}
	return bestD
}

// levelsFrom returns n levels from start in steps of step.
func levelsFrom(start, step float32, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = start + step*float32(i)
	}
	return out
}

// table is a search for x ≈ d·v[i] over a table v of 16 ascending values.
type table struct {
	v        [16]float32
	mid      [16]float32 // midpoints of neighbouring values (and a 16th, +Inf, never read)
	deltas   []float32   // candidate t = (v[0]+δ)/max: max near v[0]
	posDelta []float32   // candidate t = (v[15]+δ)/max: max near v[15]
	refine   int         // rounds of refits around the best
	local    []float32   // the refits' inverse scales, as factors of the best's
	numer    []float32   // the first candidates' numerators: t = numer/max
	numerL   lanes       // the same, by lane
}

// newTable returns the search over the values v (ascending).
func newTable(v [16]int8, deltas, posDelta []float32, refine int, local []float32) *table {
	t := &table{deltas: deltas, posDelta: posDelta, refine: refine, local: local}
	for i, x := range v {
		t.v[i] = float32(x)
	}
	for i := range 15 {
		t.mid[i] = (t.v[i] + t.v[i+1]) / 2
	}
	t.mid[15] = float32(math.Inf(1))
	for _, dl := range deltas {
		t.numer = append(t.numer, t.v[0]+dl)
	}
	for _, dl := range posDelta {
		t.numer = append(t.numer, t.v[15]+dl)
	}
	if len(t.numer) > passLanes {
		panic("kernels: a table search of more than 16 first candidates")
	}
	copy(t.numerL[:], t.numer)
	return t
}

// index returns the index of the value nearest u: the number of midpoints
// below u (ties go to the lower value; NaN gives 0).
func (t *table) index(u float32) int {
	i := 0
	if u > t.mid[7] {
		i = 8
	}
	if u > t.mid[i+3] {
		i += 4
	}
	if u > t.mid[i+1] {
		i += 2
	}
	if u > t.mid[i] {
		i++
	}
	return i
}

// fit fits x ≈ d·v[i] minimising Σ w·(x − d·v[i])² over t's candidates; d
// may be negative. x must be finite and w ≥ 0.
func (t *table) fit(x, w []float32) fit {
	var d, sc, sqq lanes
	var stats [2]float32
	k := len(t.numer)
	tableFit0(x, w, k, &t.numerL, t, &d, &sc, &sqq, &stats)
	sxx := stats[0]
	best := fit{err: sxx}
	if stats[1] < groupEps {
		return best
	}
	var score float32
	for c := range k {
		if sc[c] > score {
			score = sc[c]
			best = fit{d: d[c], err: sxx - score, cqq: sqq[c]}
		}
	}
	var ts []float32
	var buf [2 * passLanes]float32
	measure := func(ts []float32) {
		var tl, d, sc, sqq lanes
		for len(ts) > 0 {
			k := copy(tl[:], ts)
			tableFit(x, w, k, &tl, t, &d, &sc, &sqq)
			for c := range k {
				if sc[c] > score {
					score = sc[c]
					best = fit{d: d[c], err: sxx - score, cqq: sqq[c]}
				}
			}
			ts = ts[k:]
		}
	}
	for range t.refine {
		if best.d == 0 {
			break
		}
		id := 1 / best.d
		ts = buf[:0]
		for _, f := range t.local {
			ts = append(ts, id*f)
		}
		measure(ts)
	}
	return best
}
