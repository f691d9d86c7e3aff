package dtype

import (
	"fmt"
	"github.com/tensorcast-go/tensorcast/internal/names"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// ParseError reports a format name that is unknown or out of range.
type ParseError struct {
	Name    string   // the name as given
	Reason  string   // what is wrong
	Closest []string // known names close to Name, best first (may be empty)
}

// Error implements error.
func (e *ParseError) Error() string {
	msg := fmt.Sprintf("dtype: %q: %s", e.Name, e.Reason)
	if len(e.Closest) > 0 {
		msg += " (closest known: " + strings.Join(e.Closest, ", ") + ")"
	}
	return msg
}

// spec is the parameter set that identifies a format.
type spec struct {
	kind    Kind
	ebits   int
	mbits   int // mantissa bits, or fraction bits for Int
	bias    int
	special Special
	bits    int
	signed  bool
}

// named is a format with a name of its own (ml_dtypes/torch, OCP, P3109, ...).
type named struct {
	name    string
	aliases []string
	spec    spec
	note    string
}

func fl(e, m, bias int, sp Special) spec {
	return spec{kind: Float, ebits: e, mbits: m, bias: bias, special: sp, bits: 1 + e + m, signed: true}
}

var namedFormats = []named{
	{"float32", []string{"fp32", "f32", "float", "e8m23"}, fl(8, 23, 127, IEEE), ""},
	{"float16", []string{"fp16", "f16", "half", "e5m10"}, fl(5, 10, 15, IEEE), ""},
	{"bfloat16", []string{"bf16", "e8m7"}, fl(8, 7, 127, IEEE), ""},
	{"float8_e4m3fn", []string{"e4m3fn", "fp8", "f8e4m3fn", "fp8e4m3"}, fl(4, 3, 7, FN), "OCP FP8 E4M3"},
	{"float8_e5m2", []string{"e5m2", "bf8", "f8e5m2", "fp8e5m2"}, fl(5, 2, 15, IEEE), "OCP FP8 E5M2"},
	{"float8_e4m3fnuz", []string{"e4m3b8fnuz", "fp8n", "f8e4m3fnuz"}, fl(4, 3, 8, FNUZ),
		"bias 8, max 240 (torch/ml_dtypes); TensorCast's bare e4m3fnuz is bias 7, max 480"},
	{"float8_e5m2fnuz", []string{"e5m2b16fnuz", "bf8n", "f8e5m2fnuz"}, fl(5, 2, 16, FNUZ),
		"bias 16 (torch/ml_dtypes); TensorCast's bare e5m2fnuz is bias 15, max 114688"},
	{"float8_e4m3b11fnuz", []string{"e4m3b11fnuz", "f8e4m3b11fnuz"}, fl(4, 3, 11, FNUZ), ""},
	{"float8_e3m4", []string{"e3m4", "f8e3m4"}, fl(3, 4, 3, IEEE), ""},
	{"float8_e4m3", []string{"e4m3", "f8e4m3"}, fl(4, 3, 7, IEEE),
		"IEEE-style E4M3 with Inf, max 240 (TensorCast's NV block scale); OCP's E4M3 is float8_e4m3fn, max 448"},
	{"float6_e3m2fn", []string{"e3m2", "fp6e3m2", "f6e3m2fn"}, fl(3, 2, 3, Finite), "OCP FP6 E3M2"},
	{"float6_e2m3fn", []string{"e2m3", "fp6e2m3", "f6e2m3fn"}, fl(2, 3, 1, Finite), "OCP FP6 E2M3"},
	{"float4_e2m1fn", []string{"e2m1", "fp4", "fp4e2m1", "f4e2m1fn"}, fl(2, 1, 1, Finite), "OCP FP4 E2M1"},
	{"float8_e8m0fnu", []string{"e8m0", "f8e8m0fnu", "ue8m0"}, spec{kind: Exponent, ebits: 8, bias: 127, bits: 8},
		"OCP E8M0 scale: 2^(code-127), 0xFF is NaN, no zero"},
	{"ue4m3", []string{"float8_ue4m3"}, spec{kind: Float, ebits: 4, mbits: 3, bias: 7, special: FN, bits: 8},
		"NVFP4 block scale: e4m3fn codes used for positive values; the sign bit is ignored on decode"},
	{"binary8p1", nil, fl(7, 0, 63, INUZ), "P3109 binary8p1 as TensorCast defines it (bias 63)"},
	{"binary8p2", nil, fl(6, 1, 32, INUZ), "P3109 binary8p2"},
	{"binary8p3", nil, fl(5, 2, 16, INUZ), "P3109 binary8p3"},
	{"binary8p4", nil, fl(4, 3, 8, INUZ), "P3109 binary8p4"},
	{"binary8p5", nil, fl(3, 4, 4, INUZ), "P3109 binary8p5"},
	{"binary8p6", nil, fl(2, 5, 2, INUZ), "P3109 binary8p6"},
}

var (
	reFloat = regexp.MustCompile(`^e(\d{1,3})m(\d{1,3})(?:b(\d{1,4}))?(ieee|fn|fnuz|inuz|finite)?$`)
	reInt   = regexp.MustCompile(`^(u?)int(\d{1,3})$`)
	reFixed = regexp.MustCompile(`^q(\d{1,3})\.(\d{1,3})$`)
	reTCflt = regexp.MustCompile(`^(b?)float(\d{1,3})$`)
)

var registry struct {
	once    sync.Once
	byName  map[string]*named // every lower-case name and alias
	bySpec  map[spec]*named
	mu      sync.Mutex
	formats map[string]*Format // canonical name → built format
	known   []string           // names offered as close matches
}

func initRegistry() {
	registry.byName = map[string]*named{}
	registry.bySpec = map[spec]*named{}
	registry.formats = map[string]*Format{}
	for i := range namedFormats {
		n := &namedFormats[i]
		registry.byName[n.name] = n
		registry.bySpec[n.spec] = n
		registry.known = append(registry.known, n.name)
		for _, a := range n.aliases {
			registry.byName[a] = n
			registry.known = append(registry.known, a)
		}
	}
	registry.known = append(registry.known,
		"int8", "int4", "uint8", "uint4", "int16", "q1.6",
		"e4m3fnuz", "e5m2fnuz", "e2m1fnuz", "e2m3fnuz", "e3m2fnuz", "e3m3fnuz", "e2m2fnuz")
}

// Parse returns the format with the given name. Names are case-insensitive and may
// carry a "torch." prefix. Accepted are the ml_dtypes/torch names (float8_e4m3fn,
// bfloat16, ...), the OCP short names (e4m3fn, e5m2, e3m2, e2m3, e2m1, e8m0, ue4m3),
// the grammar eXmY[bZ][ieee|fn|fnuz|inuz|finite] (1 ≤ X ≤ 8, 0 ≤ Y ≤ 23), TensorCast's
// floatN/bfloatN and binary8p1..p6, integers intK/uintK (2 ≤ K ≤ 16), and
// fixed-point qI.F (two's complement, value = code/2^F; q1.6 is the MXINT8 element).
// An unknown or out-of-range name gives a *ParseError listing close known names.
func Parse(name string) (*Format, error) {
	registry.once.Do(initRegistry)
	key := strings.ToLower(strings.TrimSpace(name))
	key = strings.TrimPrefix(key, "torch.")
	sp, note, err := resolve(key)
	if err != nil {
		err.Name = name
		if len(err.Closest) == 0 && err.Reason == reasonUnknown {
			err.Closest = names.Closest(key, registry.known, 4)
		}
		return nil, err
	}
	canon, note := canonicalName(sp, note)
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if f, ok := registry.formats[canon]; ok {
		return f, nil
	}
	f := build(canon, note, sp)
	registry.formats[canon] = f
	return f, nil
}

// MustParse is Parse for names known to be valid; it panics on error.
func MustParse(name string) *Format {
	f, err := Parse(name)
	if err != nil {
		panic(err)
	}
	return f
}

// Names returns the canonical names of the formats that have a name of their own,
// in a stable order. Grammar names (eXmY..., intK, qI.F) are not listed.
func Names() []string {
	out := make([]string, len(namedFormats))
	for i, n := range namedFormats {
		out[i] = n.name
	}
	return out
}

const reasonUnknown = "unknown format name"

func perr(reason string, args ...any) *ParseError {
	return &ParseError{Reason: fmt.Sprintf(reason, args...)}
}

// resolve maps a normalised name to its spec.
func resolve(key string) (spec, string, *ParseError) {
	if n, ok := registry.byName[key]; ok {
		return n.spec, n.note, nil
	}
	if m := reFloat.FindStringSubmatch(key); m != nil {
		return resolveFloat(m)
	}
	if m := reInt.FindStringSubmatch(key); m != nil {
		k, _ := strconv.Atoi(m[2])
		if k < 2 || k > 16 {
			return spec{}, "", perr("integer width %d out of range 2..16", k)
		}
		if m[1] == "u" {
			return spec{kind: Int, bits: k}, "", nil
		}
		return spec{kind: Int, bits: k, signed: true}, fmt.Sprintf(
			"TensorCast reads int%d as fixed point e1m%db1fnuz (value = code/%d); here it is the plain integer, see q1.%d",
			k, k-2, 1<<(k-2), k-2), nil
	}
	if m := reFixed.FindStringSubmatch(key); m != nil {
		i, _ := strconv.Atoi(m[1])
		fr, _ := strconv.Atoi(m[2])
		if k := i + fr + 1; k < 2 || k > 16 {
			return spec{}, "", perr("fixed-point width 1+%d+%d = %d out of range 2..16", i, fr, k)
		}
		note := ""
		if i == 1 && fr == 6 {
			note = "the OCP MXINT8 element: int8 code read as code/64"
		}
		return spec{kind: Int, mbits: fr, bits: i + fr + 1, signed: true}, note, nil
	}
	if m := reTCflt.FindStringSubmatch(key); m != nil {
		n, _ := strconv.Atoi(m[2])
		switch {
		case n < 9 || n > 32:
			return spec{}, "", &ParseError{Reason: fmt.Sprintf("%s: width %d out of range 9..32 (name 8-bit and narrower floats as eXmY)", key, n),
				Closest: names.Closest(key, registry.known, 4)}
		case m[1] == "b" || n > 16:
			return fl(8, n-9, 127, IEEE), "", nil
		default:
			return fl(5, n-6, 15, IEEE), "", nil
		}
	}
	return spec{}, "", perr(reasonUnknown)
}

func resolveFloat(m []string) (spec, string, *ParseError) {
	x, _ := strconv.Atoi(m[1])
	y, _ := strconv.Atoi(m[2])
	suffix := m[4]
	if x < 1 || x > 8 {
		return spec{}, "", perr("exponent bits %d out of range 1..8", x)
	}
	if y > 23 {
		return spec{}, "", perr("mantissa bits %d out of range 0..23", y)
	}
	bias := 1<<(x-1) - 1
	if m[3] != "" {
		bias, _ = strconv.Atoi(m[3])
	}
	note := ""
	if y == 0 && suffix == "" {
		// eXm0: TensorCast's unsigned power-of-two exponent format
		// (eXm0ieee is the signed float of no mantissa bits, as
		// canonicalName spells bfloat9).
		if x < 2 {
			return spec{}, "", perr("exponent format needs 2..8 exponent bits, got %d", x)
		}
		if bias > 149 || (1<<x)-2-bias > 127 {
			return spec{}, "", perr("bias %d puts 2^(0-bias)..2^(%d-bias) outside float32", bias, (1<<x)-2)
		}
		return spec{kind: Exponent, ebits: x, bias: bias, bits: x}, "", nil
	}
	var sp Special
	switch suffix {
	case "":
		sp = IEEE
		if 1+x+y < 8 {
			sp = Finite
		}
	case "ieee":
		sp = IEEE
	case "fn":
		sp = FN
	case "fnuz":
		sp = FNUZ
	case "inuz":
		sp = INUZ
	case "finite":
		sp = Finite
	}
	s := fl(x, y, bias, sp)
	// Range checks: every value must be exactly a float32.
	if 1-bias-y < -149 {
		return spec{}, "", perr("bias %d: smallest subnormal 2^%d is below float32's 2^-149", bias, 1-bias-y)
	}
	c := floatCodec(s)
	if c.MaxMag == 0 {
		return spec{}, "", perr("no positive finite value (every non-zero code is special)")
	}
	if top := int(c.MaxMag>>uint(y)) - 1 + (1 - bias); top > 127 {
		return spec{}, "", perr("bias %d: largest value 2^%d is beyond float32", bias, top)
	}
	switch {
	case sp == FNUZ && x+y+1 <= 6:
		note = "TensorCast's spelling: the finite values of the bare (OCP-style) name, but the -0 code is NaN and -0 is not kept"
	case sp == FNUZ && (x == 4 && y == 3 && bias == 7 || x == 5 && y == 2 && bias == 15):
		note = fmt.Sprintf("TensorCast's meaning (standard bias); torch's float8_e%dm%dfnuz has bias %d", x, y, bias+1)
	case sp == FN && x+y+1 <= 6:
		note = "TensorCast 'fn': the all-ones magnitude is NaN; the OCP format without NaN is the bare name or float6_/float4_*fn"
	case sp == IEEE && x+y+1 < 8:
		note = "IEEE-style: the top exponent is Inf/NaN (TensorCast's bare name); the OCP format is the bare name here"
	}
	return s, note, nil
}

// canonicalName returns the name Parse gives back for sp: the own name of a named
// format, else the shortest grammar spelling.
func canonicalName(sp spec, note string) (string, string) {
	if n, ok := registry.bySpec[sp]; ok {
		return n.name, n.note
	}
	switch sp.kind {
	case Int:
		switch {
		case !sp.signed:
			return fmt.Sprintf("uint%d", sp.bits), note
		case sp.mbits == 0:
			return fmt.Sprintf("int%d", sp.bits), note
		}
		return fmt.Sprintf("q%d.%d", sp.bits-1-sp.mbits, sp.mbits), note
	case Exponent:
		name := fmt.Sprintf("e%dm0", sp.ebits)
		if sp.bias != 1<<(sp.ebits-1)-1 {
			name += fmt.Sprintf("b%d", sp.bias)
		}
		return name, note
	}
	name := fmt.Sprintf("e%dm%d", sp.ebits, sp.mbits)
	if sp.bias != 1<<(sp.ebits-1)-1 {
		name += fmt.Sprintf("b%d", sp.bias)
	}
	def := IEEE
	if sp.bits < 8 {
		def = Finite
	}
	if sp.special != def || (sp.mbits == 0 && sp.special == IEEE) {
		name += sp.special.String()
	}
	return name, note
}
