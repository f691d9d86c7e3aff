package tcast

import (
	"fmt"
	"slices"

	"github.com/tensorcast-go/tensorcast/codebook"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/sparsity"
)

// DataType is a number format for the elements plus an optional scale spec: what
// a tensor is cast to. DataTypes are immutable; get them from [Lookup] or [New].
type DataType struct {
	name string
	// label is the name the datatype was asked for when that is not name
	// (an alias such as mxfp4, a datatype with sparsity added), else "".
	label string
	// dense is the datatype WithSparsity added sparsity to, else nil.
	dense   *DataType
	aliases []string
	note    string
	elem    *dtype.Format
	spec    *scale.Spec        // nil when unscaled
	cb      *codebook.Codebook // the tables of a codebook datatype, else nil
	// bits, when > 0, is the storage cost per element of the packed form
	// this datatype is a view of (WithBitsPerValue), else 0.
	bits float64
}

// Name returns the datatype's name (its first registered name), the one
// checkpoints record.
func (d *DataType) Name() string { return d.name }

// String returns the datatype as it was asked for, for messages: the alias
// Lookup found it by ("mxfp4" for mxfp4e2), "mxfp4 with 2:4 sparsity" for
// WithSparsity's, else Name.
func (d *DataType) String() string {
	if d.label != "" {
		return d.label
	}
	return d.name
}

// labelled returns a copy of d that String gives as label.
func (d *DataType) labelled(label string) *DataType {
	if label == d.name {
		return d
	}
	cp := *d
	cp.label = label
	return &cp
}

// Aliases returns the other names the datatype is registered under.
func (d *DataType) Aliases() []string { return append([]string(nil), d.aliases...) }

// Note says where the datatype comes from and where it differs from a namesake.
func (d *DataType) Note() string { return d.note }

// Elem returns the element format: for a codebook datatype the unsigned
// integer format of its table indices (uint4 for 16-entry tables).
func (d *DataType) Elem() *dtype.Format { return d.elem }

// Element returns the name of what an element is: the codebook's name for a
// codebook datatype (whose codes are Elem indices into its tables), else the
// element format's.
func (d *DataType) Element() string {
	if d.cb != nil {
		return d.cb.Name()
	}
	return d.elem.Name()
}

// Codebook returns the tables of a codebook datatype, nil for others.
func (d *DataType) Codebook() *codebook.Codebook { return d.cb }

// Spec returns the scale spec, nil for an unscaled datatype.
func (d *DataType) Spec() *scale.Spec { return d.spec }

// Code returns the "<element>[_<scale spec>]" spelling, which [Lookup] accepts.
func (d *DataType) Code() string {
	if d.spec == nil {
		return d.Element()
	}
	return d.Element() + "_" + d.spec.String()
}

// New checks that elem and spec make a datatype and names it (name "" gives
// Code()). spec may be nil for an unscaled datatype.
//
// The rules: unscaled data must be a float format; exponent formats (eXm0) are
// scales, never elements; a zero point goes with integer data, and unsigned data
// needs one; a tensor scale needs a float block scale; subtile exponent offsets
// need an exponent scale and a 1-D tile; subtiles without offsets select a
// codebook's tables, so they belong to codebook datatypes ([NewCodebook]).
// N:M sparsity (n<N>m<M> on the last tile) counts kept values in a tile, so
// N must divide the tile and subtile sizes (docs/SPARSITY.md §6).
// Signed integer data under an exponent scale is read as fixed point 1.(K−2)
// (intK → qK-2), as TensorCast and OCP MXINT8 define it: the codes are the same
// two's-complement integers, and the scale is 2^e for amax ∈ [2^e, 2^(e+1)).
func New(elem *dtype.Format, spec *scale.Spec, name string) (*DataType, error) {
	d, err := newDataType(elem, spec)
	if err != nil {
		return nil, err
	}
	return d.withName(name), nil
}

// withName names a datatype just made: name, or its code for "".
func (d *DataType) withName(name string) *DataType {
	d.name = name
	if name == "" {
		d.name = d.Code()
	}
	return d
}

