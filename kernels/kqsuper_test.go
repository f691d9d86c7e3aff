package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// superBlock returns a super-block of 256 finite values of kind k (as
// passCases' kinds, with whole sub-blocks of zeros and of tiny values) and
// its weights of kind wk (0: unit, 1: log-normal, 2: some zeros).
func superBlock(rng *rand.Rand, k, wk int) (x, w []float32) {
	x = make([]float32, qkk)
	for i := range x {
		switch k % 8 {
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
		case 5:
			x[i] = float32(rng.NormFloat64() * 1e-20)
		case 6: // sub-blocks scaled apart, some all zero
			if (i/16)%5 == 0 {
				x[i] = 0
			} else {
				x[i] = float32(rng.NormFloat64() * math.Exp2(float64(i/16)))
			}
		default: // near float16 overflow of the super-block scale
			x[i] = float32(rng.NormFloat64() * 1e7)
		}
	}
	switch wk {
	case 0:
		return x, unitWeights[:]
	case 1:
		w = make([]float32, qkk)
		for i := range w {
			w[i] = float32(math.Exp(2 * rng.NormFloat64()))
		}
	default:
		w = make([]float32, qkk)
		for i := range w {
			w[i] = float32(rng.IntN(3))
		}
		for i := range 16 { // a sub-block of weights all 1, as prep leaves it
			w[i] = 1
		}
	}
	return x, w
}

// superRun runs every super-block search on x and w through the Go
// references (ref) or the dispatchers, with scratch and results at the
// given places (nil: new ones), and returns each result's bits by name.
func superRun(x, w []float32, ref bool, tr *superScratch, res *superRes) map[string][]uint32 {
	if tr == nil {
		tr = new(superScratch)
	}
	if res == nil {
		res = new(superRes)
	}
	out := map[string][]uint32{}
	put := func(name string) {
		out[name+" l"] = floatBits(res.l[:])
		out[name+" ids"] = floatBits(res.ids[:])
		out[name+" d"] = []uint32{math.Float32bits(res.d), res.hd}
		*res = superRes{}
	}
	for _, c := range []struct {
		name string
		s    *symmetric
		cfg  *superCfg
	}{{"Q3_K", &searchQ3K, &superQ3K}, {"Q3_K plain", &searchQ3KPlain, &superQ3KPlain},
		{"Q6_K", &searchQ6K, &superQ6K}, {"Q6_K plain", &searchQ6KPlain, &superQ6KPlain},
		{"sym 1", &searchSym1, &superSym1}, {"sym 3", &searchSym3, &superSym3}, {"sym 7", &searchSym7, &superSym7}} {
		if ref {
			symSuper16Go(x, w, c.s, c.cfg, res)
		} else {
			symSuper16(x, w, c.s, c.cfg, res, tr)
		}
		put(c.name)
	}
	if ref {
		tableSuper8Go(x, w, searchIQ4XS, &superIQ4XS, res)
	} else {
		tableSuper8(x, w, searchIQ4XS, &superIQ4XS, res, tr)
	}
	put("IQ4_XS")
	var nr nlRes
	if ref {
		tableBlocks8Go(x, w, searchIQ4, &nr)
	} else {
		tableBlocks8(x, w, searchIQ4, &superIQ4NL, &nr, tr)
	}
	out["IQ4_NL d"], out["IQ4_NL ids"], out["IQ4_NL hd"] = floatBits(nr.d[:]), floatBits(nr.ids[:]), nr.hd[:]
	for _, c := range []struct {
		name string
		a    *affine
		sub  int
		cfg  *superCfg
	}{{"Q2_K", &searchQ2K, 16, &superQ2K}, {"Q2_K plain", &searchQ2KPlain, 16, &superQ2KPlain},
		{"Q4_K", &searchQ4K, 32, &superQ4K}, {"Q4_K plain", &searchQ4KPlain, 32, &superQ4KPlain}, {"Q5_K", &searchQ5K, 32, &superQ5K}, {"Q5_K plain", &searchQ5KPlain, 32, &superQ5KPlain},
		{"picks 16 odd", &searchPicksOdd, 16, &superPicksOdd}, {"picks 32 odd", &searchPicksOdd, 32, &superPicksOdd},
		{"picks 32 even", &searchPicksEven, 32, &superPicksEven}} {
		var ar affineRes
		if ref {
			affineSuperGo(x, w, c.a, c.sub, c.cfg, &ar)
		} else {
			affineSuper(x, w, c.a, c.sub, c.cfg, &ar, tr)
		}
		for name, v := range map[string]*lanes{"l": &ar.l, "m": &ar.m, "mn": &ar.mn, "ids": &ar.ids} {
			out[c.name+" "+name] = floatBits(v[:])
		}
		out[c.name+" d"] = []uint32{math.Float32bits(ar.d), ar.hd, math.Float32bits(ar.dm), ar.hm}
	}
	return out
}

