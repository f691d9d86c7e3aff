package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaskHandDerived checks the bit order and polarity by hand: element
// 8k+i is bit i of byte k, true (keep) is a set bit.
func TestMaskHandDerived(t *testing.T) {
	keep := []bool{true, false, true, true, false, false, false, false, true}
	forEachTier(t, func(t *testing.T) {
		got := make([]byte, 2)
		PackMask(got, keep)
		assert.Equal(t, []byte{0x0d, 0x01}, got)
		back := make([]bool, len(keep))
		UnpackMask(back, got)
		assert.Equal(t, keep, back)
		assert.Equal(t, 4, CountMask(got, len(keep)))
		assert.Equal(t, 3, CountMask(got, 8))
		src := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
		sel := make([]float32, 4)
		require.Equal(t, 4, SelectMasked(sel, src, got))
		assert.Equal(t, []float32{1, 3, 4, 9}, sel)
		exp := make([]float32, len(src))
		require.Equal(t, 4, ExpandMasked(exp, sel, got))
		assert.Equal(t, []float32{1, 0, 3, 4, 0, 0, 0, 0, 9}, exp)
	})
}

// TestMaskTiers compares every tier's mask kernels with the Go references
// at every length up to 300 and a long one, at odd addresses, with masks
// that are dense, sparse, empty and full.
func TestMaskTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	lengths := []int{}
	for n := 0; n <= 300; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 4099, 65536+13)
	for _, n := range lengths {
		density := []int{0, 1, 2, 4}[r.IntN(4)] // keep one in density (0: none), or all when 1
		keepBytes := make([]byte, n+1)[1:]
		for i := range keepBytes {
			switch {
			case density == 1:
				keepBytes[i] = 1
			case density > 1 && r.IntN(density) == 0:
				keepBytes[i] = 1
			}
			if r.IntN(50) == 0 {
				keepBytes[i] = byte(r.Uint32()) // PackBits takes the low bit of any byte
			}
		}
		packed := make([]byte, PackedLen(n, 1))
		packMaskGo(packed, keepBytes)
		un := make([]byte, n)
		unpackMaskGo(un, packed)
		src := make([]float32, n+1)[1:]
		for i := range src {
			src[i] = math.Float32frombits(edgeBits(r))
		}
		cnt := 0
		for _, b := range un {
			cnt += int(b)
		}
		wantSel := make([]float32, cnt)
		selectMaskedGo(wantSel, src, packed)
		wantExp := make([]float32, n)
		expandMaskedGo(wantExp, wantSel, packed)
		forEachTier(t, func(t *testing.T) {
			got := make([]byte, len(packed)+1)[1:]
			PackBits(got, keepBytes, 1)
			require.Equal(t, packed, got, "pack %d", n)
			back := make([]byte, n+1)[1:]
			UnpackBits(back, packed, 1)
			require.Equal(t, un, back, "unpack %d", n)
			require.Equal(t, cnt, CountMask(packed, n), "count %d", n)
			sel := make([]float32, cnt)
			require.Equal(t, cnt, SelectMasked(sel, src, packed))
			requireSame(t, floatBits(wantSel), floatBits(sel), "select %d", n)
			exp := make([]float32, n)
			for i := range exp {
				exp[i] = 1 // overwritten
			}
			require.Equal(t, cnt, ExpandMasked(exp, sel, packed))
			requireSame(t, floatBits(wantExp), floatBits(exp), "expand %d", n)
		})
	}
}

func TestMaskPanics(t *testing.T) {
	mask := []byte{0xff}
	assert.Panics(t, func() { SelectMasked(make([]float32, 7), make([]float32, 8), mask) })
	assert.Panics(t, func() { ExpandMasked(make([]float32, 8), make([]float32, 7), mask) })
	assert.Panics(t, func() { CountMask(mask, 9) })
	assert.Panics(t, func() { PackMask(nil, make([]bool, 1)) })
	assert.NotPanics(t, func() { PackMask(nil, nil) })
}

// FuzzMask compares every tier's mask kernels with the Go references on
// the fuzzer's bytes, as a byte mask (low bits) and as a packed mask.
func FuzzMask(f *testing.F) {
	f.Add([]byte{1, 0, 1, 1, 0, 0, 0, 0, 1, 0xfe, 0xff})
	f.Add(make([]byte, 130))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data)
		packed := make([]byte, PackedLen(n, 1))
		packMaskGo(packed, data)
		raw := make([]byte, PackedLen(n, 1))
		copy(raw, data)
		un := make([]byte, n)
		unpackMaskGo(un, raw)
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(i)
		}
		cnt := popCountGo(packed)
		wantSel := make([]float32, cnt)
		selectMaskedGo(wantSel, src, packed)
		wantExp := make([]float32, n)
		expandMaskedGo(wantExp, wantSel, packed)
		for _, tr := range tiers() {
			restore := useTier(tr)
			got := make([]byte, len(packed))
			PackBits(got, data, 1)
			back := make([]byte, n)
			UnpackBits(back, raw, 1)
			c := CountMask(packed, n)
			sel := make([]float32, cnt)
			s := SelectMasked(sel, src, packed)
			exp := make([]float32, n)
			e := ExpandMasked(exp, sel, packed)
			restore()
			if string(got) != string(packed) || string(back) != string(un) || c != cnt || s != cnt || e != cnt {
				t.Fatalf("%v: pack % x (want % x), unpack % x (want % x), count %d select %d expand %d (want %d)",
					tr, got, packed, back, un, c, s, e, cnt)
			}
			requireSame(t, floatBits(wantSel), floatBits(sel), "%v select", tr)
			requireSame(t, floatBits(wantExp), floatBits(exp), "%v expand", tr)
		}
	})
}