func newDataType(elem *dtype.Format, spec *scale.Spec) (*DataType, error) {
	bad := func(format string, args ...any) (*DataType, error) {
		code := elem.Name()
		if spec != nil {
			code += "_" + spec.String()
		}
		return nil, fmt.Errorf("tcast: datatype %s: %s", code, fmt.Sprintf(format, args...))
	}
	if elem.Kind() == dtype.Exponent {
		return bad("exponent format %s can only be a scale", elem.Name())
	}
	if spec == nil {
		if elem.Kind() != dtype.Float {
			return bad("unscaled data must be a float format, and %s is an integer format", elem.Name())
		}
		return &DataType{elem: elem}, nil
	}
	if spec.IsSparse() {
		// A tile counts kept values: T of them span T/N groups of M, so N
		// must divide T (and a subtile size S).
		last := spec.Tiles[len(spec.Tiles)-1]
		switch {
		case last.Size != 0 && last.Size%spec.SparseN != 0:
			return bad("a tile of %d kept values is not a whole number of %d:%d groups (N must divide the tile size)", last.Size, spec.SparseN, spec.SparseM)
		case last.Sub != 0 && last.Sub%spec.SparseN != 0:
			return bad("a subtile of %d kept values is not a whole number of %d:%d groups (N must divide the subtile size)", last.Sub, spec.SparseN, spec.SparseM)
		}
	}
	isInt := elem.Kind() == dtype.Int
	if spec.Zero != nil && !isInt {
		return bad("a zero point needs integer data, not %s", elem.Name())
	}
	if isInt && !elem.Signed() && spec.Zero == nil {
		return bad("unsigned data %s needs a zero point", elem.Name())
	}
	if spec.TensorScale != nil && spec.Scale.Kind() != dtype.Float {
		return bad("a tensor scale needs a float block scale, not %s", spec.Scale.Name())
	}
	if spec.Scale.Kind() == dtype.Int {
		return bad("scale format %s is an integer format; use a float or an exponent (eXm0) format", spec.Scale.Name())
	}
	for _, t := range spec.Tiles {
		switch {
		case t.Sub != 0 && t.Offset == 0:
			return bad("subtiles without exponent offsets select a codebook's tables; make a codebook datatype (NewCodebook)")
		case t.Offset != 0 && (!spec.IsExponent() || len(spec.Tiles) != 1):
			return bad("subtile exponent offsets need an exponent scale and a 1-D tile")
		case t.Offset != 0 && t.Size == 0:
			return bad("subtile exponent offsets need a fixed tile size, not channel scaling")
		}
	}
	if isInt && elem.Signed() && spec.IsExponent() {
		// intK with FracBits 0 becomes q1.(K-2); fixed-point formats stay.
		if elem.ManBits() == 0 && elem.Bits() >= 2 {
			q, err := dtype.Parse(fmt.Sprintf("q1.%d", elem.Bits()-2))
			if err != nil {
				return bad("%v", err)
			}
			elem = q
		}
	}
	return &DataType{elem: elem, spec: spec}, nil
}

// tileElems returns the elements per scale of a tiled datatype, 0 for tensor or
// channel scaling (whose overhead depends on the tensor's shape).
func (d *DataType) tileElems() int {
	if d.spec == nil || len(d.spec.Tiles) == 0 {
		return 0
	}
	n := 1
	for _, t := range d.spec.Tiles {
		if t.Size == 0 {
			return 0
		}
		n *= t.Size
	}
	return n
}

func (d *DataType) bitsPerValue(metaPerTile func(scale.Tile) int) float64 {
	bits := float64(d.elem.Bits())
	n := d.tileElems()
	if d.spec != nil && d.spec.IsSparse() {
		// Per dense element: N/M codes and one mask bit; a tile of n kept
		// values spans n·M/N dense elements.
		nn, mm := d.spec.SparseN, d.spec.SparseM
		bits = bits*float64(nn)/float64(mm) + 1
		n = n * mm / nn
	}
	if n == 0 {
		return bits
	}
	over := d.spec.Scale.Bits()
	if d.spec.Zero != nil {
		over += d.spec.Zero.Bits()
	}
	for _, t := range d.spec.Tiles {
		if t.Offset != 0 {
			over += metaPerTile(t)
		}
	}
	if d.cb != nil && d.cb.MetaBits() > 0 {
		// One meta field per subtile (per tile without subtiles); tiles of
		// codebooks with meta are 1-D.
		t := d.spec.Tiles[0]
		fields := 1
		if t.Sub != 0 {
			fields = t.Size / t.Sub
		}
		over += d.cb.MetaBits() * fields
	}
	return bits + float64(over)/float64(n)
}

