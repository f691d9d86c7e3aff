package layout

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// Streamer is implemented by layouts that can write a weight's stored
// tensors a range of rows at a time, straight from float32 rows, so that a
// converter casts a large weight in cache-sized pieces and on several
// goroutines instead of whole: the tcast layout for the datatypes the
// one-pass kernels cast (MXFP4, MXFP8, MXINT8, NVFP4), and the gguf layout
// for all three of its datatypes. The bytes equal those of the whole cast
// followed by Encode.
type Streamer interface {
	// Stream returns the row-range writer of weight name of shape shape (in
	// cast orientation) cast to dt with opts, and false when this weight is
	// not written row by row (the caller casts it whole and calls Encode).
	Stream(name string, shape []int, dt *tcast.DataType, opts *tcast.Options) (RowStream, bool, error)
}

// RowStream writes one weight's stored tensors row range by row range. A row
// is a run of the weight's last axis (see tcast.RowCaster). CastRows calls
// on disjoint rows may run at once (after SetAmax, when NeedsAmax).
type RowStream interface {
	// Rows and RowLen give the weight's rows and the elements of each.
	Rows() int
	RowLen() int
	// NeedsAmax reports that SetAmax must be given the whole weight's amax
	// before CastRows (a second-level tensor scale: NVFP4).
	NeedsAmax() bool
	SetAmax(tcast.Amax)
	// CastRows casts the whole rows x, starting at row r0, into out: the
	// buffers of the stored tensors that Specs declared for the weight, in
	// that order and at their sizes. It writes the values the rows decode to
	// into deq unless it is nil, and uses s (the calling goroutine's, or
	// nil) for scratch.
	CastRows(out [][]byte, x []float32, r0 int, deq []float32, s *tcast.RowScratch) error
	// Written returns how many bytes of each output buffer the rows before
	// row r fill: once those rows are cast, these bytes are final and may be
	// written out (a buffer Finish fills, such as a tensor scale, counts 0).
	Written(r int) []int
	// Finish returns the stored tensors over out once every row is cast, as
	// Encode would, with the metadata entries Encode adds put in meta, and
	// the bits per value of the cast.
	Finish(out [][]byte, meta map[string]string) ([]Tensor, float64, error)
	// CastRowsTo is CastRows into buffers that hold only the bytes the rows
	// fill: for the n rows of x, out[i] holds bytes [Written(r0)[i],
	// Written(r0+n)[i]) of buffer i (none of a buffer Finish fills). Rows
	// start and end on byte boundaries of every buffer, so the bytes of
	// disjoint row ranges are disjoint and each range's are final once it is
	// cast: a converter can write them to their place in its output at
	// once, from the goroutine that cast them, and hold no buffer of the
	// whole weight.
	CastRowsTo(out [][]byte, x []float32, r0 int, deq []float32, s *tcast.RowScratch) error
	// FinishTail is Finish for rows cast with CastRowsTo: once every row is
	// cast, it returns the stored tensors holding, as Data, only their bytes
	// from Written(Rows()) on (those Finish fills, such as a tensor scale;
	// none for most datatypes), with the metadata entries and the bits per
	// value that Finish gives.
	FinishTail(meta map[string]string) ([]Tensor, float64, error)
}

// WeighedStream is a RowStream that can give the weights its quantizer
// put on each element's squared error (the GGUF layout's streams).
// CastRowsWeighed is CastRowsTo that also writes to w, len(x) long, the
// weight of each element in the error the quantizer minimised with
// Options.Importance (gguf.Weigh's), so that a weighted error needs no
// second pass. It reports whether it did: false, leaving w as it was, when
// the rows are not quantized with an importance vector (no importance, a
// type that takes none, or an unquantized type).
type WeighedStream interface {
	RowStream
	CastRowsWeighed(out [][]byte, x []float32, r0 int, deq, w []float32, s *tcast.RowScratch) (bool, error)
}

// rowBytes returns the buffers' byte ranges of n rows from row r0 of rs:
// [lo[i], hi[i]) of buffer i.
func rowBytes(rs RowStream, r0, n int) (lo, hi []int) {
	return rs.Written(r0), rs.Written(r0 + n)
}

// sliceRows returns the parts of the whole-weight buffers out that rows x
// from row r0 fill, for CastRows.
func sliceRows(lay, name string, rs RowStream, out [][]byte, x []float32, r0 int, want []int) ([][]byte, error) {
	if err := checkOut(lay, name, out, want); err != nil {
		return nil, err
	}
	n, err := rowsOf(lay, name, x, r0, rs.Rows(), rs.RowLen(), nil)
	if err != nil {
		return nil, err
	}
	lo, hi := rowBytes(rs, r0, n)
	parts := make([][]byte, len(out))
	for i := range out {
		parts[i] = out[i][lo[i]:hi[i]]
	}
	return parts, nil
}

