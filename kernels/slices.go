package kernels

import "math"

// Code is the set of integer types that hold one code per element.
type Code interface {
	~uint8 | ~uint16 | ~uint32
}

// EncodeFloat encodes src into dst (which must be at least as long) with
// [FloatCodec.Encode]. Element i of a stochastic stream uses Rand32(seed, i).
func EncodeFloat[C Code](f *FloatCodec, dst []C, src []float32, mode Rounding, saturate bool, seed uint64) {
	dst = dst[:len(src)]
	if mode == RoundEven && f.isBFloat16() {
		if d, ok := any(dst).([]uint16); ok && f.hasQuietNaNs() {
			Float32ToBFloat16(d, src, saturate)
			return
		}
		encodeBFloat16RNE(f, dst, src, saturate)
		return
	}
	if mode == RoundEven && f.isFloat16() && f.hasQuietNaNs() {
		if d, ok := any(dst).([]uint16); ok {
			Float32ToFloat16(d, src, saturate)
			return
		}
	}
	if d, ok := any(dst).([]uint8); ok && mode == RoundEven && encodeFloat8(f, d, src, saturate) {
		return // e4m3fn, e5m2, e2m3 and e3m2 in assembly
	}
	if d, ok := any(dst).([]uint8); ok && mode == RoundEven && saturate && *f == e2m1Codec {
		encodeE2M1(f, d, src)
		return
	}
	if mode == RoundEven && f.rneFast() {
		encodeFloatRNE(f, dst, src, saturate)
		return
	}
	for i, x := range src {
		r := RandFor(mode, seed, uint64(i))
		dst[i] = C(f.Encode(x, mode, saturate, r))
	}
}

// encodeE2M1 is EncodeFloat for E2M1, RoundEven, saturating: the assembly
// kernel of the active tier (encodeE2M1Kernel) up to the first 16 values
// holding a NaN, those 16 in Go, and on.
func encodeE2M1(f *FloatCodec, dst []uint8, src []float32) {
	dst = dst[:len(src)]
	for len(src) > 0 {
		n := encodeE2M1Kernel(dst, src)
		m := min(n+16, len(src))
		if n == len(src)&^15 {
			m = len(src)
		}
		encodeE2M1Go(f, dst[n:m], src[n:m])
		dst, src = dst[m:], src[m:]
	}
}

// encodeE2M1Go is encodeE2M1's Go reference: the key lookup of the MX
// kernels (e2m1Code) per value; NaN goes through the codec.
func encodeE2M1Go(f *FloatCodec, dst []uint8, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		b := math.Float32bits(x)
		abs := b & 0x7fffffff
		if abs > 0x7f800000 {
			dst[i] = uint8(f.Encode(x, RoundEven, true, 0))
			continue
		}
		dst[i] = uint8(e2m1Code(min(int32(abs), e2m1KeyHi), &mx.e2m1Key) | b>>31<<3)
	}
}

// rneFast reports whether encodeFloatRNE applies: the format is signed, rounds below float32
// precision, has at least one mantissa bit (with none, the kept digit of a tie is
// the implicit 1, not the exponent LSB the bit trick would use), and its smallest
// normal is a float32 normal.
func (f *FloatCodec) rneFast() bool {
	return f.SignBit != 0 && f.ManBits >= 1 && f.ManBits < 23 && f.Emin >= -126 && f.Emin <= 104
}

// encodeFloatRNE is EncodeFloat for RoundEven, doing the rounding with float32
// arithmetic and integer bit tricks instead of splitting each value.
//
// Normal range: adding 2^(22-M)-1 plus the kept LSB to the float32 bits and
// shifting right by 23-M rounds the significand to M bits ties-to-even, carrying
// into the exponent as needed; rebiasing the exponent gives the magnitude code.
// Subnormal range (|x| < 2^Emin): float32 addition of K = 2^(Emin-M+23), whose ulp
// is the format's subnormal quantum, rounds |x| ties-to-even, and the difference of
// the bit patterns of |x|+K and K is the code. Specials and overflow fall back to
// the scalar codec, so the result equals FloatCodec.Encode exactly.
func encodeFloatRNE[C Code](f *FloatCodec, dst []C, src []float32, saturate bool) {
	sh := 23 - f.ManBits
	rb := uint32(1)<<(sh-1) - 1
	minNorm := uint32(f.Emin+127) << 23
	kBits := uint32(f.Emin-int(f.ManBits)+23+127) << 23
	k := math.Float32frombits(kBits)
	rebias := int32(f.Emin+126) << f.ManBits // (127 - bias) << M, as a signed shift of the exponent
	maxMag := int32(f.MaxMag)
	signBit := f.SignBit
	// Without −0, a result of zero must drop the sign: send it to the scalar path.
	zeroLimit := int32(-1)
	if !f.NegZero {
		zeroLimit = 0
	}
	for i, x := range src {
		b := math.Float32bits(x)
		abs := b & 0x7fffffff
		// Both roundings, then a branch-free select: which one applies is as
		// unpredictable as the data.
		sub := int32(math.Float32bits(math.Float32frombits(abs)+k) - kBits)
		mag := int32((abs+rb+(abs>>sh)&1)>>sh) - rebias
		isSub := (int32(abs) - int32(minNorm)) >> 31 // all ones when abs < minNorm
		mag ^= (mag ^ sub) & isSub
		if abs >= 0x7f800000 || mag > maxMag || mag <= zeroLimit {
			// Specials, overflow, or a zero whose sign must go: the scalar codec.
			dst[i] = C(f.Encode(x, RoundEven, saturate, 0))
			continue
		}
		// Branch-free sign: the sign of random data is unpredictable.
		dst[i] = C(signBit&-(b>>31) | uint32(mag))
	}
}

