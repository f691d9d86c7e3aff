package kernels

import "math/bits"

// Rounding selects how a value that falls between two representable neighbours is
// rounded. The numeric values are stable and shared with the dtype package.
type Rounding uint8

const (
	// RoundEven rounds to the nearest value, ties to the one with an even last digit.
	RoundEven Rounding = iota
	// RoundAway rounds to the nearest value, ties away from zero.
	RoundAway
	// RoundZero rounds to the nearest value, ties toward zero.
	RoundZero
	// RoundStochastic rounds up with probability equal to the fractional distance to
	// the lower neighbour, using 32 random bits per element drawn from [Rand32].
	RoundStochastic
)

// roundShift returns v / 2^s rounded to an integer by mode, for s >= 1. r holds the
// 32 random bits used by RoundStochastic: the quotient is rounded up when r is below
// the fractional part truncated to 32 bits, so the probability of rounding up is
// that fraction to within 2^-32. Rounding acts on a magnitude; callers put the sign
// back, which makes every mode symmetric about zero.
func roundShift(v uint64, s uint, mode Rounding, r uint32) uint64 {
	if s > 62 {
		// v < 2^25 here (callers pass float32 significands), far below half.
		if mode == RoundStochastic && s < 32+64 {
			return b2u(r < frac32(v, s))
		}
		return 0
	}
	q := v >> s
	rem := v & (1<<s - 1)
	half := uint64(1) << (s - 1)
	var up bool
	switch mode {
	case RoundEven:
		up = rem > half || (rem == half && q&1 == 1)
	case RoundAway:
		up = rem >= half
	case RoundZero:
		up = rem > half
	case RoundStochastic:
		up = r < frac32(rem, s)
	}
	if up {
		q++
	}
	return q
}

// frac32 returns floor(rem / 2^s * 2^32) for rem < 2^s.
func frac32(rem uint64, s uint) uint32 {
	if s <= 32 {
		return uint32(rem << (32 - s))
	}
	if s-32 >= 64 {
		return 0
	}
	return uint32(rem >> (s - 32))
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Rand32 returns 32 random bits for element i of a stochastic rounding stream with
// the given seed. It is a pure function of (seed, i) (a SplitMix64 step), so results
// do not depend on how a slice is split between goroutines or calls.
func Rand32(seed, i uint64) uint32 {
	z := seed + (i+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return uint32((z ^ (z >> 31)) >> 32)
}

// RandFor returns the random bits element i needs under mode: Rand32(seed, i) for
// RoundStochastic, and 0 (unused) for the deterministic modes.
func RandFor(mode Rounding, seed, i uint64) uint32 {
	if mode != RoundStochastic {
		return 0
	}
	return Rand32(seed, i)
}

// splitFloat32 writes the magnitude of a finite, non-zero float32 given by its bits
// (sign already cleared) as sig·2^e2 with sig < 2^24, and returns floor(log2 |x|).
func splitFloat32(abs uint32) (sig uint32, e2, lg int) {
	if be := abs >> 23; be != 0 {
		sig = abs&0x7fffff | 0x800000
		e2 = int(be) - 150
		return sig, e2, e2 + 23
	}
	sig = abs
	e2 = -149
	return sig, e2, e2 + bits.Len32(sig) - 1
}