// Symmetric searches of 1, 3 and 7 first candidates (the AVX-512 kernel
// measures 4 at a time, then 2 and 1).
var (
	searchSym1 = symmetric{neg: 4, pos: 3, deltas: []float32{0.2}}
	searchSym3 = symmetric{neg: 4, pos: 3, deltas: levelsFrom(-0.5, 0.5, 2), posDelta: []float32{0.25}}
	searchSym7 = symmetric{neg: 32, pos: 31, deltas: levelsFrom(-1, 0.25, 5), posDelta: []float32{0, -0.5}}
	superSym1  = newSuperCfg(searchSym1.init(), -32, 31, levels32)
	superSym3  = newSuperCfg(searchSym3.init(), -32, 31, levels32)
	superSym7  = newSuperCfg(searchSym7.init(), -128, 127, levels128)
)

// Affine searches with pick lists out of the grid's order, repeated pairs
// and an odd count (which the AVX-512 kernel of 8 sub-blocks leaves to Go).
var (
	searchPicksOdd  = affine{n: 15, deltas: levelsFrom(-1, 0.5, 2), shifts: []float32{0.5}, minBelow: true, picks: []uint8{15, 3, 0, 9, 9}}
	searchPicksEven = affine{n: 15, deltas: levelsFrom(-1, 0.5, 2), shifts: []float32{0.5}, minBelow: true, picks: []uint8{12, 0, 6, 6, 9, 3}}
	superPicksOdd   = newAffineSuperCfg(searchPicksOdd.init(), 63, levels63)
	superPicksEven  = newAffineSuperCfg(searchPicksEven.init(), 63, levels63)
)

// requireSuperTiers requires every tier's super-block searches of x with
// weights w to give the Go references' results, bit for bit; what names the
// block in a failure.
func requireSuperTiers(t *testing.T, x, w []float32, what string) {
	t.Helper()
	want := superRun(x, w, true, nil, nil)
	for _, tr := range tiers() {
		restore := useTier(tr)
		got := superRun(x, w, false, nil, nil)
		restore()
		for name, wv := range want {
			requireSame(t, wv, got[name], "%s %v: %s", what, tr, name)
		}
	}
}

// prepSubWeights sets each sub-block of 16 weights to all 1 where their
// sum is not a positive finite number, as prep leaves them.
func prepSubWeights(w []float32) {
	for o := 0; o < len(w); o += 16 {
		var sum float32
		for _, v := range w[o : o+16] {
			sum += v
		}
		if !(sum > 0) || !finite(sum) {
			for i := o; i < o+16; i++ {
				w[i] = 1
			}
		}
	}
}

// TestSuperKernels compares every tier's super-block searches with the Go
// references, bit for bit.
func TestSuperKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	for k := range 16 {
		for wk := range 3 {
			x, w := superBlock(rng, k, wk)
			requireSuperTiers(t, x, w, fmt.Sprintf("kind %d weights %d", k, wk))
		}
	}
}