// isBFloat16 reports whether f is bfloat16: float32 with the low 16 bits
// dropped (8 exponent bits, 7 mantissa bits, IEEE Inf, NaN and −0).
func (f *FloatCodec) isBFloat16() bool {
	return f.ExpBits == 8 && f.ManBits == 7 && f.Emin == -126 && f.SignBit == 0x8000 && f.MaxMag == 0x7f7f &&
		f.NegZero && f.HasInf && f.InfMag == 0x7f80 && f.NaN == NaNIEEE
}

// isFloat16 reports whether f is IEEE binary16: 5 exponent bits, 10 mantissa
// bits, IEEE Inf, NaN and −0.
func (f *FloatCodec) isFloat16() bool {
	return f.ExpBits == 5 && f.ManBits == 10 && f.Emin == -14 && f.SignBit == 0x8000 && f.MagMask == 0x7fff &&
		f.MaxMag == 0x7bff && f.NegZero && f.HasInf && f.InfMag == 0x7c00 && f.NaN == NaNIEEE
}

// hasQuietNaNs reports whether the NaN codes of an IEEE format are the quiet
// NaNs Float32ToBFloat16 and Float32ToFloat16 write: the infinity code with the
// top mantissa bit set, and the same with the sign bit.
func (f *FloatCodec) hasQuietNaNs() bool {
	q := f.InfMag | 1<<(f.ManBits-1)
	return f.NaN == NaNIEEE && f.ManBits >= 1 && f.NaNPos == q && f.NaNNeg == f.SignBit|q
}

// encodeBFloat16RNE is EncodeFloat for RoundEven to bfloat16. bfloat16 has
// float32's exponent range, so rounding the float32 bits at bit 16, ties to
// even, is the exact result for every value that stays finite, subnormals and
// both zeros included: adding 0x7fff plus the kept LSB carries exactly when the
// dropped half is above the tie, or at it with an odd kept half. Values that
// round past the largest finite bfloat16 (|x| ≥ 0x7f7f8000), infinities and NaN
// go to the scalar codec, which applies the overflow and NaN rules.
func encodeBFloat16RNE[C Code](f *FloatCodec, dst []C, src []float32, saturate bool) {
	for i, x := range src {
		b := math.Float32bits(x)
		if b&0x7fffffff >= 0x7f7f8000 {
			dst[i] = C(f.Encode(x, RoundEven, saturate, 0))
			continue
		}
		dst[i] = C((b + 0x7fff + (b>>16)&1) >> 16)
	}
}

// DecodeFloat decodes src into dst with [FloatCodec.Decode].
func DecodeFloat[C Code](f *FloatCodec, dst []float32, src []C) {
	dst = dst[:len(src)]
	for i, c := range src {
		dst[i] = f.Decode(uint32(c))
	}
}

// EncodeInt encodes src into dst with [IntCodec.Encode].
func EncodeInt[C Code](c *IntCodec, dst []C, src []float32, mode Rounding, seed uint64) {
	dst = dst[:len(src)]
	if mode == RoundEven && c.rneFast() {
		encodeIntRNE(c, dst, src)
		return
	}
	for i, x := range src {
		r := RandFor(mode, seed, uint64(i))
		dst[i] = C(c.Encode(x, mode, r))
	}
}

// rneFast reports whether encodeIntRNE applies: codes within ±2^21 and at
// most 16 fraction bits.
func (c *IntCodec) rneFast() bool {
	return c.Min > -1<<21 && c.Max < 1<<21 && c.FracBits <= 16 && c.Bits <= 32
}

// encodeIntRNE is EncodeInt for RoundEven, rounding with float32 arithmetic:
// x·2^FracBits is exact (a power of two; an overflow to ±Inf clamps as the
// value would), clamped to one past the range, then rounded to an integer,
// ties to even (roundEven32); NaN gives 0, as Encode does.
func encodeIntRNE[C Code](c *IntCodec, dst []C, src []float32) {
	sc := float32(math.Ldexp(1, int(c.FracBits)))
	lo, hi := float32(c.Min), float32(c.Max)
	mask := uint32(1)<<c.Bits - 1
	dst = dst[:len(src)]
	for i, x := range src {
		y := float32(x * sc)
		if y != y {
			y = 0
		}
		y = min(max(y, lo-1), hi+1)
		r := min(max(roundEven32(y), int32(c.Min)), int32(c.Max))
		dst[i] = C(uint32(r) & mask)
	}
}

// EncodeExp encodes src into dst with [ExpCodec.Encode].
func EncodeExp[C Code](c *ExpCodec, dst []C, src []float32, mode Rounding, saturate bool, seed uint64) {
	dst = dst[:len(src)]
	for i, x := range src {
		r := RandFor(mode, seed, uint64(i))
		dst[i] = C(c.Encode(x, mode, saturate, r))
	}
}

// DecodeLUT decodes src into dst through a table: dst[i] = lut[src[i] & (len(lut)-1)].
// len(lut) must be a power of two.
func DecodeLUT[C Code](dst []float32, src []C, lut []float32) {
	mask := C(len(lut) - 1)
	dst = dst[:len(src)]
	for i, c := range src {
		dst[i] = lut[c&mask]
	}
}

// DecodeLUT8 is DecodeLUT for byte codes and a 256-entry table, the common case of
// 8-bit and narrower formats; the fixed table size removes the bounds checks.
func DecodeLUT8(dst []float32, src []uint8, lut *[256]float32) {
	dst = dst[:len(src)]
	for i, c := range src {
		dst[i] = lut[c]
	}
}
