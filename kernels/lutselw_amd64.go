//go:build amd64 && !purego

package kernels

// lutSelectWeighted dispatches SelectWeighted as lutSelect dispatches
// Select: the AVX-512 kernels (2, 4, 8 or 16 tables, groups up to 64, a
// power of two for two tables) with the weights as they are, except that a
// group of equal weights gets the weight 1 (equalWeights), else the Go
// reference.
func lutSelectWeighted(s *LUTSelector, codes, meta []uint8, x, w []float32, group, block int, muls, scales []float32) {
	nt := s.nt
	if !lutVec() || s.vec6 == nil || nt < 2 || nt > 16 || nt&(nt-1) != 0 || group > 64 || len(x) == 0 ||
		nt == 2 && group&(group-1) != 0 {
		lutSelectWeightedGo(s, codes, meta, x, w, group, block, muls, scales)
		return
	}
	w = equalWeights(w, group)
	tb := &s.vec6.words
	nb := (len(x) + block - 1) / block
	switch {
	case s.pow2Exact(muls[:nb], scales[:nb]):
		switch nt {
		case 2:
			lutSelectW2Pow2AVX512(codes, meta, x, w, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		case 4:
			lutSelectW4Pow2AVX512(codes, meta, x, w, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		case 8:
			lutSelectW8Pow2AVX512(codes, meta, x, w, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		default:
			lutSelectW16Pow2AVX512(codes, meta, x, w, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		}
	case s.exactScales(scales[:nb]):
		switch nt {
		case 2:
			lutSelectW2ExactAVX512(codes, meta, x, w, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		case 4:
			lutSelectW4ExactAVX512(codes, meta, x, w, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		case 8:
			lutSelectW8ExactAVX512(codes, meta, x, w, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		default:
			lutSelectW16ExactAVX512(codes, meta, x, w, group, block, muls, scales, tb, s.mags64, s.codes, s.zero)
		}
	default:
		switch nt {
		case 2:
			lutSelectW2AVX512(codes, meta, x, w, group, block, muls, scales, tb, s.mags, s.codes, s.zero)
		case 4:
			lutSelectW4AVX512(codes, meta, x, w, group, block, muls, scales, tb, s.mags, s.codes, s.zero)
		case 8:
			lutSelectW8AVX512(codes, meta, x, w, group, block, muls, scales, tb, s.mags, s.codes, s.zero)
		default:
			lutSelectW16AVX512(codes, meta, x, w, group, block, muls, scales, tb, s.mags, s.codes, s.zero)
		}
	}
}

// equalWeights returns w with every group (of group values) whose weights
// are all equal given the weight 1, in a copy when there is such a group:
// 1·d² is d² exactly, so those groups sum their plain squared errors, as
// lutSelectWeightedGo does.
func equalWeights(w []float32, group int) []float32 {
	out := w
	for lo := 0; lo < len(w); lo += group {
		g := w[lo:min(lo+group, len(w))]
		flat := true
		for _, v := range g[1:] {
			if v != g[0] {
				flat = false
				break
			}
		}
		if !flat || g[0] == 1 {
			continue
		}
		if &out[0] == &w[0] {
			out = append([]float32(nil), w...)
		}
		for i := range g {
			out[lo+i] = 1
		}
	}
	return out
}
