package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// refLUTSelectWeighted is LUTSelector.SelectWeighted written out from its
// definition: each table's error Σ w·d² over the values of non-zero
// weight (Σ d² for a group of equal weights), the first least error, then the codes as refLUTSelect writes
// them.
func (c selCase) refLUTSelectWeighted(codes, meta []uint8, x, w []float32, group, block int, muls, scales []float32) {
	nt := len(c.mags)
	for g := 0; g*group < len(x); g++ {
		lo, hi := g*group, min(g*group+group, len(x))
		flat := true
		for _, v := range w[lo:hi] {
			flat = flat && v == w[lo]
		}
		mul, scale := muls[lo/block], scales[lo/block]
		bk, best := 0, 0.0
		for k := range nt {
			e := 0.0
			for i, v := range x[lo:hi] {
				y := v * mul
				cell := refLUTIndex(c.bounds, float32(math.Abs(float64(y))))
				if y != y {
					cell = refLUTIndex(c.bounds, 0)
				}
				q := c.mags[k][cell] * scale
				d := float64(q) - math.Abs(float64(v))
				if flat {
					e += float64(d * d)
				} else if w[lo+i] != 0 {
					e += float64(float64(w[lo+i]) * float64(d*d))
				}
			}
			if k == 0 || e < best {
				bk, best = k, e
			}
		}
		meta[g] = uint8(bk)
		for i, v := range x[lo:hi] {
			y := v * mul
			code := c.codes[bk][refLUTIndex(c.bounds, float32(math.Abs(float64(y))))]
			if y < 0 || (c.negZero && math.Signbit(float64(y))) {
				code |= c.signBit
			}
			if y != y {
				code = c.zero[bk]
			}
			codes[lo+i] = code
		}
	}
}

// TestLUTSelectWeighted compares SelectWeighted, on every tier, with its
// reference on random tables, values (edges included), weights (zeros, 1,
// subnormal, huge, and groups of equal weights) and scales (edge values,
// and powers of two with their reciprocals for the kernels of power-of-two
// scales); and SelectWeighted with equal weights everywhere with Select.
func TestLUTSelectWeighted(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for _, nt := range []int{1, 2, 3, 4, 8, 16, 17} {
		for _, ncell := range []int{1, 2, 13, 16, 40, 64, 65, 200} {
			signBit := []uint8{0, 0x08, 0x80}[r.IntN(3)]
			c := newSelCase(r, nt, ncell, signBit, r.IntN(2) == 0)
			for _, group := range []int{1, 2, 4, 8, 16, 32, 64, 65} {
				block := group * []int{1, 2, 4}[r.IntN(3)]
				for _, n := range []int{0, 1, group + 1, 3*block + 5, 300} {
					x := lutInputs(r, c.bounds, n+1)[1:]
					w, flat := make([]float32, n), make([]float32, n)
					for i := range w {
						switch r.IntN(16) {
						case 0:
							w[i] = 0
						case 1:
							w[i] = 1
						case 2:
							w[i] = 0x1p-149 // the least subnormal
						case 3:
							w[i] = 3e38
						default:
							w[i] = float32(r.ExpFloat64())
						}
						flat[i] = 2.5
					}
					if n > group {
						g := r.IntN(n / group)
						for i := range w[g*group : g*group+group] {
							w[g*group+i] = 0.75 // a group of equal weights
						}
					}
					nb := (n + block - 1) / block
					muls, scales := make([]float32, nb), make([]float32, nb)
					pow2 := r.IntN(3) == 0 // the kernels of power-of-two scales
					for i := range muls {
						muls[i], scales[i] = edgeMul(r), edgeMul(r)
						if pow2 {
							scales[i] = float32(math.Ldexp(1, r.IntN(9)-4))
							muls[i] = 1 / scales[i]
						}
					}
					ng := (n + group - 1) / group
					wantC, wantM := make([]uint8, n), make([]uint8, ng)
					c.refLUTSelectWeighted(wantC, wantM, x, w, group, block, muls, scales)
					forEachTier(t, func(t *testing.T) {
						gotC, gotM := make([]uint8, n+1)[1:], make([]uint8, ng)
						c.s.SelectWeighted(gotC, gotM, x, w, group, block, muls, scales)
						require.Equal(t, wantM, gotM, "meta: %d tables, %d cells, group %d, block %d, n %d", nt, ncell, group, block, n)
						require.Equal(t, wantC, gotC, "codes: %d tables, %d cells, group %d, block %d, n %d", nt, ncell, group, block, n)
						c.s.SelectWeighted(gotC, gotM, x, flat, group, block, muls, scales)
						plainC, plainM := make([]uint8, n), make([]uint8, ng)
						c.s.Select(plainC, plainM, x, group, block, muls, scales)
						require.Equal(t, plainM, gotM, "equal weights, meta: %d tables, %d cells, group %d, n %d", nt, ncell, group, n)
						require.Equal(t, plainC, gotC, "equal weights, codes: %d tables, %d cells, group %d, n %d", nt, ncell, group, n)
					})
				}
			}
		}
	}
	s := NewLUTSelector([]float32{1}, [][]float32{{0, 1}, {0, 2}}, [][]uint8{{0, 1}, {0, 1}}, []uint8{0, 0}, 2, true)
	require.Panics(t, func() {
		s.SelectWeighted(make([]uint8, 4), make([]uint8, 4), make([]float32, 4), make([]float32, 3), 1, 1, make([]float32, 4), make([]float32, 4))
	})
}

