package layout

import (
	"fmt"
	"slices"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/sparsity"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// ctSparseCodec is one of compressed-tensors' sparse formats: how a pruned
// weight's dense shape, kept values and keep mask are stored.
type ctSparseCodec struct {
	// specs declares P.shape, P.compressed, P.bitmask and any index tensor
	// after them, for weight w keeping kept values of dtype vdt.
	specs func(w *ctWeight, vdt safetensors.DType, kept int) []Spec
	// index returns the data of the tensors after P.bitmask.
	index func(m *mask.Mask, out, in int) [][]byte
	// mask reads module p's keep mask from its bitmask (and index tensors),
	// checked against P.compressed (values), and returns it with the shape
	// P.compressed must have.
	mask func(src Source, p string, out, in int, bitmask []byte, values safetensors.TensorInfo) (
		*mask.Mask, []int, error)
}

// ctSparseCodecs holds the sparse formats.
var ctSparseCodecs = map[SparseFormat]*ctSparseCodec{
	Sparse24Bitmask: {
		specs: func(w *ctWeight, vdt safetensors.DType, _ int) []Spec {
			return []Spec{
				specOf(w.p+".shape", safetensors.I64, []int{2, 1}),
				specOf(w.p+".compressed", vdt, []int{w.out, w.in / 2}),
				bitmaskSpec(w),
			}
		},
		index: func(*mask.Mask, int, int) [][]byte { return nil },
		mask:  sparse24Mask,
	},
	SparseBitmask: {
		specs: func(w *ctWeight, vdt safetensors.DType, kept int) []Spec {
			return []Spec{
				specOf(w.p+".shape", safetensors.I64, []int{2}),
				specOf(w.p+".compressed", vdt, []int{kept}),
				bitmaskSpec(w),
				specOf(w.p+".row_offsets", safetensors.I64, []int{w.out}),
			}
		},
		index: func(m *mask.Mask, out, in int) [][]byte {
			offs := make([]int, out)
			n := 0
			for r := range out {
				offs[r] = n
				n += m.CountRange(r*in, r*in+in)
			}
			return [][]byte{int64Bytes(offs...)}
		},
		mask: bitmaskMask,
	},
}

// bitmaskSpec declares P.bitmask, the keep mask packed along the rows.
func bitmaskSpec(w *ctWeight) Spec {
	return specOf(w.p+".bitmask", safetensors.U8, []int{w.out, (w.in + 7) / 8})
}

// sparse24Mask reads a sparse-24-bitmask keep mask: two kept of every four.
func sparse24Mask(_ Source, p string, out, in int, bitmask []byte, _ safetensors.TensorInfo) (
	*mask.Mask, []int, error) {
	if in%4 != 0 {
		return nil, nil, fmt.Errorf("tensor %s.shape: %d columns are not whole groups of 4", p, in)
	}
	m, err := sparsity.CheckSparse24Bitmask([2]int{out, in}, bitmask, out*in/2)
	if err != nil {
		return nil, nil, fmt.Errorf("tensor %s.bitmask: %w", p, err)
	}
	return m, []int{out, in / 2}, nil
}

// bitmaskMask reads a sparse-bitmask keep mask and checks it against the
// row offsets.
func bitmaskMask(src Source, p string, out, in int, bitmask []byte, values safetensors.TensorInfo) (
	*mask.Mask, []int, error) {
	ro, err := tensorIn(src, p+".row_offsets", []int{out}, safetensors.I64, safetensors.I32)
	if err != nil {
		return nil, nil, err
	}
	if len(values.Shape) != 1 {
		return nil, nil, fmt.Errorf("tensor %s.compressed has shape %v, want one dimension",
			p, values.Shape)
	}
	m, err := sparsity.CheckSparseBitmask([2]int{out, in}, bitmask, ro.ints(), values.Shape[0])
	if err != nil {
		return nil, nil, fmt.Errorf("tensors %s.bitmask and %s.row_offsets: %w", p, p, err)
	}
	return m, []int{values.Shape[0]}, nil
}

// sparseSpecs declares the tensors of weight w pruned as l.prune says
// (scheme ctNone: no quantization).
func (l compressedTensors) sparseSpecs(w *ctWeight) []Spec {
	vdt := ctValueDType(w.sc)
	format := l.prune.Resolved()
	if format == SparseDense {
		if w.sc.kind == ctNone {
			return []Spec{specOf(w.p+".weight", vdt, []int{w.out, w.in})}
		}
		return w.sc.codec().specs(w)
	}
	kept := w.out * w.in / l.prune.Pattern.M * l.prune.Pattern.N
	specs := ctSparseCodecs[format].specs(w, vdt, kept)
	if w.sc.kind != ctNone {
		specs = append(specs, w.scaleSpec())
	}
	return specs
}

// ctValueDType is the safetensors dtype of the values of a weight stored
// whole in scheme sc.
func ctValueDType(sc *ctScheme) safetensors.DType {
	if sc.kind == ctNone {
		return sc.scaleDT // the unquantized dtype
	}
	return sc.codec().whole
}

// encodeSparse writes the pruned weight w (a, Actual form): unquantized
// and dense as it is, else in its sparse format.
func (l compressedTensors) encodeSparse(name string, w *ctWeight, a *tcast.Tensor) (
	[]Tensor, error) {
	specs := l.sparseSpecs(w)
	format := l.prune.Resolved()
	if format == SparseDense {
		return zipTensors(specs, [][]byte{a.Data.Bytes}), nil
	}
	vals, err := l.keptValues(w, a)
	if err != nil {
		return nil, &FormatError{Layout: "compressed-tensors", Weight: name, Err: err}
	}
	data := [][]byte{int64Bytes(w.out, w.in), vals, sparsity.PackRows(a.Mask)}
	data = append(data, ctSparseCodecs[format].index(a.Mask, w.out, w.in)...)
	if w.sc.kind != ctNone {
		data = append(data, a.Scale.Bytes)
	}
	return zipTensors(specs, data), nil
}

// keptValues returns the codes of a that its keep mask keeps, in row-major
// order, after checking the mask and that every pruned code is zero.
func (l compressedTensors) keptValues(w *ctWeight, a *tcast.Tensor) ([]byte, error) {
	m := a.Mask
	if m == nil {
		return nil, fmt.Errorf("no keep mask: cast the weight with its %v mask as tcast.Options.Keep",
			l.prune.Pattern)
	}
	if err := sparsity.Check(m, 1, l.prune.Pattern); err != nil {
		return nil, fmt.Errorf("the keep mask: %w", err)
	}
	eb := a.Data.StorageBytes()
	if want := ctValueDType(w.sc).BitSize() / 8; eb != want {
		return nil, fmt.Errorf("%d-byte codes for %d-byte %v values", eb, want, ctValueDType(w.sc))
	}
	vals := make([]byte, 0, m.Count()*eb)
	codes := a.Data.Bytes
	for i := range m.Len() {
		c := codes[i*eb : i*eb+eb]
		if m.Get(i) {
			vals = append(vals, c...)
		} else if slices.ContainsFunc(c, func(b byte) bool { return b != 0 }) {
			return nil, fmt.Errorf("element %d is pruned by the mask but holds code %x, not zero", i, c)
		}
	}
	return vals, nil
}

// decodeSparse rebuilds the pruned weight of module p from its
// sparse-bitmask or sparse-24-bitmask tensors.
func decodeSparse(name, p string, src Source) (*tcast.Tensor, bool, error) {
	const lay = "compressed-tensors"
	t, err := readSparse(src, p)
	if err != nil {
		return nil, true, &FormatError{Layout: lay, Weight: name, Err: err}
	}
	return finish(lay, name, t)
}

// readSparse reads module p's pruned weight: the dense datatype's Actual
// tensor with the keep mask the bitmask holds, pruned elements holding
// code zero.
func readSparse(src Source, p string) (*tcast.Tensor, error) {
	format, err := sparseFormatOf(src, p)
	if err != nil {
		return nil, err
	}
	out, in, bitmask, err := sparseShape(src, p)
	if err != nil {
		return nil, err
	}
	w, values, err := sparseWeight(src, p, out, in)
	if err != nil {
		return nil, err
	}
	m, cshape, err := ctSparseCodecs[format].mask(src, p, out, in, bitmask, values)
	if err != nil {
		return nil, err
	}
	codes, err := scatterKept(src, p, cshape, values.DType, m)
	if err != nil {
		return nil, err
	}
	t := &tcast.Tensor{DataType: w.dt, Form: tcast.Actual, Shape: []int{out, in}, Axis: 1, Mask: m}
	t.Data = part(w.dt.Elem(), t.Shape, codes)
	if w.sc.kind != ctNone {
		if t.Scale, err = w.readScale(src); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// sparseFormatOf returns the sparse format of module p's tensors (row
// offsets mean sparse-bitmask), checked against config.json's
// sparsity_config.
func sparseFormatOf(src Source, p string) (SparseFormat, error) {
	format := Sparse24Bitmask
	if _, _, ok := src.Tensor(p + ".row_offsets"); ok {
		format = SparseBitmask
	}
	cfgFormat, _ := configSparsity(src)
	switch cfgFormat {
	case "", string(format):
		return format, nil
	case string(SparseBitmask), string(Sparse24Bitmask):
		return "", fmt.Errorf("config.json's sparsity_config names format %s, "+
			"but the tensors of %s are %s", cfgFormat, p, format)
	}
	return "", fmt.Errorf("config.json's sparsity_config names format %q, "+
		"but %s holds bitmask tensors (sparse-bitmask or sparse-24-bitmask)", cfgFormat, p)
}

// sparseShape reads the dense shape [out, in] from P.shape and the bitmask,
// checked to fit each other.
func sparseShape(src Source, p string) (out, in int, bitmask []byte, err error) {
	sh, err := tensorIn(src, p+".shape", nil, safetensors.I64, safetensors.I32)
	if err != nil {
		return 0, 0, nil, err
	}
	if !slices.Equal(sh.info.Shape, []int{2}) && !slices.Equal(sh.info.Shape, []int{2, 1}) {
		return 0, 0, nil, fmt.Errorf("tensor %s.shape has shape %v, want [2] or [2, 1]", p, sh.info.Shape)
	}
	dims := sh.ints()
	bm, err := tensorIn(src, p+".bitmask", nil, safetensors.U8)
	if err != nil {
		return 0, 0, nil, err
	}
	n := int64(len(bm.data))
	if dims[0] < 0 || dims[1] < 0 || dims[0] > n+1 || dims[1] > 8*n+8 {
		return 0, 0, nil, fmt.Errorf("tensor %s.shape holds [%d, %d], "+
			"which a bitmask of %d bytes cannot describe", p, dims[0], dims[1], n)
	}
	out, in = int(dims[0]), int(dims[1])
	if !slices.Equal(bm.info.Shape, []int{out, (in + 7) / 8}) {
		return 0, 0, nil, fmt.Errorf("tensor %s.bitmask has shape %v, "+
			"want [%d, %d] for the dense shape [%d, %d]", p, bm.info.Shape, out, (in+7)/8, out, in)
	}
	return out, in, bm.data, nil
}

// ctSparseValues maps the dtype of P.compressed to the scheme whose values
// it holds.
var ctSparseValues = map[safetensors.DType]ctKind{
	safetensors.BF16: ctNone, safetensors.F16: ctNone, safetensors.F32: ctNone,
	safetensors.F8E4M3: ctFloat, safetensors.I8: ctInt,
}

// sparseWeight finds the datatype and scheme of module p's pruned [out, in]
// weight (recorded, or derived from its tensors), checked against the
// dtype of P.compressed, whose info it returns too.
func sparseWeight(src Source, p string, out, in int) (*ctWeight, safetensors.TensorInfo, error) {
	cinfo, kind, sinfo, err := sparseValues(src, p)
	if err != nil {
		return nil, cinfo, err
	}
	dt, err := metaDataTypeOf(src.Metadata(), p)
	if err != nil {
		return nil, cinfo, err
	}
	if dt == nil {
		if dt, err = ctCodecs[kind].deriveAt(src, p, out, in, sinfo); err != nil {
			return nil, cinfo, err
		}
	}
	sc, err := sparseScheme(dt)
	if err != nil {
		return nil, cinfo, err
	}
	if sc.kind != kind || ctValueDType(sc) != cinfo.DType {
		return nil, cinfo, fmt.Errorf("datatype %s is not stored as %v values", dt.Name(), cinfo.DType)
	}
	return &ctWeight{p: p, dt: dt, sc: sc, out: out, in: in}, cinfo, nil
}

// sparseValues returns the info of P.compressed, the scheme its dtype
// stands for, and the info of P.weight_scale, which quantized values need
// and unquantized ones do not take.
func sparseValues(src Source, p string) (
	cinfo safetensors.TensorInfo, kind ctKind, sinfo safetensors.TensorInfo, err error) {
	cinfo, _, ok := src.Tensor(p + ".compressed")
	if !ok {
		return cinfo, 0, sinfo, fmt.Errorf("tensor %s.compressed is missing", p)
	}
	sinfo, _, hasScale := src.Tensor(p + ".weight_scale")
	kind, known := ctSparseValues[cinfo.DType]
	switch {
	case !known:
		return cinfo, 0, sinfo, fmt.Errorf("tensor %s.compressed has dtype %v, "+
			"want BF16, F16, F32, F8_E4M3 or I8", p, cinfo.DType)
	case kind == ctNone && hasScale:
		return cinfo, 0, sinfo, fmt.Errorf("tensor %s.compressed holds %v values, "+
			"which take no weight_scale", p, cinfo.DType)
	case kind != ctNone && !hasScale:
		return cinfo, 0, sinfo, fmt.Errorf("tensor %s.weight_scale is missing (%v values are quantized)",
			p, cinfo.DType)
	}
	return cinfo, kind, sinfo, nil
}

// sparseScheme maps a pruned weight's datatype to its scheme: no
// quantization, int-quantized or as ctClassify maps it.
func sparseScheme(dt *tcast.DataType) (*ctScheme, error) {
	if d, ok := plainFloatDType(dt); ok {
		return &ctScheme{kind: ctNone, scaleDT: d}, nil
	}
	if sc, ok := int8Whole(dt); ok {
		return sc, nil
	}
	return ctClassify(dt)
}

// scatterKept reads P.compressed (shape cshape, dtype vdt) and places its
// values at the elements m keeps, the others zero.
func scatterKept(src Source, p string, cshape []int, vdt safetensors.DType, m *mask.Mask) (
	[]byte, error) {
	cv, err := tensorIn(src, p+".compressed", cshape, vdt)
	if err != nil {
		return nil, err
	}
	eb := vdt.BitSize() / 8
	codes := make([]byte, m.Len()*eb)
	k := 0
	for i := m.NextSet(0); i >= 0 && i < m.Len(); i = m.NextSet(i + 1) {
		copy(codes[i*eb:i*eb+eb], cv.data[k*eb:k*eb+eb])
		k++
	}
	return codes, nil
}
