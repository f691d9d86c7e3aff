package tcast

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tensorcast-go/tensorcast/codebook"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/names"
	"github.com/tensorcast-go/tensorcast/scale"
)

// entry is one predefined datatype: its names (the first is canonical), element
// format, scale spec ("" for none) and note; a codebook datatype names its
// codebook (for codebookByName) in cb instead of an element format.
type entry struct {
	names []string
	elem  string
	spec  string
	note  string
	cb    string
}

// TensorCast's one-letter scale codes (docs/TENSORCAST.md §3).
var scaleLetters = []struct{ letter, spec string }{
	{"F", "float32"}, {"f", "float16"}, {"b", "bfloat16"}, {"n", "e4m3"}, {"e", "e8m0"},
}

// zeroLetters are TensorCast's two-letter scale+zero codes of unsigned types.
var zeroLetters = []struct{ letters, spec string }{
	{"FF", "float32_float32"}, {"ff", "float16_float16"}, {"bb", "bfloat16_bfloat16"},
	{"Fi", "float32_int8"}, {"fi", "float16_int8"}, {"bi", "bfloat16_int8"}, {"ni", "e4m3_int8"},
}

const (
	noteOCPElem = "TensorCast names the element %s; the OCP format used here has the same finite values and keeps −0"
	noteNVIEEE  = "TensorCast's NV-style type: block scale IEEE e4m3 (max 240), no tensor scale; not NVIDIA's NVFP4 (see nvfp4)"
)

