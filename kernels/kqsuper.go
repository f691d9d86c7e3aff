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
// levels there are; an affine search's pick pairs (affine.picks) are
// pairs[:np].
type superCfg struct {
	numer, levels lanes
	neg, pos      float32
	lo, hi        float32
	k, nlev       uint32
	np            uint32
	noLo          uint32 // 1: no first candidate's t·x rounds below −neg
	shift         lanes  // an affine search's origins (numer holds its n+δ)
	vals, mids    lanes  // a table search's values and midpoints
	pairs         [passLanes]uint32
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
type superScratch [1920]float32

// newSuperCfg returns the configuration of the symmetric search s with
// integer scales lo..hi fitted at levels.
func newSuperCfg(s *symmetric, lo, hi float32, levels []float32) superCfg {
	c := superCfg{numer: s.numerL, neg: s.neg, pos: s.pos, lo: lo, hi: hi,
		k: uint32(len(s.numer)), nlev: uint32(len(levels))}
	if len(levels) > passLanes {
		panic("kernels: a super-block search of more than 16 levels")
	}
	copy(c.levels[:], levels)
	// |x| ≤ |max| and |numer| ≤ neg + 1/4 keep |t·x| below neg + 1/2
	// (t·x is numer·x/max within a few ulps), so the lower clamp of the
	// first candidates' codes never acts and the kernels may skip it.
	c.noLo = 1
	for _, n := range s.numer {
		if !(abs32(n) <= s.neg+0.25) {
			c.noLo = 0
		}
	}
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

// newAffineSuperCfg returns the configuration of the affine search a with
// integer scales and mins 0..top fitted at levels: numer holds the
// candidates' n+δ and shift their origins.
func newAffineSuperCfg(a *affine, top float32, levels []float32) superCfg {
	c := superCfg{pos: a.n, hi: top, k: uint32(len(a.cands)), nlev: uint32(len(levels))}
	if len(levels) > passLanes {
		panic("kernels: a super-block search of more than 16 levels")
	}
	copy(c.levels[:], levels)
	c.numer, c.shift = a.nd, a.shift
	c.np = uint32(len(a.picks))
	for i, p := range a.picks {
		c.pairs[i] = uint32(p)
	}
	return c
}

// affineRes is an affine super-block search's result: each sub-block's
// integer scale l and min m, the offset −(dm·m) and inverse scale inv(d·l)
// its codes are computed with, and the super-block scale d and min scale dm
// (float16 values) with their codes.
type affineRes struct {
	l, m, mn, ids lanes
	d             float32
	hd            uint32
	dm            float32
	hm            uint32
}

// affineSuperGo is the affine super-block search of the len(x)/sub
// sub-blocks of sub elements (16 of 16 or 8 of 32; x and w 256 long, w ≥ 0
// finite): each sub-block's fit by a, superScale of their scales (with
// curvatures Σwq²) and of their mins −m (with Σw), each rounded to float16,
// and the pick of each sub-block's integer scale and min. c is a's
// configuration (newAffineSuperCfg).
func affineSuperGo(x, w []float32, a *affine, sub int, c *superCfg, r *affineRes) {
	nsub := len(x) / sub
	var sc, mn, as, am lanes
	var fits [passLanes]fit
	var fl fitLanes
	for j := range nsub {
		f := a.fitWith(x[sub*j:sub*j+sub], w[sub*j:sub*j+sub], &fl)
		fits[j] = f
		sc[j], mn[j], as[j], am[j] = f.d, -f.m, f.cqq, f.cw
	}
	levels := c.levels[:c.nlev]
	hd, d := f16Round(superScale(sc[:nsub], as[:nsub], 0, c.hi, levels))
	hm, dm := f16Round(superScale(mn[:nsub], am[:nsub], 0, c.hi, levels))
	for j := range nsub {
		l, m := pickAffine(x[sub*j:sub*j+sub], w[sub*j:sub*j+sub], fits[j], d, dm, c.hi, a.n, a.picks)
		r.l[j], r.m[j], r.mn[j], r.ids[j] = l, m, -(dm * m), inv(d*l)
	}
	r.d, r.hd, r.dm, r.hm = d, uint32(hd), dm, uint32(hm)
}

// newTableSuperCfg returns the configuration of the table search t with
// integer scales lo..hi fitted at levels.
func newTableSuperCfg(t *table, lo, hi float32, levels []float32) superCfg {
	c := superCfg{numer: t.numerL, lo: lo, hi: hi, k: uint32(len(t.numer)), nlev: uint32(len(levels)),
		vals: t.v, mids: t.mid}
	if len(levels) > passLanes || len(t.local) > passLanes {
		panic("kernels: a super-block search of more than 16 levels or local factors")
	}
	copy(c.shift[:], t.local)
	copy(c.levels[:], levels)
	return c
}

// tableSuper8Go is the table super-block search of 8 sub-blocks of 32 (x
// and w 256 long, w ≥ 0 finite): each sub-block's fit by t, superScale of
// their scales with curvatures Σwq², rounded to float16, and the pick of
// each sub-block's integer scale.
func tableSuper8Go(x, w []float32, t *table, c *superCfg, r *superRes) {
	var sc, as lanes
	for j := range 8 {
		f := t.fit(x[32*j:32*j+32], w[32*j:32*j+32])
		sc[j], as[j] = f.d, f.cqq
	}
	hd, d := f16Round(superScale(sc[:8], as[:8], c.lo, c.hi, c.levels[:c.nlev]))
	for j := range 8 {
		l := pickSym(x[32*j:32*j+32], w[32*j:32*j+32], sc[j], d, c.lo, c.hi, 0, 0, t)
		r.l[j], r.ids[j] = l, inv(d*l)
	}
	r.d, r.hd = d, uint32(hd)
}

// nlRes holds 8 IQ4_NL blocks' scales (float16 values), their inverses and
// their float16 codes.
type nlRes struct {
	d, ids lanes
	hd     [passLanes]uint32
}

// tableBlocks8Go fits 8 blocks of 32 (x and w 256 long, w ≥ 0 finite) to
// t's table, each on its own, and rounds each scale to float16.
func tableBlocks8Go(x, w []float32, t *table, r *nlRes) {
	for j := range 8 {
		f := t.fit(x[32*j:32*j+32], w[32*j:32*j+32])
		hd, d := f16Round(f.d)
		r.d[j], r.ids[j], r.hd[j] = d, inv(d), uint32(hd)
	}
}
