package layout

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// The gpt-oss layout (docs/LAYOUTS.md §4) writes MXFP4 weights as the
// Hugging Face transformers gpt-oss checkpoints hold their experts. A weight
// NAME (a trailing ".weight" removed, so the experts'
// "model.layers.L.mlp.experts.gate_up_proj" keeps its name) of shape
// [..., out, in] cast along its last axis becomes
//
//   - NAME_blocks U8 [..., in/32, 16]: the E2M1 codes, element 2k of each row
//     in the low nibble of byte k;
//   - NAME_scales U8 [..., in/32]: the E8M0 scale codes (bias 127).
//
// The blocks are in [out, in] orientation, while the transformers module holds
// the experts as [E, in, out]: the converter must transpose the expert
// tensors to [E, out, in] before casting (MXFP4 blocks run along in), and
// Decode returns the weight in that cast orientation, [E, out, in]; transpose
// the decompressed values back for the module. transformers reads this layout
// for the GptOss experts only; any 2-D or 3-D weight is accepted here, but for
// other modules the compressed-tensors mxfp4-pack-quantized format is the one
// loaders understand. in must be a multiple of 32. Nothing is lost, so Decode
// needs no metadata.
type gptOSS struct{}

func init() { register(gptOSS{}) }

// Transposed reports that the GptOss expert tensors (rank 3, named
// "*.mlp.experts.gate_up_proj" or "*.mlp.experts.down_proj", held as [E, in,
// out]) are stored transposed, as [E, out, in]: the converter swaps their last
// two axes before casting and swaps them back when it reads them.
func (gptOSS) Transposed(name string, rank int) bool {
	return rank == 3 && (strings.HasSuffix(name, ".mlp.experts.gate_up_proj") || strings.HasSuffix(name, ".mlp.experts.down_proj"))
}

func (gptOSS) Name() string { return "gpt-oss" }

func (gptOSS) Check(dt *tcast.DataType, axis, rank int) error {
	if dt == nil {
		return fmt.Errorf("layout gpt-oss: nil datatype")
	}
	if !isMXFP4(dt) {
		return fmt.Errorf("layout gpt-oss: datatype %s: the layout takes mxfp4 only (e2m1 with an E8M0 scale per 32)", dt)
	}
	if rank != 2 && rank != 3 {
		return fmt.Errorf("layout gpt-oss: datatype %s: weights must be 2-D [out, in] or 3-D [experts, out, in], not rank %d", dt.Name(), rank)
	}
	if axis != rank-1 {
		return fmt.Errorf("layout gpt-oss: datatype %s: the scaled axis must be the last (input) axis %d, not %d; transpose [E, in, out] expert weights to [E, out, in] first",
			dt.Name(), rank-1, axis)
	}
	return nil
}

func (gptOSS) Container() Container { return Safetensors }

// gptSpecs declares the tensors of a [..., out, in] weight named name.
func gptSpecs(name string, shape []int) []Spec {
	rank := len(shape)
	in := shape[rank-1]
	lead := slices.Clone(shape[:rank-1])
	n := weightPrefix(name)
	return []Spec{
		specOf(n+"_blocks", safetensors.U8, append(slices.Clone(lead), in/32, 16)),
		specOf(n+"_scales", safetensors.U8, append(slices.Clone(lead), in/32)),
	}
}

func (l gptOSS) Specs(name string, shape []int, dt *tcast.DataType, axis int) ([]Spec, map[string]string, error) {
	if err := l.Check(dt, axis, len(shape)); err != nil {
		return nil, nil, err
	}
	if err := groupCheck("gpt-oss", dt, shape[len(shape)-1], 32); err != nil {
		return nil, nil, err
	}
	return gptSpecs(name, shape), nil, nil
}

func (l gptOSS) Encode(name string, t *tcast.Tensor, meta map[string]string) ([]Tensor, error) {
	a, err := actualOf("gpt-oss", name, t)
	if err != nil {
		return nil, err
	}
	specs, _, err := l.Specs(name, a.Shape, a.DataType, a.Axis)
	if err != nil {
		return nil, err
	}
	return []Tensor{{Spec: specs[0], Data: pack4(a.Data.Bytes)}, {Spec: specs[1], Data: a.Scale.Bytes}}, nil
}