func predefined() []entry {
	var es []entry
	add := func(elem, spec, note string, names ...string) {
		es = append(es, entry{names: names, elem: elem, spec: spec, note: note})
	}
	// Unscaled torch and P3109 types.
	add("float32", "", "", "float32")
	add("float16", "", "", "float16")
	add("bfloat16", "", "", "bfloat16")
	add("float8_e5m2", "", "", "float8_e5m2", "bf8", "e5m2fn")
	add("float8_e4m3fn", "", "", "float8_e4m3fn", "fp8")
	add("float8_e5m2fnuz", "", "the torch type (bias 16); TensorCast's triton bf8n is e5m2fnuz, bias 15", "float8_e5m2fnuz")
	add("e5m2fnuz", "", "TensorCast's bf8n: e5m2fnuz with bias 15 (max 114688), not torch's float8_e5m2fnuz", "bf8n")
	add("float8_e4m3fnuz", "", "", "float8_e4m3fnuz", "fp8n", "e4m3b8fnuz")
	for p := 1; p <= 6; p++ {
		add(fmt.Sprintf("binary8p%d", p), "", "", fmt.Sprintf("binary8p%d", p))
	}
	for _, n := range []string{"e5m2", "e5m2b16fnuz", "e4m3fnuz", "e4m3fn", "e3m3fnuz", "e3m2fnuz", "e2m3fnuz", "e2m1fnuz"} {
		add(n, "", "", n)
	}
	// Tensor- and channel-scaled integer and FP8 types (triton letter codes).
	fp8 := []struct{ prefix, elem string }{
		{"bf8", "e5m2"}, {"bf8n", "e5m2fnuz"}, {"fp8", "e4m3fn"}, {"fp8n", "float8_e4m3fnuz"},
	}
	for _, l := range scaleLetters {
		add("int8", l.spec, "", "int8_"+l.letter)
		add("int8", l.spec+"_t0", "", "int8_"+l.letter+"c")
		add("int4", l.spec+"_t0", "", "int4_"+l.letter+"c")
		for _, f := range fp8 {
			add(f.elem, l.spec, "", f.prefix+"_"+l.letter)
			if f.prefix == "fp8" || f.prefix == "fp8n" {
				add(f.elem, l.spec+"_t0", "", f.prefix+"_"+l.letter+"c")
			}
		}
	}
	for _, z := range zeroLetters {
		add("uint8", z.spec, "", "uint8_"+z.letters)
		add("uint8", z.spec+"_t0", "", "uint8_"+z.letters+"c")
		add("uint4", z.spec+"_t0", "", "uint4_"+z.letters+"c")
	}
	// FP8 square tiles.
	add("float8_e4m3fnuz", "float32_t32_t32", "", "fp8nF32s")
	add("float8_e4m3fnuz", "float16_t32_t32", "", "fp8nf32s")
	add("e5m2fnuz", "bfloat16_t16_t16", "", "bf8nb32s")
	add("e4m3fn", "float32_t32_t32", "", "fp8F32s")
	add("e4m3fn", "float16_t32_t32", "", "fp8f32s")
	add("e5m2", "bfloat16_t16_t16", "", "bf8b32s")
	// OCP MX, 1-D tiles of 32 and 16, 2-D tiles.
	mx := []struct {
		names  []string
		elem   string
		tcElem string
		t16    string
		square string
	}{
		{[]string{"mxfp8e5", "mxbf8"}, "e5m2", "", "mxbf8t16", ""},
		{[]string{"mxfp8e4", "mxfp8"}, "e4m3fn", "", "mxfp8t16", "mxfp8s"},
		{[]string{"mxfp6e3", "mxbf6"}, "e3m2", "e3m2fnuz", "mxbf6t16", "mxbf6s"},
		{[]string{"mxfp6e2", "mxfp6"}, "e2m3", "e2m3fnuz", "mxfp6t16", "mxfp6s"},
		{[]string{"mxfp4e2", "mxfp4", "mxfp4e2w"}, "e2m1", "e2m1fnuz", "mxfp4t16", "mxfp4s"},
		{[]string{"mxint8"}, "int8", "", "mxint8t16", ""},
		{[]string{"mxint4"}, "int4", "", "mxint4t16", ""},
	}
	for _, m := range mx {
		note := ""
		if m.tcElem != "" {
			note = fmt.Sprintf(noteOCPElem, m.tcElem)
		}
		if m.elem == "int8" {
			note = "OCP MXINT8: int8 codes read as code/64 (fixed point 1.6), E8M0 scale per 32"
		}
		add(m.elem, "e8m0_t32", note, m.names...)
		add(m.elem, "e8m0_t16", note, m.t16)
		if m.square != "" {
			add(m.elem, "e8m0_t32_t32", note, m.square)
			add(m.elem, "e8m0_t16_t16", note, m.square+"16")
		}
	}
	add("e2m2", "e8m0_t32", fmt.Sprintf(noteOCPElem, "e2m2fnuz"), "mxfp5e2")
	// TensorCast's NV-style types (IEEE e4m3 block scale).
	for _, nv := range []struct{ name, elem string }{
		{"nvb8", "e5m2"}, {"nvf8", "e4m3fn"}, {"nvb6", "e3m2"}, {"nvf6", "e2m3"}, {"nvf4", "e2m1"},
	} {
		names := []string{nv.name}
		if nv.name == "nvf4" {
			names = append(names, "nvfp4e2")
		}
		add(nv.elem, "e4m3_t16", noteNVIEEE, names...)
		add(nv.elem, "e4m3_t16_t16", noteNVIEEE, nv.name+"s")
	}
	// MSFP through subtile exponent offsets (TensorCast v2), and BFP.
	add("int8", "e8m0_t16s2o1", "MSFP MX9 as TensorCast v2 defines it", "mx9")
	add("int5", "e8m0_t16s2o1", "MSFP MX6 as TensorCast v2 defines it", "mx6")
	add("int3", "e8m0_t16s2o1", "MSFP MX4 as TensorCast v2 defines it", "mx4")
	add("int8", "e8m0_t8", "block floating point: int8 (fixed point 1.6) with an E8M0 scale per 8", "bfp16")
	add("int8", "e8m0_t16", "", "bfp16t16")
	for _, o := range []string{"s8o1", "s4o1", "s8o2", "s4o2"} {
		add("e2m1", "e8m0_t32"+o, "", "e2m1_e32"+o)
	}
	// TensorCast v2 (main) types.
	add("uint16", "float16_float16", "", "uint16_ff")
	add("uint16", "bfloat16_bfloat16", "", "uint16_bb")
	add("int16", "float16", "", "int16_f")
	add("int16", "bfloat16", "", "int16_b")
	add("int16", "e8m0", "", "int16_e")
	for _, f := range []struct{ name, elem string }{
		{"e5m2_e", "e5m2"}, {"e5m2z_e", "e5m2fnuz"}, {"e4m3_e", "e4m3fn"}, {"e4m3z_e", "e4m3fnuz"},
		{"e3m2_e", "e3m2"}, {"e2m3_e", "e2m3"},
	} {
		add(f.elem, "e8m0", "", f.name)
	}
	add("uint4", "float16_float16_t32", "", "uint4_ff32")
	add("uint4", "float16_int8_t32", "", "uint4_fi32")
	add("uint4", "bfloat16_bfloat16_t32", "", "uint4_bb32")
	add("uint4", "bfloat16_int8_t32", "", "uint4_bi32")
	add("uint4", "e5m6_int4_t32", "", "uint4_f12i432")
	add("int4", "bfloat16_t32", "", "int4_b32")
	add("int4", "e5m3_t32", "", "int4_f32")
	add("q1.6", "e8m0_t32", "", "e1m6b1_e32")
	add("q1.2", "e8m0_t32", "", "e1m2b1_e32")
	add("q1.2", "e5m3_t32", "", "e1m2b1_f32")
	for _, e := range []string{"e2m1", "e3m2", "e2m3", "e4m3"} {
		elem := e
		if e == "e4m3" {
			elem = "e4m3fn"
		}
		add(elem, "e5m3_t32", "FP4/6/8 data with a 9-bit e5m3 float scale per 32 (TensorCast v2)", e+"_f32")
	}
	// NVIDIA NVFP4, integer groups and FP8 granularities.
	add("e2m1", "multi_ue4m3_float32_t16",
		"NVIDIA NVFP4: E2M1, UE4M3 scale per 16, float32 tensor scale, ModelOpt arithmetic order", "nvfp4")
	for _, k := range []string{"int8", "int4"} {
		add(k, "float32_t0", "symmetric, float32 scale per output channel", k+"_channel")
		for _, g := range []int{32, 64, 128} {
			add(k, fmt.Sprintf("float16_t%d", g), fmt.Sprintf("symmetric, float16 scale per group of %d", g), fmt.Sprintf("%s_g%d", k, g))
		}
	}
	// Asymmetric uint types: the zero point needs every code of the data
	// (0..255 for uint8, 0..15 for uint4), so uint8 data takes a uint8 zero
	// point (as compressed-tensors stores it); int8 holds uint4's 0..15.
	for _, u := range []struct{ elem, zero string }{{"uint8", "uint8"}, {"uint4", "int8"}} {
		add(u.elem, "float32_"+u.zero+"_t0",
			fmt.Sprintf("asymmetric, float32 scale and %s zero point per output channel", u.zero), u.elem+"_channel")
		for _, g := range []int{32, 64, 128} {
			add(u.elem, fmt.Sprintf("float16_%s_t%d", u.zero, g),
				fmt.Sprintf("asymmetric, float16 scale and %s zero point per group of %d", u.zero, g), fmt.Sprintf("%s_g%d", u.elem, g))
		}
	}
	for _, f := range []struct{ name, elem string }{{"fp8e4", "e4m3fn"}, {"fp8e5", "e5m2"}} {
		add(f.elem, "float32", "float32 scale per tensor", f.name+"_tensor")
		add(f.elem, "float32_t0", "float32 scale per output channel", f.name+"_channel")
		add(f.elem, "float32_t128_t128", "float32 scale per 128×128 block", f.name+"_block128")
	}
	return append(es, codebookEntries()...)
}