// checkRowsTo checks the arguments of CastRowsTo: that x is whole rows from
// row r0 of rs, deq (unless nil) as long, and out the byte ranges of those
// rows.
func checkRowsTo(lay, name string, rs RowStream, out [][]byte, x []float32, r0 int, deq []float32) error {
	n, err := rowsOf(lay, name, x, r0, rs.Rows(), rs.RowLen(), deq)
	if err != nil {
		return err
	}
	lo, hi := rowBytes(rs, r0, n)
	want := make([]int, len(lo))
	for i := range lo {
		want[i] = hi[i] - lo[i]
	}
	return checkOut(lay, name, out, want)
}

// rowsOf checks that x is whole rows starting at r0 within rows rows of
// rowLen, and returns how many.
func rowsOf(lay, name string, x []float32, r0, rows, rowLen int, deq []float32) (int, error) {
	if rowLen == 0 || len(x)%rowLen != 0 {
		return 0, fmt.Errorf("layout %s: weight %s: %d values are not whole rows of %d", lay, name, len(x), rowLen)
	}
	nr := len(x) / rowLen
	switch {
	case r0 < 0 || r0 > rows-nr:
		return 0, fmt.Errorf("layout %s: weight %s: rows %d..%d are outside its %d", lay, name, r0, r0+nr, rows)
	case deq != nil && len(deq) != len(x):
		return 0, fmt.Errorf("layout %s: weight %s: %d dequantized values for %d", lay, name, len(deq), len(x))
	}
	return nr, nil
}

// checkOut reports whether out holds buffers of the sizes want.
func checkOut(lay, name string, out [][]byte, want []int) error {
	if len(out) != len(want) {
		return fmt.Errorf("layout %s: weight %s: %d output buffers, want %d", lay, name, len(out), len(want))
	}
	for i, b := range out {
		if len(b) != want[i] {
			return fmt.Errorf("layout %s: weight %s: output buffer %d holds %d bytes, want %d", lay, name, i, len(b), want[i])
		}
	}
	return nil
}

// tcastStream writes a weight of the tcast layout through the kernels: the
// Compressed form's parts are the stored tensors, filled in place.
type tcastStream struct {
	name  string
	shape []int
	dt    *tcast.DataType
	opts  tcast.Options
	rc    *tcast.RowCaster
	sizes []int
}

// Stream streams the weights whose cast the kernels make (tcast.RowCaster's
// Kernel).
func (tcastLayout) Stream(name string, shape []int, dt *tcast.DataType, opts *tcast.Options) (RowStream, bool, error) {
	o := tcast.DefaultOptions()
	if opts != nil {
		o = *opts
	}
	o.Form = tcast.Compressed
	rc, err := tcast.NewRowCaster(shape, dt, &o)
	if err != nil || !rc.Kernel() {
		return nil, false, err
	}
	c, err := tcast.Describe(shape, dt, tcast.Compressed, &o)
	if err != nil {
		return nil, false, err
	}
	s := &tcastStream{name: name, shape: shape, dt: dt, opts: o, rc: rc}
	for _, p := range c.Parts() {
		s.sizes = append(s.sizes, p.ByteLen())
	}
	// The kernels write the data and scale parts, Finish the tensor scale.
	if len(s.sizes) < 2 || s.sizes[0] != rc.DataBytes(rc.Rows()) || s.sizes[1] != rc.ScaleBytes(rc.Rows()) {
		return nil, false, nil
	}
	return s, true, nil
}

func (s *tcastStream) Rows() int            { return s.rc.Rows() }
func (s *tcastStream) RowLen() int          { return s.rc.RowLen() }
func (s *tcastStream) NeedsAmax() bool      { return s.rc.NeedsAmax() }
func (s *tcastStream) SetAmax(a tcast.Amax) { s.rc.SetAmax(a) }

func (s *tcastStream) Written(r int) []int {
	w := make([]int, len(s.sizes))
	w[0], w[1] = s.rc.DataBytes(r), s.rc.ScaleBytes(r)
	return w
}

func (s *tcastStream) CastRows(out [][]byte, x []float32, r0 int, deq []float32, sc *tcast.RowScratch) error {
	parts, err := sliceRows("tcast", s.name, s, out, x, r0, s.sizes)
	if err != nil {
		return err
	}
	return s.CastRowsTo(parts, x, r0, deq, sc)
}

