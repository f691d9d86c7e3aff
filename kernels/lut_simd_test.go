package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The lookup-table kernels of every tier against plain references written
// out from their definitions: encode (blocks of multipliers), selection
// among tables by squared error, and decoding by tables.

// lutCase is an encoder with what refLUTEncode needs.
type lutCase struct {
	bounds  []float32
	codes   []uint8
	signBit uint8
	negZero bool
	nan     uint8
	e       *LUTEncoder
}

func newLUTCase(r *rand.Rand, entries int, signBit uint8, negZero bool) lutCase {
	var bounds []float32
	if signBit != 0 {
		// Magnitude bounds: positive, ascending, sometimes +Inf last.
		x := float32(0)
		for len(bounds) < entries-1 {
			x += float32(r.Float64()*2) + 1e-3
			bounds = append(bounds, x)
		}
		if entries > 1 && r.IntN(4) == 0 {
			bounds[len(bounds)-1] = float32(math.Inf(1))
		}
	} else {
		bounds = randomBounds(r, entries-1)
	}
	codes := make([]uint8, entries)
	for i := range codes {
		codes[i] = uint8(r.IntN(256))
	}
	nan := uint8(r.IntN(256))
	return lutCase{bounds, codes, signBit, negZero, nan, NewLUTEncoder(bounds, codes, signBit, negZero, nan)}
}

// lutInputs returns n values: edge cases, the bounds and their neighbours
// (exact ties), and ordinary values around them.
func lutInputs(r *rand.Rand, bounds []float32, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch k := r.IntN(8); {
		case k < 2:
			x[i] = math.Float32frombits(edgeBits(r))
		case k < 5 && len(bounds) > 0:
			b := bounds[r.IntN(len(bounds))]
			switch r.IntN(3) {
			case 0:
				b = math.Nextafter32(b, float32(math.Inf(-1)))
			case 1:
				b = math.Nextafter32(b, float32(math.Inf(1)))
			}
			if r.IntN(2) == 0 {
				b = -b
			}
			x[i] = b
		default:
			x[i] = float32(r.NormFloat64() * 6)
		}
	}
	return x
}

// edgeMul returns a block multiplier: mostly ordinary, sometimes 1, 0, a
// power of two, negative, huge, NaN or infinite.
func edgeMul(r *rand.Rand) float32 {
	switch r.IntN(16) {
	case 0:
		return 0
	case 1:
		return float32(math.NaN())
	case 2:
		return float32(math.Inf(1 - 2*r.IntN(2)))
	case 3:
		return -float32(r.Float64() * 4)
	case 4:
		return 3e38
	case 5:
		return float32(math.Ldexp(1, r.IntN(20)-10))
	case 6, 7:
		return 1
	}
	return float32(r.Float64()*4 + 0.01)
}

func TestLUTEncodeBlocksTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, entries := range []int{1, 2, 3, 7, 15, 16, 17, 33, 63, 64, 65, 256} {
		for _, signBit := range []uint8{0, 0x08, 0x80} {
			for _, negZero := range []bool{false, true} {
				c := newLUTCase(r, entries, signBit, negZero)
				for _, n := range []int{0, 1, 5, 16, 17, 31, 32, 33, 64, 100, 255, 1000} {
					block := []int{1, 3, 16, 32, 64, n + 1, 7}[r.IntN(7)]
					src := lutInputs(r, c.bounds, n+1)[1:] // unaligned
					muls := make([]float32, (n+block-1)/block)
					for i := range muls {
						muls[i] = edgeMul(r)
					}
					want := make([]uint8, n)
					for i, x := range src {
						want[i] = refLUTEncode(c.bounds, c.codes, signBit, negZero, c.nan, x*muls[i/block])
					}
					forEachTier(t, func(t *testing.T) {
						got := make([]uint8, n+3)[3:]
						c.e.EncodeBlocks(got, src, block, muls)
						require.Equal(t, want, got, "entries %d sign %#x negZero %v n %d block %d", entries, signBit, negZero, n, block)
						if len(muls) > 0 {
							c.e.EncodeScaled(got, src, muls[0])
							for i, x := range src {
								require.Equal(t, refLUTEncode(c.bounds, c.codes, signBit, negZero, c.nan, x*muls[0]), got[i], "scaled %v·%v", x, muls[0])
							}
						}
					})
				}
			}
		}
	}
}