// codebookEntries are the codebook datatypes (docs/CODEBOOK.md §7).
func codebookEntries() []entry {
	var es []entry
	add := func(cb, spec, note string, names ...string) {
		es = append(es, entry{names: names, cb: cb, spec: spec, note: note})
	}
	// TensorCast triton's implicit codebooks, "4.5 bits per value".
	add("cb41fi_e2m2fnuz", "e8m0_t32s4", "TensorCast's mxfi4: E2M1 or int4 (×4) per subtile of 4, on e2m2fnuz", "mxfi4")
	add("cb41f01_e2m2fnuz", "e8m0_t32s4", "TensorCast's mxfp4m: E2M1 with an implied trailing mantissa bit 1 or 0, per subtile of 4", "mxfp4m")
	add("cb42fe0123_e3m2fnuz", "e8m0_t32s8", "TensorCast's mxfp4e: E2M1 at four exponent offsets (tops 24, 12, 6, 3) per subtile of 8", "mxfp4e")
	add("cb42f1346_e2m3fnuz", "e8m0_t32s8", "TensorCast's mxfp4f4: E2M1 at index offsets 1, 3, 4, 6 on e2m3fnuz per subtile of 8", "mxfp4f4")
	// TensorCast triton's MSFP types as codebooks (mx9, mx6, mx4 here are
	// v2's subtile-offset types).
	add("cb81ie_int9", "e8m0_t16s2", "TensorCast triton's mx9: int8 magnitudes or their halves per pair (prime bit), as a codebook", "mx9cb")
	add("cb51ie_int7", "e8m0_t16s2", "TensorCast triton's mx6: int5 magnitudes or their halves per pair (prime bit), as a codebook", "mx6cb")
	add("cb31ie_int5", "e8m0_t16s2", "TensorCast triton's mx4: int3 magnitudes or their halves per pair (prime bit), as a codebook", "mx4cb")
	// TensorCast v2's icb44fi family: digit 4, 3, 2 for the compute format,
	// e = E8M0 scale, f = e5m0 (tile) or e5m3 (with subtiles).
	for _, c := range []struct{ digit, compute string }{{"4", "e4m3fn"}, {"3", "e3m2fnuz"}, {"2", "e2m3fnuz"}} {
		cb := "icb44fi_" + c.compute
		note := "TensorCast v2's implicit codebook: E2M1 and int4 patterns at 8 index offsets each on " + c.compute
		add(cb, "e8m0_t32", note, "icb44fi"+c.digit+"_e32")
		add(cb, "e5m0_t32", note, "icb44fi"+c.digit+"_f32")
		for _, sub := range []string{"16", "8", "4"} {
			add(cb, "e8m0_t32s"+sub, note, "icb44fi"+c.digit+"_e32s"+sub)
			add(cb, "e5m3_t32s"+sub, note, "icb44fi"+c.digit+"_f32s"+sub)
		}
	}
	// bitsandbytes.
	add("nf4", "float32_t64", "bitsandbytes NF4: NormalFloat table, float32 absmax per block of 64 (no double quantization)", "nf4")
	add("bnb_fp4", "float32_t64", "bitsandbytes FP4 (not OCP E2M1): its table, float32 absmax per block of 64", "bnb_fp4")
	return es
}

