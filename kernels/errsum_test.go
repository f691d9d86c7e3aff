package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorSumsByHand checks ErrorSums on values worked out by hand: nine
// elements, so lane 0 takes elements 0 and 8.
func TestErrorSumsByHand(t *testing.T) {
	want := []float32{1, 2, -4, 0.5, 3, -1, 5, 6, 7}
	got := []float32{1, 3, -4, 0, 3, -1, 5, 6, 8.5}
	var sig, noise [ErrorLanes]float64
	sig[2] = 10 // sums accumulate onto what the lanes hold
	m, ok := ErrorSums(&sig, &noise, want, got)
	require.True(t, ok)
	assert.Equal(t, [ErrorLanes]float64{1 + 49, 4, 10 + 16, 0.25, 9, 1, 25, 36}, sig)
	assert.Equal(t, [ErrorLanes]float64{0 + 2.25, 1, 0, 0.25, 0, 0, 0, 0}, noise)
	assert.Equal(t, 1.5, m)

	for _, bad := range [][2]float32{{float32(math.NaN()), 1}, {1, float32(math.Inf(-1))}, {float32(math.Inf(1)), float32(math.Inf(1))}} {
		w := append([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, bad[0])
		g := append([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, bad[1])
		for _, i := range []int{0, 3, 9} { // in an assembly step and in the tail
			w[i], w[9] = w[9], w[i]
			g[i], g[9] = g[9], g[i]
			var s, n [ErrorLanes]float64
			_, ok := ErrorSums(&s, &n, w, g)
			assert.False(t, ok, "%v against %v at %d", bad[0], bad[1], i)
		}
	}
}

// errorInputs returns want and got values for the differential tests: got
// near want (a cast's error) over a wide range of exponents, with −0,
// subnormals, values near float32's largest and, when specials is set, NaNs
// and infinities from edgeFloats.
func errorInputs(r *rand.Rand, n int, specials bool) (want, got []float32) {
	want, got = make([]float32, n), make([]float32, n)
	edge := edgeFloats(r, n)
	for i := range want {
		switch k := r.IntN(20); {
		case specials && k == 0:
			want[i], got[i] = edge[i], float32(r.NormFloat64())
		case specials && k == 1:
			want[i], got[i] = float32(r.NormFloat64()), edge[i]
		case k == 2:
			want[i], got[i] = negZero(), 0
		case k == 3:
			want[i] = math.Float32frombits(r.Uint32N(0x800000))
			got[i] = math.Float32frombits(r.Uint32N(0x800000)) // subnormals
		case k == 4:
			want[i], got[i] = math.MaxFloat32, -math.MaxFloat32
		default:
			want[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(200)-100))
			got[i] = want[i] * float32(1+r.NormFloat64()/8)
		}
	}
	return want, got
}

// checkErrorSums compares ErrorSums of the active tier with the Go reference:
// the same ok and, when ok, the same lanes and max bit for bit.
func checkErrorSums(t *testing.T, want, got []float32, msg string, args ...any) {
	t.Helper()
	var ws, wn, gs, gn [ErrorLanes]float64
	for l := range ErrorLanes {
		ws[l], wn[l] = float64(l)*1.5, float64(l)/3 // lanes that already hold sums
	}
	gs, gn = ws, wn
	wm := errorSumsGo(&ws, &wn, want, got)
	wok := true
	for l := range ErrorLanes {
		wok = wok && !nonFinite64(ws[l]) && !nonFinite64(wn[l])
	}
	gm, gok := ErrorSums(&gs, &gn, want, got)
	require.Equal(t, wok, gok, append([]any{"ok: " + msg}, args...)...)
	if !wok {
		return
	}
	for l := range ErrorLanes {
		if math.Float64bits(ws[l]) != math.Float64bits(gs[l]) || math.Float64bits(wn[l]) != math.Float64bits(gn[l]) {
			t.Fatalf("lane %d: want sig %v noise %v, got %v %v: "+msg, append([]any{l, ws[l], wn[l], gs[l], gn[l]}, args...)...)
		}
	}
	require.Equal(t, math.Float64bits(wm), math.Float64bits(gm), append([]any{"max: " + msg}, args...)...)
}

// TestErrorSumsTiers checks every tier against the Go reference on every
// length up to three vectors and beyond, every offset into a vector, with
// and without NaN and infinities.
func TestErrorSumsTiers(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	forEachTier(t, func(t *testing.T) {
		for _, specials := range []bool{false, true} {
			want, got := errorInputs(r, 4099+16, specials)
			for _, n := range testLengths() {
				off := n % 16
				checkErrorSums(t, want[off:off+n], got[off:off+n], "n=%d specials=%v", n, specials)
			}
		}
		// One NaN or infinity at each position of a vector and of the tail.
		for pos := range 19 {
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
				want, got := errorInputs(r, 19, false)
				want[pos] = bad
				checkErrorSums(t, want, got, "want[%d] = %v", pos, bad)
				want, got = errorInputs(r, 19, false)
				got[pos] = bad
				checkErrorSums(t, want, got, "got[%d] = %v", pos, bad)
			}
		}
	})
}

// FuzzErrorSums compares every tier with the Go reference on arbitrary
// float bits: the first half of data is want, the second got.
func FuzzErrorSums(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0x40})
	f.Add(make([]byte, 8*70))
	f.Add([]byte{0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x3f})
	f.Fuzz(func(t *testing.T, data []byte) {
		v := floatsOf(data)
		want, got := v[:len(v)/2], v[len(v)/2:]
		for _, tr := range tiers() {
			restore := useTier(tr)
			checkErrorSums(t, want, got, "tier %v", tr)
			restore()
		}
	})
}

// BenchmarkErrorSums measures ErrorSums on 64 Ki finite values (an L2-sized
// chunk of a conversion).
func BenchmarkErrorSums(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	want, got := errorInputs(r, 64<<10, false)
	b.SetBytes(int64(4 * len(want)))
	for b.Loop() {
		var s, n [ErrorLanes]float64
		ErrorSums(&s, &n, want, got)
	}
}
