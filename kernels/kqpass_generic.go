//go:build !amd64 || purego

package kernels

func affineSums(x, w []float32, k int, t, o *lanes, n float32, sq, sqq, sxq *lanes) {
	affineSumsGo(x, w, k, t, o, n, sq, sqq, sxq)
}

func affineErrs(x, w []float32, k int, d, m, id *lanes, n float32, e *lanes) {
	affineErrsGo(x, w, k, d, m, id, n, e)
}

func symSums(x, w []float32, k int, t *lanes, neg, pos float32, sxq, sqq *lanes) {
	symSumsGo(x, w, k, t, neg, pos, sxq, sqq)
}

func symErrs(x, w []float32, k int, d, id *lanes, neg, pos float32, e *lanes) {
	symErrsGo(x, w, k, d, id, neg, pos, e)
}

func tableSums(x, w []float32, k int, t *lanes, tab *table, sxq, sqq *lanes) {
	tableSumsGo(x, w, k, t, tab, sxq, sqq)
}

func tableErrs(x, w []float32, k int, d, id *lanes, tab *table, e *lanes) {
	tableErrsGo(x, w, k, d, id, tab, e)
}

func affineCodes(x, mi []float32, n float32, codes []uint8) { affineCodesGo(x, mi, n, codes) }

func symCodes(x, ids []float32, neg, pos float32, codes []uint8) {
	symCodesGo(x, ids, neg, pos, codes)
}

func tableCodes(x, ids []float32, tab *table, codes []uint8) { tableCodesGo(x, ids, tab, codes) }
