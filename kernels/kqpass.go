package kernels

// The passes of the scale searches. Each goes over a sub-block x (16, 32 or
// 256 elements) with weights w (finite, w ≥ 0) once for up to 16 candidate
// scales (and offsets), and returns each candidate's sums: candidate c
// sums element by element in order of i, in float32 without fused
// multiply-adds. A vector kernel keeps the candidates in the lanes of a
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

// affineSumsGo sets, for each candidate c < k with inverse scale t[c] and
// origin o[c], the sums over the codes q = clamp(round(t·(x−o)), 0, n):
// sq[c] = Σwq, sqq[c] = Σwq² and sxq[c] = Σwqx.
func affineSumsGo(x, w []float32, k int, t, o *lanes, n float32, sq, sqq, sxq *lanes) {
	w = w[:len(x)]
	for c := range k {
		var a, b, e float32
		for i, v := range x {
			q := clampRoundPass(t[c]*(v-o[c]), 0, n)
			wq := w[i] * q
			a += wq
			b += wq * q
			e += wq * v
		}
		sq[c], sqq[c], sxq[c] = a, b, e
	}
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

// symSumsGo sets, for each candidate c < k with inverse scale t[c], the
// sums over the codes q = clamp(round(t·x), −neg, pos): sxq[c] = Σwqx and
// sqq[c] = Σwq².
func symSumsGo(x, w []float32, k int, t *lanes, neg, pos float32, sxq, sqq *lanes) {
	w = w[:len(x)]
	for c := range k {
		var a, b float32
		for i, v := range x {
			q := clampRoundPass(t[c]*v, -neg, pos)
			wq := w[i] * q
			a += wq * v
			b += wq * q
		}
		sxq[c], sqq[c] = a, b
	}
}

// symErrsGo sets e[c], for each candidate c < k with scale d[c] and inverse
// id[c], to the error Σ w·(x − d·q)² with q = clamp(round(x·id), −neg, pos).
func symErrsGo(x, w []float32, k int, d, id *lanes, neg, pos float32, e *lanes) {
	w = w[:len(x)]
	for c := range k {
		var s float32
		for i, v := range x {
			q := clampRoundPass(v*id[c], -neg, pos)
			r := v - d[c]*q
			s += w[i] * r * r
		}
		e[c] = s
	}
}

// tableSumsGo sets, for each candidate c < k with inverse scale t[c], the
// sums over the table values q = tab.v[tab.index(t·x)]: sxq[c] = Σwqx and
// sqq[c] = Σwq².
func tableSumsGo(x, w []float32, k int, t *lanes, tab *table, sxq, sqq *lanes) {
	w = w[:len(x)]
	for c := range k {
		var a, b float32
		for i, v := range x {
			q := tab.v[tab.index(t[c]*v)]
			wq := w[i] * q
			a += wq * v
			b += wq * q
		}
		sxq[c], sqq[c] = a, b
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
