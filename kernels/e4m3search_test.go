package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fused E4M3 scale searches (searchMXFP8, searchE4M3) against a
// reference built from the element codec: the rule's scale from the
// block's amax by math.Frexp (MXFP8) or amax/448 (float32 scales), every
// candidate encoded and decoded by e4m3fnCodec, its error summed by
// sqErrRefLanes, the least kept (earliest on ties), the block encoded by
// the codec with it.

// e4m3Round is the codec's value of q, nearest even, saturating.
func e4m3Round(q float32) float32 {
	return e4m3fnCodec.Decode(e4m3fnCodec.Encode(q, RoundEven, true, 0))
}

// sqErrRefLanes is sqErrRef with E4M3's arithmetic: the difference a
// float32 subtraction, term i summed into lane i mod lanes, then the lanes
// halved pairwise (lane j plus lane j + lanes/2) until one is left.
func sqErrRefLanes(b *SqErrBlock, round func(float32) float32, lanes int) float64 {
	acc := make([]float64, lanes)
	for i, x := range b.V {
		if b.Keep != nil && !b.Keep[i] {
			continue
		}
		q := x * b.Mul
		if b.Div != 0 {
			q = x / b.Div
		}
		d := float64(x - float32(round(q)*b.DMul))
		e := d * d
		if b.W != nil {
			e *= float64(b.W[i])
		}
		acc[i%lanes] += e
	}
	for w := lanes / 2; w >= 1; w /= 2 {
		for j := range w {
			acc[j] += acc[j+w]
		}
	}
	return acc[0]
}

// searchMXFP8Ref is searchMXFP8 from the codec.
func searchMXFP8Ref(codes []byte, scales []uint8, src []float32) {
	for b := range len(src) / mxBlock {
		v := src[b*mxBlock : (b+1)*mxBlock]
		var amax float64
		finite := true
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				finite = false
			}
			amax = max(amax, math.Abs(float64(x)))
		}
		if !finite {
			scales[b] = 0xff
			for j := range v {
				codes[b*mxBlock+j] = 0x7f
			}
			continue
		}
		code := 0
		if amax > 0 {
			_, e := math.Frexp(amax) // amax = f·2^e, f in [0.5, 1)
			code = max(e-1-8+127, 0)
			errOf := func(k int) float64 {
				s := float32(math.Ldexp(1, k-127))
				return sqErrRefLanes(&SqErrBlock{V: v, Mul: 1 / s, DMul: s}, e4m3Round, 16)
			}
			best, bestErr := code, errOf(code)
			for _, k := range []int{code - 1, code + 1} {
				if k < 0 || k > 254 {
					continue
				}
				if e := errOf(k); e < bestErr {
					best, bestErr = k, e
				}
			}
			code = best
		}
		scales[b] = uint8(code)
		mul := float32(math.Ldexp(1, 127-code))
		for j, x := range v {
			codes[b*mxBlock+j] = uint8(e4m3fnCodec.Encode(x*mul, RoundEven, true, 0))
		}
	}
}

// refTileErrs returns the candidate divisors of a tile of values v whose
// largest magnitude amax is finite and gives a rule divisor amax/448 that is
// not 0, and their errors from the codec (sqErrRefLanes).
func refTileErrs(v []float32, amax float32) ([]float32, []float64) {
	cands := []float32{amax / 448}
next:
	for _, r := range []float32{0.95, 0.9, 0.85, 0.8} {
		s := float32(amax*r) / 448
		if s == 0 || math.IsInf(float64(s), 0) {
			continue
		}
		for _, p := range cands {
			if p == s {
				continue next
			}
		}
		cands = append(cands, s)
	}
	errs := make([]float64, len(cands))
	for c, s := range cands {
		errs[c] = sqErrRefLanes(&SqErrBlock{V: v, Div: s, DMul: s}, e4m3Round, 16)
	}
	return cands, errs
}

