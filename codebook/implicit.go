package codebook

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tensorcast-go/tensorcast/dtype"
)

// TensorCast's implicit codebooks: tables generated from a pattern (the
// positive values of a small float or integer format, or index spacings)
// placed on the number line of a compute format, shifted down it by whole
// indices and by whole binades. docs/CODEBOOK.md §4 states the grammar and
// the semantics implemented here, and where they differ from TensorCast's
// code.

// Parse returns the implicit codebook of a TensorCast codebook name, in
// either of TensorCast's grammars:
//
//	cb<I><M><clauses>_<compute>[_<label>]   (triton branch)
//	icb<I><M><clauses>_<compute>            (main branch, "v2")
//
// I is the index width (one digit, 1–8), M the meta width (one digit, 1–8,
// 2^M tables), compute a number format (intK read as TensorCast's fixed
// point q1.(K−2)). Names are case-insensitive. A name without clauses is a
// generic codebook, whose tables only the caller can give (New). Every
// problem is a *GrammarError wrapping ErrGrammar or ErrOffLine.
func Parse(name string) (*Codebook, error) {
	s := strings.ToLower(strings.TrimSpace(name))
	g := &gen{name: name}
	var err error
	switch {
	case strings.HasPrefix(s, "icb"):
		err = g.parseV2(s)
	case strings.HasPrefix(s, "cb"):
		err = g.parseTriton(s)
	default:
		return nil, g.fail(0, ErrGrammar, "a codebook name starts with cb or icb")
	}
	if err != nil {
		return nil, err
	}
	return g.build()
}

// gen is one codebook being parsed and generated.
type gen struct {
	name      string // as given
	canon     string // the codebook's name
	index     int    // I
	meta      int    // M
	compute   *dtype.Format
	line      []float32 // distinct non-negative finite values of compute, ascending
	maps      []mapSpec
	clauseOff int // offset of the clauses in the name, for errors
}

// mapSpec is one mapping to generate.
type mapSpec struct {
	name     string
	kind     byte // 'f', 'i', 'p', 's'
	offset   int  // index shift down from the top; −1: the natural placement (f, i)
	interval int  // p, s: the first gap
	exp      int  // binades down
	at       int  // offset of the clause in the name
}

func (g *gen) fail(at int, cause error, format string, args ...any) error {
	return &GrammarError{Name: g.name, Offset: at, Reason: fmt.Sprintf(format, args...), Err: cause}
}

// header reads "<I><M><clauses>_" at s[at:] and returns the clauses and
// their offset; the compute format starts after the '_' that ends them.
func (g *gen) header(s string, at int) (desc string, descAt int, err error) {
	if len(s) < at+2 || !isDigit(s[at]) || !isDigit(s[at+1]) {
		return "", 0, g.fail(at, ErrGrammar, "want two digits: index bits and meta bits")
	}
	g.index, g.meta = int(s[at]-'0'), int(s[at+1]-'0')
	if g.index < 1 || g.index > 8 {
		return "", 0, g.fail(at, ErrGrammar, "index bits %d out of range 1..8", g.index)
	}
	if g.meta < 1 || g.meta > 8 {
		return "", 0, g.fail(at+1, ErrGrammar, "meta bits %d out of range 1..8", g.meta)
	}
	at += 2
	us := strings.IndexByte(s[at:], '_')
	if us < 0 {
		return "", 0, g.fail(len(s), ErrGrammar, "missing '_<compute format>'")
	}
	return s[at : at+us], at, nil
}

// computeFormat parses the compute format name at offset at.
func (g *gen) computeFormat(c string, at int) error {
	if c == "" {
		return g.fail(at, ErrGrammar, "missing the compute format after '_'")
	}
	pname := c
	if k, ok := strings.CutPrefix(c, "int"); ok {
		// TensorCast's intK is the fixed point e1m(K−2)b1fnuz.
		if n, err := strconv.Atoi(k); err == nil && n >= 2 {
			pname = fmt.Sprintf("q1.%d", n-2)
		}
	}
	f, err := dtype.Parse(pname)
	if err != nil {
		return &GrammarError{Name: g.name, Offset: at, Reason: fmt.Sprintf("compute format %q: %v", c, err), Err: fmt.Errorf("%w: %w", ErrGrammar, err)}
	}
	if f.Kind() == dtype.Exponent || !f.Signed() || f.Bits() > 16 {
		return g.fail(at, ErrGrammar, "compute format %s must be a signed float or fixed-point format of up to 16 bits", f.Name())
	}
	g.compute = f
	g.line = nonNegative(f)
	return nil
}