// selCase is a LUTSelector with what refLUTSelect needs.
type selCase struct {
	bounds  []float32
	mags    [][]float32
	codes   [][]uint8
	zero    []uint8
	signBit uint8
	negZero bool
	s       *LUTSelector
}

func newSelCase(r *rand.Rand, nt, ncell int, signBit uint8, negZero bool) selCase {
	c := selCase{signBit: signBit, negZero: negZero}
	x := float32(0)
	for len(c.bounds) < ncell-1 {
		x += float32(r.Float64()) + 1e-3
		c.bounds = append(c.bounds, x)
	}
	if ncell > 1 && r.IntN(5) == 0 {
		c.bounds[len(c.bounds)-1] = float32(math.Inf(1))
	}
	codeMask := uint8(0xff)
	if signBit != 0 {
		codeMask = signBit - 1
	}
	for range nt {
		m := make([]float32, ncell)
		cs := make([]uint8, ncell)
		for i := range m {
			switch r.IntN(10) {
			case 0:
				m[i] = 0
			case 1:
				m[i] = 3e38 // overflows when scaled
			case 2:
				if i > 0 {
					m[i] = m[i-1] // tables that agree: ties between tables
				}
			default:
				m[i] = float32(r.Float64() * float64(ncell))
			}
			cs[i] = uint8(r.IntN(256)) & codeMask
		}
		c.mags = append(c.mags, m)
		c.codes = append(c.codes, cs)
		c.zero = append(c.zero, uint8(r.IntN(256)))
	}
	if nt > 1 && r.IntN(3) == 0 {
		// Two identical tables: the first must win.
		j := 1 + r.IntN(nt-1)
		c.mags[j] = append([]float32(nil), c.mags[0]...)
	}
	c.s = NewLUTSelector(c.bounds, c.mags, c.codes, c.zero, signBit, negZero)
	return c
}

