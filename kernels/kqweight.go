package kernels

import (
	"fmt"
	"math"
)

// How the quantizers weigh each element's squared error. ggml's reference
// quantizers do not minimise the plain squared error: without an
// importance vector they weigh each element by a function of its size
// (|x| for Q2_K, x² for Q3_K, Q6_K and the IQ4 types, the sub-block's RMS
// plus |x| for Q4_K and Q5_K), with one by its column's importance qw
// times sqrt(σ² + x²), σ² a multiple of the mean square of the elements
// around it (quantize_row_*_impl). Measured by the KL divergence of a
// trained model's outputs (docs/QUALITY.md), the importance rule beat the
// importance alone for Q2_K, Q3_K, Q4_K and Q5_K, Q2_K's |x| beat the
// plain error, and the other rules did not: the quantizers weigh so, each
// format's rule one entry of the codec table (blockRule).

// elemRule is the weight of an element of value x, without importance.
type elemRule uint8

const (
	unitW elemRule = iota // 1: the plain squared error
	absW                  // |x|
)

// weighting is a quantizer's rule of weights.
type weighting struct {
	plain elemRule // without importance
	// With importance: qw·sqrt(k·mean x² + x²), the mean taken over each
	// span elements (a super-block or block); k = 0 weighs qw alone.
	k    float32
	span int
	sub  int // the sub-block of the search: weights are checked per sub
}

// The rules of the quantizers (see blockCodecs).
var (
	weighQ2K  = weighting{plain: absW, k: 1, span: qkk, sub: 16}
	weighQ3K  = weighting{k: 2, span: qkk, sub: 16}
	weighQ45K = weighting{k: 2, span: qkk, sub: 32}
	// The importance alone: Q6_K as ggml weighs it; the legacy types and
	// the IQ4 types, whose KL divergence was no lower by ggml's rule.
	weighImp16  = weighting{sub: 16}
	weighImp32  = weighting{sub: 32}
	weighImp256 = weighting{sub: qkk} // Q8_K
)

// blockRule returns the rule of the block codec ggml names name.
func blockRule(name string) *weighting {
	g := rules[name]
	if g == nil {
		panic("kernels: no error rule for " + name)
	}
	return g
}

// rules maps each block codec's name to its rule (filled from blockCodecs
// at start-up: the quantizers reach the table only through it).
var rules = map[string]*weighting{}

func init() {
	for _, c := range blockCodecs {
		if c.weighting != nil {
			rules[c.Name] = c.weighting
		}
	}
}

// weigh writes to w the weights of the block x (finite values) under g,
// from base, the weights prepBase found (the importance within [2^−100,
// 2^100], or 1, with 0 for non-finite elements and bad weights); s holds
// the block's largest magnitude (s.amax, negative when unknown). Each span's weights (the block's
// without importance) are scaled by a power of two near 1/amax, recorded
// in s.scale per 32 elements: exact, so no sum changes but by that factor
// and no choice changes, and every sum stays finite. imp tells whether
// base is an importance vector; prep calls weigh only for a rule that
// changes base.
func (g *weighting) weigh(w, x, base []float32, imp bool, s *kqScratch) {
	amax := s.amax
	if amax < 0 {
		amax = math.Float32frombits(absMaxBits(x))
	}
	s.scale = unitScale
	if !(amax > 0) {
		copy(w, base)
		return
	}
	if !imp { // absW
		ia := pow2Inv(amax)
		absWeights(w, x, base, ia)
		s.setScale(0, len(x), ia)
		return
	}
	span := g.span
	for o := 0; o < len(x); o += span {
		xs := x[o : o+span]
		a := amax
		if span < len(x) {
			a = math.Float32frombits(absMaxBits(xs))
		}
		ia := pow2Inv(a)
		s2 := g.k * meanSquare(xs, ia)
		if !(a > 0 && s2 > 0) {
			// A span of zeros (within a larger block): the importance
			// alone.
			copy(w[o:o+span], base[o:o+span])
			continue
		}
		sigmaWeights(w[o:o+span], xs, base[o:o+span], ia, s2)
		s.setScale(o, span, ia)
	}
}

// unitScale is s.scale of weights left unscaled.
var unitScale = [8]float32{1, 1, 1, 1, 1, 1, 1, 1}

// setScale records the factor ia of the weights of n elements from o.
func (s *kqScratch) setScale(o, n int, ia float32) {
	for j := o / 32; j < (o+n+31)/32 && j < len(s.scale); j++ {
		s.scale[j] = ia
	}
}

