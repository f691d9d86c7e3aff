// Package dtype defines every number format the toolkit speaks: IEEE and OCP floats
// (float32, bfloat16, float16, FP8, FP6, FP4), the FNUZ and P3109 variants, unsigned
// power-of-two scale formats such as E8M0, integers and fixed-point MX elements.
//
// A [Format] is obtained by name with [Parse] (the naming rules are in the
// repository's README and docs/TENSORCAST.md §1). It knows its derived constants
// (bits, emax, emin, max finite, ...), its number line, and converts float32
// values to codes and back, exactly, for one value ([Format.Encode],
// [Format.Decode]) and for slices ([EncodeSlice], [DecodeSlice]). The arithmetic
// follows docs/NUMERICS.md §1–§2 of the repository: round to nearest even by
// default, saturation to ±max finite by default, subnormals kept, −0 kept where
// the format has it.
package dtype

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// Kind is the family a format belongs to.
type Kind uint8

const (
	// Float is a sign-magnitude (or unsigned) binary floating-point format.
	Float Kind = iota + 1
	// Int is a two's-complement or unsigned integer, possibly read as fixed point
	// (value = code·2^-FracBits).
	Int
	// Exponent is an unsigned power-of-two format: value = 2^(code-bias), no zero.
	Exponent
)

