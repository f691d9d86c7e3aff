package codebook

import (
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// Tie says which of two neighbouring entries a value exactly halfway
// between them takes. In a signed (sign-magnitude) table the rule applies to
// magnitudes: TieLower and TieToZero take the smaller magnitude, TieUpper and
// TieAway the larger. Where both neighbours are equally far from zero
// (entries −a and a), TieToZero and TieAway take the lower.
type Tie uint8

// The tie rules.
const (
	// TieLower takes the smaller value (the zero value of Tie).
	TieLower Tie = iota
	// TieUpper takes the larger value (ggml's IQ4_NL search).
	TieUpper
	// TieToZero takes the value of smaller magnitude.
	TieToZero
	// TieAway takes the value of larger magnitude (TensorCast's codebooks:
	// |t| at or above a midpoint goes up).
	TieAway
	// TieEven takes the entry whose code is even, or the lower value if
	// neither or both are (round to nearest even of a float format read as a
	// table, such as E2M1).
	TieEven
)

var tieNames = [...]string{"lower", "upper", "to-zero", "away", "even"}

// String returns the rule's name.
func (t Tie) String() string {
	if int(t) < len(tieNames) {
		return tieNames[t]
	}
	return fmt.Sprintf("Tie(%d)", uint8(t))
}

// TableOptions control NewTable and NewSignedTable. The zero value accepts
// ascending distinct finite entries and encodes to the nearest entry, ties to
// the lower value.
type TableOptions struct {
	// Tie is the rule for values exactly halfway between two entries.
	Tie Tie
	// AnyOrder accepts entries (magnitudes) in any order; codes keep their
	// positions. Without it an entry below the one before it is ErrUnsorted.
	AnyOrder bool
	// AllowDuplicates accepts equal entries; a value equal to them encodes to
	// the lowest such code. Without it they are ErrDuplicate.
	AllowDuplicates bool
	// Thresholds, when not nil, replace the midpoints by explicit decision
	// thresholds, one between each pair of neighbouring distinct entries
	// (magnitudes) in ascending order: x goes to the entry above threshold i
	// when x > Thresholds[i] (strictly, as bitsandbytes' kernels compare), so
	// Tie is not used. Threshold i must lie at or above entry i and below
	// entry i+1.
	Thresholds []float32
	// NegZeroPositive makes a signed table encode −0 as +0: the sign is that
	// of x < 0, as bitsandbytes' FP4 takes it, instead of the sign bit.
	NegZeroPositive bool
}

// Table is a lookup-table number format: code c stands for the float32
// entry Values()[c]. A value is encoded to its nearest entry, with the
// table's tie rule for values exactly halfway (or by explicit thresholds),
// and a NaN to the code 0 encodes to. Tables are immutable and safe for
// concurrent use; build them with NewTable, NewSignedTable or the functions
// of the built-in tables.
type Table struct {
	name    string
	values  []float32 // by code
	bits    int
	signed  bool
	tie     Tie
	thresh  bool      // explicit thresholds
	sorted  []float32 // distinct entries (magnitudes when signed), ascending
	bounds  []float32 // bounds[i]: the smallest value going to sorted[i+1]
	idxCode []uint8   // code of each sorted entry (the lowest one)
	enc     *kernels.LUTEncoder
	lut     *[256]float32 // decode table, NaN past the last code
	maxAbs  float32
	zero    uint8 // the code of 0 (and of NaN)
	negPos  bool  // NegZeroPositive
}

// maxEntries is the most entries a table can have (codes are bytes).
const maxEntries = kernels.MaxLUTEntries

// NewTable returns the table whose code c stands for values[c]. The entries
// must be finite, ascending and distinct unless opts says otherwise (nil opts
// is the zero TableOptions); there must be 1 to 256 of them. The code width is
// the bits that number all entries (at least 1).
func NewTable(name string, values []float32, opts *TableOptions) (*Table, error) {
	var o TableOptions
	if opts != nil {
		o = *opts
	}
	if len(values) == 0 || len(values) > maxEntries {
		return nil, &TableError{Table: name, Index: -1, Err: fmt.Errorf("%w: %d entries, want 1 to %d", ErrSize, len(values), maxEntries)}
	}
	vals := slices.Clone(values)
	if err := checkEntries(name, vals, o, false); err != nil {
		return nil, err
	}
	t := &Table{name: name, values: vals, bits: bitsFor(len(vals)), tie: o.Tie}
	return t, t.build(vals, o, 0)
}

// NewSignedTable returns a sign-magnitude table: with h = len(magnitudes), a
// power of two, code c < h stands for magnitudes[c] and code h+c for its
// negative (−0 for a zero magnitude), so the top bit of a code is the sign.
// A value is encoded by its magnitude, the sign bit added for a negative one
// (and for −0 unless NegZeroPositive). The magnitudes must be finite and not
// negative, ascending and distinct unless opts says otherwise.
func NewSignedTable(name string, magnitudes []float32, opts *TableOptions) (*Table, error) {
	var o TableOptions
	if opts != nil {
		o = *opts
	}
	h := len(magnitudes)
	if h == 0 || h > maxEntries/2 || h&(h-1) != 0 {
		return nil, &TableError{Table: name, Index: -1, Err: fmt.Errorf("%w: %d magnitudes, want a power of two up to %d", ErrSize, h, maxEntries/2)}
	}
	mags := slices.Clone(magnitudes)
	for i, m := range mags {
		if m == 0 {
			mags[i] = 0 // −0 is the zero magnitude
		}
		if m < 0 {
			return nil, &TableError{Table: name, Index: i, Value: m, Err: ErrNegative}
		}
	}
	if err := checkEntries(name, mags, o, true); err != nil {
		return nil, err
	}
	vals := make([]float32, 2*h)
	for i, m := range mags {
		vals[i] = m
		vals[h+i] = -m
	}
	t := &Table{name: name, values: vals, bits: bitsFor(2 * h), signed: true, tie: o.Tie}
	return t, t.build(mags, o, uint8(h))
}

// bitsFor returns the code width of n entries: ceil(log2 n), at least 1.
func bitsFor(n int) int {
	b := 1
	for 1<<b < n {
		b++
	}
	return b
}

// checkEntries checks for NaN, infinities, order and duplicates.
func checkEntries(name string, v []float32, o TableOptions, mags bool) error {
	for i, x := range v {
		switch {
		case x != x:
			return &TableError{Table: name, Index: i, Value: x, Err: ErrNaN}
		case math.IsInf(float64(x), 0):
			return &TableError{Table: name, Index: i, Value: x, Err: ErrInf}
		case i > 0 && !o.AnyOrder && x < v[i-1]:
			return &TableError{Table: name, Index: i, Value: x, Err: ErrUnsorted}
		}
	}
	if !o.AllowDuplicates {
		seen := make(map[float32]int, len(v))
		for i, x := range v {
			if j, dup := seen[x+0]; dup { // x+0 turns −0 into +0
				return &TableError{Table: name, Index: i, Value: x, Err: fmt.Errorf("%w: equal to entry %d", ErrDuplicate, j)}
			}
			seen[x+0] = i
		}
	}
	return nil
}

// build derives the encoder from the entries e (values, or magnitudes of a
// signed table whose sign bit is signBit).
func (t *Table) build(e []float32, o TableOptions, signBit uint8) error {
	// Distinct entries in ascending order, each with its lowest code.
	order := make([]int, len(e))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case e[a] < e[b]:
			return -1
		case e[a] > e[b]:
			return 1
		}
		return a - b
	})
	for _, c := range order {
		if n := len(t.sorted); n > 0 && t.sorted[n-1] == e[c] {
			continue
		}
		t.sorted = append(t.sorted, e[c])
		t.idxCode = append(t.idxCode, uint8(c))
	}
	gaps := len(t.sorted) - 1
	t.bounds = make([]float32, gaps)
	if o.Thresholds != nil {
		t.thresh = true
		if len(o.Thresholds) != gaps {
			return &TableError{Table: t.name, Index: -1, Err: fmt.Errorf("%w: %d thresholds for %d distinct entries", ErrThreshold, len(o.Thresholds), len(t.sorted))}
		}
		for i, th := range o.Thresholds {
			if th != th || !(th >= t.sorted[i] && th < t.sorted[i+1]) {
				return &TableError{Table: t.name, Index: i, Value: th, Err: fmt.Errorf("%w: want it in [%v, %v)", ErrThreshold, t.sorted[i], t.sorted[i+1])}
			}
			t.bounds[i] = math.Nextafter32(th, float32(math.Inf(1)))
		}
	} else {
		for i := range gaps {
			t.bounds[i] = midBound(t.sorted[i], t.sorted[i+1], t.tieUp(i, signBit != 0))
		}
	}
	// The code of 0: the entry it falls to (a NaN gets the same).
	zi := 0
	for zi < gaps && 0 >= t.bounds[zi] {
		zi++
	}
	t.zero = t.idxCode[zi]
	t.negPos = o.NegZeroPositive
	t.enc = kernels.NewLUTEncoder(t.bounds, t.idxCode, signBit, !o.NegZeroPositive, t.zero)
	t.lut = new([256]float32)
	for c := range t.lut {
		t.lut[c] = float32(math.NaN())
		if c < len(t.values) {
			t.lut[c] = t.values[c]
		}
	}
	for _, v := range t.values {
		t.maxAbs = max(t.maxAbs, float32(math.Abs(float64(v))))
	}
	return nil
}