// codebookByName returns the built-in table of a name (nf4, bnb_fp4, iq4_nl,
// e2m1) as a one-table codebook, or the implicit codebook of a TensorCast
// codebook name.
func codebookByName(name string) (*codebook.Codebook, error) {
	if t := codebook.Builtin(strings.ToLower(name)); t != nil {
		return codebook.New(t.Name(), t.Bits(), []*codebook.Table{t}, nil)
	}
	return codebook.Parse(name)
}

// registryState is the table of predefined datatypes, built on first use.
type registryState struct {
	once   sync.Once
	byName map[string]*DataType
	lower  map[string][]string // lower-cased name → names
	names  []string
	err    error
}

func initRegistry() {
	r := &registry
	r.byName = map[string]*DataType{}
	r.lower = map[string][]string{}
	for _, e := range predefined() {
		var spec *scale.Spec
		var err error
		if e.spec != "" {
			if spec, err = scale.Parse(e.spec); err != nil {
				r.err = fmt.Errorf("tcast: registry entry %s: %v", e.names[0], err)
				return
			}
		}
		var d *DataType
		if e.cb != "" {
			var cb *codebook.Codebook
			if cb, err = codebookByName(e.cb); err == nil {
				d, err = newCodebookType(cb, spec)
			}
		} else {
			var elem *dtype.Format
			if elem, err = dtype.Parse(e.elem); err == nil {
				d, err = newDataType(elem, spec)
			}
		}
		if err != nil {
			r.err = fmt.Errorf("tcast: registry entry %s: %v", e.names[0], err)
			return
		}
		d.name, d.aliases, d.note = e.names[0], e.names[1:], e.note
		for _, n := range e.names {
			if _, dup := r.byName[n]; dup {
				r.err = fmt.Errorf("tcast: registry name %s defined twice", n)
				return
			}
			r.byName[n] = d.labelled(n) // an alias gives itself as String
			r.lower[strings.ToLower(n)] = append(r.lower[strings.ToLower(n)], n)
			r.names = append(r.names, n)
		}
	}
	sort.Strings(r.names)
}