// FuzzLUTSelectWeighted compares SelectWeighted on every tier with the Go
// reference: the first bytes choose the tables (a random case seeded by
// them), the group and the block; the rest are read as floats for the
// multipliers and scales, then values and weights in turn (a weight is the
// magnitude of its float, 1 for a NaN or an infinity).
func FuzzLUTSelectWeighted(f *testing.F) {
	f.Add([]byte{3, 40, 7, 1}, bytesOf(0.5, 1, 2, 3, 0, 1, 2, 4, 0.25, 2, -1.5, 0.3, 7, 1e30))
	f.Add([]byte{1, 13, 1, 0}, bytesOf(float32(math.NaN()), float32(math.Inf(1)), 0, -0.5, 1e-40, 3e38, 2, 0, float32(math.Inf(-1)), 0))
	f.Fuzz(func(t *testing.T, sizes, data []byte) {
		if len(sizes) < 4 {
			return
		}
		nt := []int{1, 2, 3, 4, 8, 16}[int(sizes[0])%6]
		ncell := 1 + int(sizes[1])
		group := 1 + int(sizes[2])%70
		block := group * (1 + int(sizes[3])%4)
		r := rand.New(rand.NewPCG(uint64(sizes[0]), uint64(sizes[1])<<8|uint64(sizes[2])))
		c := newSelCase(r, nt, ncell, []uint8{0, 0x08, 0x80}[int(sizes[3])%3], sizes[3]&4 != 0)
		fl := floatsOf(data)
		n := len(fl) / 4 // then at most n blocks: 2n numbers for them, 2n for the values and weights
		if n == 0 {
			return
		}
		nb := (n + block - 1) / block
		muls, scales, rest := fl[:nb], fl[nb:2*nb], fl[2*nb:]
		x, w := make([]float32, n), make([]float32, n)
		for i := range n {
			x[i] = rest[2*i]
			v := float32(math.Abs(float64(rest[2*i+1])))
			if v != v || math.IsInf(float64(v), 0) {
				v = 1
			}
			w[i] = v
		}
		ng := (n + group - 1) / group
		wantC, wantM := make([]uint8, n), make([]uint8, ng)
		lutSelectWeightedGo(c.s, wantC, wantM, x, w, group, block, muls, scales)
		for _, tr := range tiers() {
			restore := useTier(tr)
			gotC, gotM := make([]uint8, n), make([]uint8, ng)
			c.s.SelectWeighted(gotC, gotM, x, w, group, block, muls, scales)
			restore()
			require.Equal(t, wantM, gotM, "%v meta", tr)
			require.Equal(t, wantC, gotC, "%v codes", tr)
		}
	})
}
