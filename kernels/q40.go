package kernels

// searchQ40 is Q4_0's search when an importance vector is given: the
// symmetric fit of Q5_0 with Q4_0's codes −8..7.
var searchQ40 = symmetric{neg: 8, pos: 7, deltas: levelsFrom(-1, 0.125, 15), posDelta: []float32{0}, refine: 1, local: []float32{0.97, 0.98, 0.99, 1, 1.01, 1.02, 1.03}}

func init() { searchQ40.init() }

// quantizeQ4_0Weighted quantizes src into Q4_0 blocks of 18 bytes (see
// quantizeQ4_0 for the layout), choosing each block's scale as
// quantizeQ5_0 does: the least-squares fit over candidate codings that
// minimises the squared error weighted by imp, one weight per column (rows
// of len(imp) values; nil weighs every element equally). quantizeQ4_0 is
// ggml's rule (d = m/−8) without a search; this is the quantizer that
// takes an importance matrix, as llama-quantize's Q4_0 does.
func quantizeQ4_0Weighted(dst []byte, src, imp, w []float32) {
	quantBlocks("quantizeQ4_0Weighted", "Q4_0", dst, src, imp, w, ggmlBlock, q4_0BlockBytes, quantQ4_0Search)
}

// quantQ4_0Search quantizes one Q4_0 block by searchQ40.
func quantQ4_0Search(y []byte, x, imp []float32, s *kqScratch) {
	q := quantSym32(y, x, imp, s, &searchQ40)
	for j := range 16 {
		y[2+j] = q[j] | q[j+16]<<4
	}
}