func (s *tcastStream) CastRowsTo(out [][]byte, x []float32, r0 int, deq []float32, _ *tcast.RowScratch) error {
	if err := checkRowsTo("tcast", s.name, s, out, x, r0, deq); err != nil {
		return err
	}
	return s.rc.CastRowsPacked(out[0], out[1], x, deq)
}

func (s *tcastStream) FinishTail(meta map[string]string) ([]Tensor, float64, error) {
	t, err := tcast.Describe(s.shape, s.dt, tcast.Compressed, &s.opts)
	if err != nil {
		return nil, 0, err
	}
	w := s.Written(s.rc.Rows())
	parts := t.Parts()
	if len(parts) != len(s.sizes) {
		return nil, 0, fmt.Errorf("layout tcast: weight %s: %d parts, want %d", s.name, len(parts), len(s.sizes))
	}
	for i, p := range parts {
		if w[i] < s.sizes[i] {
			p.Bytes = make([]byte, s.sizes[i])
		}
	}
	if err := s.rc.Finish(t); err != nil {
		return nil, 0, err
	}
	// Encode's description, which needs the parts' shapes but not their
	// bytes (Encode of a Compressed tensor describes the tensor itself).
	specs, m, err := describe(s.name, t)
	if err != nil {
		return nil, 0, err
	}
	maps.Copy(meta, m)
	out := make([]Tensor, len(specs))
	for i, p := range parts {
		out[i] = Tensor{Spec: specs[i]}
		if w[i] < s.sizes[i] {
			out[i].Data = p.Bytes[w[i]:]
		}
	}
	return out, t.BitsPerValue(), nil
}

func (s *tcastStream) Finish(out [][]byte, meta map[string]string) ([]Tensor, float64, error) {
	if err := checkOut("tcast", s.name, out, s.sizes); err != nil {
		return nil, 0, err
	}
	t, err := tcast.Describe(s.shape, s.dt, tcast.Compressed, &s.opts)
	if err != nil {
		return nil, 0, err
	}
	for i, p := range t.Parts() {
		p.Bytes = out[i]
	}
	if err := s.rc.Finish(t); err != nil {
		return nil, 0, err
	}
	ts, err := tcastLayout{}.Encode(s.name, t, meta)
	return ts, t.BitsPerValue(), err
}

// ggufStream writes a weight of the gguf layout block by block, with the
// quantizers of the layout's Cast (gguf.Quantize: ggml's rule for Q8_0, and
// for Q4_0 without an importance vector; the toolkit's MXFP4 cast for MXFP4, whose
// codes are those of tcast's kernels; the searching quantizers otherwise).
type ggufStream struct {
	name   string
	spec   Spec
	typ    gguf.Type
	rows   int
	rowLen int
	bits   float64
	imp    ggufImp // tcast.Options.Importance, checked
}

// Stream streams every weight of a block type whose cast the gguf
// package's quantizers or the kernels make: the ggml types of the layout's
// table, MXFP4 with the default options, and the plain floats (F32, F16,
// BF16) rounded to nearest even without a keep mask. Its bits per value are the
// block type's (4.5 for Q4_K), not those of the datatype's view (whose
// float32 scales are stored as one float16 per super-block and small
// integers).
func (l ggufLayout) Stream(name string, shape []int, dt *tcast.DataType, opts *tcast.Options) (RowStream, bool, error) {
	o := tcast.DefaultOptions()
	if opts != nil {
		o = *opts
	}
	r := len(shape)
	axis, ok := tcast.AxisIndex(o.Axis, r)
	typ, isGGUF := ggufTypeOf(dt)
	if !ok || !isGGUF || l.Check(dt, axis, r) != nil || shape[r-1]%typ.BlockSize() != 0 {
		return nil, false, nil // Cast says what is wrong
	}
	specs, _, err := l.Specs(name, shape, dt, axis)
	if err != nil {
		return nil, false, nil
	}
	o.Form = tcast.Actual
	if _, err := tcast.Describe(shape, dt, tcast.Actual, &o); err != nil {
		return nil, false, nil
	}
	s := &ggufStream{name: name, spec: specs[0], typ: specs[0].GGML, rowLen: shape[r-1], bits: specs[0].GGML.BitsPerValue()}
	s.rows = 1
	for _, d := range shape[:r-1] {
		s.rows *= d
	}
	switch s.typ {
	case gguf.TypeMXFP4:
		// Only the cast of tcast's kernel path (its defaults) is
		// gguf.Quantize's.
		if rc, err := tcast.NewRowCaster(shape, dt, &o); err != nil || !rc.Kernel() {
			return nil, false, nil
		}
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16:
		if o.Keep != nil || o.Rounding != dtype.RoundEven {
			return nil, false, nil // tcast.Cast's, cast whole
		}
	default:
		if !ggmlOptions(&o) {
			return nil, false, nil // Cast refuses these
		}
		if s.imp, err = ggufImportance(o.Importance, shape, s.typ); err != nil {
			return nil, false, err
		}
	}
	return s, true, nil
}

