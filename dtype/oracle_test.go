package dtype

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// This file holds a slow reference model of every format, written from the format
// definitions of docs/NUMERICS.md §1–§2 and docs/TENSORCAST.md §1 and sharing no code with
// the kernels: decoding by the textbook formula, encoding by searching the sorted
// number line for the two neighbours of a value. Tests compare the real codecs
// against it.

// refSpecial classifies a code by the special-value rules of the format.
func refSpecial(f *Format, code uint32) (nan, inf bool) {
	switch f.Kind() {
	case Exponent:
		return code == 1<<f.ExpBits()-1, false
	case Int:
		return false, false
	}
	e, m := f.ExpBits(), f.ManBits()
	signBit := uint32(0)
	if f.Signed() {
		signBit = 1 << (e + m)
	}
	mag := code & (1<<(e+m) - 1)
	allOnes := uint32(1<<(e+m) - 1)
	switch f.Special() {
	case IEEE:
		if mag>>m == 1<<e-1 {
			return mag&(1<<m-1) != 0, mag&(1<<m-1) == 0
		}
	case FN:
		return mag == allOnes, false
	case FNUZ:
		return code == signBit, false
	case INUZ:
		return code == signBit, mag == allOnes
	}
	return false, false
}

// refDecode returns the value of a non-NaN code as a float64.
func refDecode(f *Format, code uint32) float64 {
	switch f.Kind() {
	case Exponent:
		return math.Pow(2, float64(int(code)-f.Bias()))
	case Int:
		v := int64(code)
		if f.Signed() && code >= 1<<(f.Bits()-1) {
			v -= 1 << f.Bits()
		}
		return float64(v) / math.Pow(2, float64(f.ManBits()))
	}
	e, m := f.ExpBits(), f.ManBits()
	neg := f.Signed() && code>>(e+m)&1 == 1
	mag := code & (1<<(e+m) - 1)
	ex := int(mag >> m)
	man := float64(mag & (1<<m - 1))
	var v float64
	if _, inf := refSpecial(f, code); inf {
		v = math.Inf(1)
	} else if ex == 0 {
		v = man / math.Pow(2, float64(m)) * math.Pow(2, float64(1-f.Bias()))
	} else {
		v = (1 + man/math.Pow(2, float64(m))) * math.Pow(2, float64(ex-f.Bias()))
	}
	if neg {
		v = -v
	}
	return v
}

// refLine is the positive half of a format's number line: finite values >= 0 in
// increasing order with their codes (+0 first).
type refLine struct {
	vals  []float64
	codes []uint32
}

func newRefLine(f *Format) refLine {
	var l refLine
	type pt struct {
		v float64
		c uint32
	}
	var pts []pt
	for c := 0; c < f.NumCodes(); c++ {
		code := uint32(c)
		if nan, inf := refSpecial(f, code); nan || inf {
			continue
		}
		v := refDecode(f, code)
		if v < 0 || (v == 0 && code != 0) || math.IsInf(v, 0) {
			continue
		}
		pts = append(pts, pt{v, code})
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].v < pts[j].v })
	for _, p := range pts {
		l.vals = append(l.vals, p.v)
		l.codes = append(l.codes, p.c)
	}
	return l
}

