package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nmPatterns lists every pattern SelectNM accepts.
func nmPatterns() [][2]int {
	var ps [][2]int
	for m := 2; m <= 16; m *= 2 {
		for n := 1; n < m; n++ {
			ps = append(ps, [2]int{n, m})
		}
	}
	return ps
}

// sortSelectNM is an independent reference of SelectNM: a stable sort of each
// group's indices by descending magnitude key (|x| as an ordered integer, NaN
// above +Inf), keeping the first n; the stable sort keeps equal keys in index
// order, so the lower index wins a tie.
func sortSelectNM(src []float32, n, m int) []bool {
	keep := make([]bool, len(src))
	for g := 0; g < len(src); g += m {
		idx := []int{}
		for i := range m {
			idx = append(idx, g+i)
		}
		mag := func(i int) uint32 { return math.Float32bits(src[i]) & 0x7fffffff }
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case mag(a) > mag(b):
				return -1
			case mag(a) < mag(b):
				return 1
			}
			return 0
		})
		for _, i := range idx[:n] {
			keep[i] = true
		}
	}
	return keep
}

func unpackBools(src []byte, n int) []bool {
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = src[i>>3]>>(i&7)&1 != 0
	}
	return keep
}

// TestSelectNMHandDerived checks 2:4 and 4:8 selections worked out by hand.
func TestSelectNMHandDerived(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		name string
		n, m int
		src  []float32
		want []byte
	}{
		// Group 0: |−0.9| and 0.5 are the two largest → bits 1,2 → 0b0110;
		// group 1: 3 and |−4| → bits 0,1 → 0b0011. Byte = 0x36.
		{"G11 keep 2 of 4", 2, 4, []float32{0.1, -0.9, 0.5, 0.2, 3, -4, 0, 1}, []byte{0x36}},
		// keep 1: −0.9 (bit 1), −4 (bit 1 of group 1 = bit 5) → 0b0010_0010.
		{"G11 keep 1 of 4", 1, 4, []float32{0.1, -0.9, 0.5, 0.2, 3, -4, 0, 1}, []byte{0x22}},
		// All equal: the two lowest indices win: 0b0011 in both groups.
		{"ties", 2, 4, []float32{1, -1, 1, -1, 0, 0, 0, 0}, []byte{0x33}},
		// −0 and +0 have the same magnitude; 5 wins, then the lower zero.
		{"zeros", 2, 4, []float32{float32(math.Copysign(0, -1)), 0, 5, 0}, []byte{0x05}},
		// NaN outranks +Inf, which outranks 7.
		{"nan inf", 2, 4, []float32{7, inf, 1, nan}, []byte{0x0a}},
		// 4:8: magnitudes 8 2 7 1 6 3 5 4 → keep 8,7,6,5 at 0,2,4,6 → 0x55.
		{"4:8", 4, 8, []float32{8, -2, 7, 1, -6, 3, 5, -4}, []byte{0x55}},
		// 4:8 with a tie at the cut: 9 9 1 1 | 2 2 2 2 → keep 0,1 and the
		// lower two of the 2s (4,5) → 0b0011_0011 = 0x33.
		{"4:8 tie", 4, 8, []float32{9, 9, 1, 1, 2, -2, 2, -2}, []byte{0x33}},
		// 1:2, pairs at bit offsets 0, 2, 4, 6: (1,2) keeps its second
		// (0b10), (3,−3) its first (tie, 0b01), (0,−5) its second, (6,5)
		// its first: 0b01_10_01_10 = 0x66.
		{"1:2", 1, 2, []float32{1, 2, 3, -3, 0, -5, 6, 5}, []byte{0x66}},
		// 8:16: keep the eight largest of 16..1 placed in reverse: elements
		// 0..7 hold 16..9 → low byte 0xff, high byte 0x00.
		{"8:16", 8, 16, []float32{16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, []byte{0xff, 0x00}},
		// 2:4, three groups (a partial last byte): group 2 = 0 0 −1 1 → bits 2,3.
		{"odd groups", 2, 4, []float32{4, 3, 2, 1, 1, 2, 3, 4, 0, 0, -1, 1}, []byte{0xc3, 0x0c}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := make([]byte, len(c.want))
			SelectNM(got, c.src, c.n, c.m)
			assert.Equal(t, c.want, got)
			assert.Equal(t, -1, FirstBadGroupNM(got, len(c.src), c.n, c.m))
		})
	}
}

// TestSelectNMReference compares every pattern with the sort-based reference
// on random data with many ties, and checks the two properties of a selection:
// every group keeps exactly n, and every kept magnitude is at least every
// dropped one of its group.
func TestSelectNMReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range nmPatterns() {
		n, m := p[0], p[1]
		for _, groups := range []int{0, 1, 2, 3, 7, 64, 129} {
			src := make([]float32, groups*m)
			for i := range src {
				switch r.IntN(10) {
				case 0:
					src[i] = 0
				case 1:
					src[i] = float32(math.Copysign(0, -1))
				case 2:
					src[i] = float32(math.NaN())
				case 3:
					src[i] = float32(math.Inf(r.IntN(2)*2 - 1))
				default:
					src[i] = float32(r.IntN(7) - 3) // small integers: many ties
				}
			}
			got := make([]byte, PackedLen(len(src), 1)+1)
			got[len(got)-1] = 0xAB // beyond the mask: must stay untouched
			SelectNM(got[:len(got)-1], src, n, m)
			require.Equal(t, byte(0xAB), got[len(got)-1])
			keep := unpackBools(got, len(src))
			require.Equal(t, sortSelectNM(src, n, m), keep, "%d:%d, %d groups", n, m, groups)
			if r := len(src) % 8; r != 0 {
				require.Zero(t, got[len(got)-2]>>r, "padding bits")
			}
			require.Equal(t, -1, FirstBadGroupNM(got, len(src), n, m))
			for g := 0; g < len(src); g += m {
				var minKept, maxDropped uint32 = math.MaxUint32, 0
				for i := g; i < g+m; i++ {
					k := math.Float32bits(src[i]) & 0x7fffffff
					if keep[i] {
						minKept = min(minKept, k)
					} else {
						maxDropped = max(maxDropped, k)
					}
				}
				require.GreaterOrEqual(t, minKept, maxDropped)
			}
		}
	}
}