// BitsPerValue returns the storage cost per element: element bits (a
// codebook's index bits) plus, for tiled datatypes, the scale, zero-point,
// subtile-offset and codebook meta bits of a tile spread over its elements.
// For N:M sparse datatypes it is per element of the dense tensor: N/M codes,
// one mask bit, and a tile's overhead over the T·M/N elements it spans.
// Tensor and channel scales, and a second-level tensor scale, cost a
// fixed number of bits per tensor or row, which is left out here;
// [Tensor.BitsPerValue] gives the exact figure for a tensor.
//
// A datatype made by [DataType.WithBitsPerValue] returns the figure it was
// given: that of the packed form it is a view of.
func (d *DataType) BitsPerValue() float64 {
	if d.bits > 0 {
		return d.bits
	}
	return d.bitsPerValue(func(t scale.Tile) int { return t.Offset * (t.Size / t.Sub) })
}

// TensorCastBitsPerValue is BitsPerValue as TensorCast v2 computes it, counting
// the subtile offset bits once per tile rather than once per subtile
// (docs/TENSORCAST.md §6, item 8). It differs from BitsPerValue only for datatypes with
// offsets (mx9, mx6, mx4, e2m1_e32s8o1, ...).
//
// A datatype made by [DataType.WithBitsPerValue] returns the figure it was
// given, as BitsPerValue does.
func (d *DataType) TensorCastBitsPerValue() float64 {
	if d.bits > 0 {
		return d.bits
	}
	return d.bitsPerValue(func(t scale.Tile) int { return t.Offset })
}

// WithBitsPerValue returns a copy of d whose BitsPerValue and
// TensorCastBitsPerValue are bits: for a datatype that is the unpacked view
// of a packed block format storing its scales in fewer bits than the view's
// scale format (ggml's K-quants: the view has a float32 scale per sub-block,
// the block a 6-bit integer times a float16 super-block scale), so that the
// datatype reports what the packed form costs. bits must be positive.
func (d *DataType) WithBitsPerValue(bits float64) *DataType {
	if !(bits > 0) {
		panic(fmt.Sprintf("tcast: WithBitsPerValue(%v) for %s: bits must be positive", bits, d.name))
	}
	c := *d
	c.aliases = slices.Clone(d.aliases)
	c.bits = bits
	return &c
}

// WithSparsity returns dt with N:M sparsity p on its last tile: the datatype
// whose code has n<N>m<M> added to the last tile segment (mxfp4 with 2:4 is
// e2m1_e8m0_t32n2m4, 32 kept values per scale). dt must be scaled with a
// tile or channel segment, and M and N must both divide the tile and
// subtile sizes; a datatype that already has another pattern is an error,
// one with p itself is returned as is. The new datatype is named by its code.
func WithSparsity(dt *DataType, p sparsity.Pattern) (*DataType, error) {
	bad := func(reason string, err error) (*DataType, error) {
		return nil, &SparsityError{DataType: dt.String(), Pattern: p, Reason: reason, Err: err}
	}
	if err := p.Validate(); err != nil {
		return bad("", err)
	}
	s := dt.spec
	switch {
	case dt.cb != nil:
		return bad("codebook datatypes take no N:M sparsity; prune with a scaled datatype such as mxfp4 or nvfp4", nil)
	case s == nil || len(s.Tiles) == 0:
		return bad("the groups need a tile or channel scale (a tile segment in the scale spec)", nil)
	case s.IsSparse() && (s.SparseN != p.N || s.SparseM != p.M):
		return bad(fmt.Sprintf("it has n%dm%d sparsity already", s.SparseN, s.SparseM), nil)
	case s.IsSparse():
		return dt, nil
	}
	cp := *s
	cp.SparseN, cp.SparseM = p.N, p.M
	spec, err := scale.Parse(cp.String()) // the grammar's checks (M divides the tile)
	if err != nil {
		return bad("", err)
	}
	sp, err := New(dt.elem, spec, "")
	if err != nil {
		return nil, err
	}
	sp = sp.labelled(fmt.Sprintf("%s with %v sparsity", dt, p))
	sp.dense = dt
	return sp, nil
}