// refLUTSelect is LUTSelector.Select written out from its definition.
func (c selCase) refLUTSelect(codes, meta []uint8, x []float32, group, block int, muls, scales []float32) {
	nt := len(c.mags)
	for g := 0; g*group < len(x); g++ {
		lo, hi := g*group, min(g*group+group, len(x))
		mul, scale := muls[lo/block], scales[lo/block]
		bk, best := 0, 0.0
		for k := range nt {
			e := 0.0
			for _, v := range x[lo:hi] {
				y := v * mul
				cell := refLUTIndex(c.bounds, float32(math.Abs(float64(y))))
				if y != y {
					cell = refLUTIndex(c.bounds, 0) // a NaN falls in the cell of 0
				}
				q := c.mags[k][cell] * scale
				d := float64(q) - math.Abs(float64(v))
				e += float64(d * d)
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

func TestLUTSelectTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, nt := range []int{1, 2, 3, 4, 8, 16, 17} {
		for _, ncell := range []int{1, 2, 13, 16, 17, 40, 64, 65, 128, 129, 200, 256} {
			signBit := []uint8{0, 0x08, 0x80}[r.IntN(3)]
			c := newSelCase(r, nt, ncell, signBit, r.IntN(2) == 0)
			for _, group := range []int{1, 2, 3, 4, 8, 16, 24, 32, 64, 65} {
				block := group * []int{1, 1, 2, 4, 8}[r.IntN(5)]
				for _, n := range []int{0, 1, group - 1, group, group + 1, 3*block + 5, 300} {
					if n < 0 {
						continue
					}
					x := lutInputs(r, c.bounds, n+1)[1:]
					if n > group && r.IntN(2) == 0 {
						g := r.IntN(n / group)
						clear(x[g*group : g*group+group]) // an all-zero group
						if r.IntN(2) == 0 {
							for i := range x[g*group : g*group+group] {
								x[g*group+i] = float32(math.Copysign(0, -1))
							}
						}
					}
					nb := (n + block - 1) / block
					muls, scales := make([]float32, nb), make([]float32, nb)
					for i := range muls {
						muls[i], scales[i] = edgeMul(r), edgeMul(r)
					}
					ng := (n + group - 1) / group
					wantC, wantM := make([]uint8, n), make([]uint8, ng)
					c.refLUTSelect(wantC, wantM, x, group, block, muls, scales)
					forEachTier(t, func(t *testing.T) {
						gotC, gotM := make([]uint8, n+1)[1:], make([]uint8, ng)
						c.s.Select(gotC, gotM, x, group, block, muls, scales)
						require.Equal(t, wantM, gotM, "meta: %d tables, %d cells, group %d, block %d, n %d", nt, ncell, group, block, n)
						require.Equal(t, wantC, gotC, "codes: %d tables, %d cells, group %d, block %d, n %d", nt, ncell, group, block, n)
					})
				}
			}
		}
	}
}

// TestLUTSelectNaNError checks the rule for NaN errors by hand: with one
// table's entry overflowing to +Inf when scaled, an infinite value makes
// that table's error NaN and the others' +Inf; the first table wins,
// whichever it is.
func TestLUTSelectNaNError(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, first := range []float32{1, 3e38} {
		s := NewLUTSelector(nil, [][]float32{{first}, {3e38}, {1}, {2}}, [][]uint8{{1}, {2}, {3}, {4}}, []uint8{9, 9, 9, 9}, 0x80, true)
		forEachTier(t, func(t *testing.T) {
			codes, meta := make([]uint8, 2), make([]uint8, 1)
			s.Select(codes, meta, []float32{inf, 1}, 2, 2, []float32{1}, []float32{4})
			require.Equal(t, []uint8{0}, meta)
			require.Equal(t, []uint8{1, 1}, codes)
		})
	}
}

func TestLUTDecodeTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for _, entries := range []int{1, 2, 16, 32, 64, 256} {
		for _, nt := range []int{1, 2, 4, 8, 16, 64} {
			luts := make([]float32, entries*nt)
			for i := range luts {
				luts[i] = math.Float32frombits(edgeBits(r))
			}
			for _, gb := range [][2]int{{1, 1}, {1, 16}, {2, 16}, {2, 4}, {3, 6}, {4, 32}, {4, 4}, {8, 16}, {8, 8},
				{16, 16}, {16, 64}, {17, 34}, {32, 32}, {32, 64}, {48, 48}, {64, 64}, {100, 200}} {
				group, block := gb[0], gb[1]
				for _, n := range []int{0, 1, 15, 16, 17, group, 3*block + 1, 500} {
					src := make([]uint8, n+1)[1:]
					for i := range src {
						src[i] = uint8(r.IntN(256))
					}
					ng, nb := (n+group-1)/group, (n+block-1)/block
					meta := make([]uint8, ng)
					for i := range meta {
						meta[i] = uint8(r.IntN(256))
					}
					scales := make([]float32, nb)
					for i := range scales {
						scales[i] = edgeMul(r)
					}
					wantG := make([]uint32, n)
					for i, c := range src {
						tb := int(meta[i/group]) % nt
						wantG[i] = math.Float32bits(luts[entries*tb+int(c)%entries] * scales[i/block])
					}
					forEachTier(t, func(t *testing.T) {
						dst := make([]float32, n+2)[2:]
						LUTDecodeGroups(dst, src, meta, group, block, entries, luts, scales)
						requireSame(t, wantG, floatBits(dst), "groups: %d tables of %d, group %d, block %d, n %d", nt, entries, group, block, n)
					})
				}
			}
		}
	}
}

func TestLUTKernelPanics(t *testing.T) {
	e := NewLUTEncoder([]float32{0}, []uint8{0, 1}, 0, false, 0)
	require.Panics(t, func() { e.EncodeBlocks(make([]uint8, 4), make([]float32, 4), 0, []float32{1}) })
	require.Panics(t, func() { e.EncodeBlocks(make([]uint8, 4), make([]float32, 4), 2, []float32{1}) })
	require.Panics(t, func() { e.EncodeBlocks(make([]uint8, 3), make([]float32, 4), 4, []float32{1}) })
	s := NewLUTSelector([]float32{1}, [][]float32{{0, 1}, {0, 2}}, [][]uint8{{0, 1}, {0, 1}}, []uint8{0, 0}, 2, true)
	x := make([]float32, 8)
	one := []float32{1, 1}
	require.Panics(t, func() { s.Select(make([]uint8, 8), make([]uint8, 2), x, 4, 6, one, one) }) // block not a multiple
	require.Panics(t, func() { s.Select(make([]uint8, 8), make([]uint8, 1), x, 4, 8, one, one) })
	require.Panics(t, func() { s.Select(make([]uint8, 8), make([]uint8, 2), x, 4, 4, one[:1], one) })
	require.NotPanics(t, func() { s.Select(make([]uint8, 8), make([]uint8, 2), x, 4, 8, one[:1], one[:1]) })
	require.Panics(t, func() { NewLUTSelector([]float32{1}, [][]float32{{0, 1}}, [][]uint8{{0}}, []uint8{0}, 2, true) })
	require.Panics(t, func() {
		NewLUTSelector([]float32{1}, [][]float32{{0, float32(math.NaN())}}, [][]uint8{{0, 1}}, []uint8{0}, 2, true)
	})
	luts := make([]float32, 48)
	require.Panics(t, func() { LUTDecodeGroups(make([]float32, 4), make([]uint8, 4), []uint8{0}, 4, 4, 16, luts, one) }) // 3 tables
	require.Panics(t, func() { LUTDecodeGroups(make([]float32, 4), make([]uint8, 4), nil, 4, 4, 16, luts[:32], one) })
	require.Panics(t, func() { LUTDecodeGroups(make([]float32, 4), make([]uint8, 4), []uint8{0}, 4, 4, 12, luts, one) }) // 12 entries
	require.Panics(t, func() { LUTDecodeGroups(make([]float32, 4), make([]uint8, 4), []uint8{0}, 4, 4, 32, luts, one) })
}

// TestLUTSelectExactScales runs the selection with blocks whose scales
// scale every entry exactly, which the AVX-512 tier selects through its
// power-of-two kernels (scales that are powers of two, multipliers their
// reciprocals: pow2Exact holds) or its exact-scale kernels (scales of four
// significant bits, as e5m3 has, over entries of few bits: exactScales
// holds), against the reference; then with one block that breaks the
// condition (a scale of many significant bits, a subnormal one, a
// multiplier that is not the reciprocal).
func TestLUTSelectExactScales(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	for _, nt := range []int{2, 4, 8, 16} {
		for _, ncell := range []int{2, 13, 40, 64} {
			c := newSelCase(r, nt, ncell, 0x08, r.IntN(2) == 0)
			for i := range c.mags {
				for j := range c.mags[i] {
					c.mags[i][j] = float32(r.IntN(64)) / 4 // at most six significant bits
				}
			}
			c.s = NewLUTSelector(c.bounds, c.mags, c.codes, c.zero, c.signBit, c.negZero)
			for _, pow2 := range []bool{true, false} {
				for _, group := range []int{1, 3, 4, 8, 16, 32, 64} {
					block := group * []int{1, 2, 4}[r.IntN(3)]
					for _, breaker := range []float32{0, 1.0000001, -1, 0x1p-140} {
						n := 5*block + r.IntN(block)
						x := lutInputs(r, c.bounds, n)
						nb := (n + block - 1) / block
						muls, scales := make([]float32, nb), make([]float32, nb)
						for i := range muls {
							scales[i] = float32(math.Ldexp(1, r.IntN(21)-10))
							if !pow2 {
								scales[i] *= 1 + float32(r.IntN(8))/8
							}
							muls[i] = 1 / scales[i]
						}
						require.Equal(t, pow2, c.s.pow2Exact(muls, scales))
						require.True(t, c.s.exactScales(scales))
						if breaker != 0 {
							b := r.IntN(nb)
							scales[b], muls[b] = breaker, 1/breaker
							if breaker == -1 { // a multiplier that is not the reciprocal
								scales[b], muls[b] = 4, 0.5
							}
							require.False(t, c.s.pow2Exact(muls, scales), "scale %v", breaker)
							require.Equal(t, breaker == -1, c.s.exactScales(scales), "scale %v", breaker)
						}
						ng := (n + group - 1) / group
						wantC, wantM := make([]uint8, n), make([]uint8, ng)
						c.refLUTSelect(wantC, wantM, x, group, block, muls, scales)
						forEachTier(t, func(t *testing.T) {
							gotC, gotM := make([]uint8, n), make([]uint8, ng)
							c.s.Select(gotC, gotM, x, group, block, muls, scales)
							require.Equal(t, wantM, gotM, "meta: %d tables, %d cells, group %d, block %d, pow2 %v", nt, ncell, group, block, pow2)
							require.Equal(t, wantC, gotC, "codes: %d tables, %d cells, group %d, block %d, pow2 %v", nt, ncell, group, block, pow2)
						})
					}
				}
			}
		}
	}
	s := NewLUTSelector(nil, [][]float32{{2}}, [][]uint8{{0}}, []uint8{0}, 1, true)
	require.True(t, s.pow2Exact([]float32{0.5}, []float32{2}))
	require.False(t, s.pow2Exact([]float32{0.25}, []float32{2}), "not the reciprocal")
	require.False(t, s.pow2Exact([]float32{-0.5}, []float32{-2}), "negative")
	require.False(t, s.pow2Exact([]float32{0x1p-127}, []float32{0x1p127}), "2·2^127 overflows")
	require.False(t, s.pow2Exact([]float32{0x1p127}, []float32{0x1p-127}), "a subnormal scale")
	require.True(t, s.exactScales([]float32{3, 0x1.fffffcp+22}), "1 + 23 bits")
	require.False(t, s.exactScales([]float32{0x1.fffffep+22}), "1 + 24 bits (counted, though 2 scales exactly)")
	require.False(t, s.exactScales([]float32{0x1p127}), "2·2^127 overflows")
	three := NewLUTSelector(nil, [][]float32{{3}}, [][]uint8{{0}}, []uint8{0}, 1, true)
	require.True(t, three.exactScales([]float32{0x1.fffff8p+0}), "2 + 22 bits")
	require.False(t, three.exactScales([]float32{0x1.fffffcp+0}), "2 + 23 bits")
}

// TestSigBits checks the significant bits of hand-picked floats.
func TestSigBits(t *testing.T) {
	for _, c := range []struct {
		x    float32
		want int
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0}, {1, 1}, {-1, 1}, {1.5, 2}, {0.75, 2}, {3, 2}, {5, 3},
		{1.375, 4}, {0x1.fffffep+127, 24}, {0x1p-149, 1}, {0x3p-149, 2}, {0x1.8p-130, 2},
	} {
		require.Equal(t, c.want, sigBits(c.x), "%v", c.x)
	}
}

// TestNibblesTiers packs and unpacks codes of width 4 under every tier at
// every length up to three AVX-512 groups and a bit, and long ones, at odd
// addresses: packing keeps the low nibbles (high bits of the codes
// ignored), element 2k in bits 3:0, as the plain loop writes them, and
// unpacking inverts it.
func TestNibblesTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	lengths := testLengths()
	for _, n := range lengths {
		src := make([]uint8, n+1)[1:]
		for i := range src {
			src[i] = uint8(r.Uint32())
		}
		want := make([]byte, PackedLen(n, 4))
		for i, c := range src {
			want[i/2] |= (c & 15) << (4 * (i % 2))
		}
		forEachTier(t, func(t *testing.T) {
			got := make([]byte, len(want)+3)[3:]
			PackBits(got, src, 4)
			require.Equal(t, want, got, "pack %d", n)
			back := make([]uint8, n+5)[5:]
			UnpackBits(back, got, 4)
			for i, c := range src {
				require.Equal(t, c&15, back[i], "unpack %d: element %d", n, i)
			}
		})
	}
}