// TestSuperKernelsExtreme compares every tier's super-block searches with
// the Go references on 2,000 blocks (200 under the race detector) at
// float32's edges. Some or all elements are ±MaxFloat32, ±1e38-scale,
// subnormal, ±1e−38-scale or of any magnitude from 1e−38 to 1e38, and a
// quarter of the sub-blocks span more than MaxFloat32 (two values of
// opposite signs above 1e38), so spans and sums overflow. Importance
// weights are 0, subnormal, up to 1e37 or log-normal over ±20 e-folds
// (each sub-block's weights all 1 when their sum is not a positive finite
// number, as prep leaves them). It fails on the kernels before
// TestAffineSuperSpanOverflow's fix.
func TestSuperKernelsExtreme(t *testing.T) {
	rng := rand.New(rand.NewPCG(991, 992))
	edge := func() float32 {
		var v float32
		switch rng.IntN(7) {
		case 0:
			v = 0
		case 1:
			v = float32(rng.NormFloat64() * 1e38)
		case 2:
			v = float32(rng.NormFloat64() * 1e-38)
		case 3: // subnormal, either sign
			v = math.Float32frombits(rng.Uint32() & 0x807fffff)
		case 4:
			v = math.MaxFloat32
			if rng.IntN(2) == 0 {
				v = -v
			}
		default:
			v = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(77)-38)))
		}
		if !finite(v) { // ±Inf after the float32 conversion
			v = float32(math.Copysign(math.MaxFloat32, float64(v)))
		}
		return v
	}
	weight := func() float32 {
		switch rng.IntN(8) {
		case 0:
			return 0
		case 1:
			return math.Float32frombits(rng.Uint32() & 0x007fffff)
		case 2:
			return float32(math.Abs(rng.NormFloat64()) * 1e37)
		case 3:
			return min(float32(math.Exp(rng.NormFloat64()*20)), math.MaxFloat32)
		default:
			return float32(math.Exp(rng.NormFloat64()))
		}
	}
	blocks := 2000
	if raceEnabled { // one goroutine: nothing for the detector to see
		blocks = 200
	}
	for it := range blocks {
		x := make([]float32, qkk)
		all := rng.IntN(4) == 0
		for i := range x {
			if all || rng.IntN(8) == 0 {
				x[i] = edge()
			} else {
				x[i] = float32(rng.NormFloat64())
			}
		}
		for o := 0; o < qkk; o += 16 { // some sub-blocks' spans overflow
			if rng.IntN(4) == 0 {
				x[o+rng.IntN(16)] = float32(1e38 + rng.Float64()*2.4e38)
				x[o+rng.IntN(16)] = -float32(1e38 + rng.Float64()*2.4e38) // < MaxFloat32
			}
		}
		w := unitWeights[:]
		if rng.IntN(4) != 0 {
			w = make([]float32, qkk)
			for i := range w {
				w[i] = weight()
			}
			prepSubWeights(w)
		}
		requireSuperTiers(t, x, w, fmt.Sprintf("block %d", it))
	}
}

