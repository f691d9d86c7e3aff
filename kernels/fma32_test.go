package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fma32Big is x·y + z rounded once to float32 by math/big.
func fma32Big(x, y, z float32) float32 {
	if math.IsNaN(float64(x)) || math.IsNaN(float64(y)) || math.IsNaN(float64(z)) ||
		math.IsInf(float64(x), 0) || math.IsInf(float64(y), 0) || math.IsInf(float64(z), 0) {
		return float32(float64(x)*float64(y) + float64(z))
	}
	p := new(big.Float).SetPrec(200).Mul(big.NewFloat(float64(x)), big.NewFloat(float64(y)))
	s := new(big.Float).SetPrec(200).Add(p, big.NewFloat(float64(z)))
	if s.Sign() == 0 {
		// An exact zero: its sign as IEEE addition gives it in RNE.
		return float32(float64(x)*float64(y) + float64(z))
	}
	f, _ := s.Float32()
	return f
}

// TestFMA32 compares fma32 with an exact rounding by math/big on random
// operands, on sums built to land halfway between two float32 values
// (above, below and on the tie), on subnormal results and near overflow.
func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(101, 102))
	check := func(x, y, z float32) {
		t.Helper()
		got, want := fma32(x, y, z), fma32Big(x, y, z)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("fma32(%g, %g, %g) = %g (%#x), want %g (%#x)", x, y, z, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	randf := func() float32 {
		return float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(60)-30)))
	}
	for range 200000 {
		check(randf(), randf(), randf())
	}
	// Halfway cases: z a float32, x·y = ±(half an ulp of z) ± a tiny part.
	for range 100000 {
		z := float32(1+rng.Float64()) * float32(math.Exp2(float64(rng.IntN(40)-20)))
		if rng.IntN(2) == 0 {
			z = -z
		}
		ulp := math.Nextafter32(abs32(z), float32(math.Inf(1))) - abs32(z)
		x := ulp / 2 * float32(1+rng.IntN(3)) // 0.5, 1 or 1.5 ulp
		y := float32(1)
		switch rng.IntN(3) {
		case 0:
			y = 1 + float32(math.Exp2(-23)) // a little above
		case 1:
			y = 1 - float32(math.Exp2(-24)) // a little below
		}
		if rng.IntN(2) == 0 {
			x = -x
		}
		check(x, y, z)
		check(y, x, z)
	}
	// Double-rounding cases: x·y within a float64 rounding of half an ulp
	// of z, so that the float64 sum is the float32 midpoint itself.
	ties := 0
	for ties < 2000 {
		z := float32(1+rng.Float64()) * float32(math.Exp2(float64(rng.IntN(40)-20)))
		ulp := math.Nextafter32(z, float32(math.Inf(1))) - z
		h := float64(ulp) / 2
		x := float32(1 + rng.Float64())
		y := float32(h / float64(x))
		d := float64(x)*float64(y) - h
		if d == 0 || math.Abs(d) > h*math.Exp2(-29) {
			continue
		}
		ties++
		check(x, y, z)
		check(-x, y, -z)
	}
	// Subnormal and zero results, overflow.
	tiny := float32(math.Exp2(-140))
	for range 20000 {
		check(tiny*float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())*tiny)
	}
	big := float32(math.MaxFloat32)
	for _, c := range [][3]float32{
		{big, 1, big}, {big, -1, -big}, {big, 1.0000001, 0}, {2, 0, 0}, {-2, 0, 0}, {2, float32(math.Copysign(0, -1)), 0},
		{-2, 0, float32(math.Copysign(0, -1))}, {1, float32(math.Copysign(0, -1)), float32(math.Copysign(0, -1))},
		{big, 2, -big}, {float32(math.Exp2(64)), float32(math.Exp2(64)) * 0.99999994, big},
	} {
		check(c[0], c[1], c[2])
	}
}
