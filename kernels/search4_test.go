package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Tests of the fused E2M1 scale-search kernels: hand-derived blocks, a
// reference built from the generic codecs (encode, decode, sum: the scale
// search as docs/NUMERICS.md §11 states it), and every tier against the Go
// reference bit for bit.

// naiveSearchErr is the squared error, in float64 and index order, of v
// encoded through the E2M1 codec as x·mul (x/div when div is not 0) and
// decoded as element × dmul; a dmul of 0 is a block stored as zeros.
func naiveSearchErr(v []float32, mul, div, dmul float32) float64 {
	var sum float64
	for _, x := range v {
		if dmul == 0 {
			sum += float64(x) * float64(x)
			continue
		}
		q := x * mul
		if div != 0 {
			q = x / div
		}
		dec := e2m1Codec.Decode(e2m1Codec.Encode(q, RoundEven, true, 0)) * dmul
		d := float64(x) - float64(dec)
		sum += d * d
	}
	return sum
}

// naivePack packs the E2M1 codes of q(x) for v two per byte.
func naivePack(out []byte, v []float32, q func(x float32) float32) {
	for j := range out {
		c0 := e2m1Codec.Encode(q(v[2*j]), RoundEven, true, 0)
		c1 := e2m1Codec.Encode(q(v[2*j+1]), RoundEven, true, 0)
		out[j] = byte(c0 | c1<<4)
	}
}

// naiveAmax is the largest |x| of v, or NaN when v holds a NaN.
func naiveAmax(v []float32) float32 {
	var m float32
	for _, x := range v {
		if x != x {
			return x
		}
		m = max(m, float32(math.Abs(float64(x))))
	}
	return m
}

// naiveSearchMXFP4 is searchMXFP4 from the codecs, candidate by candidate.
func naiveSearchMXFP4(codes, scales []byte, src []float32) {
	for b := range len(src) / mxBlock {
		v := src[b*mxBlock : (b+1)*mxBlock]
		out := codes[b*mxBlock/2 : (b+1)*mxBlock/2]
		amax := naiveAmax(v)
		if amax != amax || math.IsInf(float64(amax), 0) {
			scales[b] = e8m0NaN
			clear(out)
			continue
		}
		var rule int
		if amax > 0 {
			_, e := math.Frexp(float64(amax)) // amax = f·2^e, f in [0.5, 1)
			rule = max(e-1-2+127, 0)
		}
		best := rule
		if amax > 0 {
			errOf := func(c int) float64 {
				s := e8m0Codec.Decode(uint32(c))
				return naiveSearchErr(v, 1/s, 0, s)
			}
			bestErr := errOf(rule)
			for _, c := range []int{rule - 1, rule + 1} {
				if c < 0 || c > 254 {
					continue
				}
				if e := errOf(c); e < bestErr {
					best, bestErr = c, e
				}
			}
		}
		scales[b] = byte(best)
		m := 1 / e8m0Codec.Decode(uint32(best))
		naivePack(out, v, func(x float32) float32 { return x * m })
	}
}

// naiveSearchNVFP4 is searchNVFP4 from the codecs, candidate by candidate.
func naiveSearchNVFP4(codes, scales []byte, src []float32, st float32) {
	for b := range len(src) / nvfp4Block {
		v := src[b*nvfp4Block : (b+1)*nvfp4Block]
		out := codes[b*nvfp4Block/2 : (b+1)*nvfp4Block/2]
		amax := naiveAmax(v)
		if amax != amax || math.IsInf(float64(amax), 0) {
			scales[b] = ue4m3NaN
			clear(out)
			continue
		}
		best := uint32(0x38)
		if amax > 0 {
			q := amax / (6 * st)
			rule := ue4m3Codec.Encode(q, RoundEven, true, 0)
			cands := []uint32{rule}
			for _, c := range []uint32{rule - 1, rule + 1, ue4m3Codec.Encode(q*1.5, RoundEven, true, 0)} {
				if c > 0xff {
					continue
				}
				if s := ue4m3Codec.Decode(c); !(s > 0) || s > math.MaxFloat32 {
					continue
				}
				dup := false
				for _, k := range cands {
					dup = dup || k == c
				}
				if !dup {
					cands = append(cands, c)
				}
			}
			bestErr := math.Inf(1)
			for _, c := range cands {
				d := ue4m3Codec.Decode(c) * st
				if e := naiveSearchErr(v, 0, d, d); e < bestErr {
					best, bestErr = c, e
				}
			}
		}
		scales[b] = byte(best)
		d := ue4m3Codec.Decode(best) * st
		if d == 0 {
			clear(out)
			continue
		}
		naivePack(out, v, func(x float32) float32 { return x / d })
	}
}

