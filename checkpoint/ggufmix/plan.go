package ggufmix

import (
	"fmt"
	"sort"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// Model is what the mix rules need to know about the model.
type Model struct {
	// Arch is the GGUF architecture name ("llama", "qwen2", "falcon",
	// ...). Falcon has rules of its own; llama and qwen2 decide whether a
	// model counts as 70B.
	Arch string
	// Layers is the number of blocks (block_count). Plan infers it from
	// the tensor names when it is 0.
	Layers int
	// Heads and KVHeads are the attention and key/value head counts; their
	// ratio is the grouped-query factor some rules test (1 when KVHeads is
	// 0).
	Heads, KVHeads int
	// Experts is the number of experts of a mixture-of-experts model (0 or
	// 1 for a dense model).
	Experts int
}

// gqa returns the grouped-query factor n_head / n_head_kv.
func (m Model) gqa() int {
	if m.KVHeads <= 0 {
		return 1
	}
	return m.Heads / m.KVHeads
}

// is70B reports whether llama.cpp classes the model as 70B: a llama with
// 80 layers and grouped-query attention (with as many KV heads as heads
// it is the 65B), or a qwen2 with 80 layers.
func (m Model) is70B() bool {
	switch m.Arch {
	case "llama":
		return m.Layers == 80 && m.Heads != m.KVHeads
	case "qwen2":
		return m.Layers == 80
	}
	return false
}

// Tensor is one tensor to choose a type for.
type Tensor struct {
	// Name is the tensor's GGUF name ("blk.3.attn_v.weight") or, when it
	// has none, its Hugging Face name; overrides match against it.
	Name string
	// Shape is the row-major (PyTorch) shape: the last dimension is the
	// row length (ggml's ne[0]) that block types must divide.
	Shape []int
	// Keep is the type a tensor that is never quantized keeps: its type
	// in a GGUF input, as llama-quantize keeps it; the zero value is F32,
	// the type llama.cpp's converter gives such tensors.
	Keep gguf.Type
}

// Options adjusts Plan. The zero value applies the mix as
// llama-quantize does without flags.
type Options struct {
	// Overrides force types by tensor name; the first match
	// wins. They apply to the tensors the mix may quantize, and the
	// row-length fallback still applies to their types.
	Overrides []Override
	// OutputType, when not nil, is the output head's type in every mix,
	// before Overrides and the rules (llama-quantize
	// --output-tensor-type). A token embedding that doubles as the head
	// gets it through the mix's rules: not with Pure, in a float mix or
	// over a matching Override, as in llama-quantize.
	OutputType *gguf.Type
	// TokenEmbeddingType, when not nil, is the token embedding's type in
	// every mix, before Overrides and the rules (--token-embedding-type);
	// an Override that matches per_layer_token_embd.weight wins over it
	// for that table.
	TokenEmbeddingType *gguf.Type
	// KeepOutput leaves the output head (output.weight, lm_head.weight)
	// as it is, of type Tensor.Keep (--leave-output-tensor).
	KeepOutput bool
	// Imatrix says an importance matrix will be used; the IQ4 mixes and
	// Q4_0/Q5_0 choose their first ffn_down layers differently with one.
	Imatrix bool
	// Pure gives every quantizable tensor the mix's base type (with the
	// fallback), as llama-quantize --pure.
	Pure bool
}

// Decision is the type chosen for one tensor and why.
type Decision struct {
	// Name is the tensor name.
	Name string
	// Category is the role the rules saw.
	Category Category
	// Layer is the block index in the name, or −1.
	Layer int
	// Type is the chosen type.
	Type gguf.Type
	// Quantize is false for tensors that are never quantized (Type is then
	// the Tensor's Keep).
	Quantize bool
	// Override is the override (PATTERN=TYPE) that chose the type, or "".
	Override string
	// Fallback reports that the row length forced a replacement type.
	Fallback bool
	// Asked reports that an option chose the type: an Override,
	// OutputType or TokenEmbeddingType. A size target (Fit) keeps it.
	Asked bool
	// Reason explains the choice in words, for the conversion report.
	Reason string
	// NeedsImatrix reports that llama-quantize quantizes the tensor to
	// Type only with an importance matrix: the IQ grid types IQ1_S, IQ1_M,
	// IQ2_XXS, IQ2_XS, IQ2_S and IQ3_XXS in any mix (not IQ3_S) and Q2_K
	// in the Q2_K_S mix, but never the token embedding or the output head.
	NeedsImatrix bool
}

// choose decides the type of one tensor, placed by its layer index (from
// the name) out of model.Layers, with no tied embeddings; a tensor whose
// rule depends on its layer but whose name has no layer index inside
// model.Layers is a *TensorError. The tests place single tensors with it.
func choose(mix Mix, model Model, t Tensor, opt Options) (Decision, error) {
	cat := CategoryOf(t.Name)
	layer := LayerOf(t.Name)
	p := position{attnV: layer, nAttnV: model.Layers, ffn: layer, nFFN: model.Layers,
		ffnRank: layer}
	if usesPosition(mix, cat) && !opt.Pure && keepReason(t.Name, t.Shape) == "" {
		if err := checkLayer(t.Name, layer, model.Layers); err != nil {
			return Decision{}, err
		}
	}
	return decide(mix, model, t, cat, layer, p, false, opt)
}

// Plan decides the types of all tensors of a model, in the order given.
// It places attention-V tensors by their rank among them and FFN tensors
// by their rank among their kind (by layer for a mixture of experts),
// counting in llama.cpp's tensor order (by layer, then by name) the
// tensors it may quantize (not biases), and
// treats the token embedding as the output head when no output.weight is
// among the tensors. Give it the whole model: positions are ranks, so a
// partial list shifts them. For a model
// with one attn_v and one ffn_down per layer, a rank is the layer index;
// for one with attention in some layers only, the attention-V rules see
// the rank among the attention layers, as in llama-quantize. A layer index
// beyond the layer count is a *TensorError.
func Plan(mix Mix, model Model, tensors []Tensor, opt Options) ([]Decision, error) {
	cats := make([]Category, len(tensors))
	layers := make([]int, len(tensors))
	tied := true
	maxLayer := -1
	for i, t := range tensors {
		cats[i] = CategoryOf(t.Name)
		layers[i] = LayerOf(t.Name)
		if cats[i] == Output {
			tied = false
		}
		maxLayer = max(maxLayer, layers[i])
	}
	if model.Layers <= 0 {
		model.Layers = maxLayer + 1
	}
	pos, err := positions(mix, model, tensors, cats, layers, opt)
	if err != nil {
		return nil, err
	}
	out := make([]Decision, len(tensors))
	for i, t := range tensors {
		if layers[i] >= model.Layers {
			return nil, &TensorError{Name: t.Name, Reason: fmt.Sprintf("layer %d outside the model's %d layers", layers[i], model.Layers)}
		}
		d, err := decide(mix, model, t, cats[i], layers[i], pos[i], tied, opt)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// llamaOrder returns the indices of tensors in llama.cpp's order: by
// layer (of layers, one per tensor), then by name.
func llamaOrder(tensors []Tensor, layers []int) []int {
	order := make([]int, len(tensors))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ia, ib := order[a], order[b]
		if layers[ia] != layers[ib] {
			return layers[ia] < layers[ib]
		}
		return tensors[ia].Name < tensors[ib].Name
	})
	return order
}

// positions places each tensor (of category cats[i], in layer layers[i])
// as Plan says: attention-V tensors by their rank among them, FFN tensors
// by their rank among their kind, or by layer for a mixture of experts,
// whose layer the mix's rules then need inside the model. Ranks count the
// tensors that may be quantized only (not ffn_down.bias), as
// llama-quantize's counters advance only for the tensors its rules see;
// the attention-V count n is of every name, as llama-quantize's is.
func positions(mix Mix, model Model, tensors []Tensor, cats []Category, layers []int,
	opt Options) ([]position, error) {
	nAttnV := 0
	for _, c := range cats {
		if c.attnVLike() {
			nAttnV++
		}
	}
	pos := make([]position, len(tensors))
	var iAttnV int
	iFFN := map[Category]int{}
	for _, i := range llamaOrder(tensors, layers) {
		c := cats[i]
		p := position{nAttnV: nAttnV, nFFN: model.Layers}
		if keepReason(tensors[i].Name, tensors[i].Shape) != "" {
			pos[i] = p // never quantized: no rule sees it
			continue
		}
		if c.attnVLike() {
			p.attnV = iAttnV
			iAttnV++
		}
		if c == FFNDown || c == FFNGate || c == FFNUp {
			p.ffn, p.ffnRank = iFFN[c], iFFN[c]
			iFFN[c]++
			if model.Experts > 1 {
				p.ffn = layers[i]
				if usesLayer(mix, c) && !opt.Pure {
					if err := checkLayer(tensors[i].Name, layers[i], model.Layers); err != nil {
						return nil, err
					}
				}
			}
		}
		pos[i] = p
	}
	return pos, nil
}

// usesPosition reports whether the mix has a rule for the category that
// depends on the tensor's position (its layer, or its rank).
func usesPosition(mix Mix, cat Category) bool {
	switch {
	case cat.attnVLike():
		return mix == MixQ4_K_M || mix == MixQ5_K_M || mix == MixQ4_K_S || mix == MixQ3_K_M
	case cat == FFNDown:
		switch mix {
		case MixQ2_K_S, MixQ3_K_M, MixQ4_K_M, MixQ5_K_M, MixQ4_K_S, MixIQ4_NL, MixIQ4_XS,
			MixQ4_0, MixQ5_0, MixIQ3_XXS, MixIQ3_M:
			return true
		}
		_, low := lowIQs[mix]
		return low
	case cat == FFNGate || cat == FFNUp:
		_, ok := ffnMiddleTypes[mix]
		return ok
	}
	return false
}

// usesLayer reports whether the mix's rule for an FFN category reads the
// tensor's layer, which a mixture of experts takes from the name; the IQ1
// and IQ2 mixes' FFN-down rule reads the rank among FFN-down tensors
// instead, also in a mixture of experts, as llama-quantize counts them.
func usesLayer(mix Mix, cat Category) bool {
	_, low := lowIQs[mix]
	return usesPosition(mix, cat) && !low
}

// checkLayer requires a layer index inside the layer count.
func checkLayer(name string, layer, layers int) error {
	switch {
	case layers <= 0:
		return &TensorError{Name: name, Reason: "the model's layer count is needed to place it (Model.Layers is 0)"}
	case layer < 0:
		return &TensorError{Name: name, Reason: "no layer index in the name (want blk.N. or layers.N.)"}
	case layer >= layers:
		return &TensorError{Name: name, Reason: fmt.Sprintf("layer %d outside the model's %d layers", layer, layers)}
	}
	return nil
}

// decide applies, in llama-quantize's order: the never-quantized
// tensors, the embedding and output types, the overrides, the mix rules
// (unless Pure), and the row-length fallback.
func decide(mix Mix, model Model, t Tensor, cat Category, layer int, p position, tied bool, opt Options) (Decision, error) {
	d := Decision{Name: t.Name, Category: cat, Layer: layer}
	if mix.IsZero() {
		return Decision{}, &TensorError{Name: t.Name, Reason: "no mix given (the zero Mix)"}
	}
	if why := kept(mix, t, cat, opt); why != "" {
		d.Type = t.Keep
		d.Reason = why + ": kept " + t.Keep.String()
		return d, nil
	}
	ne0, err := rowLength(t)
	if err != nil {
		return Decision{}, err
	}
	d.Quantize = true
	d.Type, d.Reason = mix.base, mix.name+" base type"
	switch {
	case opt.TokenEmbeddingType != nil && cat == TokenEmbd && !perLayerOverridden(opt.Overrides, t.Name):
		d.Type, d.Reason = *opt.TokenEmbeddingType, "token embedding type asked for: "+opt.TokenEmbeddingType.String()
		d.Asked = true
	case opt.OutputType != nil && cat == Output:
		d.Type, d.Reason = *opt.OutputType, "output head type asked for: "+opt.OutputType.String()
		d.Asked = true
	case override(opt.Overrides, &d):
	case mix.quantized() && !opt.Pure:
		d.Type, d.Reason = ruleType(mix, model, cat, p, t.Shape, tied, opt)
	case opt.Pure:
		d.Reason = mix.name + " base type (pure)"
	}
	if err := d.fallBack(ne0); err != nil {
		return Decision{}, err
	}
	d.NeedsImatrix = needsImatrix(mix, cat, d.Type)
	return d, nil
}

// kept says why a tensor keeps its type (Tensor.Keep), and is "" for one
// the mix quantizes.
func kept(mix Mix, t Tensor, cat Category, opt Options) string {
	switch why := keepReason(t.Name, t.Shape); {
	case why != "":
		return why
	case mix.Copies():
		return "COPY"
	case opt.KeepOutput && cat == Output:
		return "output head left as it is, as asked"
	}
	return ""
}

// perLayerOverridden reports whether an override names Gemma 3n's
// per-layer token embedding, which then does not take TokenEmbeddingType.
func perLayerOverridden(overrides []Override, name string) bool {
	if name != "per_layer_token_embd.weight" {
		return false
	}
	_, ok := Match(overrides, name)
	return ok
}

// needsImatrix is llama-quantize's rule for the types it refuses to
// quantize to without an importance matrix (Decision.NeedsImatrix).
func needsImatrix(mix Mix, cat Category, t gguf.Type) bool {
	if cat == TokenEmbd || cat == Output {
		return false
	}
	switch t {
	case gguf.TypeIQ1_S, gguf.TypeIQ1_M, gguf.TypeIQ2_XXS, gguf.TypeIQ2_XS, gguf.TypeIQ2_S, gguf.TypeIQ3_XXS:
		return true
	case gguf.TypeQ2_K:
		return mix == MixQ2_K_S
	}
	return false
}

// rowLength returns the row length of t (ggml's ne[0], the last
// dimension), which must be positive.
func rowLength(t Tensor) (int, error) {
	if len(t.Shape) == 0 {
		return 0, &TensorError{Name: t.Name, Reason: "a scalar has no rows"}
	}
	if ne0 := t.Shape[len(t.Shape)-1]; ne0 <= 0 {
		return 0, &TensorError{Name: t.Name, Reason: fmt.Sprintf("row length %d in shape %v", ne0, t.Shape)}
	}
	return t.Shape[len(t.Shape)-1], nil
}

// fallBack replaces d's type by one that fits rows of ne0 values when its
// block does not, and says so in d's reason; a type without a fallback is
// a *TensorError.
func (d *Decision) fallBack(ne0 int) error {
	f, why, err := fallback(d.Type, ne0)
	if err != nil {
		return &TensorError{Name: d.Name, Reason: d.Reason + "; " + err.Error(), Err: ErrNoFallback}
	}
	if why != "" {
		d.Type, d.Fallback = f, true
		d.Reason += "; " + why
	}
	return nil
}
