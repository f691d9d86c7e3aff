package dtype

import "github.com/tensorcast-go/tensorcast/kernels"

// floatCodec derives the kernel parameters of a float spec from its special-value rule.
func floatCodec(s spec) kernels.FloatCodec {
	e, m := uint(s.ebits), uint(s.mbits)
	c := kernels.FloatCodec{
		ManBits: m,
		ExpBits: e,
		Emin:    1 - s.bias,
		MagMask: 1<<(e+m) - 1,
	}
	if s.signed {
		c.SignBit = 1 << (e + m)
	}
	allOnes := c.MagMask
	switch s.special {
	case IEEE:
		c.MaxMag = (1<<e-2)<<m | (1<<m - 1)
		c.NegZero = true
		c.HasInf = true
		c.InfMag = (1<<e - 1) << m
		c.NaN = kernels.NaNIEEE
		c.NaNPos = c.InfMag
		if m > 0 {
			c.NaNPos |= 1 << (m - 1)
		}
		c.NaNNeg = c.SignBit | c.NaNPos
	case FN:
		c.MaxMag = allOnes - 1
		c.NegZero = s.signed
		c.NaN = kernels.NaNAllOnes
		c.NaNPos = allOnes
		c.NaNNeg = c.SignBit | allOnes
	case FNUZ:
		c.MaxMag = allOnes
		c.NaN = kernels.NaNNegZero
		c.NaNPos, c.NaNNeg = c.SignBit, c.SignBit
	case INUZ:
		c.MaxMag = allOnes - 1
		c.HasInf = true
		c.InfMag = allOnes
		c.NaN = kernels.NaNNegZero
		c.NaNPos, c.NaNNeg = c.SignBit, c.SignBit
	case Finite:
		c.MaxMag = allOnes
		c.NegZero = true
		c.NaN = kernels.NaNNone
		// ml_dtypes' rule (docs/NUMERICS.md §2): +NaN → the −0 code, −NaN → +0.
		c.NaNPos, c.NaNNeg = c.SignBit, 0
	}
	return c
}

// build makes the Format of a validated spec.
func build(name, note string, s spec) *Format {
	f := &Format{
		name:    name,
		note:    note,
		kind:    s.kind,
		special: s.special,
		ebits:   s.ebits,
		mbits:   s.mbits,
		bias:    s.bias,
		bits:    s.bits,
		signed:  s.signed,
	}
	switch s.kind {
	case Float:
		f.fc = floatCodec(s)
	case Int:
		f.ic = kernels.IntCodec{Bits: uint(s.bits), FracBits: uint(s.mbits), Signed: s.signed}
		if s.signed {
			f.ic.Max = 1<<(s.bits-1) - 1
			f.ic.Min = -f.ic.Max
		} else {
			f.ic.Max = 1<<s.bits - 1
		}
	case Exponent:
		f.xc = kernels.ExpCodec{Bias: s.bias, NaNCode: 1<<s.ebits - 1, MaxCode: 1<<s.ebits - 2}
	}
	return f
}
