package kernels

import "math"

// How the quantizers weigh each element's squared error. ggml's reference
// quantizers do not minimise the plain squared error: without an
// importance vector they weigh each element by a function of its size
// (|x| for Q2_K, x² for Q3_K, Q6_K and the IQ4 types, the sub-block's RMS
// plus |x| for Q4_K and Q5_K), with one by its column's importance qw
// times sqrt(σ² + x²), σ² a multiple of the mean square of the elements
// around it (quantize_row_*_impl). Measured by the KL divergence of a
// trained model's outputs (docs/quality.md), the importance rules beat
// the importance alone, Q2_K's |x| beats the plain error, and the other
// rules without importance lose to it: the quantizers weigh so.

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
	// span elements (a super-block or block), or over the row (span −1);
	// k = 0 weighs qw alone.
	k    float32
	span int
}

// The rules of the quantizers.
var (
	weighQ2K    = weighting{plain: absW, k: 1, span: qkk}
	weighK      = weighting{k: 2, span: qkk} // Q3_K, Q4_K, Q5_K, IQ4_XS
	weighIQ4NL  = weighting{k: 2, span: ggmlBlock}
	weighLegacy = weighting{k: 1, span: -1} // Q4_1, Q5_1
	// Q6_K, Q4_0 and Q5_0 weigh the importance alone (Q6_K as ggml does;
	// Q4_0's and Q5_0's KL divergence is lower so than by ggml's rule).
	weighUnit = weighting{}
)

// maxSigma bounds σ²/amax²: beyond it sqrt(σ² + x²) is σ to float32
// precision, and the weights are qw (times a factor common to the block).
const maxSigma = 1 << 40

// weigh writes to w the weights of the block x (finite values) under g,
// from base, the weights prep found (the importance, or 1, with 0 for
// non-finite elements and bad weights); rowMS is the mean square of the
// row's elements, for span −1; amax is the largest magnitude of x, or
// negative for weigh to find it. The weights are scaled by a factor common
// to the block, a power of two near 1/amax or its square: exact, so it
// changes no sum but by that factor and no choice, and it keeps every sum
// finite; raw keeps them unscaled. imp tells whether base is an
// importance vector.
func (g *weighting) weigh(w, x, base []float32, imp bool, rowMS, amax float32, raw bool) {
	if amax < 0 {
		amax = math.Float32frombits(absMaxBits(x))
	}
	if !(amax > 0) {
		copy(w, base)
		return
	}
	ia := float32(1)
	if !raw {
		ia = pow2Inv(amax)
	}
	if !imp {
		g.weighPlain(w, x, base, ia)
		return
	}
	if g.k == 0 {
		copy(w, base)
		return
	}
	span := g.span
	if span < 0 {
		span = len(x)
	}
	for o := 0; o < len(x); o += span {
		s2 := g.k * rowMS * ia * ia
		if g.span > 0 {
			s2 = g.k * meanSquare(x[o:o+span], ia)
		}
		if !raw && !(s2 > 0 && s2 <= maxSigma) {
			// 0: a span of zeros (within a larger block of IQ4_NL's),
			// whose weights would all be 0.
			copy(w[o:o+span], base[o:o+span])
			continue
		}
		sigmaWeights(w[o:o+span], x[o:o+span], base[o:o+span], ia, s2)
	}
}

// weighPlain writes the weights of g.plain, scaled by ia = 1/amax.
func (g *weighting) weighPlain(w, x, base []float32, ia float32) {
	if g.plain != absW {
		copy(w, base)
		return
	}
	absWeights(w, x, base, ia)
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

// rowMeanSquare returns the mean square of the finite elements of row (0
// when there are none, or when it is not finite).
func rowMeanSquare(row []float32) float32 {
	var s float64
	for _, v := range row {
		if finite(v) {
			s += float64(v) * float64(v)
		}
	}
	m := float32(s / float64(len(row)))
	if !finite(m) {
		return 0
	}
	return m
}

// fillUnit replaces by 1 the weights of each sub-block of sub elements of w
// whose weights sum to 0.
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

// Weigh writes to w, len(src) long, the weight each element of src has
// in the squared error the quantizer of the block codec c minimises, with
// the importance vector imp (one weight per column, nil for none): what
// the error a user should judge the quantizer by weighs. Codecs without a
// search weigh every element 1; non-finite elements and bad importance
// weights weigh 0.
func (c BlockCodec) Weigh(w, src, imp []float32) {
	g := &weighUnit
	if c.weighting != nil {
		g = c.weighting
	}
	bs := c.BlockLen
	checkBlocksOf("Weigh", len(src), bs, len(w), bs)
	checkImp("Weigh", len(src), bs, imp)
	if !c.Weighted {
		imp = nil
	}
	var s kqScratch
	s.impOK, s.g = usableWeights(imp), g
	for o := 0; o < len(src); o += bs {
		s.row(src, imp, o)
		bi := impAt(imp, o, bs)
		xs, base := s.prepBase(src[o:o+bs], bi, bs)
		g.weigh(w[o:o+bs], xs, base, bi != nil, s.rowMS, s.amax, true)
	}
}

// row sets s.rowMS when element o starts a row of a rule that needs it.
func (s *kqScratch) row(src, imp []float32, o int) {
	if imp != nil && s.g.span < 0 && o%len(imp) == 0 {
		s.rowMS = rowMeanSquare(src[o : o+len(imp)])
	}
}
