package layout

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// The modelopt layout (docs/LAYOUTS.md §3) writes NVFP4 weights as
// NVIDIA ModelOpt exports them. For a weight P.weight ("P" is the name without
// its trailing ".weight"):
//
//   - P.weight U8 [out, in/2]: the E2M1 codes, element 2k in the low nibble;
//   - P.weight_scale F8_E4M3 [out, in/16]: the UE4M3 block scales, which are
//     E4M3 bit patterns with the sign clear;
//   - P.weight_scale_2 F32 0-d scalar: the tensor scale s_t as tcast decodes it
//     (amax/2688, the decode multiplier), stored bit for bit.
//
// Nothing is lost, so Decode needs no metadata. Only 2-D weights scaled along
// their last axis with in a multiple of 16 are accepted: ModelOpt's stacked
// MoE experts carry one weight_scale_2 per expert, which a single cast of the
// stacked tensor does not have.
type modelOpt struct{}

func init() { register(modelOpt{}) }

// modelOptQuantAlgo is the quant_algo the modelopt layout declares. vLLM reads
// "NVFP4" as W4A4, which also expects a P.input_scale per layer (activation
// calibration this toolkit does not do); "W4A16_NVFP4" is ModelOpt's
// weight-only spelling.
const modelOptQuantAlgo = "W4A16_NVFP4"

func (modelOpt) Name() string { return "modelopt" }

func (modelOpt) Check(dt *tcast.DataType, axis, rank int) error {
	if dt == nil {
		return fmt.Errorf("layout modelopt: nil datatype")
	}
	if !isNVFP4(dt) {
		return fmt.Errorf("layout modelopt: datatype %s: the layout takes nvfp4 only (e2m1, UE4M3 scale per 16, float32 tensor scale)", dt)
	}
	return checkMatrix("modelopt", dt, axis, rank)
}

func (modelOpt) Container() Container { return Safetensors }

// moSpecs declares the tensors of an [out, in] weight of module p.
func moSpecs(p string, out, in int) []Spec {
	return []Spec{
		specOf(p+".weight", safetensors.U8, []int{out, in / 2}),
		specOf(p+".weight_scale", safetensors.F8E4M3, []int{out, in / 16}),
		specOf(p+".weight_scale_2", safetensors.F32, []int{}),
	}
}

func (l modelOpt) Specs(name string, shape []int, dt *tcast.DataType, axis int) ([]Spec, map[string]string, error) {
	if err := l.Check(dt, axis, len(shape)); err != nil {
		return nil, nil, err
	}
	if err := groupCheck("modelopt", dt, shape[1], 16); err != nil {
		return nil, nil, err
	}
	return moSpecs(weightPrefix(name), shape[0], shape[1]), nil, nil
}

func (l modelOpt) Encode(name string, t *tcast.Tensor, meta map[string]string) ([]Tensor, error) {
	a, err := actualOf("modelopt", name, t)
	if err != nil {
		return nil, err
	}
	specs, _, err := l.Specs(name, a.Shape, a.DataType, a.Axis)
	if err != nil {
		return nil, err
	}
	return []Tensor{
		{Spec: specs[0], Data: pack4(a.Data.Bytes)},
		{Spec: specs[1], Data: a.Scale.Bytes},
		{Spec: specs[2], Data: slices.Clone(a.TensorScale.Bytes)},
	}, nil
}

// Find lists the modules with a packed U8 P.weight beside a P.weight_scale_2.
func (modelOpt) Find(src Source) map[string][]string {
	out := map[string][]string{}
	for _, n := range src.Names() {
		p, ok := strings.CutSuffix(n, ".weight_scale_2")
		if !ok {
			continue
		}
		if info, _, has := src.Tensor(p + ".weight"); !has || info.DType != safetensors.U8 {
			continue
		}
		for _, suf := range []string{".weight", ".weight_scale", ".weight_scale_2", ".input_scale"} {
			if _, _, has := src.Tensor(p + suf); has {
				out[p+".weight"] = append(out[p+".weight"], p+suf)
			}
		}
	}
	return out
}

// Describe returns nvfp4 and the weight's shape from the stored tensors'
// headers; Decode checks their bytes.
func (modelOpt) Describe(name string, src Source) (*tcast.DataType, []int, error) {
	winfo, _, ok := src.Tensor(weightPrefix(name) + ".weight")
	if !ok || len(winfo.Shape) != 2 {
		return nil, nil, &FormatError{Layout: "modelopt", Weight: name, Msg: "no 2-D packed weight"}
	}
	return tcast.MustLookup("nvfp4"), []int{winfo.Shape[0], 2 * winfo.Shape[1]}, nil
}