// Dense returns the datatype WithSparsity made d of, the one without the
// N:M sparsity; nil for a datatype not made so.
func (d *DataType) Dense() *DataType { return d.dense }

// SparsityError reports a datatype that cannot take an N:M sparsity
// pattern (WithSparsity).
type SparsityError struct {
	DataType string           // the datatype, as asked for
	Pattern  sparsity.Pattern // the pattern
	Reason   string           // why, or "" when Err says it
	Err      error            // the pattern's or the scale grammar's error, or nil
}

// Error returns "tcast: mxfp4 with 2:4 sparsity: REASON".
func (e *SparsityError) Error() string {
	return "tcast: " + e.DataType + " with " + e.Pattern.String() + " sparsity: " + e.Detail()
}

// Detail returns the reason alone.
func (e *SparsityError) Detail() string {
	switch {
	case e.Reason != "" && e.Err != nil:
		return e.Reason + ": " + e.Err.Error()
	case e.Reason != "":
		return e.Reason
	case e.Err != nil:
		return e.Err.Error()
	}
	return "not possible"
}

// Unwrap returns Err.
func (e *SparsityError) Unwrap() error { return e.Err }

// NewCodebook makes a datatype of the codebook cb under spec (nil: the table
// entries are the values) and names it (name "" gives Code()). Elements
// store cb.IndexBits()-bit table indices (elements of format uintI); a
// codebook of more than one table selects one per subtile, or per tile
// without subtiles, and stores its index in the meta part, so it needs a
// single 1-D tile. The scale is a float or exponent format, without zero
// point or second-level tensor scale; an exponent scale needs cb's compute
// format, from whose top exponent the power of two is chosen
// (docs/CODEBOOK.md §7).
func NewCodebook(cb *codebook.Codebook, spec *scale.Spec, name string) (*DataType, error) {
	d, err := newCodebookType(cb, spec)
	if err != nil {
		return nil, err
	}
	return d.withName(name), nil
}

func newCodebookType(cb *codebook.Codebook, spec *scale.Spec) (*DataType, error) {
	if cb == nil {
		return nil, fmt.Errorf("tcast: nil codebook")
	}
	bad := func(format string, args ...any) (*DataType, error) {
		code := cb.Name()
		if spec != nil {
			code += "_" + spec.String()
		}
		return nil, fmt.Errorf("tcast: datatype %s: %s", code, fmt.Sprintf(format, args...))
	}
	if cb.IndexBits() < 2 {
		return bad("codebook indices of %d bit are not supported (at least 2)", cb.IndexBits())
	}
	idx, err := dtype.Parse(fmt.Sprintf("uint%d", cb.IndexBits()))
	if err != nil {
		return bad("%v", err)
	}
	d := &DataType{elem: idx, spec: spec, cb: cb}
	if spec == nil {
		if cb.MetaBits() > 0 {
			return bad("a codebook of %d tables needs a 1-D tile to select them per tile", cb.Len())
		}
		return d, nil
	}
	switch {
	case spec.Zero != nil:
		return bad("codebook datatypes take no zero point")
	case spec.TensorScale != nil:
		return bad("codebook datatypes take no second-level tensor scale")
	case spec.IsSparse():
		return bad("codebook datatypes take no N:M sparsity (n%dm%d)", spec.SparseN, spec.SparseM)
	case spec.Scale.Kind() == dtype.Int:
		return bad("scale format %s is an integer format; use a float or an exponent (eXm0) format", spec.Scale.Name())
	case spec.IsExponent() && cb.Compute() == nil:
		return bad("an exponent scale needs the codebook's compute format, and %s has none", cb.Name())
	case cb.MetaBits() > 0 && len(spec.Tiles) != 1:
		return bad("a codebook of %d tables needs a single 1-D tile to select them", cb.Len())
	}
	for _, t := range spec.Tiles {
		if t.Offset != 0 {
			return bad("codebook datatypes take no subtile exponent offsets")
		}
		if t.Sub != 0 && cb.MetaBits() == 0 {
			return bad("subtiles select among a codebook's tables, and %s has one", cb.Name())
		}
	}
	return d, nil
}