// searchE4M3Ref is searchE4M3 from the codec, the tiles walked directly.
func searchE4M3Ref(codes, scales []byte, src []float32, tl FP8Tiles) {
	n := len(src)
	cols := tl.Cols
	if cols == 0 {
		cols = n
	}
	if n == 0 {
		return
	}
	rows := n / cols
	tr, tc := max(tl.TileRows, 1), tl.TileCols
	if tc == 0 || tc > cols {
		tc = cols
	}
	k := 0
	for r0 := 0; r0 < rows; r0 += tr {
		for c0 := 0; c0 < cols; c0 += tc {
			var v []float32
			var idx []int
			for r := r0; r < min(r0+tr, rows); r++ {
				for c := c0; c < min(c0+tc, cols); c++ {
					v = append(v, src[r*cols+c])
					idx = append(idx, r*cols+c)
				}
			}
			var amax float32
			finite := true
			for _, x := range v {
				if x != x || math.IsInf(float64(x), 0) {
					finite = false
				}
				amax = max(amax, float32(math.Abs(float64(x))))
			}
			var d float32 = 1
			switch {
			case !finite:
				d = float32(math.NaN())
			case amax > 0:
				d = amax / 448
			}
			if finite && d != 0 && amax > 0 {
				cands, errs := refTileErrs(v, amax)
				best := 0
				for c, e := range errs {
					if e < errs[best] {
						best = c
					}
				}
				d = cands[best]
			}
			bits := math.Float32bits(d)
			if d != d {
				bits = 0x7fc00000
			}
			binary.LittleEndian.PutUint32(scales[4*k:], bits)
			for i, x := range v {
				switch {
				case d != d:
					codes[idx[i]] = 0x7f
				case d == 0:
					codes[idx[i]] = 0
				default:
					codes[idx[i]] = uint8(e4m3fnCodec.Encode(x/d, RoundEven, true, 0))
				}
			}
			k++
		}
	}
}

// searchInput returns n values for the search tests: fp8Input's edges with
// most NaNs and infinities replaced by Gaussian values times a power of two
// of their own stretch of values, so that most blocks are searched.
func searchInput(r *rand.Rand, n int) []float32 {
	x := fp8Input(r, n)
	p := 1.0
	for i, v := range x {
		if i%37 == 0 {
			p = math.Ldexp(1, r.IntN(80)-40)
		}
		if (v != v || math.IsInf(float64(v), 0)) && r.IntN(10) != 0 {
			x[i] = float32(r.NormFloat64() * p)
		}
		if r.IntN(3) == 0 {
			x[i] = float32(r.NormFloat64() * p)
		}
	}
	return x
}

// TestSqErrE4M3Lanes: sqErrE4M3FN sums its terms in sixteen lanes.
func TestSqErrE4M3Lanes(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 40))
	for trial := range 1000 {
		n := 1 + r.IntN(300)
		b := SqErrBlock{V: searchInput(r, n)}
		for i, v := range b.V {
			if v != v || math.IsInf(float64(v), 0) {
				b.V[i] = 1
			}
		}
		if trial%3 == 0 {
			b.W = make([]float32, n)
			for i := range b.W {
				b.W[i] = float32(r.ExpFloat64())
			}
		}
		if trial%4 == 0 {
			b.Keep = make([]bool, n)
			for i := range b.Keep {
				b.Keep[i] = r.IntN(3) != 0
			}
		}
		s := float32(math.Ldexp(1, r.IntN(60)-30))
		if trial%2 == 0 {
			b.Mul, b.DMul = 1/s, s
		} else {
			b.Div, b.DMul = s*1.3, s*1.3
		}
		want := sqErrRefLanes(&b, e4m3Round, 16)
		require.Equal(t, math.Float64bits(want), math.Float64bits(sqErrE4M3FN(&b)), "trial %d", trial)
		// The general path's form: the decoded elements given.
		dec := make([]float32, n)
		for i, x := range b.V {
			q := x * b.Mul
			if b.Div != 0 {
				q = x / b.Div
			}
			dec[i] = e4m3Round(q)
		}
		require.Equal(t, math.Float64bits(want), math.Float64bits(sqErrE4M3FNDecoded(b.V, dec, b.DMul, b.Keep, b.W)), "trial %d", trial)
	}
}