// refEncode encodes a finite, non-NaN x by searching the number line. Overflow is
// judged on the rounded value: beyond the largest value lies one more grid step,
// whose code is the next magnitude code.
func refEncode(f *Format, l refLine, x float64, mode Rounding, sat bool) uint32 {
	neg := math.Signbit(x)
	a := math.Abs(x)
	if f.Kind() == Int {
		step := math.Pow(2, -float64(f.ManBits()))
		q := a / step
		lo := math.Floor(q)
		n := lo
		switch {
		case q-lo > 0.5:
			n = lo + 1
		case q-lo == 0.5:
			if mode == RoundAway || (mode == RoundEven && math.Mod(lo, 2) == 1) {
				n = lo + 1
			}
		}
		if neg {
			n = -n
		}
		hi := math.Pow(2, float64(f.Bits()-1)) - 1
		lowest := -hi
		if !f.Signed() {
			hi, lowest = math.Pow(2, float64(f.Bits()))-1, 0
		}
		n = math.Max(math.Min(n, hi), lowest)
		return uint32(int64(n)) & (1<<f.Bits() - 1)
	}
	top := len(l.vals) - 1
	if f.Kind() == Exponent && a < l.vals[0] {
		if a == 0 && !sat {
			return 1<<f.ExpBits() - 1
		}
		return 0
	}
	sign := uint32(0)
	if neg && f.Signed() {
		sign = 1 << (f.ExpBits() + f.ManBits())
	}
	overflow := func() uint32 {
		if !sat && f.Kind() == Exponent {
			return 1<<f.ExpBits() - 1
		}
		if !sat {
			c := uint32(0)
			switch f.Special() {
			case IEEE:
				c = uint32(1<<f.ExpBits()-1) << f.ManBits()
				return sign | c
			case INUZ:
				return sign | uint32(1<<(f.ExpBits()+f.ManBits())-1)
			case FN:
				return sign | uint32(1<<(f.ExpBits()+f.ManBits())-1)
			case FNUZ:
				return 1 << (f.ExpBits() + f.ManBits())
			}
		}
		return sign | l.codes[top]
	}
	// Neighbours lo <= a <= hi; past the top, hi is one more grid step.
	i := sort.SearchFloat64s(l.vals, a) // first index with vals[i] >= a
	var lo, hi float64
	var loCode, hiCode uint32
	if i > top {
		lo, loCode = l.vals[top], l.codes[top]
		ulp := l.vals[top] - l.vals[top-1]
		if f.Kind() == Exponent {
			ulp = l.vals[top]
		}
		if f.Kind() == Float {
			e := math.Floor(math.Log2(l.vals[top]))
			ulp = math.Pow(2, math.Max(e, float64(1-f.Bias()))-float64(f.ManBits()))
		}
		hi, hiCode = lo+ulp, loCode+1
		if a > hi {
			return overflow()
		}
	} else if l.vals[i] == a {
		lo, hi, loCode, hiCode = a, a, l.codes[i], l.codes[i]
	} else {
		lo, hi, loCode, hiCode = l.vals[i-1], l.vals[i], l.codes[i-1], l.codes[i]
	}
	pick := loCode
	mid := lo + (hi-lo)/2
	switch {
	case a == lo:
	case a > mid:
		pick = hiCode
	case a == mid:
		if mode == RoundAway || (mode == RoundEven && refTieUp(f, lo, loCode)) {
			pick = hiCode
		}
	}
	if pick > l.codes[top] {
		return overflow()
	}
	if pick == 0 && !f.HasNegZero() {
		return 0
	}
	return sign | pick
}

// testFormats returns the named formats plus a sweep of the grammar, integers,
// fixed point and exponent formats, all of at most maxBits bits.
func testFormats(t testing.TB, maxBits int) []*Format {
	t.Helper()
	seen := map[string]bool{}
	var out []*Format
	add := func(name string) {
		f, err := Parse(name)
		if err != nil {
			return
		}
		if f.Bits() <= maxBits && !seen[f.Name()] {
			seen[f.Name()] = true
			out = append(out, f)
		}
	}
	for _, n := range Names() {
		add(n)
	}
	for x := 1; x <= 8; x++ {
		for y := 0; y+x+1 <= maxBits; y++ {
			for _, s := range []string{"", "ieee", "fn", "fnuz", "inuz", "finite"} {
				add(fmt.Sprintf("e%dm%d%s", x, y, s))
			}
		}
		add(fmt.Sprintf("e%dm0", x))
	}
	for k := 2; k <= 16; k++ {
		add(fmt.Sprintf("int%d", k))
		add(fmt.Sprintf("uint%d", k))
	}
	for _, q := range []string{"q1.6", "q1.2", "q3.4", "q0.7", "q7.8"} {
		add(q)
	}
	add("e4m3b11fnuz")
	add("e5m2b3")
	add("e3m2b1fn")
	require.NotEmpty(t, out)
	return out
}

// refTieUp reports whether a round-to-nearest-even tie above lo goes up: when lo's
// significand digit kept is odd. That is the mantissa LSB (the code's LSB) when the
// format has mantissa bits, and with no mantissa bits the implicit leading 1, so
// ties between powers of two go up and only the tie between 0 and the smallest
// value goes down (TensorCast rounds x·2^-e with torch.round likewise).
func refTieUp(f *Format, lo float64, loCode uint32) bool {
	if f.Kind() == Float && f.ManBits() == 0 || f.Kind() == Exponent {
		return lo > 0
	}
	return loCode&1 == 1
}