// pow2Inv returns the power of two 2^−e for 2^e ≤ a < 2^(e+1), within
// [2^−126, 2^100].
func pow2Inv(a float32) float32 {
	e := int(math.Float32bits(a)>>23) - 127
	e = min(max(e, -100), 126)
	return math.Float32frombits(uint32(127-e) << 23)
}

// meanSquareGo returns the mean of (v·ia)² over x, summed in 16 lanes (the
// element i in lane i%16, a lane of each 16 elements) added in a fixed
// tree: the order of the AVX-512 kernel.
func meanSquareGo(x []float32, ia float32) float32 {
	var acc [16]float32
	for i, v := range x {
		v *= ia
		acc[i%16] += float32(v * v)
	}
	for h := 8; h >= 1; h /= 2 {
		for l := range h {
			acc[l] += acc[l+h]
		}
	}
	return acc[0] / float32(len(x))
}

// sigmaWeightsGo writes w = base·sqrt(s2 + (x·ia)²): the rule with
// importance.
func sigmaWeightsGo(w, x, base []float32, ia, s2 float32) {
	for i, v := range x {
		v *= ia
		w[i] = base[i] * float32(math.Sqrt(float64(s2+float32(v*v))))
	}
}

// absWeightsGo writes w = base·|x·ia|: the rule absW.
func absWeightsGo(w, x, base []float32, ia float32) {
	for i, v := range x {
		w[i] = base[i] * abs32(v*ia)
	}
}

// fillZeroSubs replaces by 1 the weights of each sub-block of sub elements
// of w (len(w)/sub ≤ 32 of them) that are all 0: fillUnit for weights
// whose sums cannot overflow, such as |x|'s of a block scaled to 1.
func fillZeroSubs(w []float32, sub int) {
	var m [32]uint32
	n := len(w) / sub
	absMaxBlocks(m[:n], w, sub)
	for j, v := range m[:n] {
		if v == 0 {
			for i := j * sub; i < (j+1)*sub; i++ {
				w[i] = 1
			}
		}
	}
}

// fillUnit replaces by 1 the weights of each sub-block of sub elements of w
// whose weights sum to 0 (or overflow).
func fillUnit(w []float32, sub int) {
	for o := 0; o < len(w); o += sub {
		var sum float32
		for _, v := range w[o : o+sub] {
			sum += v
		}
		if !(sum > 0) || !finite(sum) {
			for i := o; i < o+sub; i++ {
				w[i] = 1
			}
		}
	}
}

// Weigh writes to w, len(src) long, the weight of each element of src in
// the squared error the quantizer of the block codec c minimises with the
// importance vector imp (one weight per column, nil for none), in the
// units of the importance times the element: exactly the weights the
// quantizer uses within each block, their per-block scale undone, so that
// sums over blocks are the error it minimised (a weight beyond the largest
// float32 is +Inf). For the codecs without a search it writes the
// importance (1 without one): the error they are judged by.
func (c BlockCodec) Weigh(w, src, imp []float32) {
	bs := c.BlockLen
	checkBlocksOf("Weigh", len(src), bs, len(src), 1)
	if len(w) < len(src) {
		panic(fmt.Sprintf("kernels: Weigh: %d weights for %d elements", len(w), len(src)))
	}
	checkImp("Weigh", len(src), bs, imp)
	if !c.Weighted || c.weighting == nil {
		impWeights(w[:len(src)], imp)
		return
	}
	weighBlocks(c.weighting, bs, w, src, imp)
}

// weighBlocks writes to w the weights of the blocks of bs elements of src
// under g with the importance imp, as the quantizers find them.
func weighBlocks(g *weighting, bs int, w, src, imp []float32) {
	s := &kqScratch{g: g}
	s.impOK = usableWeights(imp)
	for b := range len(src) / bs {
		o := b * bs
		s.outAt(w, o, bs)
		s.prep(src[o:o+bs], impAt(imp, o, bs))
	}
}

// impWeights writes to w the importance of each element (imp repeated), or
// 1 without one: the weights of a quantizer that does not search.
func impWeights(w, imp []float32) {
	if imp == nil {
		for i := range w {
			w[i] = 1
		}
		return
	}
	for o := 0; o < len(w); o += len(imp) {
		copy(w[o:], imp)
	}
}