// TestSearchMXFP8Hand: two blocks of 32 counted by hand.
//
// 31 values 0.53125 and one 1.1: the rule's code is 127 + floor(log2 1.1)
// − 8 = 119 (multiplier 2^8). 0.53125·2^8 = 136 lies halfway between the
// E4M3 values 128 and 144: ties to even, 128 (0.5 decoded); 1.1·2^8 =
// 281.6 rounds to 288 (1.125). Code 120 (2^7): 68 halfway between 64 and
// 72 gives 64 (0.5) again and 140.8 gives 144 (1.125): the same decoded
// block, a tie, so the rule's code stays. Code 118 (2^9): 1.1·2^9 = 563.2
// saturates to 448 (0.875), far worse.
//
// 31 values 1.0 and one 1.9: the rule's code is 119 again; 1.9·2^8 = 486.4
// saturates to 448 (1.75, error 0.15). Code 120: 243.2 rounds to 240
// (1.875, error 0.025) and 1.0·2^7 = 128 is exact, so 120 wins: codes
// 0x77 (240 = 2^7·1.875: exponent field 14, mantissa 7) and 0x70 (128).
func TestSearchMXFP8Hand(t *testing.T) {
	x := make([]float32, 64)
	for i := range 32 {
		x[i], x[32+i] = 0.53125, 1
	}
	x[7], x[40] = 1.1, 1.9
	forEachTier(t, func(t *testing.T) {
		codes, scales := make([]byte, 64), make([]byte, 2)
		searchMXFP8(codes, scales, x)
		require.Equal(t, []byte{119, 120}, scales)
		require.Equal(t, byte(0x70), codes[0])  // 128: 0.53125 at 2^8
		require.Equal(t, byte(0x79), codes[7])  // 288 = 2^8·1.125
		require.Equal(t, byte(0x77), codes[40]) // 240
		require.Equal(t, byte(0x70), codes[33]) // 128
	})
}

// TestSearchMXFP8 compares every tier with the codec reference and the Go
// reference on random and edge blocks, at lengths around the kernels'
// groups, on unaligned slices.
func TestSearchMXFP8(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 41))
	var inputs [][]float32
	for _, nb := range []int{0, 1, 2, 7, 15, 16, 17, 33, 100} {
		inputs = append(inputs, searchInput(r, nb*mxBlock))
		inputs = append(inputs, mxEdgeBlocks(r, nb))
	}
	forEachTier(t, func(t *testing.T) {
		for k, x := range inputs {
			buf := make([]float32, len(x)+1)
			copy(buf[1:], x)
			src := buf[1:]
			nb := len(src) / mxBlock
			wc, ws := make([]byte, len(src)), make([]byte, nb)
			searchMXFP8Ref(wc, ws, src)
			gc, gs := make([]byte, len(src)), make([]byte, nb)
			searchMXFP8Go(gc, gs, src)
			require.Equal(t, ws, gs, "input %d: Go reference scales", k)
			require.Equal(t, wc, gc, "input %d: Go reference codes", k)
			cb := make([]byte, len(src)+1)
			c, s := cb[1:], make([]byte, nb)
			searchMXFP8(c, s, src)
			requireBytes(t, ws, s, "input %d scales", k)
			requireBytes(t, wc, c, "input %d codes", k)
		}
	})
}

// TestSearchE4M3 compares every tier with the codec reference on every
// geometry of the E4M3 quantizer's tests, on unaligned slices.
func TestSearchE4M3(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 42))
	cases := append(fp8Cases, struct{ rows, cols, tr, tc int }{64, 256, 1, 128},
		struct{ rows, cols, tr, tc int }{3, 32, 3, 32}, struct{ rows, cols, tr, tc int }{0, 0, 0, 0})
	forEachTier(t, func(t *testing.T) {
		for _, tc := range cases {
			n := tc.rows * tc.cols
			buf := searchInput(r, n+1)
			src := buf[1:]
			tl := FP8Tiles{Cols: tc.cols, TileRows: tc.tr, TileCols: tc.tc}
			_, _, _, _, _, tiles := tl.geometry("test", n)
			msg := fmt.Sprintf("%+v rows %d", tl, tc.rows)
			wc, ws := make([]byte, n), make([]byte, 4*tiles)
			searchE4M3Ref(wc, ws, src, tl)
			c, s := make([]byte, n), make([]byte, 4*tiles)
			searchE4M3(c, s, src, tl)
			requireBytes(t, ws, s, "%s scales", msg)
			requireBytes(t, wc, c, "%s codes", msg)
		}
	})
}

