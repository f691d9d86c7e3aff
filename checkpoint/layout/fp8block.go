package layout

import (
	"fmt"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// The fp8-block layout writes FP8 weights with one float32 scale per 2-D
// block, as DeepSeek-V3 publishes its weights and as Hugging Face
// transformers' fine-grained FP8 integration (quant_method "fp8") loads
// them. A weight P.weight ("P" is the name without its trailing ".weight")
// of shape [out, in], cast along its last axis to e4m3fn with blocks of B0
// rows by B1 columns (128×128 for fp8e4_block128), becomes
//
//   - P.weight F8_E4M3 [out, in]: one e4m3fn code per element, row-major;
//   - P.weight_scale_inv F32 [ceil(out/B0), ceil(in/B1)]: one float32 per
//     block, row-major over the grid of blocks; block (i, j) covers rows
//     i·B0 up to (i+1)·B0 and columns j·B1 up to (j+1)·B1, so when out or
//     in is not a multiple of the block size the blocks of the last block
//     row or column are the smaller remainder.
//
// Despite its name, weight_scale_inv is the number loaders multiply by:
// element (r, c) is worth e4m3fn(P.weight[r, c]) × weight_scale_inv[r/B0,
// c/B1]. The "inverse" refers to the quantizer's side, which divides each
// block by that number (multiplies by its inverse) to get the codes. This
// is our float-scale convention (a scale is the decode multiplier), so the
// tensor holds the float32 codes of the cast's scale part as they are.
// tcast picks each block's scale as amax/448 (448 is the largest e4m3fn
// value) rounded to float32, 1.0 for an all-zero block, and NaN (with NaN
// codes) for a block holding a NaN or an infinity.
//
// Files sets config.json's quantization_config to {"quant_method": "fp8",
// "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [B0,
// B1], "modules_to_not_convert": [the modules of the kept weights]}. The
// kept modules are named in full ("model.layers.0.mlp.gate"); some
// transformers releases match these entries against parameter names whose
// layer numbers they replace by "*", and so miss a full name that holds a
// layer number.
//
// Only 2-D weights are accepted (cast the experts of a stacked MoE weight
// one by one). Nothing is lost, and Decode needs no metadata: block sizes
// are powers of two (as in every tcast scale spec), and along a dimension
// split into n ≥ 2 blocks only one power of two gives n blocks, so the
// scale grid's shape gives the block size. A dimension held in a single
// block reads back with block size 128 (or the smallest power of two that
// holds it, beyond 128): the same values, though the datatype's name may
// differ from the one cast (fp8e4_block128 for a 20×20 weight cast to
// fp8F32s).
type fp8Block struct{}

func init() { register(fp8Block{}) }

// fp8DefaultBlock is the block size of DeepSeek-V3 and of transformers'
// default weight_block_size, Decode's choice wherever it fits the grid.
const fp8DefaultBlock = 128

// fp8MaxBlock is the largest tile size a scale spec takes.
const fp8MaxBlock = 1024

const fp8Accepted = "e4m3fn with a float32 scale per 2-D block: fp8e4_block128, or e4m3fn_float32_t<B0>_t<B1>"

func (fp8Block) Name() string { return "fp8-block" }

func (fp8Block) Container() Container { return Safetensors }

// fp8BlockSize returns the block size (rows, columns) of a datatype the
// fp8-block layout takes, and false for any other datatype.
func fp8BlockSize(dt *tcast.DataType) (b0, b1 int, ok bool) {
	s := dt.Spec()
	if dt.Elem().Name() != fmtE4M3 || s == nil || s.Scale.Name() != fmtF32 || s.Zero != nil || s.TensorScale != nil ||
		!plainTiles(s) || len(s.Tiles) != 2 || s.Tiles[0].Size <= 0 || s.Tiles[1].Size <= 0 {
		return 0, 0, false
	}
	return s.Tiles[0].Size, s.Tiles[1].Size, true
}

func (fp8Block) Check(dt *tcast.DataType, axis, rank int) error {
	if dt == nil {
		return fmt.Errorf("layout fp8-block: nil datatype")
	}
	if _, _, ok := fp8BlockSize(dt); !ok {
		return fmt.Errorf("layout fp8-block: datatype %s: the layout takes %s", dt, fp8Accepted)
	}
	return checkMatrix("fp8-block", dt, axis, rank)
}

func (l fp8Block) Specs(name string, shape []int, dt *tcast.DataType, axis int) ([]Spec, map[string]string, error) {
	if err := l.Check(dt, axis, len(shape)); err != nil {
		return nil, nil, err
	}
	p := weightPrefix(name)
	out, in := shape[0], shape[1]
	return []Spec{
		specOf(p+".weight", safetensors.F8E4M3, []int{out, in}),
		specOf(p+".weight_scale_inv", safetensors.F32, scaleShape2D(dt.Spec(), out, in)),
	}, nil, nil
}

func (l fp8Block) Encode(name string, t *tcast.Tensor, meta map[string]string) ([]Tensor, error) {
	a, err := actualOf("fp8-block", name, t)
	if err != nil {
		return nil, err
	}
	specs, _, err := l.Specs(name, a.Shape, a.DataType, a.Axis)
	if err != nil {
		return nil, err
	}
	return []Tensor{{Spec: specs[0], Data: a.Data.Bytes}, {Spec: specs[1], Data: a.Scale.Bytes}}, nil
}

// Find lists the modules with an F8_E4M3 P.weight beside a
// P.weight_scale_inv.
func (fp8Block) Find(src Source) map[string][]string {
	out := map[string][]string{}
	for _, n := range src.Names() {
		p, ok := strings.CutSuffix(n, ".weight_scale_inv")
		if !ok {
			continue
		}
		if info, _, has := src.Tensor(p + ".weight"); has && info.DType == safetensors.F8E4M3 {
			out[p+".weight"] = []string{p + ".weight", n}
		}
	}
	return out
}

// fp8GridBlock returns the block size along a dimension of size dim whose
// scale grid has n blocks: 128 when that gives n blocks, else the power of
// two in 2..1024 that does (there is at most one when n ≥ 2).
func fp8GridBlock(dim, n int) (int, bool) {
	cdiv := func(a, b int) int { return (a + b - 1) / b }
	if cdiv(dim, fp8DefaultBlock) == n {
		return fp8DefaultBlock, true
	}
	for b := 2; b <= fp8MaxBlock; b *= 2 {
		if cdiv(dim, b) == n {
			return b, true
		}
	}
	return 0, false
}

// Decode returns the weight with its data and scale parts viewing src's
// bytes (no copy).
func (fp8Block) Decode(name string, src Source) (*tcast.Tensor, bool, error) {
	const lay = "fp8-block"
	p := weightPrefix(name)
	winfo, _, hasW := src.Tensor(p + ".weight")
	_, _, hasS := src.Tensor(p + ".weight_scale_inv")
	if !hasW || winfo.DType != safetensors.F8E4M3 || !hasS {
		return nil, false, nil
	}
	fail := func(format string, args ...any) (*tcast.Tensor, bool, error) {
		return nil, true, &FormatError{Layout: lay, Weight: name, Err: fmt.Errorf(format, args...)}
	}
	if len(winfo.Shape) != 2 {
		return fail("tensor %s.weight has shape %v, want [out, in]", p, winfo.Shape)
	}
	w, err := tensorIn(src, p+".weight", nil, safetensors.F8E4M3)
	if err != nil {
		return fail("%w", err)
	}
	s, err := tensorIn(src, p+".weight_scale_inv", nil, safetensors.F32)
	if err != nil {
		return fail("%w", err)
	}
	if len(s.info.Shape) != 2 {
		return fail("tensor %s.weight_scale_inv has shape %v, want a 2-D grid of blocks", p, s.info.Shape)
	}
	out, in := winfo.Shape[0], winfo.Shape[1]
	b0, ok0 := fp8GridBlock(out, s.info.Shape[0])
	b1, ok1 := fp8GridBlock(in, s.info.Shape[1])
	if !ok0 || !ok1 {
		return fail("tensor %s.weight_scale_inv has shape %v, which no block size (a power of two up to %d) gives for a weight [%d, %d]",
			p, s.info.Shape, fp8MaxBlock, out, in)
	}
	dt, err := lookupCode(fmt.Sprintf("%s_%s_t%d_t%d", fmtE4M3, fmtF32, b0, b1))
	if err != nil {
		return fail("block size %d×%d: %w", b0, b1, err)
	}
	if _, _, ok := fp8BlockSize(dt); !ok {
		return fail("block size %d×%d gives datatype %s, not an fp8-block datatype", b0, b1, dt.Name())
	}
	t := &tcast.Tensor{DataType: dt, Form: tcast.Actual, Shape: []int{out, in}, Axis: 1,
		Data:  part(dt.Elem(), []int{out, in}, w.data),
		Scale: part(dt.Spec().Scale, s.info.Shape, s.data)}
	return finish(lay, name, t)
}

// fp8QuantConfig is config.json's quantization_config for fp8-block, the
// fields transformers' FineGrainedFP8Config reads plus DeepSeek-V3's "fmt".
type fp8QuantConfig struct {
	QuantMethod         string   `json:"quant_method"`
	Fmt                 string   `json:"fmt"`
	ActivationScheme    string   `json:"activation_scheme"`
	WeightBlockSize     []int    `json:"weight_block_size"`
	ModulesToNotConvert []string `json:"modules_to_not_convert"`
}

func (fp8Block) Files(dt *tcast.DataType, converted []Converted, kept []string, srcConfig []byte) (map[string][]byte, error) {
	if dt == nil {
		return nil, fmt.Errorf("layout fp8-block: nil datatype")
	}
	b0, b1, ok := fp8BlockSize(dt)
	if !ok {
		return nil, fmt.Errorf("layout fp8-block: datatype %s: the layout takes %s", dt.Name(), fp8Accepted)
	}
	cfg, err := setConfigKey(srcConfig, "quantization_config", fp8QuantConfig{
		QuantMethod: "fp8", Fmt: "e4m3", ActivationScheme: "dynamic",
		WeightBlockSize: []int{b0, b1}, ModulesToNotConvert: keptModules(kept)})
	if err != nil {
		return nil, fmt.Errorf("layout fp8-block: %w", err)
	}
	return map[string][]byte{"config.json": cfg}, nil
}