// TestSearchE2M1Hand: blocks whose best scale is worked out by hand.
func TestSearchE2M1Hand(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		// MXFP4: amax 7.5 gives the rule 2^(2−2) = 1 (code 127), where 7.5
		// saturates to 6 (error 2.25); at 2 (code 128) 7.5/2 = 3.75 rounds
		// to 4, decoded 8 (error 0.25); at 1/2 it saturates to 3.
		x := make([]float32, 16*mxBlock)
		for b := range 16 {
			x[b*mxBlock] = 7.5
		}
		x[mxBlock] = 6 // block 1: 6 and 0s, exact at the rule's scale
		codes, scales := make([]byte, len(x)/2), make([]byte, 16)
		searchMXFP4(codes, scales, x)
		require.Equal(t, byte(128), scales[0])
		require.Equal(t, byte(0x6), codes[0]) // 4 is code 6
		require.Equal(t, byte(127), scales[1])
		require.Equal(t, byte(0x7), codes[mxBlock/2]) // 6 is code 7

		// NVFP4 with s_t = 1: the block {6, 4.5, 0...} has the rule 1.0
		// (0x38, error (4.5−4)² = 0.25), 0.9375 (0x37: 6 → 6.4 → 6·0.9375,
		// 4.5 → 4.8 → 4·0.9375, error 0.703125), 1.125 (0x39: error
		// (6.75−6)² + 0 = 0.5625 as 4.5/1.125 = 4 is exact) and the 4/6
		// scale 1.5 (0x3C: 6 → 4, 4.5 → 3, error 0), which wins.
		y := make([]float32, 16*nvfp4Block)
		for b := range 16 {
			y[b*nvfp4Block], y[b*nvfp4Block+1] = 6, -4.5
		}
		nc, ns := make([]byte, len(y)/2), make([]byte, 16)
		searchNVFP4(nc, ns, y, 1)
		require.Equal(t, byte(0x3C), ns[0])
		require.Equal(t, byte(0x6|0xd<<4), nc[0]) // 4 is code 6, −3 is 8|5
	})
}

// searchE2M1Input returns n blocks of the given size: fp4Block's edge
// blocks, gaussian blocks and blocks of values at E2M1 ties of the scales.
func searchE2M1Input(r *rand.Rand, n, block int) []float32 {
	x := fp4Input(r, n, block)
	for b := range n {
		v := x[b*block : (b+1)*block]
		switch r.IntN(4) {
		case 0:
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
		case 1:
			e := r.IntN(40) - 20
			for i := range v {
				v[i] = e2m1Ties[r.IntN(len(e2m1Ties))] * float32(math.Ldexp(1, e)) * float32(1+r.IntN(3)) / 2
				if r.IntN(2) == 0 {
					v[i] = -v[i]
				}
			}
		}
	}
	return x
}

// checkSearchMXFP4 runs searchMXFP4 on x into the given outputs and
// compares them with want (codes then scales).
func checkSearchMXFP4(t *testing.T, codes, scales []byte, x []float32, wantCodes, wantScales []byte, msg string, args ...any) {
	t.Helper()
	searchMXFP4(codes, scales, x)
	require.Equal(t, wantScales, scales[:len(wantScales)], append([]any{msg + " scales"}, args...)...)
	require.Equal(t, wantCodes, codes[:len(wantCodes)], append([]any{msg + " codes"}, args...)...)
}

// checkSearchNVFP4 is checkSearchMXFP4 for searchNVFP4.
func checkSearchNVFP4(t *testing.T, codes, scales []byte, x []float32, st float32, wantCodes, wantScales []byte, msg string, args ...any) {
	t.Helper()
	searchNVFP4(codes, scales, x, st)
	require.Equal(t, wantScales, scales[:len(wantScales)], append([]any{msg + " scales"}, args...)...)
	require.Equal(t, wantCodes, codes[:len(wantCodes)], append([]any{msg + " codes"}, args...)...)
}

// searchTensorScales are the NVFP4 tensor scales the tests use: ModelOpt's
// amax/2688 of a few tensors, 1, 0, tiny, huge and negative ones.
var searchTensorScales = []float32{1, 1.0 / 2688, 3.7 / 2688, 0.001, 0, 1e-30, 1e30, 0x1p-140, -0.5, 17}

