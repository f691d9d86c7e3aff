package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// passCase is one sub-block and candidate list for the search passes.
type passCase struct {
	x, w   []float32
	params []float32 // candidate parameters, as many as any pass reads
}

// passCases returns sub-blocks of 16 and 32 on the edges of the passes:
// random magnitudes, values exactly between codes (ties), zeros of both
// signs, all-zero weights, huge and tiny values, and candidate scales that
// are 0, negative, huge, infinite or NaN.
func passCases(rng *rand.Rand) []passCase {
	var out []passCase
	for _, n := range []int{16, 32} {
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
			params := make([]float32, 3*20)
			for i := range params {
				switch rng.IntN(10) {
				case 0:
					params[i] = 0
				case 1:
					params[i] = float32(math.Inf(1 - 2*rng.IntN(2)))
				case 2:
					params[i] = float32(math.NaN())
				case 3:
					params[i] = float32(rng.NormFloat64() * 1e30)
				default:
					params[i] = float32(rng.NormFloat64() * 8)
				}
			}
			out = append(out, passCase{x, w, params})
		}
	}
	return out
}

// TestPassKernels compares every tier's search passes with the Go
// references, bit for bit.
func TestPassKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	cases := passCases(rng)
	tab := searchIQ4
	for ci, c := range cases {
		for _, k := range []int{0, 1, 7, 20} {
			want := passRun(c, k, tab, true)
			for _, tr := range tiers() {
				restore := useTier(tr)
				got := passRun(c, k, tab, false)
				restore()
				for name, w := range want {
					requireSame(t, floatBits(w), floatBits(got[name]), "case %d k %d %v %s", ci, k, tr, name)
				}
			}
		}
	}
}

// passRun runs every pass over c with k candidates, through the Go
// references (ref) or the dispatchers.
func passRun(c passCase, k int, tab *table, ref bool) map[string][]float32 {
	out := map[string][]float32{}
	p := c.params
	run := func(name string, size int, f, g func(out []float32)) {
		o := make([]float32, size)
		if ref {
			f(o)
		} else {
			g(o)
		}
		out[name] = o
	}
	n, neg, pos := float32(15), float32(4), float32(3)
	run("affineSums", 3*k,
		func(o []float32) { affineSumsBatchGo(c.x, c.w, p[:2*k], n, o) },
		func(o []float32) { affineSumsBatch(c.x, c.w, p[:2*k], n, o) })
	run("affineErr", k,
		func(o []float32) { affineErrBatchGo(c.x, c.w, p[:3*k], n, o) },
		func(o []float32) { affineErrBatch(c.x, c.w, p[:3*k], n, o) })
	run("symSums", 2*k,
		func(o []float32) { symSumsBatchGo(c.x, c.w, p[:k], neg, pos, o) },
		func(o []float32) { symSumsBatch(c.x, c.w, p[:k], neg, pos, o) })
	run("symErr", k,
		func(o []float32) { symErrBatchGo(c.x, c.w, p[:2*k], neg, pos, o) },
		func(o []float32) { symErrBatch(c.x, c.w, p[:2*k], neg, pos, o) })
	run("tableSums", 2*k,
		func(o []float32) { tableSumsBatchGo(c.x, c.w, p[:k], tab, o) },
		func(o []float32) { tableSumsBatch(c.x, c.w, p[:k], tab, o) })
	run("tableErr", k,
		func(o []float32) { tableErrBatchGo(c.x, c.w, p[:2*k], tab, o) },
		func(o []float32) { tableErrBatch(c.x, c.w, p[:2*k], tab, o) })
	return out
}

// TestKQuantTiers quantizes the same data on every tier and requires the
// same blocks.
func TestKQuantTiers(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	x := gaussian(rng, 8*QKK, 1)
	x[5], x[700] = float32(math.NaN()), float32(math.Inf(-1))
	imp := make([]float32, 2*QKK)
	for i := range imp {
		imp[i] = float32(math.Exp(2 * rng.NormFloat64()))
	}
	for _, c := range kqCodecs {
		for _, w := range [][]float32{nil, imp} {
			want := make([]byte, len(x)/c.block*c.bytes)
			restore := useTier(tierGeneric)
			c.quant(want, x, w)
			restore()
			for _, tr := range tiers() {
				restore := useTier(tr)
				got := make([]byte, len(want))
				c.quant(got, x, w)
				restore()
				if string(got) != string(want) {
					t.Fatalf("%s importance=%v: tier %v gives other blocks than the Go reference", c.name, w != nil, tr)
				}
			}
		}
	}
}

// FuzzPassKernels compares every tier's passes with the Go references on
// the fuzzer's values: the first 16 or 32 as x, the next as w (made
// non-negative), the rest as candidate parameters.
func FuzzPassKernels(f *testing.F) {
	f.Add(bytesOf(1, 2.5, -3, 0.5, 1e-30, 4e4, 7, -7, 0, 1, 2, 3, 4, 5, 6, 7,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.25, 2, -1, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		vals := floatsOf(data)
		n := 16
		if len(vals) >= 80 {
			n = 32
		}
		if len(vals) < 2*n {
			return
		}
		x, w := vals[:n], make([]float32, n)
		for i := range x {
			if !finite(x[i]) {
				x[i] = 0
			}
			w[i] = abs32(vals[n+i])
			if !finite(w[i]) {
				w[i] = 1
			}
		}
		params := vals[2*n:]
		k := min(len(params)/3, maxCandidates)
		c := passCase{x, w, params}
		want := passRun(c, k, searchIQ4, true)
		for _, tr := range tiers() {
			restore := useTier(tr)
			got := passRun(c, k, searchIQ4, false)
			restore()
			for name, wv := range want {
				requireSame(t, floatBits(wv), floatBits(got[name]), "%v %s", tr, name)
			}
		}
	})
}
