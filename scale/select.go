package scale

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/tensorcast-go/tensorcast/dtype"
)

// Mode chooses the power-of-two scale of a block from its amax (docs/NUMERICS.md
// §4.3). Every mode gives a valid encoding; they differ only in when
// the scale is raised one binade above the spec's floor rule. Modes apply to
// exponent (power-of-two) scales; float scales are always amax / max, rounded to
// nearest even in the scale format.
type Mode uint8

// The scale-selection modes. With a = amax / 2^e ∈ [1, 2) (e = floor(log2 amax),
// read from the float's bits), emax the element format's top exponent and M its
// mantissa bits, the shared exponent is e − emax, plus one when:
const (
	Floor     Mode = iota // never: the OCP v1.0 rule (default)
	Ceil                  // a > 1, i.e. ceil(log2 amax) − emax
	Even                  // a rounded to M bits (ties up) reaches 2: a ≥ 2 − 2^−(M+1)
	RCeil                 // amax / 2^(e−emax) > max finite: the smallest scale with no clipping
	Midmax                // amax / 2^(e−emax) > the rounding midpoint above max finite
	Option3               // a rounded to M bits (ties to even) reaches 2
	TopBinade             // a > max finite / 2^emax
	numModes
)

var modeNames = [numModes]string{"floor", "ceil", "even", "rceil", "midmax", "option3", "topbinade"}

// String returns the mode's name as ParseMode accepts it.
func (m Mode) String() string {
	if m < numModes {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Modes returns every mode in order.
func Modes() []Mode {
	out := make([]Mode, numModes)
	for i := range out {
		out[i] = Mode(i)
	}
	return out
}

// ErrMode is matched (errors.Is) by the error of ParseMode for a name that is
// no scale-selection mode.
var ErrMode = errors.New("unknown scale mode")

// ParseMode returns the mode of a name (case-insensitive). TensorCast's spellings
// "max" (its floor) and "auto" (its midmax) are accepted too. An unknown name is
// an error matching ErrMode.
func ParseMode(s string) (Mode, error) {
	switch k := strings.ToLower(s); k {
	case "max":
		return Floor, nil
	case "auto":
		return Midmax, nil
	default:
		for i, n := range modeNames {
			if n == k {
				return Mode(i), nil
			}
		}
	}
	return 0, fmt.Errorf("scale: %w %q (want one of %s)", ErrMode, s, strings.Join(modeNames[:], ", "))
}

// Exponent splits a positive finite float32 into its significand a ∈ [1, 2) and
// exponent e, with x = a·2^e exactly; subnormals are normalized. It reads the bits,
// never a float log2, so values just below a power of two keep their exponent.
func Exponent(x float32) (a float64, e int) {
	b := math.Float32bits(x) & 0x7fffffff
	exp := int(b >> 23)
	man := b & 0x7fffff
	if exp == 0 {
		// Subnormal: the leading one is at bit Len−1 of the mantissa.
		l := bits.Len32(man)
		e = l - 1 - 149
		man = (man << (24 - l)) & 0x7fffff
	} else {
		e = exp - 127
	}
	return 1 + float64(man)/(1<<23), e
}

// elemMantBits is the mantissa width the Even and Option3 modes round amax to:
// a float's M, and for a signed fixed-point element (MXINT8's q1.6) its fraction
// bits, which TensorCast models as e1m(K−2).
func elemMantBits(elem *dtype.Format) int {
	if elem.Kind() == dtype.Int {
		return elem.Bits() - 2
	}
	return elem.ManBits()
}

// Selector picks shared exponents for one element format and mode, with the
// format's constants computed once; Exponent is then cheap enough for the inner
// loop of a cast.
type Selector struct {
	mode      Mode
	emax      int
	maxFinite float64
	midmax    float64
	evenAt    float64 // the significand from which Even and Option3 bump
}

// NewSelector returns the selector of mode m for elements of format elem.
func NewSelector(elem *dtype.Format, m Mode) Selector {
	return Selector{mode: m, emax: elem.Emax(), maxFinite: float64(elem.MaxFinite()), midmax: elem.Midmax(),
		evenAt: 2 - math.Ldexp(1, -(elemMantBits(elem)+1))}
}

// Exponent returns the exponent k of the power-of-two scale 2^k for a block
// whose largest magnitude is amax (positive and finite). It is not clamped to
// any scale format's range; see [ExponentCode].
func (s Selector) Exponent(amax float32) int {
	a, e := Exponent(amax)
	k := e - s.emax
	bump := false
	switch s.mode {
	case Ceil:
		bump = a > 1
	case Even, Option3:
		// Rounding a to M bits carries into 2 exactly when a ≥ 2 − 2^−(M+1): the
		// tie rounds up under "ties up", and also under ties-to-even, because the
		// lower neighbour 2 − 2^−M has an odd last bit.
		bump = a >= s.evenAt
	case RCeil, TopBinade:
		bump = math.Ldexp(a, s.emax) > s.maxFinite // amax / 2^k, exact
	case Midmax:
		bump = math.Ldexp(a, s.emax) > s.midmax
	}
	if bump {
		k++
	}
	return k
}

// ExponentCode returns the code of 2^k in the exponent format sf (E8M0: k + 127).
// Below the format's range the code is clamped to 0 (the smallest scale, 2^−127
// for E8M0, and the code of an all-zero block); above it the result is the NaN
// code and ok is false (docs/NUMERICS.md §4.2).
func ExponentCode(k int, sf *dtype.Format) (code uint32, ok bool) {
	c := k + sf.Bias()
	switch {
	case c < 0:
		return 0, true
	case c > int(sf.MaxCode()):
		nan, _ := sf.NaN()
		return nan, false
	}
	return uint32(c), true
}
