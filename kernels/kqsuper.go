package kernels

// The super-block searches: the fits of all sub-blocks of a super-block,
// the super-block scale fitted to their scales (superScale, stored as
// float16) and each sub-block's integer scale under it, in one call. The Go
// references compose the per-sub-block fits and picks; a vector kernel
// works one sub-block per lane (each lane still adds its sums element by
// element in order, so it gives the same bits).

// superCfg is a super-block search's configuration in the layout its
// kernels read: the first candidates' numerators (a symmetric search's
// t = numer/m), the levels superScale tries, the code range −neg..pos, the
// integer sub-block scales' range lo..hi, and how many candidates and
// levels there are.
type superCfg struct {
	numer, levels lanes
	neg, pos      float32
	lo, hi        float32
	k, nlev       uint32
	_             [2]uint32
}

// superRes is a super-block search's result: each sub-block's integer
// scale l and the inverse of its stored scale (inv(d·l)), the super-block
// scale d (a float16 value) and its float16 code hd.
type superRes struct {
	l, ids lanes
	d      float32
	hd     uint32
	_      [2]uint32
}

// superScratch is the scratch of the super-block kernels: the sub-blocks'
// elements and weights by element (transposed) and their fitted scales and
// curvatures.
type superScratch [2*QKK + 2*passLanes]float32

// newSuperCfg returns the configuration of the symmetric search s with
// integer scales lo..hi fitted at levels.
func newSuperCfg(s *symmetric, lo, hi float32, levels []float32) superCfg {
	c := superCfg{numer: s.numerL, neg: s.neg, pos: s.pos, lo: lo, hi: hi,
		k: uint32(len(s.numer)), nlev: uint32(len(levels))}
	if len(levels) > passLanes {
		panic("kernels: a super-block search of more than 16 levels")
	}
	copy(c.levels[:], levels)
	return c
}

// symSuper16Go is the symmetric super-block search of 16 sub-blocks of 16
// (x and w 256 long, w ≥ 0 finite): each sub-block's fit by s, superScale
// of their scales with curvatures Σwq², rounded to float16, and the pick of
// each sub-block's integer scale.
func symSuper16Go(x, w []float32, s *symmetric, c *superCfg, r *superRes) {
	var sc, as lanes
	for j := range 16 {
		f := s.fit(x[16*j:16*j+16], w[16*j:16*j+16])
		sc[j], as[j] = f.d, f.cqq
	}
	hd, d := f16Round(superScale(sc[:], as[:], c.lo, c.hi, c.levels[:c.nlev]))
	for j := range 16 {
		l := pickSym(x[16*j:16*j+16], w[16*j:16*j+16], sc[j], d, c.lo, c.hi, c.neg, c.pos, nil)
		r.l[j], r.ids[j] = l, inv(d*l)
	}
	r.d, r.hd = d, uint32(hd)
}

// isUnitWeights reports whether w is (a prefix of) unitWeights, the weights
// of a block without an importance vector or non-finite values, which the
// kernels need not read.
func isUnitWeights(w []float32) bool { return len(w) > 0 && &w[0] == &unitWeights[0] }
