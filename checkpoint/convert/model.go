package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmodel"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/internal/names"
)

// ggufMetadata decides what the typed metadata of a GGUF output starts
// with (p.ggufKV, its one owner). A GGUF input keeps its own (so a
// llama.cpp model stays one), less the keys that describe the output
// (ours, the file type, the quantization version, the splits' and the
// importance matrix's), with general.architecture "tcast" when it has none. A
// checkpoint whose config.json names an architecture ggufmodel knows
// becomes the llama.cpp model file, with its tokenizer (finishModel writes
// its keys). Any other gets the generic metadata: general.architecture
// "tcast", whatever config.json's model_type (the file never claims to be
// a llama.cpp model), and general.name, which Convert names after the
// output (nameGeneric); the plan says why it is generic (genericWhy) and,
// unless -gguf-generic asked for it, warns.
func (p *plan) ggufMetadata(in *load.Checkpoint, opts *Options) error {
	p.meta = map[string]string{} // safetensors metadata is not carried into GGUF
	if g := in.GGUF(); g != nil {
		if a := g.Architecture(); opts.GGUF.Generic && a != "" && a != genericArch {
			return &OptionError{Option: "GGUF.Generic", Err: ErrNotHuggingFace,
				Reason: fmt.Sprintf("applies to a Hugging Face checkpoint, and the input is a llama.cpp "+
					"model file (general.architecture %q), whose GGUF names and metadata the output keeps", a),
				Fixes: []Fix{unset("GGUF.Generic")}}
		}
		if g.Architecture() == "" {
			p.ggufKV = append(p.ggufKV, gguf.KV{Key: gguf.KeyArchitecture, Value: gguf.String(genericArch)})
		}
		for _, kv := range g.KV {
			if strings.HasPrefix(kv.Key, layout.KeyPrefix) || strings.HasPrefix(kv.Key, imatrix.KeyQuantizePrefix) ||
				strings.HasPrefix(kv.Key, "split.") || kv.Key == gguf.KeyFileType ||
				kv.Key == gguf.KeyQuantizationVersion {
				continue
			}
			p.ggufKV = append(p.ggufKV, kv)
		}
		return nil
	}
	if !opts.GGUF.Generic {
		m, err := ggufmodel.Detect(in.Config())
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNoModelFile, ggufmodel.InDir(err, in.Dir(), ggufmodel.ConfigFile))
		}
		if m != nil {
			tok, err := ggufmodel.ReadTokenizer(in.Dir(), ggufmodel.TokenizerOptions{VocabSize: m.Vocab, Pre: opts.GGUF.Pre})
			if err != nil {
				return fmt.Errorf("%w: %w", ErrNoModelFile, err)
			}
			m.Tokenizer = tok
			p.model = m
			return nil
		}
	}
	p.ggufKV = []gguf.KV{{Key: gguf.KeyArchitecture, Value: gguf.String(genericArch)}, {Key: gguf.KeyName, Value: gguf.String("")}}
	p.generic = true
	p.genericWhy = genericWhy(in, opts)
	if !opts.GGUF.Generic {
		p.warn(Warning{Text: fmt.Sprintf("the output is generic GGUF (general.architecture %q, the "+
			"input's tensor names, no llama.cpp model metadata), which llama.cpp cannot run: %s",
			genericArch, p.genericWhy)})
	}
	return nil
}

// genericWhy says why a checkpoint's GGUF output is generic rather than a
// llama.cpp model file: -gguf-generic, no config.json, or a model_type
// package ggufmodel does not know (with the closest one it knows).
func genericWhy(in *load.Checkpoint, opts *Options) string {
	if opts.GGUF.Generic {
		return "Options.GGUF.Generic asks for it"
	}
	known := slices.Sorted(maps.Keys(ggufmodel.Architectures()))
	list := strings.Join(known, ", ")
	cfgPath := filepath.Join(in.Dir(), ggufmodel.ConfigFile)
	if len(in.Config()) == 0 {
		return fmt.Sprintf("there is no %s beside the input, whose model_type (one of %s) would make a llama.cpp model file", ggufmodel.ConfigFile, list)
	}
	var cfg struct {
		ModelType string `json:"model_type"`
	}
	if json.Unmarshal(in.Config(), &cfg) != nil || cfg.ModelType == "" {
		return fmt.Sprintf("%s has no model_type (one of %s would make a llama.cpp model file)", cfgPath, list)
	}
	why := fmt.Sprintf("%s's model_type %q is not one of %s", cfgPath, cfg.ModelType, list)
	if c := names.Closest(cfg.ModelType, known, 1); len(c) > 0 {
		why += fmt.Sprintf(" (did you mean %q?)", c[0])
	}
	return why
}