// tieUp says whether a value exactly halfway between sorted entries i and
// i+1 goes up under the table's tie rule.
func (t *Table) tieUp(i int, signed bool) bool {
	a, b := t.sorted[i], t.sorted[i+1]
	mid := float64(a)/2 + float64(b)/2 // only its sign is used
	switch t.tie {
	case TieUpper:
		return true
	case TieToZero:
		return !signed && mid < 0
	case TieAway:
		return signed || mid > 0
	case TieEven:
		ca, cb := t.idxCode[i], t.idxCode[i+1]
		return ca%2 != 0 && cb%2 == 0
	}
	return false
}

// midPrec is enough bits to hold the sum of any two float32 values exactly
// (their exponents span 2^−149 … 2^127).
const midPrec = 300

// midBound returns the smallest float32 that is nearer to b than to a, or
// exactly halfway when up is set: the bound of the entry b for an encoder
// that counts bounds ≤ x. The midpoint is computed exactly.
func midBound(a, b float32, up bool) float32 {
	var sa, sb big.Float
	sa.SetPrec(midPrec).SetFloat64(float64(a))
	sb.SetPrec(midPrec).SetFloat64(float64(b))
	mid := new(big.Float).SetPrec(midPrec).Add(&sa, &sb)
	mid.SetMantExp(mid, -1) // exact halving
	m, acc := mid.Float32() // nearest float32, and on which side of mid it lies
	inf := float32(math.Inf(1))
	switch {
	case acc == big.Above: // m is past the midpoint: nearer to b
		return m
	case acc == big.Below:
		return math.Nextafter32(m, inf)
	case up:
		return m
	}
	return math.Nextafter32(m, inf)
}