var registry registryState

func reg() *registryState {
	registry.once.Do(initRegistry)
	if registry.err != nil {
		panic(registry.err) // a broken built-in table is a programming error
	}
	return &registry
}

// Registered returns the distinct predefined datatypes, sorted by their
// canonical names.
func Registered() []*DataType {
	r := reg()
	var out []*DataType
	for _, n := range r.names {
		if d := r.byName[n]; d.name == n {
			out = append(out, d)
		}
	}
	return out
}

// LookupError is the error of an unknown datatype name.
type LookupError struct {
	Name    string
	Reason  string
	Closest []string
}

// Error returns "tcast: " and Detail.
func (e *LookupError) Error() string { return "tcast: " + e.Detail() }

// Detail returns the message without the package's name: `unknown
// datatype "mxfp3" (closest: mxfp4, mxfp6, mxfp8)`.
func (e *LookupError) Detail() string {
	s := fmt.Sprintf("unknown datatype %q", e.Name)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if len(e.Closest) > 0 {
		s += " (closest: " + strings.Join(e.Closest, ", ") + ")"
	}
	return s
}

// maxCodeLen bounds the names Lookup tries to split into element and spec.
const maxCodeLen = 256

// Lookup returns the datatype of a name: a registered name or alias (exact case
// first; a case-insensitive match when it is unique), or else a code
// "<element>[_<scale spec>]" such as "e2m1_e8m0_t32" or "int4_float16_int8_t128",
// split at the first underscore where both halves parse. An unknown name gives a
// *LookupError listing close matches.
func Lookup(name string) (*DataType, error) {
	r := reg()
	if d, ok := r.byName[name]; ok {
		return d, nil
	}
	if ns := r.lower[strings.ToLower(name)]; len(ns) == 1 {
		return r.byName[ns[0]], nil
	}
	if len(name) > maxCodeLen {
		return nil, &LookupError{Name: name[:maxCodeLen] + "…", Reason: fmt.Sprintf("%d characters, longer than any datatype code", len(name))}
	}
	if elem, err := dtype.Parse(name); err == nil {
		return New(elem, nil, "")
	}
	if d, ok, err := lookupCodebook(name); ok {
		return d, err
	}
	var firstErr error
	for i := 0; i < len(name); i++ {
		if name[i] != '_' {
			continue
		}
		elem, err := dtype.Parse(name[:i])
		if err != nil {
			continue
		}
		spec, err := scale.Parse(name[i+1:])
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		d, err := New(elem, spec, name)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	le := &LookupError{Name: name, Closest: names.Closest(name, r.names, 3)}
	if firstErr != nil {
		le.Reason = firstErr.Error()
	}
	return nil, le
}

// MustLookup is Lookup for names known to be good; it panics on error.
func MustLookup(name string) *DataType {
	d, err := Lookup(name)
	if err != nil {
		panic(err)
	}
	return d
}

// lookupCodebook is Lookup for codes that start with a codebook: a built-in
// table name or a TensorCast codebook name, alone or followed by
// "_<scale spec>". ok is false when name is no such code.
func lookupCodebook(name string) (d *DataType, ok bool, err error) {
	low := strings.ToLower(name)
	isCB := strings.HasPrefix(low, "cb") || strings.HasPrefix(low, "icb")
	var firstErr error
	for i := 1; i <= len(name); i++ {
		if i < len(name) && name[i] != '_' {
			continue
		}
		head := name[:i]
		if !isCB {
			if codebook.Builtin(strings.ToLower(head)) == nil {
				continue
			}
			if _, err := dtype.Parse(head); err == nil {
				continue // e2m1 is the format; its table only through New
			}
		}
		cb, err := codebookByName(head)
		if err != nil {
			if firstErr == nil && i == len(name) {
				firstErr = err
			}
			continue
		}
		var spec *scale.Spec
		if i < len(name) {
			if spec, err = scale.Parse(name[i+1:]); err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
		}
		d, err := NewCodebook(cb, spec, name)
		return d, true, err
	}
	if isCB && firstErr != nil {
		return nil, true, &LookupError{Name: name, Reason: firstErr.Error()}
	}
	return nil, false, nil
}