// TestFirstBadGroupNM finds the first group that keeps too many or too few.
func TestFirstBadGroupNM(t *testing.T) {
	// 2:4 groups: 0b0011 ok, 0b0111 bad (3) → group 1.
	assert.Equal(t, 1, FirstBadGroupNM([]byte{0x73}, 8, 2, 4))
	assert.Equal(t, 0, FirstBadGroupNM([]byte{0x01}, 4, 2, 4))
	assert.Equal(t, -1, FirstBadGroupNM([]byte{0x00}, 0, 2, 4))
	// 8:16 over two bytes: 0x0f,0xf0 keeps 8; 0xff,0x01 keeps 9.
	assert.Equal(t, -1, FirstBadGroupNM([]byte{0x0f, 0xf0}, 16, 8, 16))
	assert.Equal(t, 1, FirstBadGroupNM([]byte{0x0f, 0xf0, 0xff, 0x01}, 32, 8, 16))
	// 1:2: pairs 01 10 11 → group 2.
	assert.Equal(t, 2, FirstBadGroupNM([]byte{0x39}, 6, 1, 2))
}

func TestSelectNMPanics(t *testing.T) {
	for _, p := range [][2]int{{0, 4}, {4, 4}, {1, 3}, {2, 32}, {1, 1}, {-1, 2}} {
		assert.Panics(t, func() { SelectNM(make([]byte, 4), make([]float32, 32), p[0], p[1]) }, "%v", p)
	}
	assert.Panics(t, func() { SelectNM(make([]byte, 4), make([]float32, 6), 2, 4) })
	assert.Panics(t, func() { SelectNM(make([]byte, 0), make([]float32, 8), 2, 4) })
	assert.Panics(t, func() { FirstBadGroupNM(make([]byte, 1), 6, 2, 4) })
}

// FuzzSelectNM checks the selection of every tier against the sort-based
// reference on any bytes read as floats, for the pattern the first two bytes
// choose.
func FuzzSelectNM(f *testing.F) {
	f.Add(byte(1), byte(1), []byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 128, 191, 0, 0, 192, 127})
	f.Add(byte(3), byte(2), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32})
	ps := nmPatterns()
	f.Fuzz(func(t *testing.T, a, b byte, data []byte) {
		p := ps[(int(a)<<8|int(b))%len(ps)]
		n, m := p[0], p[1]
		src := make([]float32, len(data)/4/m*m)
		for i := range src {
			src[i] = math.Float32frombits(uint32(data[4*i]) | uint32(data[4*i+1])<<8 | uint32(data[4*i+2])<<16 | uint32(data[4*i+3])<<24)
		}
		want := sortSelectNM(src, n, m)
		for _, tr := range tiers() {
			restore := useTier(tr)
			got := make([]byte, PackedLen(len(src), 1))
			SelectNM(got, src, n, m)
			restore()
			if !slices.Equal(want, unpackBools(got, len(src))) {
				t.Fatalf("%v %d:%d: selection differs from the reference for %v", tr, n, m, src)
			}
			if g := FirstBadGroupNM(got, len(src), n, m); g != -1 {
				t.Fatalf("%v %d:%d: group %d does not keep %d", tr, n, m, g, n)
			}
		}
	})
}

// nmInput returns n floats with many ties: small integers of either sign,
// zeros of both signs, NaNs with payloads, infinities, subnormals and any
// bits.
func nmInput(r *rand.Rand, n int) []float32 {
	src := make([]float32, n)
	for i := range src {
		if r.IntN(3) == 0 {
			src[i] = float32(r.IntN(5) - 2)
		} else {
			src[i] = math.Float32frombits(edgeBits(r))
		}
	}
	return src
}

// TestSelectNMTiers compares every tier with the sort-based reference for
// every pattern, at every whole number of groups up to three runs of 32
// floats and a bit, and long inputs, at odd addresses.
func TestSelectNMTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, p := range nmPatterns() {
		n, m := p[0], p[1]
		var lengths []int
		for l := 0; l <= 3*32+16; l += m {
			lengths = append(lengths, l)
		}
		lengths = append(lengths, 4096, 4096+m, 100*32+3*m)
		for _, l := range lengths {
			src := nmInput(r, l+1)[1:]
			want := sortSelectNM(src, n, m)
			forEachTier(t, func(t *testing.T) {
				got := make([]byte, PackedLen(l, 1)+2)[1:]
				got[len(got)-1] = 0xAB
				SelectNM(got[:len(got)-1], src, n, m)
				require.Equal(t, want, unpackBools(got, l), "%d:%d, %d floats", n, m, l)
				require.Equal(t, byte(0xAB), got[len(got)-1])
				if k := l % 8; k != 0 {
					require.Zero(t, got[len(got)-2]>>k, "padding bits")
				}
			})
		}
	}
}