// benchE4M3Input is 4 Mi Gaussian values, the tcast benchmarks' size.
func benchE4M3Input() []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 4<<20)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// The fused searches next to the plain quantizers they extend.
func BenchmarkE4M3Search(b *testing.B) {
	x := benchE4M3Input()
	codes, scales := make([]byte, len(x)), make([]byte, 4*len(x)/mxBlock)
	tl := FP8Tiles{Cols: 4096, TileRows: 128, TileCols: 128}
	for _, bc := range []struct {
		name string
		fn   func()
	}{
		{"quantizeMXFP8", func() { quantizeMXFP8(codes, scales, x) }},
		{"searchMXFP8", func() { searchMXFP8(codes, scales, x) }},
		{"QuantizeE4M3Block128", func() { quantizeE4M3(codes, scales, x, tl) }},
		{"SearchE4M3Block128", func() { searchE4M3(codes, scales, x, tl) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				bc.fn()
			}
		})
	}
}

// TestSearchMXFP8Boundaries: blocks whose elements sit at, and one float
// either side of, the values where the codes k and k+1 start or stop
// decoding an element alike (q = 2^−10, 2^−5, 432, 448, 464 at the rule's
// multiplier) and where E4M3 rounds to the top values, with the amax at
// the start, the middle and the end of its binade and at tiny and huge
// scales, against the codec reference on every tier.
func TestSearchMXFP8Boundaries(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 46))
	qs := []float32{1.0 / 1024, 1.0 / 32, 432, 448, 464, 480, 496, 0.5 / 1024, 1.5 / 1024, 3.0 / 64}
	var x []float32
	for range 400 {
		e := r.IntN(250) - 130
		p := float32(math.Ldexp(1, e))
		amaxQ := []float32{256, 300, 447, 463, 465, 511.9}[r.IntN(6)]
		blk := make([]float32, mxBlock)
		blk[r.IntN(mxBlock)] = amaxQ * p
		for j := range blk {
			if blk[j] != 0 {
				continue
			}
			v := qs[r.IntN(len(qs))]
			if v >= amaxQ {
				v = amaxQ
			}
			v *= p
			switch r.IntN(3) {
			case 0:
				v = math.Nextafter32(v, 0)
			case 1:
				v = math.Nextafter32(v, float32(math.Inf(1)))
			}
			if r.IntN(2) == 0 {
				v = -v
			}
			if r.IntN(4) == 0 {
				v = float32(r.NormFloat64()) * p
			}
			blk[j] = v
		}
		x = append(x, blk...)
	}
	nb := len(x) / mxBlock
	wc, ws := make([]byte, len(x)), make([]byte, nb)
	searchMXFP8Ref(wc, ws, x)
	searched := 0
	for b := range nb {
		var amax float64
		for _, v := range x[b*mxBlock : (b+1)*mxBlock] {
			amax = max(amax, math.Abs(float64(v)))
		}
		if _, e := math.Frexp(amax); int(ws[b]) != max(e-1-8+127, 0) {
			searched++
		}
	}
	require.Greater(t, searched, nb/20, "blocks whose search left the rule")
	require.Less(t, searched, nb, "blocks whose search left the rule")
	forEachTier(t, func(t *testing.T) {
		c, s := make([]byte, len(x)), make([]byte, nb)
		searchMXFP8(c, s, x)
		requireBytes(t, ws, s, "scales")
		requireBytes(t, wc, c, "codes")
	})
}
