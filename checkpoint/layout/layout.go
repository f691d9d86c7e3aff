// Package layout maps cast tensors to and from the tensor names, dtypes, shapes
// and config files that checkpoint loaders expect (docs/LAYOUTS.md): our own
// tcast layout (docs/FORMAT.md), vLLM compressed-tensors, Hugging Face gpt-oss
// MXFP4, NVIDIA ModelOpt NVFP4, DeepSeek-style FP8 with 128×128 block scales,
// and GGUF. Each is a Layout: it declares its output (Specs), encodes and
// decodes weights, finds the weights of files other tools wrote (Find), and
// writes the config files loaders read (Files). The metadata keys of this
// module are defined in one place (meta.go) and recognised by IsMetaKey.
package layout

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/internal/names"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// Source is read access to a checkpoint's stored tensors, for Decode and Find.
// A Source may have two more methods, which layouts look for: Config()
// []byte, the checkpoint's config.json (nil when there is none), against
// whose sparsity_config the compressed-tensors layout checks a sparse
// weight; and GGUFTensor and GGUFInfo (see ggufSource) on a GGUF file,
// through which the gguf layout reads its block tensors.
type Source interface {
	// Tensor returns a stored tensor's description and bytes, and false when
	// absent.
	Tensor(name string) (safetensors.TensorInfo, []byte, bool)
	// Metadata returns the header's __metadata__.
	Metadata() map[string]string
	// Names returns the stored tensors' names in file order.
	Names() []string
}

// ggufSource is implemented by Sources that read a GGUF file: GGUFTensor
// returns a tensor's GGUF description (its ggml type and dimensions) and
// its bytes, and false when absent. The gguf layout decodes and finds
// weights through it.
type ggufSource interface {
	GGUFTensor(name string) (gguf.TensorInfo, []byte, bool)
	// GGUFInfo returns a tensor's description without reading its bytes.
	GGUFInfo(name string) (gguf.TensorInfo, bool)
}

// Converted describes one weight a conversion cast, for Files.
type Converted struct {
	Name  string // source tensor name, e.g. "model.layers.0.mlp.down_proj.weight"
	Shape []int
	// Zeros counts the elements of the weight as written (dequantized)
	// that are ±0, when Measured. A converter calls Files before casting,
	// unmeasured, to declare the files, and again with the counts once the
	// weights are written; a layout whose files state a measured sparsity
	// (compressed-tensors' global_sparsity) uses them.
	Zeros    int64
	Measured bool
}

// Container is the file format a layout writes.
type Container int

const (
	// Safetensors output: one file, or shards with an index.
	Safetensors Container = iota
	// GGUF output: one GGUF v3 file.
	GGUF
)

// Spec declares one stored tensor of a layout's output.
type Spec struct {
	Name  string
	Shape []int
	// DType is the tensor's dtype in safetensors output.
	DType safetensors.DType
	// GGML is the tensor's type in GGUF output.
	GGML gguf.Type
}

// Bytes returns the size of the tensor's data.
func (s Spec) Bytes(c Container) int64 {
	n := int64(1)
	for _, d := range s.Shape {
		n *= int64(d)
	}
	if c == GGUF {
		b, _ := s.GGML.Size(n)
		return b
	}
	return n * int64(s.DType.BitSize()) / 8
}

// Tensor is one stored tensor of a layout's output, with its bytes.
type Tensor struct {
	Spec
	Data []byte
}

// Layout writes cast weights in one loader's conventions and reads them back.
type Layout interface {
	// Name is the layout's name, as Get takes it.
	Name() string
	// Container is the file format the layout writes.
	Container() Container
	// Check reports whether weights of datatype dt cast along axis (in
	// 0..rank-1) can be written in this layout; the error says what the
	// layout accepts.
	Check(dt *tcast.DataType, axis, rank int) error
	// Specs declares, without casting anything, the stored tensors Encode
	// writes for weight name of shape shape (in cast orientation) cast to dt
	// along axis, and the __metadata__ entries it adds. A value Encode cannot
	// know before casting has here a placeholder of the same length.
	Specs(name string, shape []int, dt *tcast.DataType, axis int) ([]Spec, map[string]string, error)
	// Encode turns one cast weight (Actual form) named name into the tensors
	// to write, as Specs declared them. Metadata entries to add to
	// __metadata__ go in meta.
	Encode(name string, t *tcast.Tensor, meta map[string]string) ([]Tensor, error)
	// Decode rebuilds the cast weight named name (its source name) from src,
	// returning ok=false when src does not hold name as a converted weight
	// (it may then hold it unconverted, under its own name).
	Decode(name string, src Source) (t *tcast.Tensor, ok bool, err error)
	// Find lists the converted weights src holds in this layout, by their
	// logical (source) name, with the stored tensors holding each: how a
	// checkpoint written by another tool, without our metadata, is read.
	Find(src Source) map[string][]string
	// Files returns extra files to write beside the checkpoint (config.json's
	// quantization_config, hf_quant_config.json, ...), by file name. srcConfig
	// is the source's config.json, or nil. kept lists the weights left
	// unconverted.
	Files(dt *tcast.DataType, converted []Converted, kept []string, srcConfig []byte) (map[string][]byte, error)
}