// Name returns the table's name.
func (t *Table) Name() string { return t.name }

// String returns the name.
func (t *Table) String() string { return t.name }

// Len returns the number of codes (entries).
func (t *Table) Len() int { return len(t.values) }

// Bits returns the code width.
func (t *Table) Bits() int { return t.bits }

// Signed reports whether the table is sign-magnitude (NewSignedTable).
func (t *Table) Signed() bool { return t.signed }

// Tie returns the tie rule (meaningless when Thresholded).
func (t *Table) Tie() Tie { return t.tie }

// Thresholded reports whether the table encodes by explicit thresholds.
func (t *Table) Thresholded() bool { return t.thresh }

// Values returns the entries by code.
func (t *Table) Values() []float32 { return slices.Clone(t.values) }

// Value returns the entry of code, or NaN when the table has none.
func (t *Table) Value(code uint8) float32 { return t.lut[code] }

// MaxAbs returns the largest entry magnitude.
func (t *Table) MaxAbs() float32 { return t.maxAbs }

// ZeroCode returns the code 0 encodes to, which NaN encodes to as well.
func (t *Table) ZeroCode() uint8 { return t.zero }

// Bounds returns, for each distinct entry (magnitude, in a signed table)
// above the smallest, in ascending order, the smallest float32 that encodes
// to it.
func (t *Table) Bounds() []float32 { return slices.Clone(t.bounds) }

