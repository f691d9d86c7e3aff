//go:build amd64 && !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSqErrSymAVX512 compares the assembly's float32 candidate errors (both
// variants) with
// their Go reference bit for bit (NaN with NaN), candidates laid out with
// a stride larger than the groups.
func TestSqErrSymAVX512(t *testing.T) {
	if hwTier < tierAVX512 {
		t.Log("no AVX-512: the Go reference runs")
		return
	}
	r := rand.New(rand.NewPCG(95, 96))
	for iter := range 200 {
		glen := 16 * (1 + r.IntN(12))
		nb := r.IntN(40)
		stride := nb + r.IntN(3)
		qmax := []float32{7, 127}[iter%2]
		src := intSearchInput(r, nb*glen)
		rdiv, dmul := make([]float32, 5*stride), make([]float32, 5*stride)
		for i := range rdiv {
			d := float32(math.Ldexp(1+r.Float64(), r.IntN(40)-30))
			switch r.IntN(10) {
			case 0:
				d = 0
			case 1:
				d = math.Float32frombits(edgeBits(r) &^ (1 << 31))
			}
			rdiv[i], dmul[i] = 1/d, d
			if d == 0 {
				rdiv[i] = 0
			}
		}
		f16 := iter%4 >= 2
		if f16 { // float16 divisors, for sqErrSymF16AVX512
			for i, d := range dmul {
				if d == d {
					d = float16To32(float32ToFloat16(d, true))
				}
				rdiv[i], dmul[i] = 1/d, d
				if d == 0 {
					rdiv[i] = 0
				}
			}
		}
		want, got := make([]float32, 5*stride), make([]float32, 5*stride)
		lanes := make([]float32, 1280)
		sqErrSymLanesGo(want, src, rdiv, dmul, glen, stride, nb, qmax)
		if f16 {
			sqErrSymF16AVX512(got, src, rdiv, dmul, lanes, glen, stride, nb, qmax, r.IntN(1<<20))
		} else {
			sqErrSymAVX512(got, src, rdiv, dmul, lanes, glen, stride, nb, qmax, r.IntN(1<<20))
		}
		for i := range want {
			if !(math.IsNaN(float64(want[i])) && math.IsNaN(float64(got[i]))) {
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "iter %d entry %d: %v, want %v", iter, i, got[i], want[i])
			}
		}
	}
}

// TestSymCandsAVX512 compares the candidate kernels with symCandsGo (codes
// and divisors where the candidate takes part, multipliers and decode
// factors everywhere), on amaxes of every kind: normal, subnormal, zero,
// huge, NaN and Inf bits.
func TestSymCandsAVX512(t *testing.T) {
	if hwTier < tierAVX512 {
		t.Log("no AVX-512: the Go reference runs")
		return
	}
	r := rand.New(rand.NewPCG(97, 98))
	for iter := range 100 {
		f := ScaleFormat(iter % 2)
		qmax := []float32{7, 127}[iter/2%2]
		n := 16 * r.IntN(6)
		stride := n + r.IntN(3)
		amax := make([]uint32, n)
		for j := range amax {
			switch r.IntN(4) {
			case 0:
				amax[j] = edgeBits(r) &^ (1 << 31)
			case 1:
				amax[j] = r.Uint32N(0x7f800000)
			default:
				amax[j] = math.Float32bits(float32(math.Ldexp(1+r.Float64(), r.IntN(60)-40)))
			}
		}
		type out struct {
			codes            []uint32
			cand, rdiv, dmul []float32
		}
		mk := func() out {
			return out{make([]uint32, 5*stride), make([]float32, 5*stride), make([]float32, 5*stride), make([]float32, 5*stride)}
		}
		want, got := mk(), mk()
		symCandsGo(want.codes, want.cand, want.rdiv, want.dmul, amax, stride, qmax, f)
		if f == ScaleFloat16 {
			symCandsF16AVX512(got.codes, got.cand, got.rdiv, got.dmul, amax, stride, qmax)
		} else {
			symCandsF32AVX512(got.codes, got.cand, got.rdiv, got.dmul, amax, stride, qmax)
		}
		for i := range want.rdiv {
			require.Equal(t, math.Float32bits(want.rdiv[i]), math.Float32bits(got.rdiv[i]), "iter %d entry %d rdiv", iter, i)
			require.Equal(t, math.Float32bits(want.dmul[i]), math.Float32bits(got.dmul[i]), "iter %d entry %d dmul", iter, i)
			if want.rdiv[i] != 0 {
				require.Equal(t, want.codes[i], got.codes[i], "iter %d entry %d code", iter, i)
				require.Equal(t, math.Float32bits(want.cand[i]), math.Float32bits(got.cand[i]), "iter %d entry %d cand", iter, i)
			}
		}
	}
}

// TestPickSymAVX512 compares the choice kernels (picks, scale codes and
// divisors stored) with pickSymGo on errors with near ties, equal values, NaN, zero and huge errors and candidates
// left out.
func TestPickSymAVX512(t *testing.T) {
	if hwTier < tierAVX512 {
		t.Log("no AVX-512: the Go reference runs")
		return
	}
	r := rand.New(rand.NewPCG(99, 100))
	lo, hi := marginFactors(searchIntMargin(128, 7))
	for iter := range 200 {
		n := 16 * r.IntN(5)
		stride := n + r.IntN(3)
		errs, rdiv := make([]float32, 5*stride), make([]float32, 5*stride)
		for i := range errs {
			base := float32(math.Ldexp(1, r.IntN(300)-150))
			errs[i] = base * (1 + float32(r.IntN(4))*1e-5)
			switch r.IntN(12) {
			case 0:
				errs[i] = math.Float32frombits(edgeBits(r) &^ (1 << 31))
			case 1:
				errs[i] = 1
			}
			if r.IntN(8) != 0 {
				rdiv[i] = 1
			}
		}
		if iter%2 == 0 { // errors of one magnitude, so most groups pick
			for i := range errs {
				errs[i] = 1 + float32(r.IntN(1000))/100
			}
		}
		codes, cand := make([]uint32, 5*stride), make([]float32, 5*stride)
		for i := range codes {
			codes[i], cand[i] = r.Uint32(), float32(r.NormFloat64())
		}
		f := ScaleFormat(iter / 2 % 2)
		want, got := make([]uint32, n), make([]uint32, n)
		ws, gs := make([]byte, n*f.Bytes()+4), make([]byte, n*f.Bytes()+4)
		wd, gd := make([]float32, n+1), make([]float32, n+1)
		pickSymGo(want, ws, wd, errs, rdiv, cand, codes, stride, lo, hi, f)
		if f == ScaleFloat16 {
			pickSymF16AVX512(got, gs, gd, errs, rdiv, cand, codes, stride, lo, hi)
		} else {
			pickSymF32AVX512(got, gs, gd, errs, rdiv, cand, codes, stride, lo, hi)
		}
		require.Equal(t, want, got, "iter %d", iter)
		require.Equal(t, ws, gs, "iter %d scales", iter)
		require.Equal(t, wd, gd, "iter %d divisors", iter)
	}
}