func (s *ggufStream) Rows() int          { return s.rows }
func (s *ggufStream) RowLen() int        { return s.rowLen }
func (s *ggufStream) NeedsAmax() bool    { return false }
func (s *ggufStream) SetAmax(tcast.Amax) {}

func (s *ggufStream) Written(r int) []int {
	n, _ := s.typ.Size(int64(r) * int64(s.rowLen)) // whole blocks: rowLen is a multiple of the block
	return []int{int(n)}
}

func (s *ggufStream) CastRows(out [][]byte, x []float32, r0 int, deq []float32, sc *tcast.RowScratch) error {
	parts, err := sliceRows("gguf", s.name, s, out, x, r0, []int{int(s.spec.Bytes(GGUF))})
	if err != nil {
		return err
	}
	return s.CastRowsTo(parts, x, r0, deq, sc)
}

func (s *ggufStream) CastRowsTo(out [][]byte, x []float32, r0 int, deq []float32, _ *tcast.RowScratch) error {
	return s.castRows(out, x, r0, deq, nil)
}

func (s *ggufStream) CastRowsWeighed(out [][]byte, x []float32, r0 int, deq, w []float32, _ *tcast.RowScratch) (bool, error) {
	if s.imp.v == nil || !s.typ.Quantized() {
		return false, s.castRows(out, x, r0, deq, nil)
	}
	if len(w) != len(x) {
		return false, fmt.Errorf("layout gguf: tensor %s: rows from %d: %d weights for %d values", s.name, r0, len(w), len(x))
	}
	return true, s.castRows(out, x, r0, deq, w)
}

// castRows is CastRowsTo, with the quantizer's weights written to w unless
// it is nil.
func (s *ggufStream) castRows(out [][]byte, x []float32, r0 int, deq, w []float32) error {
	if err := checkRowsTo("gguf", s.name, s, out, x, r0, deq); err != nil {
		return err
	}
	if !s.typ.Quantized() {
		return encodePlain(s.typ, out[0], x, deq)
	}
	if err := s.imp.quantize(s.typ, out[0], x, r0, w); err != nil {
		return fmt.Errorf("layout gguf: tensor %s: rows from %d: %w", s.name, r0, err)
	}
	if deq != nil {
		return gguf.Dequantize(s.typ, deq, out[0])
	}
	return nil
}

func (s *ggufStream) FinishTail(map[string]string) ([]Tensor, float64, error) {
	return []Tensor{{Spec: s.spec}}, s.bits, nil // the rows fill the one tensor
}

func (s *ggufStream) Finish(out [][]byte, meta map[string]string) ([]Tensor, float64, error) {
	if err := checkOut("gguf", s.name, out, []int{int(s.spec.Bytes(GGUF))}); err != nil {
		return nil, 0, err
	}
	return []Tensor{{Spec: s.spec, Data: out[0]}}, s.bits, nil
}

// encodePlain writes x as little-endian F32, F16 or BF16 elements (rounded
// to nearest even, saturating, as tcast.Cast does) and, unless deq is nil,
// the values they hold into deq. On a little-endian machine the kernels
// write straight into dst when it is aligned for their element.
func encodePlain(typ gguf.Type, dst []byte, x, deq []float32) error {
	if typ == gguf.TypeF32 {
		if v, ok := kernels.ViewLE[float32](dst); ok {
			copy(v, x)
		} else {
			for i, f := range x {
				binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(f))
			}
		}
	} else {
		h, direct := kernels.ViewLE[uint16](dst)
		if !direct {
			h = make([]uint16, len(x))
		}
		if typ == gguf.TypeF16 {
			kernels.Float32ToFloat16(h, x, true)
		} else {
			kernels.Float32ToBFloat16(h, x, true)
		}
		if !direct {
			for i, c := range h {
				binary.LittleEndian.PutUint16(dst[2*i:], c)
			}
		}
	}
	if deq == nil {
		return nil
	}
	return gguf.Dequantize(typ, deq, dst)
}