// nonNegative returns the distinct non-negative finite values of f (of up
// to 16 bits), ascending: −0 and +0 as one 0.
func nonNegative(f *dtype.Format) []float32 {
	var vals []float32
	for _, p := range f.NumberLine() {
		if v := p.Value + 0; v >= 0 && (len(vals) == 0 || v > vals[len(vals)-1]) { // −0 → +0
			vals = append(vals, v)
		}
	}
	return vals
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// digits returns the run of digits at s[at:].
func digits(s string, at int) string {
	end := at
	for end < len(s) && isDigit(s[end]) {
		end++
	}
	return s[at:end]
}

// parseTriton parses cb<I><M><clauses>_<compute>[_<label>].
func (g *gen) parseTriton(s string) error {
	desc, at, err := g.header(s, 2)
	if err != nil {
		return err
	}
	rest := at + len(desc) + 1
	cname, label, _ := strings.Cut(s[rest:], "_")
	if err := g.computeFormat(cname, rest); err != nil {
		return err
	}
	g.canon = s
	if label != "" {
		g.canon = label
	}
	if desc == "" {
		return g.fail(at, ErrGrammar, "no implicit pattern: a generic codebook's tables are given with New")
	}
	g.clauseOff = at
	for i := 0; i < len(desc); {
		kind := desc[i]
		cat := at + i
		if !strings.ContainsRune("fips", rune(kind)) {
			return g.fail(cat, ErrGrammar, "unknown clause %q: want f, i, p or s", kind)
		}
		i++
		ds := digits(desc, i)
		i += len(ds)
		exps := []int{0}
		if i < len(desc) && desc[i] == 'e' {
			i++
			es := digits(desc, i)
			i += len(es)
			exps = nil
			if es == "" {
				exps = []int{0, 1}
			}
			for _, d := range es {
				exps = append(exps, int(d-'0'))
			}
		}
		interval := 0
		var offs []int
		switch kind {
		case 'p', 's':
			interval = 1
			if ds != "" {
				interval, ds = int(ds[0]-'0'), ds[1:]
				if interval == 0 {
					return g.fail(cat+1, ErrGrammar, "clause %c: interval 0; the first digit is the gap, at least 1", kind)
				}
			}
			offs = []int{0}
		default:
			offs = []int{-1} // the natural placement
		}
		if ds != "" {
			offs = nil
			for _, d := range ds {
				offs = append(offs, int(d-'0'))
			}
		}
		for _, o := range offs {
			for _, e := range exps {
				g.maps = append(g.maps, mapSpec{name: tritonName(kind, o, interval, e, len(exps) > 1 || e != 0),
					kind: kind, offset: o, interval: interval, exp: e, at: cat})
			}
		}
	}
	return nil
}

// tritonName names a mapping as TensorCast's triton branch does: f<off>,
// i<off>, p<interval>_<off>, with e<exp> appended for exponent offsets.
func tritonName(kind byte, off, interval, exp int, withExp bool) string {
	s := string(kind)
	switch {
	case kind == 'p' || kind == 's':
		s += fmt.Sprintf("%d_%d", interval, off)
	case off >= 0:
		s += strconv.Itoa(off)
	}
	if withExp {
		s += fmt.Sprintf("e%d", exp)
	}
	return s
}

// parseV2 parses icb<I><M><clauses>_<compute>.
func (g *gen) parseV2(s string) error {
	desc, at, err := g.header(s, 3)
	if err != nil {
		return err
	}
	if err := g.computeFormat(s[at+len(desc)+1:], at+len(desc)+1); err != nil {
		return err
	}
	g.canon = s
	if desc == "" {
		return g.fail(at, ErrGrammar, "no clauses")
	}
	g.clauseOff = at
	cls, err := g.v2Clauses(desc, at)
	if err != nil {
		return err
	}
	return g.v2Maps(cls, at)
}

// v2Clause is a clause of a version 2 name: its kind (f, i, p or s), the
// offset of its first mapping and the increment between its offsets (1
// for f and i), and its position in the name.
type v2Clause struct {
	kind        byte
	start, incr int
	at          int
}

// v2Clauses parses the clauses desc, found at position at of the name.
func (g *gen) v2Clauses(desc string, at int) ([]v2Clause, error) {
	var cls []v2Clause
	for i := 0; i < len(desc); {
		kind := desc[i]
		cat := at + i
		if !strings.ContainsRune("fips", rune(kind)) {
			return nil, g.fail(cat, ErrGrammar, "unknown clause %q: want f, i, p or s", kind)
		}
		i++
		ds := digits(desc, i)
		if len(ds) > 2 {
			return nil, g.fail(cat, ErrGrammar, "clause %c takes at most two digits", kind)
		}
		i += len(ds)
		c := v2Clause{kind: kind, incr: 1, at: cat}
		switch kind {
		case 'f', 'i':
			if len(ds) > 1 {
				return nil, g.fail(cat, ErrGrammar, "clause %c takes one digit, the index offset from the top", kind)
			}
			if ds != "" {
				c.start = int(ds[0] - '0')
			}
		default:
			if ds != "" {
				c.incr = int(ds[0]-'0') + 1
			}
			if len(ds) > 1 {
				c.start = int(ds[1] - '0')
			}
		}
		cls = append(cls, c)
	}
	return cls, nil
}

// v2Maps shares the tables of the meta bits evenly among the clauses cls
// (at position at of the name), each taking consecutive offsets, or every
// other one where the compute format leaves room, and adds their mappings.
func (g *gen) v2Maps(cls []v2Clause, at int) error {
	np := 1
	for np < len(cls) {
		np *= 2
	}
	shifts := (1 << g.meta) / np
	if shifts*len(cls) != 1<<g.meta {
		return g.fail(at, ErrGrammar, "%d clauses do not divide %d tables evenly", len(cls), 1<<g.meta)
	}
	step := 1
	if g.meta > 1 && shifts < 1<<g.compute.ManBits() {
		step = 2
	}
	for _, c := range cls {
		for k := range shifts {
			off := c.start + k*step
			name := fmt.Sprintf("%c_%d", c.kind, off)
			if c.kind == 'p' || c.kind == 's' {
				name = fmt.Sprintf("%c%d_%d", c.kind, c.incr, off)
			}
			g.maps = append(g.maps, mapSpec{name: name, kind: c.kind, offset: off, interval: c.incr, at: c.at})
		}
	}
	return nil
}

// build generates the tables.
func (g *gen) build() (*Codebook, error) {
	if len(g.maps) != 1<<g.meta {
		return nil, g.fail(g.clauseOff, ErrGrammar, "the clauses give %d tables; %d meta bits need %d", len(g.maps), g.meta, 1<<g.meta)
	}
	tables := make([]*Table, len(g.maps))
	for i, m := range g.maps {
		mags, err := g.magnitudes(m)
		if err != nil {
			return nil, err
		}
		t, err := NewSignedTable(m.name, mags, &TableOptions{Tie: TieAway, AllowDuplicates: true})
		if err != nil {
			return nil, g.fail(m.at, ErrOffLine, "mapping %s: %v", m.name, err)
		}
		tables[i] = t
	}
	return New(g.canon, g.index, tables, g.compute)
}

// lineIndex returns the index of v on the compute line, or where it would
// be inserted, and whether v is on the line.
func (g *gen) lineIndex(v float32) (int, bool) { return slices.BinarySearch(g.line, v) }

// top returns the index of the largest line value ≤ max·2^−exp.
func (g *gen) top(exp int) int {
	lim := float32(math.Ldexp(float64(g.compute.MaxFinite()), -exp))
	i, on := g.lineIndex(lim)
	if !on {
		i--
	}
	return i
}

// pattern returns the non-negative values of the f or i pattern of I bits
// (2^(I−1) of them, 0 first) and the top exponent of its format.
func (g *gen) pattern(kind byte, m mapSpec) ([]float32, int, error) {
	var name string
	switch {
	case kind == 'f' && g.index >= 3:
		name = fmt.Sprintf("e2m%dfnuz", g.index-3)
	case kind == 'i' && g.index >= 2:
		name = fmt.Sprintf("q1.%d", g.index-2)
	default:
		return nil, 0, g.fail(m.at, ErrGrammar, "clause %c needs more than %d index bits", kind, g.index)
	}
	f := dtype.MustParse(name)
	return nonNegative(f), f.Emax(), nil
}

// magnitudes generates the 2^(I−1) magnitudes of one mapping, 0 first.
func (g *gen) magnitudes(m mapSpec) ([]float32, error) {
	half := 1 << (g.index - 1)
	if m.kind == 'p' || m.kind == 's' {
		// Indices from the top (lowered by m.exp binades and m.offset
		// indices), the gap m.interval, growing by 1 per step for p.
		idx := g.top(m.exp) - m.offset
		gap := m.interval
		mags := make([]float32, half)
		for k := half - 1; k >= 1; k-- {
			if idx < 0 {
				return nil, g.fail(m.at, ErrOffLine, "mapping %s runs below the bottom of the %s number line", m.name, g.compute.Name())
			}
			mags[k] = g.line[idx]
			idx -= gap
			if m.kind == 'p' {
				gap++
			}
		}
		return mags, nil
	}
	pat, pemax, err := g.pattern(m.kind, m)
	if err != nil {
		return nil, err
	}
	// The natural placement: scaled so that the pattern's top binade is the
	// compute format's, lowered by m.exp binades.
	shift := g.compute.Emax() - pemax - m.exp
	mags := make([]float32, len(pat))
	idx := make([]int, len(pat))
	for k, v := range pat {
		mags[k] = float32(math.Ldexp(float64(v), shift))
		i, on := g.lineIndex(mags[k])
		if !on {
			return nil, g.fail(m.at, ErrOffLine, "mapping %s: %v is not on the %s number line", m.name, mags[k], g.compute.Name())
		}
		idx[k] = i
	}
	if m.offset < 0 {
		return mags, nil
	}
	// Shift the non-zero entries by whole indices so that the largest lands
	// m.offset below the top; the leading 0 stays.
	d := g.top(m.exp) - m.offset - idx[len(idx)-1]
	for k := 1; k < len(mags); k++ {
		j := idx[k] + d
		if j < 0 || j >= len(g.line) {
			return nil, g.fail(m.at, ErrOffLine, "mapping %s: shifted by %d indices it leaves the %s number line", m.name, d, g.compute.Name())
		}
		mags[k] = g.line[j]
	}
	return mags, nil
}