// TestSearchE2M1Naive: the Go references equal the codec-built search.
func TestSearchE2M1Naive(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 41))
	for range 40 {
		x := searchE2M1Input(r, 64, mxBlock)
		want, wantS := make([]byte, len(x)/2), make([]byte, len(x)/mxBlock)
		naiveSearchMXFP4(want, wantS, x)
		got, gotS := make([]byte, len(x)/2), make([]byte, len(x)/mxBlock)
		searchMXFP4Go(got, gotS, x)
		require.Equal(t, wantS, gotS)
		require.Equal(t, want, got)
		for _, st := range searchTensorScales {
			want, wantS := make([]byte, len(x)/2), make([]byte, len(x)/nvfp4Block)
			naiveSearchNVFP4(want, wantS, x, st)
			got, gotS := make([]byte, len(x)/2), make([]byte, len(x)/nvfp4Block)
			searchNVFP4Go(got, gotS, x, st)
			require.Equal(t, wantS, gotS, "st=%g", st)
			require.Equal(t, want, got, "st=%g", st)
		}
	}
}

// TestSearchE2M1Tiers: every tier equals the Go reference bit for bit, on
// every number of blocks up to a few groups of 16, at unaligned offsets.
func TestSearchE2M1Tiers(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 42))
	forEachTier(t, func(t *testing.T) {
		for nb := 0; nb <= 70; nb++ {
			off := r.IntN(16)
			buf := searchE2M1Input(r, nb+1, mxBlock)
			x := buf[off : off+nb*mxBlock]
			want, wantS := make([]byte, len(x)/2), make([]byte, nb)
			searchMXFP4Go(want, wantS, x)
			checkSearchMXFP4(t, make([]byte, len(x)/2+1)[1:], make([]byte, nb+3)[3:], x, want, wantS, "mxfp4 nb=%d off=%d", nb, off)
			for _, st := range searchTensorScales {
				want, wantS := make([]byte, len(x)/2), make([]byte, 2*nb)
				searchNVFP4Go(want, wantS, x, st)
				checkSearchNVFP4(t, make([]byte, len(x)/2), make([]byte, 2*nb), x, st, want, wantS, "nvfp4 nb=%d st=%g", 2*nb, st)
			}
		}
	})
}

// TestSearchE2M1Plain: where the rule's code is best (each block exact at
// it), the search writes what the plain quantizers write.
func TestSearchE2M1Plain(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 43))
	x := make([]float32, 64*mxBlock)
	for i := range x {
		x[i] = e2m1Ties[2*r.IntN(8)] * 4 // E2M1 values times 4
		if r.IntN(2) == 0 {
			x[i] = -x[i]
		}
	}
	for b := 0; b < len(x); b += nvfp4Block {
		x[b] = 6 * 4 // every block's amax 24: its rule's scale is 4, where it is exact
	}
	forEachTier(t, func(t *testing.T) {
		want, wantS := make([]byte, len(x)/2), make([]byte, len(x)/mxBlock)
		quantizeMXFP4(want, wantS, x)
		checkSearchMXFP4(t, make([]byte, len(x)/2), make([]byte, len(x)/mxBlock), x, want, wantS, "mxfp4")
		want, wantS = make([]byte, len(x)/2), make([]byte, len(x)/nvfp4Block)
		quantizeNVFP4(want, wantS, x, 1)
		checkSearchNVFP4(t, make([]byte, len(x)/2), make([]byte, len(x)/nvfp4Block), x, 1, want, wantS, "nvfp4")
	})
}

// FuzzSearchE2M1 compares every tier of searchMXFP4 and searchNVFP4 with
// the Go references on the fuzzer's bytes read as float32 values and a
// tensor scale.
func FuzzSearchE2M1(f *testing.F) {
	f.Add([]byte{0, 0, 0xf0, 0x40, 0, 0, 0xc0, 0x3f}, float32(1))
	f.Add(make([]byte, 4*mxBlock*17), float32(1.0/2688))
	f.Fuzz(func(t *testing.T, data []byte, st float32) {
		x := make([]float32, len(data)/4)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		mx := x[:len(x)/mxBlock*mxBlock]
		want, wantS := make([]byte, len(mx)/2), make([]byte, len(mx)/mxBlock)
		searchMXFP4Go(want, wantS, mx)
		nv := x[:len(x)/nvfp4Block*nvfp4Block]
		wantN, wantNS := make([]byte, len(nv)/2), make([]byte, len(nv)/nvfp4Block)
		searchNVFP4Go(wantN, wantNS, nv, st)
		forEachTier(t, func(t *testing.T) {
			checkSearchMXFP4(t, make([]byte, len(mx)/2), make([]byte, len(mx)/mxBlock), mx, want, wantS, "mxfp4")
			checkSearchNVFP4(t, make([]byte, len(nv)/2), make([]byte, len(nv)/nvfp4Block), nv, st, wantN, wantNS, "nvfp4")
		})
	})
}

