// Package layout maps cast tensors to and from the tensor names, dtypes, shapes
// and config files that checkpoint loaders expect (docs/LAYOUTS.md): our
// own tcast layout, vLLM compressed-tensors, Hugging Face gpt-oss MXFP4, NVIDIA
// ModelOpt NVFP4. GGUF has its own writer in package gguf.
package layout

import (
	"fmt"
	"sort"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// Source is read access to a converted file's tensors, for Decode.
type Source interface {
	// Tensor returns a tensor's description and bytes, and false when absent.
	Tensor(name string) (safetensors.TensorInfo, []byte, bool)
	// Metadata returns the header's __metadata__.
	Metadata() map[string]string
}

// Converted describes one weight a conversion cast, for Files.
type Converted struct {
	Name  string // source tensor name, e.g. "model.layers.0.mlp.down_proj.weight"
	Shape []int
}

// Layout writes cast weights in one loader's conventions and reads them back.
type Layout interface {
	// Name is the -layout value.
	Name() string
	// Check reports whether weights of datatype dt cast along axis (normalized,
	// for a weight of rank rank) can be written in this layout; the error says
	// what the layout accepts.
	Check(dt *tcast.DataType, axis, rank int) error
	// Encode turns one cast weight (Actual form) named name into the tensors
	// to write. Metadata entries to add to __metadata__ go in meta.
	Encode(name string, t *tcast.Tensor, meta map[string]string) ([]safetensors.Tensor, error)
	// Decode rebuilds the cast weight named name (its source name) from src,
	// returning ok=false when src does not hold name as a converted weight
	// (it may then hold it unconverted, under its own name).
	Decode(name string, src Source) (t *tcast.Tensor, ok bool, err error)
	// Files returns extra files to write beside the checkpoint (config.json's
	// quantization_config, hf_quant_config.json, ...), by file name. srcConfig
	// is the source's config.json, or nil. kept lists the weights left
	// unconverted.
	Files(dt *tcast.DataType, converted []Converted, kept []string, srcConfig []byte) (map[string][]byte, error)
}

var registry = map[string]Layout{}

// Register adds a layout; it panics on a duplicate name (a programming error).
func Register(l Layout) {
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
	return nil, fmt.Errorf("layout: unknown layout %q (want one of %v)", name, Names())
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
