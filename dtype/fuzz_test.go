package dtype

import (
	"fmt"
	"math"
	"sync"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"e4m3fn", "float8_e4m3fnuz", "e5m2b16inuz", "q1.6", "uint7", "bfloat11",
		"torch.float16", "E8M0", "e9m9", "e1m0", "e3m0fnuz", "q0.0", "binary8p7", "e0m3", "e8m23b0", "int99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		fm, err := Parse(name)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("Parse(%q): error of type %T", name, err)
			}
			return
		}
		again, err := Parse(fm.Name())
		if err != nil || again != fm {
			t.Fatalf("Parse(%q) = %s, which does not parse back to itself: %v", name, fm, err)
		}
		if fm.Bits() < 2 || fm.Bits() > 32 {
			t.Fatalf("%s: %d bits", fm, fm.Bits())
		}
		mx := float64(fm.MaxFinite())
		if !(mx > 0) || math.IsInf(mx, 0) || fm.MinSubnormal() <= 0 {
			t.Fatalf("%s: range %g..%g", fm, fm.MinSubnormal(), mx)
		}
	})
}

// refLines caches the reference number line of each format the fuzzer visits.
var refLines sync.Map

// FuzzRoundTrip encodes arbitrary float32 values into arbitrary grammar formats and
// checks the result against the reference search for formats of up to 12 bits, and
// for all formats that decoding and re-encoding is the identity on the code.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint8(4), uint8(3), uint8(1), uint32(0x43e00000), uint8(0))
	f.Add(uint8(2), uint8(1), uint8(5), uint32(0x40200000), uint8(1))
	f.Add(uint8(5), uint8(10), uint8(0), uint32(0x477ff000), uint8(2))
	f.Add(uint8(8), uint8(7), uint8(0), uint32(0x00000001), uint8(0))
	f.Add(uint8(8), uint8(0), uint8(0), uint32(0x3fc00000), uint8(0))
	f.Fuzz(func(t *testing.T, x, y, suffix uint8, bits uint32, mode uint8) {
		suffixes := []string{"", "ieee", "fn", "fnuz", "inuz", "finite"}
		name := fmt.Sprintf("e%dm%d%s", x%8+1, y%24, suffixes[int(suffix)%len(suffixes)])
		fm, err := Parse(name)
		if err != nil {
			return
		}
		v := math.Float32frombits(bits)
		o := Options{Rounding: Rounding(mode % 3), Overflow: Overflow(mode / 3 % 2)}
		code := fm.EncodeWith(v, o)
		if fm.IsNaN(code) {
			if v == v && fm.HasInf() {
				t.Fatalf("%s: finite or infinite %g encoded to NaN with Inf available", fm, v)
			}
			return
		}
		if back := fm.EncodeWith(fm.Decode(code), o); back != code {
			t.Fatalf("%s: %g → %#x → %g → %#x", fm, v, code, fm.Decode(code), back)
		}
		if fm.Bits() <= 12 && v == v && !math.IsInf(float64(v), 0) && (fm.Signed() || v >= 0) {
			line, ok := refLines.Load(fm)
			if !ok {
				line, _ = refLines.LoadOrStore(fm, newRefLine(fm))
			}
			if want := refEncode(fm, line.(refLine), float64(v), o.Rounding, o.Overflow == Saturate); want != code {
				t.Fatalf("%s %+v: Encode(%g) = %#x, reference %#x", fm, o, v, code, want)
			}
		}
	})
}