// FuzzLUTKernels compares every tier's lookup-table kernels with the Go
// references on the fuzzer's bytes: the first bytes choose the sizes (cells,
// tables, group, block), the rest are read as floats for the bounds, the
// entries, the multipliers and scales and the values.
func FuzzLUTKernels(f *testing.F) {
	f.Add([]byte{5, 2, 3, 1, 0x80}, bytesOf(0.5, 1, 2, 3, 0, 1, 2, 4, 0.25, 2, -1.5, 0.3, 7, 1e30))
	f.Add([]byte{40, 15, 7, 3, 1}, bytesOf(float32(math.NaN()), float32(math.Inf(1)), 0, -0.5, 1e-40, 3e38))
	f.Fuzz(func(t *testing.T, sizes, data []byte) {
		if len(sizes) < 5 {
			return
		}
		ncell := 1 + int(sizes[0])
		nt := 1 + int(sizes[1])%17
		group := 1 + int(sizes[2])%70
		block := group * (1 + int(sizes[3])%4)
		signBit := []uint8{0, 0x08, 0x80}[int(sizes[4])%3]
		negZero := sizes[4]&4 != 0
		fl := floatsOf(data)
		next := func() float32 {
			if len(fl) == 0 {
				return 1
			}
			v := fl[0]
			fl = fl[1:]
			return v
		}
		// Ascending finite bounds, then entries, multipliers and scales.
		var bounds []float32
		for len(bounds) < ncell-1 {
			b := float32(math.Abs(float64(next())))
			if b != b || math.IsInf(float64(b), 0) {
				b = 1
			}
			if len(bounds) > 0 && b <= bounds[len(bounds)-1] {
				b = math.Nextafter32(bounds[len(bounds)-1], float32(math.Inf(1)))
				if math.IsInf(float64(b), 0) {
					break
				}
			}
			bounds = append(bounds, b)
		}
		ncell = len(bounds) + 1
		codeMask := uint8(0xff)
		if signBit != 0 {
			codeMask = signBit - 1
		}
		mags, codes, zero := make([][]float32, nt), make([][]uint8, nt), make([]uint8, nt)
		for k := range nt {
			for c := range ncell {
				m := float32(math.Abs(float64(next())))
				if m != m || math.IsInf(float64(m), 0) {
					m = float32(c)
				}
				mags[k] = append(mags[k], m)
				codes[k] = append(codes[k], uint8(k*7+c)&codeMask)
			}
			zero[k] = uint8(k)
		}
		x := fl
		nb := (len(x) + block - 1) / block
		muls, scales := make([]float32, nb), make([]float32, nb)
		for i := range muls {
			muls[i], scales[i] = next(), next()
		}
		x = x[:len(x)-min(len(x), 2*nb)]
		nb = (len(x) + block - 1) / block
		e := NewLUTEncoder(bounds, codes[0], signBit, negZero, zero[0])
		s := NewLUTSelector(bounds, mags, codes, zero, signBit, negZero)
		ng := (len(x) + group - 1) / group
		wantE := make([]uint8, len(x))
		lutEncodeBlocksGo(e, wantE, x, block, muls)
		wantC, wantM := make([]uint8, len(x)), make([]uint8, ng)
		lutSelectGo(s, wantC, wantM, x, group, block, muls, scales)
		entries := 1 << (sizes[4] >> 4 % 9) // 1 to 256 entries a table
		luts := make([]float32, 256*16)
		for i := range luts {
			luts[i] = float32(i) - 100
		}
		ntPow := 1 << (nt % 5) // 1 to 16 tables of 16 entries
		wantD := make([]float32, len(x))
		lutDecodeGroupsGo(wantD, wantC, wantM, group, block, entries, luts[:entries*ntPow], scales)
		packed := make([]byte, PackedLen(len(x), 4))
		packBitsGo(packed, wantC, 4)
		for _, tr := range tiers() {
			restore := useTier(tr)
			gotE := make([]uint8, len(x))
			e.EncodeBlocks(gotE, x, block, muls)
			gotC, gotM := make([]uint8, len(x)), make([]uint8, ng)
			s.Select(gotC, gotM, x, group, block, muls, scales[:nb])
			gotD := make([]float32, len(x))
			LUTDecodeGroups(gotD, wantC, wantM, group, block, entries, luts[:entries*ntPow], scales[:nb])
			gotP := make([]byte, len(packed))
			PackBits(gotP, wantC, 4)
			restore()
			require.Equal(t, wantE, gotE, "%v encode", tr)
			require.Equal(t, wantM, gotM, "%v select meta", tr)
			require.Equal(t, wantC, gotC, "%v select codes", tr)
			requireSame(t, floatBits(wantD), floatBits(gotD), "%v decode", tr)
			require.Equal(t, packed, gotP, "%v pack", tr)
		}
	})
}
