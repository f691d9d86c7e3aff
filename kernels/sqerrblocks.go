package kernels

// SqErrE2M1Blocks computes the candidate errors of many E2M1 blocks at once
// (the scale search of MXFP4): x holds nb = len(x)/blockLen blocks of
// blockLen elements and nc = len(mul)/nb candidates per block; for block b
// and candidate c it sets
//
//	errs[c*nb+b] = SqErrE2M1(&SqErrBlock{V: x[b*blockLen:(b+1)*blockLen], Mul: mul[c*nb+b], DMul: dmul[c*nb+b]})
//
// (no weights, every element kept), bit for bit. len(x) must be a multiple
// of blockLen and mul, dmul and errs hold nc·nb values; otherwise, or for a
// blockLen < 1, it does nothing and returns false.
func SqErrE2M1Blocks(errs []float64, x []float32, blockLen int, mul, dmul []float32) bool {
	if blockLen < 1 || len(x)%blockLen != 0 {
		return false
	}
	nb := len(x) / blockLen
	if nb == 0 {
		return len(mul) == 0 && len(dmul) == 0 && len(errs) == 0
	}
	if len(mul)%nb != 0 || len(dmul) != len(mul) || len(errs) != len(mul) {
		return false
	}
	sqErrE2M1Blocks(errs, x, blockLen, nb, len(mul)/nb, mul, dmul)
	return true
}

// sqErrE2M1BlocksGo is the reference of SqErrE2M1Blocks for blocks from..nb−1.
func sqErrE2M1BlocksGo(errs []float64, x []float32, blockLen, nb, nc, from int, mul, dmul []float32) {
	var blk SqErrBlock
	for c := range nc {
		for b := from; b < nb; b++ {
			blk.V, blk.Mul, blk.DMul = x[b*blockLen:(b+1)*blockLen], mul[c*nb+b], dmul[c*nb+b]
			errs[c*nb+b] = SqErrE2M1(&blk)
		}
	}
}