func (modelOpt) Decode(name string, src Source) (*tcast.Tensor, bool, error) {
	const lay = "modelopt"
	p := weightPrefix(name)
	winfo, _, hasW := src.Tensor(p + ".weight")
	_, _, hasS2 := src.Tensor(p + ".weight_scale_2")
	if !hasW || winfo.DType != safetensors.U8 || !hasS2 {
		return nil, false, nil
	}
	fail := func(format string, args ...any) (*tcast.Tensor, bool, error) {
		return nil, true, &FormatError{Layout: lay, Weight: name, Err: fmt.Errorf(format, args...)}
	}
	if len(winfo.Shape) != 2 || (2*winfo.Shape[1])%16 != 0 {
		return fail("weight has shape %v, want [out, in/2] with in a multiple of 16", winfo.Shape)
	}
	out, in := winfo.Shape[0], 2*winfo.Shape[1]
	w, err := tensorIn(src, p+".weight", []int{out, in / 2}, safetensors.U8)
	if err != nil {
		return fail("%w", err)
	}
	s, err := tensorIn(src, p+".weight_scale", []int{out, in / 16}, safetensors.F8E4M3)
	if err != nil {
		return fail("%w", err)
	}
	if err := checkScaleCodes(p+".weight_scale", s.data); err != nil {
		return fail("%w", err)
	}
	s2, err := tensorIn(src, p+".weight_scale_2", nil, safetensors.F32)
	if err != nil {
		return fail("%w", err)
	}
	if len(s2.data) != 4 {
		return fail("weight_scale_2 has shape %v, want a scalar", s2.info.Shape)
	}
	dt := tcast.MustLookup("nvfp4")
	spec := dt.Spec()
	t := &tcast.Tensor{DataType: dt, Form: tcast.Actual, Shape: []int{out, in}, Axis: 1,
		Data:        part(dt.Elem(), []int{out, in}, unpack4(w.data)),
		Scale:       part(spec.Scale, []int{out, in / 16}, slices.Clone(s.data)),
		TensorScale: part(spec.TensorScale, []int{1}, f32Bytes(binary.LittleEndian.Uint32(s2.data)))}
	return finish(lay, name, t)
}

type moProducer struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type moQuantization struct {
	QuantAlgo        string   `json:"quant_algo"`
	KVCacheQuantAlgo *string  `json:"kv_cache_quant_algo"`
	GroupSize        int      `json:"group_size"`
	ExcludeModules   []string `json:"exclude_modules"`
}

type moHFQuantConfig struct {
	Producer     moProducer     `json:"producer"`
	Quantization moQuantization `json:"quantization"`
}

type moWeights struct {
	Dynamic   bool   `json:"dynamic"`
	NumBits   int    `json:"num_bits"`
	Type      string `json:"type"`
	GroupSize int    `json:"group_size"`
}

type moGroup struct {
	InputActivations *moWeights `json:"input_activations"`
	Weights          moWeights  `json:"weights"`
	Targets          []string   `json:"targets"`
}

// moConfig is config.json's quantization_config as ModelOpt's
// convert_hf_quant_config_format writes it, plus group_size, which vLLM reads
// from this form.
type moConfig struct {
	QuantMethod   string             `json:"quant_method"`
	QuantAlgo     string             `json:"quant_algo"`
	GroupSize     int                `json:"group_size"`
	ConfigGroups  map[string]moGroup `json:"config_groups"`
	Ignore        []string           `json:"ignore"`
	KVCacheScheme *string            `json:"kv_cache_scheme"`
	Producer      moProducer         `json:"producer"`
}

func (l modelOpt) Files(dt *tcast.DataType, converted []Converted, kept []string, srcConfig []byte) (map[string][]byte, error) {
	if dt == nil || !isNVFP4(dt) {
		return nil, fmt.Errorf("layout modelopt: datatype %v: the layout takes nvfp4 only", dt)
	}
	producer := moProducer{Name: "modelopt", Version: "tensorcast-go"}
	exclude := keptModules(kept)
	hf, err := json.MarshalIndent(moHFQuantConfig{Producer: producer, Quantization: moQuantization{
		QuantAlgo: modelOptQuantAlgo, GroupSize: 16, ExcludeModules: exclude}}, "", "  ")
	if err != nil {
		return nil, err
	}
	qc := moConfig{
		QuantMethod: "modelopt",
		QuantAlgo:   modelOptQuantAlgo,
		GroupSize:   16,
		ConfigGroups: map[string]moGroup{"group_0": {
			Weights: moWeights{NumBits: 4, Type: "float", GroupSize: 16},
			Targets: []string{"Linear"}}},
		Ignore:   exclude,
		Producer: producer,
	}
	cfg, err := setConfigKey(srcConfig, "quantization_config", qc)
	if err != nil {
		return nil, fmt.Errorf("layout modelopt: %w", err)
	}
	return map[string][]byte{"hf_quant_config.json": append(hf, '\n'), "config.json": cfg}, nil
}
