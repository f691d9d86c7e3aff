//go:build !amd64 || purego

package kernels

func affineSumsBatch(x, w, tp []float32, n float32, out []float32) {
	affineSumsBatchGo(x, w, tp, n, out)
}
func affineErrBatch(x, w, dmi []float32, n float32, out []float32) {
	affineErrBatchGo(x, w, dmi, n, out)
}
func symSumsBatch(x, w, ts []float32, neg, pos float32, out []float32) {
	symSumsBatchGo(x, w, ts, neg, pos, out)
}
func symErrBatch(x, w, di []float32, neg, pos float32, out []float32) {
	symErrBatchGo(x, w, di, neg, pos, out)
}
func tableSumsBatch(x, w, ts []float32, tab *table, out []float32) {
	tableSumsBatchGo(x, w, ts, tab, out)
}
func tableErrBatch(x, w, di []float32, tab *table, out []float32) {
	tableErrBatchGo(x, w, di, tab, out)
}

func affineCodes(x, mi []float32, n float32, codes []uint8) { affineCodesGo(x, mi, n, codes) }
func symCodes(x, ids []float32, neg, pos float32, codes []uint8) {
	symCodesGo(x, ids, neg, pos, codes)
}
func tableCodes(x, ids []float32, tab *table, codes []uint8) { tableCodesGo(x, ids, tab, codes) }