// Encode returns the code of x.
func (t *Table) Encode(x float32) uint8 { return t.enc.Encode(x) }

// Quantize returns the entry x encodes to.
func (t *Table) Quantize(x float32) float32 { return t.lut[t.enc.Encode(x)] }

// EncodeSlice writes the code of src[i] to dst[i]; dst must be at least as
// long as src.
func (t *Table) EncodeSlice(dst []uint8, src []float32) { t.enc.EncodeScaled(dst, src, 1) }

// EncodeScaled writes the code of the float32 product src[i]·mul to dst[i]
// (mul is the reciprocal of a block's scale); dst must be at least as long
// as src.
func (t *Table) EncodeScaled(dst []uint8, src []float32, mul float32) {
	t.enc.EncodeScaled(dst, src, mul)
}

// EncodeBlocks writes the code of the float32 product src[i]·muls[i/block]
// to dst[i]: src is a run of blocks of block values (the last may be
// shorter), each with its own multiplier (the reciprocal of its scale). dst
// must be at least as long as src and muls must hold a multiplier per
// block, else the error wraps ErrArg.
func (t *Table) EncodeBlocks(dst []uint8, src []float32, block int, muls []float32) error {
	if block < 1 || len(dst) < len(src) || len(muls) < (len(src)+block-1)/block {
		return &TableError{Table: t.name, Index: -1, Err: fmt.Errorf("%w: encode %d values in blocks of %d into %d codes with %d multipliers", ErrArg, len(src), block, len(dst), len(muls))}
	}
	t.enc.EncodeBlocks(dst, src, block, muls)
	return nil
}

// DecodeSlice writes the entry of codes[i] to dst[i]; dst must be at least as
// long as codes. A code without an entry is an error wrapping ErrCode.
func (t *Table) DecodeSlice(dst []float32, codes []uint8) error {
	return t.DecodeScaled(dst, codes, 1)
}

// DecodeScaled writes the float32 product of the entry of codes[i] and mul
// to dst[i]; dst must be at least as long as codes. A code without an entry
// is an error wrapping ErrCode.
func (t *Table) DecodeScaled(dst []float32, codes []uint8, mul float32) error {
	if err := t.CheckCodes(codes); err != nil {
		return err
	}
	if mul == 1 {
		kernels.LUTDecode(dst, codes, t.lut)
	} else {
		kernels.LUTDecodeScaled(dst, codes, t.lut, mul)
	}
	return nil
}

// CheckCodes returns an error wrapping ErrCode, naming the first code of
// codes that has no entry, or nil.
func (t *Table) CheckCodes(codes []uint8) error {
	if len(t.values) == maxEntries {
		return nil
	}
	for i, c := range codes {
		if int(c) >= len(t.values) {
			return &TableError{Table: t.name, Index: -1, Err: fmt.Errorf("%w: code %d at offset %d, the table has %d entries", ErrCode, c, i, len(t.values))}
		}
	}
	return nil
}

// LUT returns the decode table: entry c is the value of code c, NaN where
// the table has none. The array is shared; do not modify it.
func (t *Table) LUT() *[256]float32 { return t.lut }