// Find lists the weights stored as NAME_blocks beside NAME_scales: stacked
// experts under NAME (gpt-oss's "….experts.gate_up_proj"), 2-D weights under
// NAME.weight, the parameter of a linear module.
func (gptOSS) Find(src Source) map[string][]string {
	out := map[string][]string{}
	for _, n := range src.Names() {
		w, ok := strings.CutSuffix(n, "_blocks")
		if !ok {
			continue
		}
		if _, _, has := src.Tensor(w + "_scales"); has {
			name := w
			if info, _, _ := src.Tensor(n); len(info.Shape) == 3 {
				name += ".weight" // a 2-D weight: the module's parameter
			}
			out[name] = []string{n, w + "_scales"}
		}
	}
	return out
}

// Describe returns mxfp4 and the weight's shape (as stored, [..., out, in])
// from the blocks tensor's header; Decode checks the bytes.
func (gptOSS) Describe(name string, src Source) (*tcast.DataType, []int, error) {
	binfo, _, ok := src.Tensor(weightPrefix(name) + "_blocks")
	r := len(binfo.Shape)
	if !ok || r < 3 || binfo.Shape[r-1] != 16 {
		return nil, nil, &FormatError{Layout: "gpt-oss", Weight: name, Msg: "no [..., groups, 16] blocks tensor"}
	}
	shape := slices.Clone(binfo.Shape[:r-1])
	shape[len(shape)-1] *= 32
	return tcast.MustLookup("mxfp4"), shape, nil
}

func (gptOSS) Decode(name string, src Source) (*tcast.Tensor, bool, error) {
	const lay = "gpt-oss"
	n := weightPrefix(name)
	binfo, _, ok := src.Tensor(n + "_blocks")
	if !ok {
		return nil, false, nil
	}
	fail := func(format string, args ...any) (*tcast.Tensor, bool, error) {
		return nil, true, &FormatError{Layout: lay, Weight: name, Err: fmt.Errorf(format, args...)}
	}
	r := len(binfo.Shape)
	if (r != 3 && r != 4) || binfo.Shape[r-1] != 16 {
		return fail("tensor %s_blocks has shape %v, want [..., groups, 16] of rank 3 or 4", n, binfo.Shape)
	}
	b, err := tensorIn(src, n+"_blocks", nil, safetensors.U8)
	if err != nil {
		return fail("%w", err)
	}
	sshape := slices.Clone(binfo.Shape[:r-1])
	s, err := tensorIn(src, n+"_scales", sshape, safetensors.U8, safetensors.F8E8M0)
	if err != nil {
		return fail("%w", err)
	}
	shape := slices.Clone(sshape)
	shape[len(shape)-1] *= 32
	dt := tcast.MustLookup("mxfp4")
	t := &tcast.Tensor{DataType: dt, Form: tcast.Actual, Shape: shape, Axis: len(shape) - 1,
		Data:  part(dt.Elem(), shape, unpack4(b.data)),
		Scale: part(dt.Spec().Scale, sshape, slices.Clone(s.data))}
	return finish(lay, name, t)
}

// gptOSSQuantConfig is config.json's quantization_config for gpt-oss.
type gptOSSQuantConfig struct {
	QuantMethod         string   `json:"quant_method"`
	ModulesToNotConvert []string `json:"modules_to_not_convert"`
}

// gptOSSKeptModules returns the modules of the kept weights: "<module>.weight"
// names, and the experts module of kept "….experts.gate_up_proj" and
// "….experts.down_proj" tensors.
func gptOSSKeptModules(kept []string) []string {
	out := keptModules(kept)
	for _, k := range kept {
		for _, suf := range []string{".experts.gate_up_proj", ".experts.down_proj"} {
			if m, ok := strings.CutSuffix(k, suf); ok {
				out = append(out, m+".experts")
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func (gptOSS) Files(dt *tcast.DataType, converted []Converted, kept []string, srcConfig []byte) (map[string][]byte, error) {
	if dt == nil || !isMXFP4(dt) {
		return nil, fmt.Errorf("layout gpt-oss: datatype %v: the layout takes mxfp4 only", dt)
	}
	cfg, err := setConfigKey(srcConfig, "quantization_config",
		gptOSSQuantConfig{QuantMethod: "mxfp4", ModulesToNotConvert: gptOSSKeptModules(kept)})
	if err != nil {
		return nil, fmt.Errorf("layout gpt-oss: %w", err)
	}
	return map[string][]byte{"config.json": cfg}, nil
}