// Caster is implemented by layouts whose datatypes are cast by their own
// quantizers rather than tcast.Cast (GGUF's Q8_0 and Q4_0): Cast returns the
// weight in Actual form, as tcast.Cast would.
type Caster interface {
	Cast(x []float32, shape []int, dt *tcast.DataType, opts *tcast.Options) (*tcast.Tensor, error)
}

// Describer is implemented by layouts that know a weight's datatype and
// stored shape without decoding it (from metadata).
type Describer interface {
	Describe(name string, src Source) (*tcast.DataType, []int, error)
}

// DataTyper is implemented by layouts that name datatypes of their own (GGUF's
// q8_0): DataType resolves a datatype name for the layout, falling back to
// tcast.Lookup.
type DataTyper interface {
	DataType(name string) (*tcast.DataType, error)
}

// DataTypeError is the error of a DataTyper's DataType for a name its layout
// does not take: a datatype tcast knows but the layout cannot hold, or an
// unknown name (Err then holds tcast's *LookupError).
type DataTypeError struct {
	Layout   string   // the layout's name
	Name     string   // the name asked for
	Accepted []string // the datatypes the layout takes
	Closest  []string // accepted names close to Name, for an unknown name
	Err      error    // the lookup error of an unknown name; nil for a known datatype
}

func (e *DataTypeError) Error() string {
	takes := strings.Join(e.Accepted, ", ")
	if e.Err == nil {
		return fmt.Sprintf("layout %s: cannot hold datatype %s; it takes %s", e.Layout, e.Name, takes)
	}
	msg := fmt.Sprintf("layout %s: unknown datatype %q; it takes %s", e.Layout, e.Name, takes)
	if len(e.Closest) > 0 {
		msg += fmt.Sprintf(" (closest: %s)", strings.Join(e.Closest, ", "))
	}
	return msg
}

func (e *DataTypeError) Unwrap() error { return e.Err }

// DataType resolves a -dtype value for layout l.
func DataType(l Layout, name string) (*tcast.DataType, error) {
	if d, ok := l.(DataTyper); ok {
		return d.DataType(name)
	}
	return tcast.Lookup(name)
}

// specOf returns the Spec of a safetensors tensor.
func specOf(name string, dt safetensors.DType, shape []int) Spec {
	return Spec{Name: name, DType: dt, Shape: shape}
}

var registry = map[string]Layout{}

// register adds a layout; it panics on a duplicate name (a programming error).
func register(l Layout) {
	if _, dup := registry[l.Name()]; dup {
		panic("layout: duplicate " + l.Name())
	}
	registry[l.Name()] = l
}

// Get returns the layout of a name.
func Get(name string) (Layout, error) {
	if l, ok := registry[name]; ok {
		return l, nil
	}
	return nil, &UnknownError{Name: name}
}

// UnknownError is the error of Get for a name no layout has.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	msg := fmt.Sprintf("unknown layout %q: want one of %s", e.Name, strings.Join(Names(), ", "))
	if c := names.Closest(e.Name, Names(), 3); len(c) > 0 {
		msg += fmt.Sprintf(" (closest: %s)", strings.Join(c, ", "))
	}
	return msg
}

// Names returns the registered layout names, sorted.
func Names() []string {
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Transposer is implemented by layouts that store some weights with their last
// two axes swapped (gpt-oss's experts): Transposed reports whether the weight
// name of rank rank is one of them. The converter casts the transposed tensor
// and transposes decoded values back.
type Transposer interface {
	Transposed(name string, rank int) bool
}

// TransposeLast2 returns x, a row-major tensor of shape shape, with its last two
// axes swapped, and the new shape.
func TransposeLast2(x []float32, shape []int) ([]float32, []int) {
	r := len(shape)
	if r < 2 {
		return append([]float32(nil), x...), append([]int(nil), shape...)
	}
	rows, cols := shape[r-2], shape[r-1]
	out := make([]float32, len(x))
	m := rows * cols
	for base := 0; base+m <= len(x) && m > 0; base += m {
		src, dst := x[base:base+m], out[base:base+m]
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				dst[j*rows+i] = src[i*cols+j]
			}
		}
	}
	return out, SwapLast2(shape)
}

