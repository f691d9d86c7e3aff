//go:build amd64 && !purego

package kernels

// The dispatchers of the search passes: the AVX-512 kernels on that tier,
// the Go references otherwise (the passes are short and their candidates
// few, so AVX2 brings too little to pay for another set of kernels).

func affineSumsBatch(x, w, tp []float32, n float32, out []float32) {
	if active >= tierAVX512 {
		kqAffineSumsAVX512(x, w[:len(x)], tp[:len(tp)&^1], n, out[:3*(len(tp)/2)])
		return
	}
	affineSumsBatchGo(x, w, tp, n, out)
}

func affineErrBatch(x, w, dmi []float32, n float32, out []float32) {
	if active >= tierAVX512 {
		k := len(dmi) / 3
		kqAffineErrsAVX512(x, w[:len(x)], dmi[:3*k], n, out[:k])
		return
	}
	affineErrBatchGo(x, w, dmi, n, out)
}

func symSumsBatch(x, w, ts []float32, neg, pos float32, out []float32) {
	if active >= tierAVX512 {
		kqSymSumsAVX512(x, w[:len(x)], ts, neg, pos, out[:2*len(ts)])
		return
	}
	symSumsBatchGo(x, w, ts, neg, pos, out)
}

func symErrBatch(x, w, di []float32, neg, pos float32, out []float32) {
	if active >= tierAVX512 {
		k := len(di) / 2
		kqSymErrsAVX512(x, w[:len(x)], di[:2*k], neg, pos, out[:k])
		return
	}
	symErrBatchGo(x, w, di, neg, pos, out)
}

func tableSumsBatch(x, w, ts []float32, tab *table, out []float32) {
	if active >= tierAVX512 {
		kqTableSumsAVX512(x, w[:len(x)], ts, &tab.v, &tab.mid, out[:2*len(ts)])
		return
	}
	tableSumsBatchGo(x, w, ts, tab, out)
}

func tableErrBatch(x, w, di []float32, tab *table, out []float32) {
	if active >= tierAVX512 {
		k := len(di) / 2
		kqTableErrsAVX512(x, w[:len(x)], di[:2*k], &tab.v, &tab.mid, out[:k])
		return
	}
	tableErrBatchGo(x, w, di, tab, out)
}

func affineCodes(x, mi []float32, n float32, codes []uint8) { affineCodesGo(x, mi, n, codes) }
func symCodes(x, ids []float32, neg, pos float32, codes []uint8) {
	symCodesGo(x, ids, neg, pos, codes)
}
func tableCodes(x, ids []float32, tab *table, codes []uint8) { tableCodesGo(x, ids, tab, codes) }