// String returns "float", "int" or "exponent".
func (k Kind) String() string {
	switch k {
	case Float:
		return "float"
	case Int:
		return "int"
	case Exponent:
		return "exponent"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Special says how a float format uses its top codes (docs/NUMERICS.md §1).
type Special uint8

const (
	// IEEE reserves the all-ones exponent for ±Inf and NaNs.
	IEEE Special = iota + 1
	// FN has no Inf; only the all-ones magnitude is NaN ("finite + NaN").
	FN
	// FNUZ has no Inf and no −0; the −0 code is the single NaN.
	FNUZ
	// INUZ (P3109) has ±Inf at the all-ones magnitude and the −0 code as the single NaN.
	INUZ
	// Finite has no Inf and no NaN and keeps −0 (OCP FP6 and FP4).
	Finite
)

var specialNames = map[Special]string{IEEE: "ieee", FN: "fn", FNUZ: "fnuz", INUZ: "inuz", Finite: "finite"}

// String returns the grammar suffix of the special-value rule.
func (s Special) String() string {
	if n, ok := specialNames[s]; ok {
		return n
	}
	return fmt.Sprintf("Special(%d)", uint8(s))
}

// Rounding selects how values between two representable neighbours are rounded.
type Rounding = kernels.Rounding

// The rounding modes.
const (
	RoundEven       = kernels.RoundEven       // nearest, ties to even (default)
	RoundAway       = kernels.RoundAway       // nearest, ties away from zero
	RoundZero       = kernels.RoundZero       // nearest, ties toward zero
	RoundStochastic = kernels.RoundStochastic // up with probability = fractional distance, seeded
)

// Overflow selects what happens to values beyond the largest finite value.
type Overflow uint8

const (
	// Saturate maps overflow and ±Inf to ±max finite (the default).
	Saturate Overflow = iota
	// OverflowIEEE maps overflow and ±Inf to ±Inf where the format has it, else
	// to NaN where it has it; formats with neither still saturate.
	OverflowIEEE
)

// Options are the conversion options of Encode. The zero value is round to nearest
// even with saturation.
type Options struct {
	Rounding Rounding
	Overflow Overflow
	// Seed drives RoundStochastic: element i of a slice uses the random bits
	// kernels.Rand32(Seed, i), and the scalar Encode uses i = 0. Same seed, same codes.
	Seed uint64
	// FullRange lets signed integers use their most negative code (−128 for int8);
	// by default they are symmetric (−127..127).
	FullRange bool
}

// Format is one number format. Formats are immutable and safe for concurrent use;
// obtain them with [Parse] or [MustParse].
type Format struct {
	name    string
	note    string
	kind    Kind
	special Special // floats only
	ebits   int     // floats and exponents
	mbits   int     // floats; fraction bits for fixed point
	bias    int
	bits    int // storage bits of one code
	signed  bool

	fc kernels.FloatCodec
	ic kernels.IntCodec
	xc kernels.ExpCodec

	lutOnce sync.Once
	lut     []float32
}

// Name returns the canonical name, which Parse maps back to the same format.
func (f *Format) Name() string { return f.name }

// String returns the canonical name.
func (f *Format) String() string { return f.name }

// Note returns a remark about the name, for example where TensorCast's meaning of a
// spelling differs from the OCP or ml_dtypes one; empty when there is nothing to say.
func (f *Format) Note() string { return f.note }

// Kind returns the family of the format.
func (f *Format) Kind() Kind { return f.kind }

// Special returns the special-value rule of a float format (0 for other kinds).
func (f *Format) Special() Special { return f.special }

// Bits returns the number of bits of one code as stored.
func (f *Format) Bits() int { return f.bits }

// ExpBits returns the exponent field width (floats and exponent formats).
func (f *Format) ExpBits() int { return f.ebits }

// ManBits returns the mantissa field width of a float, or the fraction bits of a
// fixed-point integer.
func (f *Format) ManBits() int { return f.mbits }

// Bias returns the exponent bias (floats and exponent formats).
func (f *Format) Bias() int { return f.bias }

// Signed reports whether the format has negative values.
func (f *Format) Signed() bool { return f.signed }

// NumCodes returns the number of distinct codes: 2^Bits, except for unsigned
// formats stored with a spare top bit (ue4m3 has 128 codes in a byte).
func (f *Format) NumCodes() int {
	if f.kind == Float && !f.signed {
		return int(f.fc.MagMask) + 1
	}
	return 1 << f.bits
}

// Encode converts x to a code with the default options (round to nearest even,
// saturate).
func (f *Format) Encode(x float32) uint32 { return f.EncodeWith(x, Options{}) }

// EncodeWith converts x to a code with the given options.
func (f *Format) EncodeWith(x float32, o Options) uint32 {
	r := kernels.RandFor(o.Rounding, o.Seed, 0)
	sat := o.Overflow == Saturate
	switch f.kind {
	case Float:
		return f.fc.Encode(x, o.Rounding, sat, r)
	case Int:
		return f.intCodec(o).Encode(x, o.Rounding, r)
	default:
		return f.xc.Encode(x, o.Rounding, sat, r)
	}
}

func (f *Format) intCodec(o Options) *kernels.IntCodec {
	if o.FullRange && f.signed {
		c := f.ic
		c.Min = -1 << (f.bits - 1)
		return &c
	}
	return &f.ic
}

// Decode returns the value of code. Bits above the format's width are ignored.
func (f *Format) Decode(code uint32) float32 {
	switch f.kind {
	case Float:
		return f.fc.Decode(code)
	case Int:
		return f.ic.Decode(code)
	default:
		return f.xc.Decode(code)
	}
}

// IsNaN reports whether code is a NaN of the format.
func (f *Format) IsNaN(code uint32) bool {
	switch f.kind {
	case Float:
		return f.fc.IsNaN(code)
	case Exponent:
		return code&f.xc.NaNCode == f.xc.NaNCode
	}
	return false
}

// HasInf reports whether the format has infinities.
func (f *Format) HasInf() bool { return f.kind == Float && f.fc.HasInf }

// HasNaN reports whether the format has at least one NaN code.
func (f *Format) HasNaN() bool {
	return f.kind == Exponent || (f.kind == Float && f.fc.NaN != kernels.NaNNone)
}

// HasNegZero reports whether −0 has a code of its own.
func (f *Format) HasNegZero() bool { return f.kind == Float && f.fc.NegZero }

// NaN returns the code Encode writes for a positive quiet NaN input, and false when
// the format has no NaN.
func (f *Format) NaN() (uint32, bool) {
	if !f.HasNaN() {
		return 0, false
	}
	return f.EncodeWith(float32(math.NaN()), Options{}), true
}

// NaNCount returns how many codes are NaN.
func (f *Format) NaNCount() int {
	switch {
	case f.kind == Exponent:
		return 1
	case f.kind != Float:
		return 0
	}
	switch f.fc.NaN {
	case kernels.NaNIEEE:
		return 2 * (1<<f.mbits - 1)
	case kernels.NaNAllOnes:
		if f.signed {
			return 2
		}
		return 1
	case kernels.NaNNegZero:
		return 1
	}
	return 0
}

// MaxCode returns the code of the largest finite value.
func (f *Format) MaxCode() uint32 {
	switch f.kind {
	case Float:
		return f.fc.MaxMag
	case Int:
		return uint32(f.ic.Max)
	}
	return f.xc.MaxCode
}

// MaxFinite returns the largest finite value.
func (f *Format) MaxFinite() float32 { return f.Decode(f.MaxCode()) }

// MinSubnormal returns the smallest positive value.
func (f *Format) MinSubnormal() float32 {
	switch f.kind {
	case Float:
		return float32(math.Ldexp(1, f.Emin()-f.mbits))
	case Int:
		return f.ic.Decode(1)
	}
	return f.xc.Decode(0)
}

// MinNormal returns the smallest positive normal value, 2^Emin.
func (f *Format) MinNormal() float32 { return float32(math.Ldexp(1, f.Emin())) }

// Emax returns floor(log2(MaxFinite)), the exponent of the top binade. It is the
// emax_elem of the OCP MX scale rule.
func (f *Format) Emax() int {
	_, e := math.Frexp(float64(f.MaxFinite()))
	return e - 1
}

// Emin returns the exponent of the smallest normal value: 1 − bias for floats,
// −bias for exponent formats, and Emax for integers, whose values are one binade
// of uniform steps (as TensorCast reports for its intK).
func (f *Format) Emin() int {
	switch f.kind {
	case Float:
		return 1 - f.bias
	case Exponent:
		return -f.bias
	}
	return f.Emax()
}

// Eps returns the step between 1 and the next value for floats (2^−M), the
// step of an integer or fixed-point format, and 1 for exponent formats.
func (f *Format) Eps() float32 {
	if f.kind == Exponent {
		return 1
	}
	return float32(math.Ldexp(1, -f.mbits))
}

// Midmax returns the rounding midpoint between MaxFinite and the next value above
// it on the format's grid: values above it overflow under round-to-nearest (the
// threshold of the MIDMAX scale mode). For exponent formats it is 1.5·MaxFinite.
// It is a float64 because it can exceed the float32 range (float32's own midmax
// is 2^128 − 2^103).
func (f *Format) Midmax() float64 {
	top := float64(f.MaxFinite())
	switch f.kind {
	case Float:
		return top + math.Ldexp(1, max(f.Emax(), f.Emin())-f.mbits-1)
	case Int:
		return top + math.Ldexp(1, -f.mbits-1)
	}
	return 1.5 * top
}

// Point is one entry of a number line.
type Point struct {
	Value float32
	Code  uint32
}

// NumberLine returns every finite value of a format of up to 16 bits with its code,
// in increasing order (−0 just before +0), without NaNs and infinities. Wider
// formats return nil.
func (f *Format) NumberLine() []Point {
	if f.bits > 16 {
		return nil
	}
	line := make([]Point, 0, f.NumCodes())
	for c := range f.NumCodes() {
		code := uint32(c)
		v := f.Decode(code)
		if f.IsNaN(code) || math.IsInf(float64(v), 0) {
			continue
		}
		line = append(line, Point{v, code})
	}
	slices.SortFunc(line, func(a, b Point) int {
		if a.Value == b.Value { // only ±0: the one with the sign bit first
			return cmp.Compare(b.Code&f.fc.SignBit, a.Code&f.fc.SignBit)
		}
		return cmp.Compare(a.Value, b.Value)
	})
	return line
}
