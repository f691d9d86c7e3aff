package kernels

// The passes of the scale searches: each goes once over a sub-block of 16
// or 32 elements x with weights w (finite, w ≥ 0) and sums over it. The sums
// are kept in 16 lanes, element i adding to lane i%16 in order of i, and
// the lanes are then added in a fixed tree (lane k plus lane k+8, then k
// plus k+4, k plus k+2, and the last two), all in float32 without fused
// multiply-adds: the order a vector kernel computes them in, so that every
// tier gives the same bits.

// passLanes is the number of partial sums of a pass.
const passLanes = 16

// laneReduce returns the sum of v's lanes in the tree order, overwriting v.
func laneReduce(v *[passLanes]float32) float32 {
	for k := range 8 {
		v[k] += v[k+8]
	}
	for k := range 4 {
		v[k] += v[k+4]
	}
	for k := range 2 {
		v[k] += v[k+2]
	}
	return v[0] + v[1]
}

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

// affineSumsGo returns, for the codes q = clamp(round(t·(x−o)), 0, n), the
// sums Σwq, Σwq² and Σwqx.
func affineSumsGo(x, w []float32, t, o, n float32) (sq, sqq, sxq float32) {
	var a, b, c [passLanes]float32
	w = w[:len(x)]
	for i, v := range x {
		q := clampRoundPass(t*(v-o), 0, n)
		wq := w[i] * q
		a[i%passLanes] += wq
		b[i%passLanes] += wq * q
		c[i%passLanes] += wq * v
	}
	return laneReduce(&a), laneReduce(&b), laneReduce(&c)
}

// symSumsGo returns, for the codes q = clamp(round(t·x), −neg, pos), the
// sums Σwqx and Σwq².
func symSumsGo(x, w []float32, t, neg, pos float32) (sxq, sqq float32) {
	var a, b [passLanes]float32
	w = w[:len(x)]
	for i, v := range x {
		q := clampRoundPass(t*v, -neg, pos)
		wq := w[i] * q
		a[i%passLanes] += wq * v
		b[i%passLanes] += wq * q
	}
	return laneReduce(&a), laneReduce(&b)
}

// tableSumsGo returns, for the values q = tab.v[tab.index(t·x)], the sums
// Σwqx and Σwq².
func tableSumsGo(x, w []float32, t float32, tab *table) (sxq, sqq float32) {
	var a, b [passLanes]float32
	w = w[:len(x)]
	for i, v := range x {
		q := tab.v[tab.index(t*v)]
		wq := w[i] * q
		a[i%passLanes] += wq * v
		b[i%passLanes] += wq * q
	}
	return laneReduce(&a), laneReduce(&b)
}

// The batched passes: one call measures every candidate of a sub-block, so
// that a vector kernel keeps x and w in registers. Each is the loop of the
// single pass over the candidates; len(x) is 16 or 32.

// affineSumsBatchGo sets out[3c:3c+3] to affineSumsGo(x, w, tp[2c], tp[2c+1], n)
// for each candidate c < len(tp)/2.
func affineSumsBatchGo(x, w, tp []float32, n float32, out []float32) {
	for c := range len(tp) / 2 {
		out[3*c], out[3*c+1], out[3*c+2] = affineSumsGo(x, w, tp[2*c], tp[2*c+1], n)
	}
}

// affineErrBatchGo sets out[c] to the error Σ w·(x − x̂)² of candidate c,
// whose scale d, offset m and inverse scale id (as inv gives it) are
// dmi[3c:3c+3]: x̂ = float32(d·q) + m with the codes
// q = clamp(round((x−m)·id), 0, n).
func affineErrBatchGo(x, w, dmi []float32, n float32, out []float32) {
	w = w[:len(x)]
	for c := range len(dmi) / 3 {
		d, m, id := dmi[3*c], dmi[3*c+1], dmi[3*c+2]
		var e [passLanes]float32
		for i, v := range x {
			q := clampRoundPass((v-m)*id, 0, n)
			r := v - (float32(d*q) + m)
			e[i%passLanes] += w[i] * r * r
		}
		out[c] = laneReduce(&e)
	}
}

// symSumsBatchGo sets out[2c:2c+2] to symSumsGo(x, w, ts[c], neg, pos).
func symSumsBatchGo(x, w, ts []float32, neg, pos float32, out []float32) {
	for c, t := range ts {
		out[2*c], out[2*c+1] = symSumsGo(x, w, t, neg, pos)
	}
}

// symErrBatchGo sets out[c] to the error Σ w·(x − d·q)² of the scale
// d = di[2c] with the codes q = clamp(round(x·id), −neg, pos), id = di[2c+1]
// its inverse as inv gives it.
func symErrBatchGo(x, w, di []float32, neg, pos float32, out []float32) {
	w = w[:len(x)]
	for c := range len(di) / 2 {
		d, id := di[2*c], di[2*c+1]
		var e [passLanes]float32
		for i, v := range x {
			q := clampRoundPass(v*id, -neg, pos)
			r := v - d*q
			e[i%passLanes] += w[i] * r * r
		}
		out[c] = laneReduce(&e)
	}
}

// tableSumsBatchGo sets out[2c:2c+2] to tableSumsGo(x, w, ts[c], tab).
func tableSumsBatchGo(x, w, ts []float32, tab *table, out []float32) {
	for c, t := range ts {
		out[2*c], out[2*c+1] = tableSumsGo(x, w, t, tab)
	}
}

// tableErrBatchGo sets out[c] to the error Σ w·(x − d·q)² of the scale
// d = di[2c] with the values q = tab.v[tab.index(x·id)], id = di[2c+1] its
// inverse as inv gives it.
func tableErrBatchGo(x, w, di []float32, tab *table, out []float32) {
	w = w[:len(x)]
	for c := range len(di) / 2 {
		d, id := di[2*c], di[2*c+1]
		var e [passLanes]float32
		for i, v := range x {
			r := v - d*tab.v[tab.index(id*v)]
			e[i%passLanes] += w[i] * r * r
		}
		out[c] = laneReduce(&e)
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
