//go:build !amd64 || purego

package kernels

func affineFit(x, w []float32, k int, t, o *lanes, st *affineStats, d, m, e, sqq, sq *lanes) {
	affineFitGo(x, w, k, t, o, st, d, m, e, sqq, sq)
}

func affineErrs(x, w []float32, k int, d, m, id *lanes, n float32, e *lanes) {
	affineErrsGo(x, w, k, d, m, id, n, e)
}

func symFit(x, w []float32, k int, t *lanes, neg, pos float32, d, score, sqq *lanes) {
	symFitGo(x, w, k, t, neg, pos, d, score, sqq)
}

func symErrs(x, w []float32, k int, d, id *lanes, neg, pos float32, e *lanes) {
	symErrsGo(x, w, k, d, id, neg, pos, e)
}

func tableFit(x, w []float32, k int, t *lanes, tab *table, d, score, sqq *lanes) {
	tableFitGo(x, w, k, t, tab, d, score, sqq)
}

func tableErrs(x, w []float32, k int, d, id *lanes, tab *table, e *lanes) {
	tableErrsGo(x, w, k, d, id, tab, e)
}

func affineCodes(x, mi []float32, n float32, codes []uint8) { affineCodesGo(x, mi, n, codes) }

func symCodes(x, ids []float32, neg, pos float32, codes []uint8) {
	symCodesGo(x, ids, neg, pos, codes)
}

func tableCodes(x, ids []float32, tab *table, codes []uint8) { tableCodesGo(x, ids, tab, codes) }

func affineFit0(x, w []float32, k int, nd, shift *lanes, st *affineStats, lohi *[2]float32, d, m, e, sqq, sq *lanes) {
	affineFit0Go(x, w, k, nd, shift, st, lohi, d, m, e, sqq, sq)
}

func symFit0(x, w []float32, k int, numer *lanes, neg, pos float32, d, score, sqq *lanes, stats *[2]float32) {
	symFit0Go(x, w, k, numer, neg, pos, d, score, sqq, stats)
}

func tableFit0(x, w []float32, k int, numer *lanes, tab *table, d, score, sqq *lanes, stats *[2]float32) {
	tableFit0Go(x, w, k, numer, tab, d, score, sqq, stats)
}

func symSuper16(x, w []float32, s *symmetric, c *superCfg, r *superRes, _ *superScratch) {
	symSuper16Go(x, w, s, c, r)
}

func affineSuper(x, w []float32, a *affine, sub int, c *superCfg, r *affineRes, _ *superScratch) {
	affineSuperGo(x, w, a, sub, c, r)
}

func tableSuper8(x, w []float32, t *table, c *superCfg, r *superRes, _ *superScratch) {
	tableSuper8Go(x, w, t, c, r)
}

func tableBlocks8(x, w []float32, t *table, _ *superCfg, r *nlRes, _ *superScratch) {
	tableBlocks8Go(x, w, t, r)
}

func q3kPack(y *[q3_KBlockBytes]byte, x *[qkk]float32, r *superRes, q *[qkk]uint8, finite bool) {
	q3kPackGo(y, x, r, q)
}

func q4kNibbles(y *[128]byte, x *[qkk]float32, mi *[16]float32, q *[qkk]uint8, finite bool) {
	q4kNibblesGo(y, x, mi, q)
}