// SwapLast2 returns a copy of shape with its last two dimensions swapped.
func SwapLast2(shape []int) []int {
	s := append([]int(nil), shape...)
	if r := len(s); r >= 2 {
		s[r-2], s[r-1] = s[r-1], s[r-2]
	}
	return s
}

// FormatError reports stored tensors that do not hold a valid weight of a
// layout: which layout, which weight, and what is wrong.
type FormatError struct {
	Layout string // the layout's name
	Weight string // the weight's (source) name
	Msg    string
	Err    error // the underlying error, if any
}

func (e *FormatError) Error() string {
	msg := e.Msg
	if e.Err != nil {
		if msg != "" {
			msg += ": "
		}
		msg += e.Err.Error()
	}
	return fmt.Sprintf("layout %s: weight %s: %s", e.Layout, e.Weight, msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

// Accepts reports whether layout l can hold datatype dt for some weight (of
// rank 2 to 4, scaled along its last axis), and returns the error of Check
// otherwise: a datatype the layout never takes is refused before any tensor
// is read.
func Accepts(l Layout, dt *tcast.DataType) error {
	err := accepts(l, dt)
	if err == nil {
		return nil
	}
	if dense := denseOf(dt); dense != nil && accepts(l, dense) == nil {
		return &SparseDataTypeError{Layout: l.Name(), DataType: dt.String(), Dense: dense.String()}
	}
	return err
}

// accepts is Accepts without the check for sparsity.
func accepts(l Layout, dt *tcast.DataType) error {
	var first error
	for rank := 2; rank <= 4; rank++ {
		err := l.Check(dt, rank-1, rank)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// plainTypes pairs the GGUF types and safetensors dtypes that hold the same
// bytes: the one table for both directions.
var plainTypes = []struct {
	g gguf.Type
	d safetensors.DType
}{
	{gguf.TypeF32, safetensors.F32}, {gguf.TypeF16, safetensors.F16}, {gguf.TypeBF16, safetensors.BF16},
	{gguf.TypeF64, safetensors.F64}, {gguf.TypeI8, safetensors.I8}, {gguf.TypeI16, safetensors.I16},
	{gguf.TypeI32, safetensors.I32}, {gguf.TypeI64, safetensors.I64},
}

// GGUFType returns the GGUF type whose bytes are those of safetensors dtype
// d, and false when there is none.
func GGUFType(d safetensors.DType) (gguf.Type, bool) {
	for _, p := range plainTypes {
		if p.d == d {
			return p.g, true
		}
	}
	return 0, false
}

// SafetensorsDType returns the safetensors dtype whose bytes are those of
// GGUF type t, and 0 for the block types (and others without one).
func SafetensorsDType(t gguf.Type) safetensors.DType {
	for _, p := range plainTypes {
		if p.g == t {
			return p.d
		}
	}
	return 0
}

// SparseDataTypeError reports an N:M sparse datatype for a layout that takes
// the datatype without sparsity but stores no N:M sparsity in a datatype
// (Accepts). It matches ErrSparseDataType.
type SparseDataTypeError struct {
	Layout   string // the layout's name
	DataType string // the sparse datatype, as asked for
	Dense    string // the datatype without sparsity, which the layout takes
}

// Error says what the layout takes instead.
func (e *SparseDataTypeError) Error() string {
	return fmt.Sprintf("layout %s: datatype %s: the layout stores no N:M sparsity in a datatype; "+
		"it takes %s without sparsity (the tcast layout stores N:M datatypes, and "+
		"compressed-tensors prunes, with a Pruning)", e.Layout, e.DataType, e.Dense)
}

// Unwrap returns ErrSparseDataType.
func (e *SparseDataTypeError) Unwrap() error { return ErrSparseDataType }

// ErrSparseDataType is matched by the error of Accepts for an N:M sparse
// datatype the layout takes only without sparsity.
var ErrSparseDataType = errors.New("the layout stores no N:M sparsity in a datatype")

// denseOf returns dt without its N:M sparsity, nil when dt has none: the
// datatype it was made of (tcast.DataType.Dense), or one of its spec
// without the sparsity.
func denseOf(dt *tcast.DataType) *tcast.DataType {
	if d := dt.Dense(); d != nil {
		return d
	}
	s := dt.Spec()
	if s == nil || !s.IsSparse() || dt.Codebook() != nil {
		return nil
	}
	cp := *s
	cp.SparseN, cp.SparseM = 0, 0
	spec, err := scale.Parse(cp.String())
	if err != nil {
		return nil
	}
	dense, err := tcast.New(dt.Elem(), spec, "")
	if err != nil {
		return nil
	}
	for _, d := range tcast.Registered() {
		if d.Code() == dense.Code() {
			return d // by its registered name
		}
	}
	return dense
}