// nearTieBlocks returns up to n blocks (whole groups of 16) of the given
// size in which two candidates' errors are equal to a few ulps: a gaussian
// block (element 0 its largest, so the rule stays, and just below 4, so the
// next larger scale is close to the rule's) whose element i is moved, by a scan and then bisection
// over float32 values, to where the reference's choice (choose) changes,
// written with element i at the last value of one choice, the first of the
// other and their outer neighbours. It returns how many of those
// quadruples change their choice inside (each should).
func nearTieBlocks(r *rand.Rand, n, block int, choose func(v []float32) byte) ([]float32, int) {
	var out []float32
	flips := 0
	for try := 0; len(out) < n*block && try < 50*n; try++ {
		v := make([]float32, block)
		v[0] = 3.3 + 0.69*float32(r.Float64()) // saturates at the rule's scale
		for k := 1; k < block; k++ {
			v[k] = float32(max(-2.4, min(2.4, 0.7*r.NormFloat64())))
		}
		i := 1 + r.IntN(block-1)
		at := func(t float32) byte { v[i] = t; return choose(v) }
		const steps = 400
		prevT := float32(-2.4)
		prev := at(prevT)
		for s := 1; s <= steps; s++ {
			t := -2.4 + 4.8*float32(s)/steps
			c := at(t)
			if c == prev {
				prevT = t
				continue
			}
			a, b := prevT, t // at(a) = prev, at(b) = c
			for math.Nextafter32(a, b) != b {
				m := float32((float64(a) + float64(b)) / 2)
				if m == a || m == b {
					break
				}
				if at(m) == prev {
					a = m
				} else {
					b = m
				}
			}
			ts := []float32{math.Nextafter32(a, 2*a-b), a, b, math.Nextafter32(b, 2*b-a)}
			if at(ts[0]) != at(ts[3]) {
				flips++
			}
			for _, t := range ts {
				v[i] = t
				out = append(out, v...)
			}
			break
		}
	}
	return out[:len(out)/(16*block)*16*block], flips
}

// TestSearchE2M1NearTies: blocks where two candidates' errors are equal to
// a few ulps, where estimates in a lower precision cannot order them, give
// the Go reference's bytes on every tier.
func TestSearchE2M1NearTies(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 44))
	mxc, mxs := make([]byte, mxBlock/2), make([]byte, 1)
	x, flips := nearTieBlocks(r, 16*8, mxBlock, func(v []float32) byte {
		searchMXFP4Go(mxc, mxs, v)
		return mxs[0]
	})
	require.GreaterOrEqual(t, flips, 16*8/4/2, "mxfp4: too few blocks change their choice")
	const st = 0.5
	nvc, nvs := make([]byte, nvfp4Block/2), make([]byte, 1)
	y, nflips := nearTieBlocks(r, 16*8, nvfp4Block, func(v []float32) byte {
		searchNVFP4Go(nvc, nvs, v, st)
		return nvs[0]
	})
	require.GreaterOrEqual(t, nflips, 16*8/4/2, "nvfp4: too few blocks change their choice")
	forEachTier(t, func(t *testing.T) {
		t.Run("mxfp4", func(t *testing.T) {
			want, wantS := make([]byte, len(x)/2), make([]byte, len(x)/mxBlock)
			searchMXFP4Go(want, wantS, x)
			checkSearchMXFP4(t, make([]byte, len(x)/2), make([]byte, len(x)/mxBlock), x, want, wantS, "near ties")
		})
		t.Run("nvfp4", func(t *testing.T) {
			want, wantS := make([]byte, len(y)/2), make([]byte, len(y)/nvfp4Block)
			searchNVFP4Go(want, wantS, y, st)
			checkSearchNVFP4(t, make([]byte, len(y)/2), make([]byte, len(y)/nvfp4Block), y, st, want, wantS, "near ties")
		})
	})
}
