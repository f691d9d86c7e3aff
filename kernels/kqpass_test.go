package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// passCase is one sub-block and its candidates for the search passes.
type passCase struct {
	x, w   []float32
	params [4]lanes // candidate parameters: t, o / d, m, id / ...
}

// passCases returns sub-blocks of 16, 32 and 256 on the edges of the
// passes: random magnitudes, values exactly between codes (ties), zeros of
// both signs, all-zero weights, huge and tiny values, and candidate
// parameters that are 0, negative, huge, infinite or NaN.
func passCases(rng *rand.Rand) []passCase {
	var out []passCase
	for _, n := range []int{16, 32, 256} {
		for k := range 24 {
			x, w := make([]float32, n), make([]float32, n)
			for i := range x {
				switch k % 6 {
				case 0:
					x[i] = float32(rng.NormFloat64())
				case 1: // ties: half-integers
					x[i] = float32(rng.IntN(40)-20) + 0.5
				case 2: // zeros of both signs among small integers
					x[i] = float32(rng.IntN(5) - 2)
					if rng.IntN(2) == 0 {
						x[i] = float32(math.Copysign(0, -1))
					}
				case 3:
					x[i] = float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(200)-100)))
				case 4:
					x[i] = float32(rng.Float64() * 3e4)
				default:
					x[i] = float32(rng.NormFloat64() * 1e-20)
				}
				switch k % 4 {
				case 0:
					w[i] = 1
				case 1:
					w[i] = float32(math.Exp(2 * rng.NormFloat64()))
				case 2:
					w[i] = float32(rng.IntN(3)) // zeros among them
				default:
					w[i] = 0
				}
			}
			c := passCase{x: x, w: w}
			for p := range c.params {
				for l := range c.params[p] {
					var v float32
					switch rng.IntN(10) {
					case 0:
						v = 0
					case 1:
						v = float32(math.Inf(1 - 2*rng.IntN(2)))
					case 2:
						v = float32(math.NaN())
					case 3:
						v = float32(rng.NormFloat64() * 1e30)
					case 4: // a half-integer over an element: ties
						v = 0.5 / x[rng.IntN(n)]
					default:
						v = float32(rng.NormFloat64() * 8)
					}
					c.params[p][l] = v
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// passRun runs every pass over c with all 16 candidates, through the Go
// references (ref) or the dispatchers, and returns their outputs.
func passRun(c *passCase, ref bool) map[string]*lanes {
	out := map[string]*lanes{}
	p := &c.params
	res := func(names ...string) []*lanes {
		var ls []*lanes
		for _, n := range names {
			l := new(lanes)
			out[n] = l
			ls = append(ls, l)
		}
		return ls
	}
	const k = passLanes
	n, neg, pos := float32(15), float32(4), float32(3)
	tab := searchIQ4
	for i, st := range []affineStats{{n, 32, 1.5, 40, 0}, {n, 7, -3, 9, 1}, {n, p[3][0], p[3][1], p[3][2], 1}} {
		r := res(fmt.Sprint("fit d", i), fmt.Sprint("fit m", i), fmt.Sprint("fit e", i), fmt.Sprint("fit sqq", i), fmt.Sprint("fit sq", i))
		if ref {
			affineFitGo(c.x, c.w, k, &p[0], &p[1], &st, r[0], r[1], r[2], r[3], r[4])
		} else {
			affineFit(c.x, c.w, k, &p[0], &p[1], &st, r[0], r[1], r[2], r[3], r[4])
		}
	}
	if len(c.x) <= 32 {
		for i, mb := range []float32{0, 1} {
			st := affineStats{n: n, minBelow: mb}
			var lohi [2]float32
			r := res(fmt.Sprint("fit0 d", i), fmt.Sprint("fit0 m", i), fmt.Sprint("fit0 e", i), fmt.Sprint("fit0 sqq", i), fmt.Sprint("fit0 sq", i))
			if ref {
				affineFit0Go(c.x, c.w, k, &p[0], &p[1], &st, &lohi, r[0], r[1], r[2], r[3], r[4])
			} else {
				affineFit0(c.x, c.w, k, &p[0], &p[1], &st, &lohi, r[0], r[1], r[2], r[3], r[4])
			}
			s := res(fmt.Sprint("fit0 stats", i))
			s[0][0], s[0][1], s[0][2], s[0][3], s[0][4] = st.sw, st.sx, st.sxx, lohi[0], lohi[1]
		}
	}
	if len(c.x) <= 32 {
		r := res("sym0 d", "sym0 score", "sym0 sqq", "sym0 stats")
		var stats [2]float32
		if ref {
			symFit0Go(c.x, c.w, k, &p[3], neg, pos, r[0], r[1], r[2], &stats)
		} else {
			symFit0(c.x, c.w, k, &p[3], neg, pos, r[0], r[1], r[2], &stats)
		}
		r[3][0], r[3][1] = stats[0], stats[1]
		r = res("table0 d", "table0 score", "table0 sqq", "table0 stats")
		if ref {
			tableFit0Go(c.x, c.w, k, &p[3], tab, r[0], r[1], r[2], &stats)
		} else {
			tableFit0(c.x, c.w, k, &p[3], tab, r[0], r[1], r[2], &stats)
		}
		r[3][0], r[3][1] = stats[0], stats[1]
	}
	if r := res("affineErr"); ref {
		affineErrsGo(c.x, c.w, k, &p[0], &p[1], &p[2], n, r[0])
	} else {
		affineErrs(c.x, c.w, k, &p[0], &p[1], &p[2], n, r[0])
	}
	if r := res("sym d", "sym score", "sym sqq"); ref {
		symFitGo(c.x, c.w, k, &p[0], neg, pos, r[0], r[1], r[2])
	} else {
		symFit(c.x, c.w, k, &p[0], neg, pos, r[0], r[1], r[2])
	}
	if r := res("symErr"); ref {
		symErrsGo(c.x, c.w, k, &p[0], &p[1], neg, pos, r[0])
	} else {
		symErrs(c.x, c.w, k, &p[0], &p[1], neg, pos, r[0])
	}
	if r := res("table d", "table score", "table sqq"); ref {
		tableFitGo(c.x, c.w, k, &p[0], tab, r[0], r[1], r[2])
	} else {
		tableFit(c.x, c.w, k, &p[0], tab, r[0], r[1], r[2])
	}
	if r := res("tableErr"); ref {
		tableErrsGo(c.x, c.w, k, &p[0], &p[1], tab, r[0])
	} else {
		tableErrs(c.x, c.w, k, &p[0], &p[1], tab, r[0])
	}
	return out
}

// codesRun runs the code kernels over x with per-sub-block parameters from
// params (sub-blocks of 16, 32 or 256), through the Go references or the
// dispatchers.
func codesRun(x []float32, sub int, params *[4]lanes, ref bool) [3][]uint8 {
	nsub := len(x) / sub
	mi, ids := make([]float32, 2*nsub), make([]float32, nsub)
	for j := range nsub {
		mi[2*j], mi[2*j+1] = params[0][j%passLanes], params[1][j%passLanes]
		ids[j] = params[2][j%passLanes]
	}
	var out [3][]uint8
	for i := range out {
		out[i] = make([]uint8, len(x))
	}
	if ref {
		affineCodesGo(x, mi, 15, out[0])
		symCodesGo(x, ids, 32, 31, out[1])
		tableCodesGo(x, ids, searchIQ4, out[2])
	} else {
		affineCodes(x, mi, 15, out[0])
		symCodes(x, ids, 32, 31, out[1])
		tableCodes(x, ids, searchIQ4, out[2])
	}
	return out
}

// TestPassKernels compares every tier's search passes and code kernels
// with the Go references, bit for bit.
func TestPassKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	cases := passCases(rng)
	for ci := range cases {
		c := &cases[ci]
		want := passRun(c, true)
		// Elements with NaN and infinities for the code kernels.
		x := append([]float32(nil), c.x...)
		x[rng.IntN(len(x))] = float32(math.NaN())
		x[rng.IntN(len(x))] = float32(math.Inf(1 - 2*rng.IntN(2)))
		subs := []int{16, 32, 256}
		var wantCodes [][3][]uint8
		for _, sub := range subs {
			if len(x)%sub == 0 {
				wantCodes = append(wantCodes, codesRun(x, sub, &c.params, true))
			}
		}
		for _, tr := range tiers() {
			restore := useTier(tr)
			got := passRun(c, false)
			var gotCodes [][3][]uint8
			for _, sub := range subs {
				if len(x)%sub == 0 {
					gotCodes = append(gotCodes, codesRun(x, sub, &c.params, false))
				}
			}
			restore()
			for name, w := range want {
				requireSame(t, floatBits(w[:]), floatBits(got[name][:]), "case %d (%d) %v %s", ci, len(c.x), tr, name)
			}
			for s := range wantCodes {
				for k := range 3 {
					if string(wantCodes[s][k]) != string(gotCodes[s][k]) {
						t.Fatalf("case %d %v: code kernel %d, sub-blocks %d: differs from the Go reference", ci, tr, k, subs[s])
					}
				}
			}
		}
	}
}

// TestKQuantTiers quantizes the same data on every tier and requires the
// same blocks.
func TestKQuantTiers(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	x := gaussian(rng, 8*qkk, 1)
	x[5], x[700] = float32(math.NaN()), float32(math.Inf(-1))
	imp := make([]float32, 2*qkk)
	for i := range imp {
		imp[i] = float32(math.Exp(2 * rng.NormFloat64()))
	}
	for _, c := range kqCodecs {
		for _, w := range [][]float32{nil, imp} {
			want := make([]byte, len(x)/c.block*c.bytes)
			restore := useTier(tierGeneric)
			c.quant(want, x, w, nil)
			restore()
			for _, tr := range tiers() {
				restore := useTier(tr)
				got := make([]byte, len(want))
				c.quant(got, x, w, nil)
				restore()
				if string(got) != string(want) {
					t.Fatalf("%s importance=%v: tier %v gives other blocks than the Go reference", c.name, w != nil, tr)
				}
			}
		}
	}
}

// FuzzPassKernels compares every tier's passes and code kernels with the Go
// references on the fuzzer's values: the first 16 or 32 as x, the next as
// w (made non-negative), then 64 candidate parameters.
func FuzzPassKernels(f *testing.F) {
	seed := make([]float32, 32+32+64)
	for i := range seed {
		seed[i] = float32(i%7) - 2.5
	}
	f.Add(bytesOf(seed...))
	f.Fuzz(func(t *testing.T, data []byte) {
		vals := floatsOf(data)
		n := 16
		if len(vals) >= 32+32+64 {
			n = 32
		}
		if len(vals) < 2*n+64 {
			return
		}
		c := passCase{x: vals[:n], w: make([]float32, n)}
		for i := range c.x {
			if !finite(c.x[i]) {
				c.x[i] = 0
			}
			c.w[i] = abs32(vals[n+i])
			if !finite(c.w[i]) {
				c.w[i] = 1
			}
		}
		for p := range c.params {
			copy(c.params[p][:], vals[2*n+16*p:])
		}
		want := passRun(&c, true)
		wantCodes := codesRun(vals[:n], 16, &c.params, true)
		for _, tr := range tiers() {
			restore := useTier(tr)
			got := passRun(&c, false)
			gotCodes := codesRun(vals[:n], 16, &c.params, false)
			restore()
			for name, wv := range want {
				requireSame(t, floatBits(wv[:]), floatBits(got[name][:]), "%v %s", tr, name)
			}
			for k := range 3 {
				if string(wantCodes[k]) != string(gotCodes[k]) {
					t.Fatalf("%v: code kernel %d differs from the Go reference", tr, k)
				}
			}
		}
	})
}

// TestAffineSums2 checks the interleaved sums of two affine candidates
// (and their unit-weight loop, which adds q and q² unfused) against the
// plain loop over one candidate: a += wq, b = fma32(wq, q, b),
// f = fma32(wq, x, f), element by element.
func TestAffineSums2(t *testing.T) {
	plain := func(x, w []float32, tc, oc, n float32) (a, b, f float32) {
		for i, v := range x {
			q := clampRoundPass(tc*(v-oc), 0, n)
			wq := w[i] * q
			a += wq
			b = fma32(wq, q, b)
			f = fma32(wq, v, f)
		}
		return a, b, f
	}
	same := func(got, want float32) bool {
		return math.Float32bits(got) == math.Float32bits(want) || (got != got && want != want)
	}
	ones := make([]float32, qkk)
	for i := range ones {
		ones[i] = 1
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for ci, c := range passCases(rng) {
		for _, n := range []float32{3, 15, 31, 63} {
			for l := 0; l < passLanes; l += 2 {
				t0, o0, t1, o1 := c.params[0][l], c.params[1][l], c.params[0][l+1], c.params[1][l+1]
				off := rng.IntN(qkk - len(c.x) + 1)
				for wi, w := range [][]float32{c.w, unitWeights[off : off+len(c.x)]} {
					ref := c.w
					if wi == 1 {
						ref = ones
					}
					a0, b0, f0, a1, b1, f1 := affineSums2Go(c.x, w, t0, o0, t1, o1, n)
					ra0, rb0, rf0 := plain(c.x, ref, t0, o0, n)
					ra1, rb1, rf1 := plain(c.x, ref, t1, o1, n)
					for k, p := range [][2]float32{{a0, ra0}, {b0, rb0}, {f0, rf0}, {a1, ra1}, {b1, rb1}, {f1, rf1}} {
						if !same(p[0], p[1]) {
							t.Fatalf("case %d n=%v lane %d unit=%v sum %d: got %g (%#x), want %g (%#x)",
								ci, n, l, wi == 1, k, p[0], math.Float32bits(p[0]), p[1], math.Float32bits(p[1]))
						}
					}
				}
			}
		}
	}
}

// TestSymPassesUnitWeights checks the symmetric and table passes with the
// weights of a block without importance (unitWeights, where they add q²
// unfused and keep fma32's slow path out of the loop) against the plain
// loop over one candidate with weights 1: a = fma32(q, x, a),
// b = fma32(q, q, b), and for the errors r = fma32(−d, q, x),
// s = fma32(r, r, s).
func TestSymPassesUnitWeights(t *testing.T) {
	same := func(got, want float32) bool {
		return math.Float32bits(got) == math.Float32bits(want) || (got != got && want != want)
	}
	tab := searchIQ4
	rng := rand.New(rand.NewPCG(9, 10))
	for ci, c := range passCases(rng) {
		off := rng.IntN(qkk - len(c.x) + 1)
		w := unitWeights[off : off+len(c.x)]
		for _, r := range [][2]float32{{4, 3}, {32, 31}, {16, 15}, {127, 127}} {
			neg, pos := r[0], r[1]
			var d, score, sqq, e lanes
			symFitGo(c.x, w, passLanes, &c.params[0], neg, pos, &d, &score, &sqq)
			symErrsGo(c.x, w, passLanes, &c.params[1], &c.params[2], neg, pos, &e)
			for l := range passLanes {
				var a, b, s float32
				for _, v := range c.x {
					q := clampRoundPass(c.params[0][l]*v, -neg, pos)
					a, b = fma32(q, v, a), fma32(q, q, b)
					q = clampRoundPass(v*c.params[2][l], -neg, pos)
					rr := fma32(-c.params[1][l], q, v)
					s = fma32(rr, rr, s)
				}
				if !same(sqq[l], b) || !same(d[l], a/b) || !same(e[l], s) {
					t.Fatalf("case %d codes -%v..%v lane %d: sqq %g d %g e %g, want %g %g %g", ci, neg, pos, l, sqq[l], d[l], e[l], b, a/b, s)
				}
			}
		}
		var d, score, sqq lanes
		tableFitGo(c.x, w, passLanes, &c.params[0], tab, &d, &score, &sqq)
		for l := range passLanes {
			var a, b float32
			for _, v := range c.x {
				q := tab.v[tab.index(c.params[0][l]*v)]
				a, b = fma32(q, v, a), fma32(q, q, b)
			}
			if !same(sqq[l], b) || !same(d[l], a/b) {
				t.Fatalf("case %d table lane %d: sqq %g d %g, want %g %g", ci, l, sqq[l], d[l], b, a/b)
			}
		}
	}
}
