package kernels

import (
	"math"
)

// NaNRule says which codes of a float format are NaN.
type NaNRule uint8

const (
	// NaNNone: the format has no NaN (OCP FP6/FP4, "finite" formats).
	NaNNone NaNRule = iota
	// NaNIEEE: the all-ones exponent with a non-zero mantissa is NaN (IEEE 754).
	NaNIEEE
	// NaNAllOnes: only the all-ones magnitude is NaN, with either sign (e4m3fn, "fn").
	NaNAllOnes
	// NaNNegZero: the single code "minus zero" (sign bit alone) is NaN (fnuz, inuz).
	NaNNegZero
)

// FloatCodec describes a binary floating-point format with E exponent bits and M
// mantissa bits, sign-magnitude, and converts float32 values to its codes and back.
//
// A magnitude code c = E<<M | F means 2^(Emin-M)·F when E = 0 (subnormal) and
// 2^(Emin+E-1-M)·(2^M + F) otherwise. The sign, when the format has one, is SignBit.
// Every value of the format must be exactly representable as a float32; the dtype
// package guarantees that when it builds a codec.
type FloatCodec struct {
	ManBits uint   // M, mantissa (trailing significand) bits
	ExpBits uint   // E, exponent bits
	Emin    int    // exponent of the smallest normal: 1 - bias
	SignBit uint32 // the sign bit of a code; 0 for unsigned formats
	MagMask uint32 // the magnitude bits of a code, 2^(E+M) - 1
	MaxMag  uint32 // magnitude code of the largest finite value
	NegZero bool   // the format has a distinct -0 code (SignBit alone)
	HasInf  bool   // InfMag (with either sign) is infinity
	InfMag  uint32 // magnitude code of infinity when HasInf
	NaN     NaNRule
	// NaNPos and NaNNeg are the codes written for a NaN input with a clear or set
	// sign bit. For NaNIEEE formats the top M-1 payload bits of the input are OR'ed
	// in below the quiet bit, as hardware conversions do.
	NaNPos, NaNNeg uint32
}

// Encode converts x to a code of the format.
//
// The value is rounded on an unbounded exponent range with quantum
// 2^(max(floor(log2|x|), Emin) - M), using mode and, for RoundStochastic, the random
// bits r. Results beyond the largest finite value, and infinite inputs, become
// ±max finite when saturate is true; otherwise ±Inf where the format has it, else
// NaN where it has it, else ±max. Values that round to zero keep their sign where
// the format has -0. Negative values in an unsigned format become 0 when saturating
// and NaN (or 0 if there is none) otherwise.
func (f *FloatCodec) Encode(x float32, mode Rounding, saturate bool, r uint32) uint32 {
	b := math.Float32bits(x)
	abs := b & 0x7fffffff
	neg := b>>31 != 0
	var s uint32
	if neg {
		s = f.SignBit
	}
	if abs >= 0x7f800000 {
		if abs > 0x7f800000 {
			return f.nanCode(neg, abs)
		}
		return f.overflow(s, neg, saturate)
	}
	if abs == 0 {
		return f.zero(s)
	}
	if neg && f.SignBit == 0 {
		if saturate || f.NaN == NaNNone {
			return 0
		}
		return f.NaNPos
	}
	sig, e2, e := splitFloat32(abs)
	if e < f.Emin {
		e = f.Emin
	}
	sh := e - int(f.ManBits) - e2
	var n uint64
	if sh <= 0 {
		n = uint64(sig) << uint(-sh)
	} else {
		n = roundShift(uint64(sig), uint(sh), mode, r)
	}
	if n == 0 {
		return f.zero(s)
	}
	// With a carry (n = 2^(M+1)) this lands on the next binade's first code, and
	// for e = Emin it covers subnormals and the smallest normals alike.
	mag := uint64(e-f.Emin)<<f.ManBits + n
	if mag > uint64(f.MaxMag) {
		return f.overflow(s, neg, saturate)
	}
	return s | uint32(mag)
}

func (f *FloatCodec) zero(s uint32) uint32 {
	if f.NegZero {
		return s
	}
	return 0
}

func (f *FloatCodec) overflow(s uint32, neg, saturate bool) uint32 {
	switch {
	case saturate:
	case f.HasInf:
		return s | f.InfMag
	case f.NaN != NaNNone:
		if neg && f.SignBit != 0 {
			return f.NaNNeg
		}
		return f.NaNPos
	}
	return s | f.MaxMag
}

func (f *FloatCodec) nanCode(neg bool, abs uint32) uint32 {
	c := f.NaNPos
	if neg {
		c = f.NaNNeg
	}
	if f.NaN == NaNIEEE && f.ManBits > 1 {
		c |= (abs & 0x7fffff) >> (23 - f.ManBits) & (1<<(f.ManBits-1) - 1)
	}
	return c
}

// IsNaN reports whether code is a NaN of the format.
func (f *FloatCodec) IsNaN(code uint32) bool {
	mag := code & f.MagMask
	switch f.NaN {
	case NaNIEEE:
		return mag>>f.ManBits == 1<<f.ExpBits-1 && mag&(1<<f.ManBits-1) != 0
	case NaNAllOnes:
		return mag == f.MagMask
	case NaNNegZero:
		return code&(f.SignBit|f.MagMask) == f.SignBit
	}
	return false
}

// Decode returns the float32 value of code. Bits above the sign bit (or, for an
// unsigned format, above the magnitude) are ignored. A NaN code decodes to a quiet
// float32 NaN; for NaNIEEE formats its sign and payload are carried over, as IEEE
// conversions between binary formats do.
func (f *FloatCodec) Decode(code uint32) float32 {
	mag := code & f.MagMask
	var sign uint32
	if code&f.SignBit != 0 {
		sign = 1 << 31
	}
	if f.IsNaN(code) {
		switch f.NaN {
		case NaNIEEE:
			return math.Float32frombits(sign | 0x7fc00000 | (mag&(1<<f.ManBits-1))<<(23-f.ManBits))
		case NaNAllOnes:
			return math.Float32frombits(sign | 0x7fc00000)
		}
		return math.Float32frombits(0x7fc00000)
	}
	if f.HasInf && mag == f.InfMag {
		return math.Float32frombits(sign | 0x7f800000)
	}
	e := int(mag >> f.ManBits)
	frac := mag & (1<<f.ManBits - 1)
	var v float64
	if e == 0 {
		v = math.Ldexp(float64(frac), f.Emin-int(f.ManBits))
	} else {
		v = math.Ldexp(float64(frac|1<<f.ManBits), f.Emin+e-1-int(f.ManBits))
	}
	return math.Float32frombits(math.Float32bits(float32(v)) | sign)
}