// ErrNoModelFile is matched by the error of Convert for a checkpoint whose
// config.json names an architecture package ggufmodel knows, but which
// cannot become its llama.cpp model file (a value llama.cpp needs is
// missing, the tokenizer cannot be converted); Options.GGUF.Generic writes
// a generic GGUF of it instead.
var ErrNoModelFile = errors.New("the checkpoint cannot become a llama.cpp model file")

// ErrNotHuggingFace is matched by the error of an option for a Hugging
// Face checkpoint (GGUF.Generic) given a llama.cpp model file.
var ErrNotHuggingFace = errors.New("the option applies to a Hugging Face checkpoint")

// genericArch is general.architecture of a GGUF output that is no model of
// an architecture llama.cpp knows.
const genericArch = "tcast"

// nameGeneric gives generic GGUF output (see ggufMetadata) its
// general.name.
func (p *plan) nameGeneric(name string) {
	if !p.generic {
		return
	}
	for i := range p.ggufKV {
		if p.ggufKV[i].Key == gguf.KeyName {
			p.ggufKV[i].Value = gguf.String(name)
		}
	}
}

// addExtras declares the tensors a llama.cpp model file holds that the
// checkpoint does not (Llama 3's rope_freqs), computed from config.json and
// copied like kept tensors.
func (p *plan) addExtras(seen map[string]string) error {
	if p.model == nil {
		return nil
	}
	for _, e := range p.model.Extra() {
		data := float32Bytes(e.Data)
		d := &decision{info: load.Info{Name: e.Name, Shape: e.Shape, Type: "F32", DType: safetensors.F32, Float: true, Size: int64(len(data))},
			data: data, f32: true}
		d.result = TensorResult{Name: e.Name, Shape: e.Shape, Source: "F32", Bits: 32, Note: "computed from " + ggufmodel.ConfigFile}
		sp, err := p.keptSpec(d)
		if err != nil {
			return err
		}
		if other, dup := seen[sp.Name]; dup {
			return fmt.Errorf("tensor %s of the llama.cpp model collides with %s", sp.Name, other)
		}
		seen[sp.Name] = sp.Name
		d.specs = []layout.Spec{sp}
		p.kept = append(p.kept, sp.Name)
		p.specs = append(p.specs, sp)
		d.index = len(p.tensors)
		p.tensors = append(p.tensors, d)
	}
	return nil
}

// finishModel checks the tensors of a llama.cpp model file against what
// llama.cpp loads, and makes its metadata.
func (p *plan) finishModel() error {
	if p.model == nil {
		return nil
	}
	shapes := map[string][]int{}
	for _, sp := range p.specs {
		shapes[sp.Name] = sp.Shape
	}
	if err := p.model.Check(shapes); err != nil {
		return err
	}
	p.ggufKV = p.modelKV()
	xf := map[string]ggufmodel.Transform{}
	for _, d := range p.tensors {
		if !d.xform.IsZero() {
			xf[d.info.Name] = d.xform
		}
	}
	if len(xf) > 0 {
		p.meta[layout.KeyTransforms] = jsonString(xf)
	}
	return nil
}

// modelKV returns the metadata of the llama.cpp model file p.model.
func (p *plan) modelKV() []gguf.KV {
	ft := -1
	if m, ok := p.fileType(); ok {
		ft = int(m.FileType())
	}
	return p.model.KV(ggufmodel.KVOptions{Name: filepath.Base(p.in.Dir()), FileType: ft})
}

// dropped is an input tensor the llama.cpp model file leaves out, and why.
type dropped struct {
	info load.Info
	why  string
}

// result is the report's line of a dropped tensor.
func (d dropped) result() TensorResult {
	return TensorResult{Name: d.info.Name, Shape: d.info.Shape, Source: d.info.Type, Note: "dropped: " + d.why, Dropped: true}
}
