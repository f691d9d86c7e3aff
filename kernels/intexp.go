package kernels

import "math"

// IntCodec describes a K-bit integer format whose code n means n·2^-FracBits:
// plain integers have FracBits 0, and fixed-point formats such as the OCP MXINT8
// element (code/64) have FracBits > 0. Signed codes are two's complement in the
// low Bits bits.
type IntCodec struct {
	Bits     uint
	FracBits uint
	Signed   bool
	Min, Max int64 // the range Encode clamps to (Min = -Max for symmetric signed formats)
}

// Encode converts x to a code: the magnitude |x|·2^FracBits is rounded by mode (with
// the random bits r for RoundStochastic), the sign put back, and the result clamped
// to [Min, Max]. NaN becomes 0 and ±Inf the nearest end of the range.
func (c *IntCodec) Encode(x float32, mode Rounding, r uint32) uint32 {
	b := math.Float32bits(x)
	abs := b & 0x7fffffff
	neg := b>>31 != 0
	var v int64
	switch {
	case abs > 0x7f800000:
		v = 0
	case abs == 0x7f800000:
		v = c.Max
		if neg {
			v = c.Min
		}
	case abs == 0:
		v = 0
	default:
		sig, e2, lg := splitFloat32(abs)
		if lg+int(c.FracBits) > 40 {
			v = 1 << 41 // far beyond any 16-bit range; clamped below
		} else if sh := -(e2 + int(c.FracBits)); sh <= 0 {
			v = int64(sig) << uint(-sh)
		} else {
			v = int64(roundShift(uint64(sig), uint(sh), mode, r))
		}
		if neg {
			v = -v
		}
	}
	v = min(max(v, c.Min), c.Max)
	return uint32(v) & (1<<c.Bits - 1)
}

// Decode returns the value of code as a float32; bits above Bits are ignored.
func (c *IntCodec) Decode(code uint32) float32 {
	code &= 1<<c.Bits - 1
	v := int64(code)
	if c.Signed && code>>(c.Bits-1) != 0 {
		v -= 1 << c.Bits
	}
	return float32(math.Ldexp(float64(v), -int(c.FracBits)))
}

// ExpCodec describes an unsigned power-of-two format such as E8M0: code k < NaNCode
// means 2^(k-Bias), and NaNCode (all ones) is NaN. There is no zero and no sign.
type ExpCodec struct {
	Bias    int
	MaxCode uint32 // largest finite code, NaNCode - 1
	NaNCode uint32
}

// Encode converts x to the nearest power of two in the linear domain. A tie (a
// significand of exactly 1.5) goes up under RoundEven (the kept digit is the
// implicit leading 1, which is odd) and RoundAway, and down under RoundZero;
// RoundStochastic goes up with probability significand-1. Positive values below
// the smallest power give code 0. NaN and negative values give NaNCode; ±0 gives 0
// and +Inf or values above the largest power give MaxCode when saturating, NaNCode
// otherwise.
func (c *ExpCodec) Encode(x float32, mode Rounding, saturate bool, r uint32) uint32 {
	b := math.Float32bits(x)
	abs := b & 0x7fffffff
	switch {
	case abs > 0x7f800000:
		return c.NaNCode
	case abs == 0:
		if saturate {
			return 0
		}
		return c.NaNCode
	case b>>31 != 0:
		return c.NaNCode
	case abs == 0x7f800000:
		if saturate {
			return c.MaxCode
		}
		return c.NaNCode
	}
	sig, _, lg := splitFloat32(abs)
	// Normalise the significand to 1.xxx with 23 fraction bits.
	for sig < 1<<23 {
		sig <<= 1
	}
	k := int64(lg) + int64(roundShift(uint64(sig), 23, mode, r)) - 1 + int64(c.Bias)
	switch {
	case k < 0:
		return 0
	case k > int64(c.MaxCode):
		if saturate {
			return c.MaxCode
		}
		return c.NaNCode
	}
	return uint32(k)
}

// Decode returns 2^(code-Bias), or NaN for NaNCode. Bits above the format are ignored.
func (c *ExpCodec) Decode(code uint32) float32 {
	code &= c.NaNCode
	if code == c.NaNCode {
		return float32(math.NaN())
	}
	return float32(math.Ldexp(1, int(code)-c.Bias))
}