// TestAffineSuperSpanOverflow covers sub-blocks whose range overflows
// float32 (x from −1.7e38 to 1.9e38, a fuzzer's sub-block) under importance weights, some
// subnormal: every candidate's t·(x − o) is then NaN, which
// clampRoundPass takes to code 0, so no candidate fits and the fit is the
// min-max scale, +Inf. Kernels that clamped only from above took NaN to
// the top code, and the weighted sums' rounding let a candidate through
// (FuzzSuperKernels found it on AVX2 and AVX-512).
func TestAffineSuperSpanOverflow(t *testing.T) {
	block := []float32{-0.4317469, -0.93600386, -0.18618119, -0.15771323, 0, -0.21690668, -0.5313053, -1.0185019,
		1.8515394e38, 1.920438, -1.7313383e38, -0.27200562, 1.1860752, -0.079110876, -1.3878285, 1.2434986}
	sub := []float32{2.650958e-7, 2.650958e-7, 1.75e-43, 0, 2.6509224e-7, 2.650958e-7, 1.75e-43, 2.6509224e-7,
		1.75e-43, 2.6509224e-7, 1.75e-43, 0, 2.6509224e-7, 1.75e-43, 2.6509224e-7, 1.75e-43}
	x, w := make([]float32, qkk), make([]float32, qkk)
	for i := range x {
		x[i], w[i] = block[i%16], sub[i%16]
	}
	var fl fitLanes
	for _, a := range []*affine{&searchQ2K, &searchQ2KPlain} {
		f := a.fitWith(x[:16], w[:16], &fl)
		require.True(t, math.IsInf(float64(f.d), 1), "reference fit: d = %v, want +Inf", f.d)
	}
	requireSuperTiers(t, x, w, "span overflow")
}

// FuzzSuperKernels compares every tier's super-block searches with the Go
// references on the fuzzer's values: 256 elements (non-finite ones as 0)
// and, when there are 512, their weights (made finite and non-negative,
// positive ones held within [2^−100, 2^100] and each sub-block's weights
// all 1 when they add up to 0, as prep leaves them); fewer values are
// repeated.
func FuzzSuperKernels(f *testing.F) {
	seed := make([]float32, 2*qkk)
	for i := range seed {
		seed[i] = float32(i%7) - 2.5
	}
	f.Add(bytesOf(seed[:qkk]...))
	f.Add(bytesOf(seed...))
	f.Fuzz(func(t *testing.T, data []byte) {
		vals := floatsOf(data)
		if len(vals) == 0 {
			return
		}
		x := make([]float32, qkk)
		for i := range x {
			x[i] = vals[i%len(vals)]
			if !finite(x[i]) {
				x[i] = 0
			}
		}
		w := unitWeights[:]
		if len(vals) >= 2*qkk {
			w = make([]float32, qkk)
			for i := range w {
				w[i] = abs32(vals[qkk+i])
				if !finite(w[i]) {
					w[i] = 1
				}
				if w[i] > 0 {
					// Within [2^−100, 2^100], as prep holds them: no
					// sub-block's sum overflows.
					w[i] = min(max(w[i], 0x1p-100), 0x1p100)
				}
			}
			prepSubWeights(w)
		}
		requireSuperTiers(t, x, w, "fuzz")
	})
}

// TestIQ4NLGroups requires quantizeIQ4NL, which quantizes eight blocks at
// once where they lie in one row, to give the blocks of quantizing each
// block alone, on every tier, with and without importance vectors whose
// rows hold whole groups of eight or not, and with NaN and infinities.
func TestIQ4NLGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(111, 112))
	x := gaussian(rng, 30*32, 1)
	x[7], x[300], x[301], x[900] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())
	for _, n := range []int{0, 3 * 32, 10 * 32, 30 * 32} {
		var imp []float32
		if n > 0 {
			imp = make([]float32, n)
			for i := range imp {
				imp[i] = float32(math.Exp(rng.NormFloat64()))
			}
		}
		for _, tr := range tiers() {
			restore := useTier(tr)
			want := make([]byte, 30*iq4nlBlockBytes)
			s := kqScratch{g: blockRule("IQ4_NL")}
			for b := range 30 {
				quantIQ4NL(want[b*iq4nlBlockBytes:(b+1)*iq4nlBlockBytes], x[32*b:32*b+32], impAt(imp, 32*b, 32), &s)
			}
			got := make([]byte, len(want))
			quantizeIQ4NL(got, x, imp, nil)
			restore()
			if string(got) != string(want) {
				t.Fatalf("%v, importance rows of %d: eight blocks at once differ from one at a time", tr, n)
			}
		}
	}
}

// TestQ3KPack compares every tier's Q3_K block assembly with the Go
// reference on random results (integer scales −32..31, inverse scales of
// every size, 0 among them) and elements with infinities, and NaN in every
// other case (the others run the kernels for x without NaN).
func TestQ3KPack(t *testing.T) {
	rng := rand.New(rand.NewPCG(121, 122))
	for k := range 64 {
		x, _ := superBlock(rng, k, 0)
		finite := k%2 == 1 // the kernels for x without NaN
		if !finite {
			x[rng.IntN(qkk)] = float32(math.NaN())
		}
		x[rng.IntN(qkk)] = float32(math.Inf(1))
		x[rng.IntN(qkk)] = float32(math.Inf(-1))
		var r superRes
		for j := range 16 {
			r.l[j] = float32(rng.IntN(64) - 32)
			r.ids[j] = float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(40)-20)))
			if rng.IntN(8) == 0 {
				r.ids[j] = 0
			}
		}
		r.hd = uint32(rng.IntN(1 << 16))
		var want [q3_KBlockBytes]byte
		var q [qkk]uint8
		q3kPackGo(&want, (*[qkk]float32)(x), &r, &q)
		for _, tr := range tiers() {
			restore := useTier(tr)
			var got [q3_KBlockBytes]byte
			for i := range got {
				got[i] = 0xa5 // every byte must be written
			}
			q3kPack(&got, (*[qkk]float32)(x), &r, &q, finite)
			restore()
			if got != want {
				t.Fatalf("case %d %v: Q3_K block differs from the Go reference:\n got  %x\n want %x", k, tr, got, want)
			}
		}
	}
}

// TestQ4KNibbles compares every tier's Q4_K codes and packing with the Go
// reference on random offsets and inverse scales (0, negative and huge
// among them), elements with infinities, and NaN in every other case (the
// others run the kernel for x without NaN).
func TestQ4KNibbles(t *testing.T) {
	rng := rand.New(rand.NewPCG(131, 132))
	for k := range 64 {
		x, _ := superBlock(rng, k, 0)
		finite := k%2 == 1
		if !finite {
			x[rng.IntN(qkk)] = float32(math.NaN())
		}
		x[rng.IntN(qkk)] = float32(math.Inf(1))
		x[rng.IntN(qkk)] = float32(math.Inf(-1))
		var mi [16]float32
		for j := range 8 {
			mi[2*j] = float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(20)-10)))
			mi[2*j+1] = float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(40)-20)))
			switch rng.IntN(8) {
			case 0:
				mi[2*j+1] = 0
			case 1:
				mi[2*j+1] = float32(rng.IntN(32)) + 0.5 // ties among the codes
				mi[2*j] = 0
			}
		}
		var want [128]byte
		var q [qkk]uint8
		q4kNibblesGo(&want, (*[qkk]float32)(x), &mi, &q)
		for _, tr := range tiers() {
			restore := useTier(tr)
			var got [128]byte
			for i := range got {
				got[i] = 0xa5 // every byte must be written
			}
			q4kNibbles(&got, (*[qkk]float32)(x), &mi, &q, finite)
			restore()
			if got != want {
				t.Fatalf("case %d %v: Q4_K nibbles differ from the Go reference:\n got  %x\n want %x", k, tr, got, want)
			}
		}
	}
}

// TestSuperCfgNoLo checks which symmetric searches may skip the lower
// clamp of their first candidates' codes: those whose numerators all lie
// within neg + 1/4 of 0 (Q3_K without importance: −4.2 and 3.25).
func TestSuperCfgNoLo(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  *superCfg
		want uint32
	}{
		{"Q3_K plain", &superQ3KPlain, 1},
		{"Q3_K", &superQ3K, 0},            // −4.9
		{"Q6_K", &superQ6K, 0},            // −33
		{"Q6_K plain", &superQ6KPlain, 0}, // −32.625
		{"sym 3", &superSym3, 1},          // −3.5, −4, 3.25
	} {
		assert.Equal(t, c.want, c.cfg.noLo, c.name)
	}
}
