package ggufmix

import (
	"flag"
	"fmt"
	"io"
	"regexp/syntax"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// Short names for the expected types.
const (
	F32   = gguf.TypeF32
	F16   = gguf.TypeF16
	BF16  = gguf.TypeBF16
	Q4_0  = gguf.TypeQ4_0
	Q4_1  = gguf.TypeQ4_1
	Q5_0  = gguf.TypeQ5_0
	Q5_1  = gguf.TypeQ5_1
	Q8_0  = gguf.TypeQ8_0
	Q2_K  = gguf.TypeQ2_K
	Q3_K  = gguf.TypeQ3_K
	Q4_K  = gguf.TypeQ4_K
	Q5_K  = gguf.TypeQ5_K
	Q6_K  = gguf.TypeQ6_K
	IQ4NL = gguf.TypeIQ4_NL
	IQ4XS = gguf.TypeIQ4_XS

	IQ1S   = gguf.TypeIQ1_S
	IQ1M   = gguf.TypeIQ1_M
	IQ2XXS = gguf.TypeIQ2_XXS
	IQ2XS  = gguf.TypeIQ2_XS
	IQ2S   = gguf.TypeIQ2_S
	IQ3XXS = gguf.TypeIQ3_XXS
	IQ3S   = gguf.TypeIQ3_S
)

// llamaTensors is a hand-made Llama tensor list in GGUF names and
// row-major shapes: embd 4096, ffn 11008 (= 43 × 256), vocab 32000, kv
// width kv (4096 without grouped-query attention, 1024 with 8 KV heads of
// 32), and output.weight unless tied.
func llamaTensors(layers, kv int, tied bool) []Tensor {
	ts := []Tensor{
		{Name: "token_embd.weight", Shape: []int{32000, 4096}},
		{Name: "output_norm.weight", Shape: []int{4096}},
	}
	if !tied {
		ts = append(ts, Tensor{Name: "output.weight", Shape: []int{32000, 4096}})
	}
	for i := range layers {
		p := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			Tensor{Name: p + "attn_norm.weight", Shape: []int{4096}},
			Tensor{Name: p + "attn_q.weight", Shape: []int{4096, 4096}},
			Tensor{Name: p + "attn_k.weight", Shape: []int{kv, 4096}},
			Tensor{Name: p + "attn_v.weight", Shape: []int{kv, 4096}},
			Tensor{Name: p + "attn_output.weight", Shape: []int{4096, 4096}},
			Tensor{Name: p + "ffn_norm.weight", Shape: []int{4096}},
			Tensor{Name: p + "ffn_gate.weight", Shape: []int{11008, 4096}},
			Tensor{Name: p + "ffn_up.weight", Shape: []int{11008, 4096}},
			Tensor{Name: p + "ffn_down.weight", Shape: []int{4096, 11008}},
		)
	}
	return ts
}

// moreBits32 are the layers llama-quantize's use_more_bits picks out of
// 32, derived by hand: i < 32/8 = 4, i >= 7·32/8 = 28, or (i − 4) mod 3
// = 2, that is i = 6, 9, ..., 27.
var moreBits32 = []int{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31}

// layerTypes gives type t to the listed layers.
func layerTypes(t gguf.Type, layers ...int) map[int]gguf.Type {
	m := map[int]gguf.Type{}
	for _, l := range layers {
		m[l] = t
	}
	return m
}

// mixWant is a mix's expected choice on llamaTensors: every quantizable
// tensor gets base unless listed; v and down list the layers whose
// attn_v / ffn_down differ from vAll / downAll (base when zero-valued and
// not set).
type mixWant struct {
	mix                  Mix
	imatrix              bool
	gqa                  bool // 8 KV heads of 32 instead of 32
	base, embd, output   gguf.Type
	o                    gguf.Type // attn_output
	vAll, downAll        gguf.Type
	v, down              map[int]gguf.Type
	setO, setVAll, setDA bool
}

// llamaWants are llama-quantize's decisions on the 32-layer list, derived
// from its rules (src/llama-quant.cpp, llama_tensor_get_type_impl) by
// hand:
//   - output.weight gets Q6_K unless the base is Q8_0; token_embd keeps the
//     base; norms stay F32.
//   - Q4_K_M / Q5_K_M: attn_v and ffn_down in moreBits32 get Q6_K.
//   - Q4_K_S: attn_v in layers 0–3 (the first 4) and ffn_down in layers
//     0–3 (i < 32/8) get Q5_K.
//   - Q3_K_M: attn_v in layers 0–1 Q5_K, the others Q4_K; ffn_down in
//     layers 0–1 (i < 32/16) Q5_K, the others Q4_K; attn_output Q4_K.
//   - Q3_K_L: attn_v, ffn_down and attn_output Q5_K.
//   - Q2_K: attn_v Q3_K (Q4_K with 4+ heads per KV head), ffn_down and
//     attn_output Q3_K.
//   - IQ4_NL / IQ4_XS: ffn_down in layers 0–3 Q5_K without an importance
//     matrix; attn_v Q5_K with 4+ heads per KV head.
//   - Q4_0 / Q5_0 with an importance matrix: ffn_down in layers 0–3 Q4_1 /
//     Q5_1.
//   - Q3_K_S, Q5_K_S, Q6_K, Q4_1, Q5_1: only the output rule.
//   - Q8_0: nothing (its output stays Q8_0).
//   - F16, BF16, F32: every 2-D weight gets the base, no rules.
var llamaWants = []mixWant{
	{mix: MixQ4_K_M, base: Q4_K, output: Q6_K, v: layerTypes(Q6_K, moreBits32...), down: layerTypes(Q6_K, moreBits32...)},
	{mix: MixQ4_K_M, imatrix: true, gqa: true, base: Q4_K, output: Q6_K, v: layerTypes(Q6_K, moreBits32...), down: layerTypes(Q6_K, moreBits32...)},
	{mix: MixQ4_K_S, base: Q4_K, output: Q6_K, v: layerTypes(Q5_K, 0, 1, 2, 3), down: layerTypes(Q5_K, 0, 1, 2, 3)},
	{mix: MixQ5_K_M, base: Q5_K, output: Q6_K, v: layerTypes(Q6_K, moreBits32...), down: layerTypes(Q6_K, moreBits32...)},
	{mix: MixQ5_K_S, base: Q5_K, output: Q6_K},
	{mix: MixQ3_K_S, base: Q3_K, output: Q6_K},
	{mix: MixQ3_K_M, base: Q3_K, output: Q6_K, o: Q4_K, setO: true,
		vAll: Q4_K, setVAll: true, v: layerTypes(Q5_K, 0, 1), downAll: Q4_K, setDA: true, down: layerTypes(Q5_K, 0, 1)},
	{mix: MixQ3_K_L, base: Q3_K, output: Q6_K, o: Q5_K, setO: true, vAll: Q5_K, setVAll: true, downAll: Q5_K, setDA: true},
	{mix: MixQ2_K, base: Q2_K, output: Q6_K, o: Q3_K, setO: true, vAll: Q3_K, setVAll: true, downAll: Q3_K, setDA: true},
	{mix: MixQ2_K, gqa: true, base: Q2_K, output: Q6_K, o: Q3_K, setO: true, vAll: Q4_K, setVAll: true, downAll: Q3_K, setDA: true},
	{mix: MixQ6_K, base: Q6_K, output: Q6_K},
	{mix: MixQ8_0, base: Q8_0, output: Q8_0},
	{mix: MixIQ4_NL, base: IQ4NL, output: Q6_K, down: layerTypes(Q5_K, 0, 1, 2, 3)},
	{mix: MixIQ4_NL, imatrix: true, base: IQ4NL, output: Q6_K},
	{mix: MixIQ4_NL, gqa: true, base: IQ4NL, output: Q6_K, vAll: Q5_K, setVAll: true, down: layerTypes(Q5_K, 0, 1, 2, 3)},
	{mix: MixIQ4_XS, base: IQ4XS, output: Q6_K, down: layerTypes(Q5_K, 0, 1, 2, 3)},
	{mix: MixIQ4_XS, imatrix: true, gqa: true, base: IQ4XS, output: Q6_K, vAll: Q5_K, setVAll: true},
	{mix: MixQ4_0, base: Q4_0, output: Q6_K},
	{mix: MixQ4_0, imatrix: true, base: Q4_0, output: Q6_K, down: layerTypes(Q4_1, 0, 1, 2, 3)},
	{mix: MixQ5_0, imatrix: true, base: Q5_0, output: Q6_K, down: layerTypes(Q5_1, 0, 1, 2, 3)},
	{mix: MixQ4_1, base: Q4_1, output: Q6_K},
	{mix: MixQ5_1, base: Q5_1, output: Q6_K},
	{mix: MixF16, base: F16, output: F16},
	{mix: MixBF16, base: BF16, output: BF16},
	{mix: MixF32, base: F32, output: F32},
}

// expected returns the type w expects for a tensor of llamaTensors.
func (w mixWant) expected(cat Category, layer int, name string) gguf.Type {
	switch {
	case keepReason(name, []int{2, 2}) != "" || name == "output_norm.weight":
		return F32
	case cat == Output:
		return w.output
	case cat == AttnOutput && w.setO:
		return w.o
	case cat == AttnV:
		if t, ok := w.v[layer]; ok {
			return t
		}
		if w.setVAll {
			return w.vAll
		}
	case cat == FFNDown:
		if t, ok := w.down[layer]; ok {
			return t
		}
		if w.setDA {
			return w.downAll
		}
	}
	return w.base
}

func TestPlanLlama32(t *testing.T) {
	for _, w := range llamaWants {
		name := fmt.Sprintf("%v/imatrix=%v/gqa=%v", w.mix, w.imatrix, w.gqa)
		t.Run(name, func(t *testing.T) {
			kv, kvHeads := 4096, 32
			if w.gqa {
				kv, kvHeads = 1024, 8
			}
			ts := llamaTensors(32, kv, false)
			model := Model{Arch: "llama", Layers: 32, Heads: 32, KVHeads: kvHeads}
			opt := Options{Imatrix: w.imatrix}
			ds, err := Plan(w.mix, model, ts, opt)
			require.NoError(t, err)
			require.Len(t, ds, len(ts))
			counts := map[gguf.Type]int{}
			for i, d := range ds {
				tn := ts[i].Name
				want := w.expected(CategoryOf(tn), LayerOf(tn), tn)
				assert.Equal(t, want, d.Type, "%s: %s", tn, d.Reason)
				assert.Equal(t, tn, d.Name)
				assert.NotEmpty(t, d.Reason, tn)
				assert.False(t, d.Fallback, tn)
				assert.Equal(t, len(ts[i].Shape) > 1, d.Quantize, tn)
				counts[d.Type]++

				// One tensor at a time, placed by its layer, gives the same.
				c, err := choose(w.mix, model, ts[i], opt)
				require.NoError(t, err, tn)
				assert.Equal(t, d, c, tn)
			}
			// 1 + 32·2 norms stay F32.
			if w.base != F32 {
				assert.Equal(t, 65, counts[F32])
			}
		})
	}
}

func TestReasons(t *testing.T) {
	ts := llamaTensors(32, 4096, false)
	model := Model{Arch: "llama", Layers: 32, Heads: 32, KVHeads: 32}
	ds, err := Plan(MixQ4_K_M, model, ts, Options{})
	require.NoError(t, err)
	byName := map[string]Decision{}
	for _, d := range ds {
		byName[d.Name] = d
	}
	assert.Equal(t, "Q4_K_M: attn_v 3 of 32, in the first eighth (use_more_bits): Q6_K", byName["blk.3.attn_v.weight"].Reason)
	assert.Equal(t, "Q4_K_M: attn_v 9 of 32, every third layer in between (use_more_bits): Q6_K", byName["blk.9.attn_v.weight"].Reason)
	assert.Equal(t, "Q4_K_M base type", byName["blk.10.attn_v.weight"].Reason)
	assert.Equal(t, "Q4_K_M: ffn_down in layer 30 of 32, in the last eighth (use_more_bits): Q6_K", byName["blk.30.ffn_down.weight"].Reason)
	assert.Equal(t, "output head: Q6_K", byName["output.weight"].Reason)
	assert.Equal(t, "1-D tensor: kept F32", byName["blk.0.attn_norm.weight"].Reason)
	assert.Equal(t, "1-D tensor: kept F32", byName["output_norm.weight"].Reason)
	d := byName["blk.7.ffn_down.weight"]
	assert.Equal(t, Decision{Name: "blk.7.ffn_down.weight", Category: FFNDown, Layer: 7, Type: Q4_K, Quantize: true,
		Reason: "Q4_K_M base type"}, d)
}

func TestTiedEmbeddings(t *testing.T) {
	// Without output.weight the token embedding doubles as the output
	// head and gets its rule (Q6_K; Q8_0 when the base is Q8_0).
	ts := llamaTensors(16, 1024, true)
	model := Model{Arch: "llama", Layers: 16, Heads: 32, KVHeads: 8}
	for mix, want := range map[Mix]gguf.Type{MixQ4_K_M: Q6_K, MixIQ4_XS: Q6_K, MixQ8_0: Q8_0, MixF16: F16} {
		ds, err := Plan(mix, model, ts, Options{})
		require.NoError(t, err)
		assert.Equal(t, "token_embd.weight", ds[0].Name)
		assert.Equal(t, want, ds[0].Type, "%v: %s", mix, ds[0].Reason)
	}
	ds, err := Plan(MixQ4_K_M, model, ts, Options{})
	require.NoError(t, err)
	assert.Contains(t, ds[0].Reason, "no output.weight")
	// With output.weight, the embedding is no output head.
	ds, err = Plan(MixQ4_K_M, model, append(ts, Tensor{Name: "output.weight", Shape: []int{32000, 1024}}), Options{})
	require.NoError(t, err)
	assert.Equal(t, Q4_K, ds[0].Type, ds[0].Reason)
}

func TestFallback(t *testing.T) {
	// Rows of 96 (a multiple of 32, not of 256) and of 100 (not of 32).
	cases := []struct {
		mix   Mix
		name  string
		shape []int
		want  gguf.Type
		fall  bool
		why   string
	}{
		{MixQ4_K_M, "blk.0.attn_q.weight", []int{96, 96}, Q5_0, true, "row length 96 is not a multiple of Q4_K's block of 256: falls back to Q5_0"},
		{MixQ5_K_S, "blk.0.attn_q.weight", []int{96, 96}, Q5_1, true, "Q5_K's block of 256: falls back to Q5_1"},
		{MixQ6_K, "blk.0.attn_q.weight", []int{96, 96}, Q8_0, true, "falls back to Q8_0"},
		{MixQ3_K_S, "blk.0.attn_q.weight", []int{96, 96}, Q4_0, true, "falls back to Q4_0"},
		{MixQ2_K, "blk.0.attn_q.weight", []int{96, 96}, Q4_0, true, "falls back to Q4_0"},
		{MixIQ4_XS, "blk.0.attn_q.weight", []int{96, 96}, IQ4NL, true, "falls back to IQ4_NL"},
		{MixIQ4_NL, "blk.0.attn_q.weight", []int{96, 96}, IQ4NL, false, ""},
		{MixQ4_K_M, "blk.0.ffn_down.weight", []int{96, 96}, Q8_0, true, "use_more_bits): Q6_K; row length 96 is not a multiple of Q6_K's block of 256: falls back to Q8_0"},
		{MixQ4_K_M, "blk.0.attn_q.weight", []int{96, 100}, F16, true, "falls back to F16"},
		{MixQ8_0, "blk.0.attn_q.weight", []int{96, 100}, F16, true, "Q8_0's block of 32: falls back to F16"},
		{MixIQ4_NL, "blk.0.attn_q.weight", []int{96, 100}, F16, true, "falls back to F16"},
		{MixF16, "blk.0.attn_q.weight", []int{96, 100}, F16, false, ""},
		// The output rule itself picks Q8_0 for rows the base block does
		// not divide; only a row Q8_0 does not fit falls back further.
		{MixQ4_K_M, "output.weight", []int{1000, 96}, Q8_0, false, "output head with row length 96 not a multiple of 256: Q8_0"},
		{MixQ4_K_M, "output.weight", []int{1000, 100}, F16, true, "Q8_0's block of 32: falls back to F16"},
		{MixIQ4_NL, "output.weight", []int{1000, 96}, Q8_0, true, "output head: Q6_K; row length 96"},
	}
	for _, c := range cases {
		t.Run(c.mix.String()+"/"+c.name+fmt.Sprint(c.shape), func(t *testing.T) {
			d, err := choose(c.mix, Model{Layers: 8}, Tensor{Name: c.name, Shape: c.shape}, Options{})
			require.NoError(t, err)
			assert.Equal(t, c.want, d.Type, d.Reason)
			assert.Equal(t, c.fall, d.Fallback, d.Reason)
			assert.Contains(t, d.Reason, c.why)
		})
	}
}

func TestOverrides(t *testing.T) {
	ovs, err := ParseOverrides([]string{`ffn_down=q6_k`, `blk\.1\.=Q8_0`, `attn_q=bf16`})
	require.NoError(t, err)
	ts := llamaTensors(4, 4096, false)
	ts = append(ts, Tensor{Name: "blk.3.narrow_proj.weight", Shape: []int{8, 96}})
	ds, err := Plan(MixQ4_K_M, Model{Arch: "llama", Layers: 4, Heads: 32, KVHeads: 32}, ts, Options{Overrides: ovs})
	require.NoError(t, err)
	byName := map[string]Decision{}
	for _, d := range ds {
		byName[d.Name] = d
	}
	for _, c := range []struct {
		name     string
		want     gguf.Type
		override string
	}{
		{"blk.0.ffn_down.weight", Q6_K, "ffn_down=q6_k"},
		{"blk.1.ffn_down.weight", Q6_K, "ffn_down=q6_k"}, // the first match wins
		{"blk.1.attn_v.weight", Q8_0, `blk\.1\.=Q8_0`},
		{"blk.1.attn_q.weight", Q8_0, `blk\.1\.=Q8_0`},
		{"blk.2.attn_q.weight", BF16, "attn_q=bf16"},
		{"blk.1.attn_norm.weight", F32, ""}, // never quantized, overrides or not
		{"blk.2.attn_v.weight", Q6_K, ""},   // use_more_bits(2, 4): 4/8 = 0, 7·4/8 = 3, (2 − 0) mod 3 = 2
		{"blk.0.attn_k.weight", Q4_K, ""},
	} {
		d := byName[c.name]
		assert.Equal(t, c.want, d.Type, "%s: %s", c.name, d.Reason)
		assert.Equal(t, c.override, d.Override, c.name)
	}
	assert.Equal(t, "override ffn_down=q6_k: Q6_K", byName["blk.0.ffn_down.weight"].Reason)

	// An override's type still falls back when the row does not fit it.
	o, err := ParseOverride("narrow=q6_k")
	require.NoError(t, err)
	d, err := choose(MixQ4_K_M, Model{Layers: 4}, Tensor{Name: "blk.3.narrow_proj.weight", Shape: []int{8, 96}}, Options{Overrides: []Override{o}})
	require.NoError(t, err)
	assert.Equal(t, Q8_0, d.Type)
	assert.True(t, d.Fallback)
	assert.Equal(t, "narrow=q6_k", d.Override)
	assert.Equal(t, "override narrow=q6_k: Q6_K; row length 96 is not a multiple of Q6_K's block of 256: falls back to Q8_0", d.Reason)

	// Overrides apply to float mixes too.
	d, err = choose(MixF16, Model{Layers: 4}, Tensor{Name: "blk.0.ffn_down.weight", Shape: []int{256, 256}}, Options{Overrides: ovs})
	require.NoError(t, err)
	assert.Equal(t, Q6_K, d.Type)
}

func TestOverridden(t *testing.T) {
	ovs, err := ParseOverrides([]string{`ffn_down=q6_k`, `down=q8_0`, `attn_q=bf16`})
	require.NoError(t, err)
	for _, c := range []struct {
		name     string
		shape    []int
		fallBack bool
		matched  bool
		want     gguf.Type
		reason   string
		err      string
	}{
		{"blk.0.ffn_down.weight", []int{256, 512}, false, true, Q6_K, "override ffn_down=q6_k: Q6_K", ""},
		{"mlp.down_proj.weight", []int{256, 512}, false, true, Q8_0, "override down=q8_0: Q8_0", ""},
		{"blk.0.attn_k.weight", []int{256, 512}, false, false, 0, "", ""},
		// 96 is no multiple of 256: an error, or Q6_K's fallback Q8_0.
		{"blk.0.ffn_down.weight", []int{8, 96}, false, true, 0, "",
			`tensor "blk.0.ffn_down.weight": override ffn_down=q6_k: row length 96 is not a multiple of Q6_K's block of 256`},
		{"blk.0.ffn_down.weight", []int{8, 96}, true, true, Q8_0,
			"override ffn_down=q6_k: Q6_K; row length 96 is not a multiple of Q6_K's block of 256: falls back to Q8_0", ""},
		{"blk.0.attn_q.weight", []int{8, 96}, false, true, BF16, "override attn_q=bf16: BF16", ""},
		{"blk.0.attn_q.weight", []int{8, 0}, false, true, 0, "", `tensor "blk.0.attn_q.weight": row length 0 in shape [8 0]`},
	} {
		d, ok, err := Overridden(ovs, Tensor{Name: c.name, Shape: c.shape}, c.fallBack)
		assert.Equal(t, c.matched, ok, c.name)
		if c.err != "" {
			var te *TensorError
			require.ErrorAs(t, err, &te, c.name)
			assert.Equal(t, c.err, err.Error())
			continue
		}
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, d.Type, c.name)
		assert.Equal(t, c.reason, d.Reason, c.name)
		assert.Equal(t, c.shape[1] == 96 && c.want == Q8_0, d.Fallback, c.name)
	}
	o, ok := Match(ovs, "blk.3.ffn_down.weight")
	require.True(t, ok)
	assert.Equal(t, "ffn_down=q6_k", o.Value, "the first match wins")
}

func TestParseOverride(t *testing.T) {
	o, err := ParseOverride(`a=b=Q4_0`)
	require.NoError(t, err)
	assert.Equal(t, `a=b`, o.Pattern.String(), "the type follows the last '='")
	assert.Equal(t, Q4_0, o.Type)
	o, err = ParseOverride(`attn_(q|k)= IQ4_xs`)
	require.NoError(t, err)
	assert.Equal(t, IQ4XS, o.Type)
	assert.True(t, o.Pattern.MatchString("blk.0.attn_k.weight"))

	cases := []struct {
		in, msg string
		closest []string
	}{
		{"ffn_down", `override "ffn_down": want REGEXP=TYPE`, nil},
		{"=q6_k", `override "=q6_k": empty tensor name pattern`, nil},
		{"ffn_down=", `override "ffn_down=": missing type after '='`, nil},
		{"ffn_down=q7_k", `override "ffn_down=q7_k": unknown type "q7_k" (closest: "q2_k", "q3_k", "q4_k")`,
			[]string{"q2_k", "q3_k", "q4_k"}},
		{"ffn_down=nvfp4", `override "ffn_down=nvfp4": unknown type "nvfp4"`, nil},
		{"ffn_down=Q8_K", `override "ffn_down=Q8_K": Q8_K is ggml's intermediate for dot products, not a weight type llama.cpp computes with: use q8_0`, nil},
	}
	for _, c := range cases {
		_, err := ParseOverride(c.in)
		var oe *OverrideError
		require.ErrorAs(t, err, &oe, c.in)
		assert.Equal(t, c.in, oe.Value)
		assert.Contains(t, err.Error(), c.msg)
		if c.closest != nil {
			assert.Equal(t, c.closest, oe.Closest)
		}
	}
	_, err = ParseOverrides([]string{"ok=q8_0", "ffn_(down=q6_k"})
	var oe *OverrideError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "ffn_(down=q6_k", oe.Value)
	var se *syntax.Error
	assert.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "bad regular expression")
}

func TestForType(t *testing.T) {
	// llama.h's enum llama_ftype: ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q4_0 2,
	// MOSTLY_Q8_0 7, MOSTLY_Q2_K 10, MOSTLY_Q3_K_M 12, MOSTLY_Q4_K_M 15,
	// MOSTLY_Q5_K_M 17, MOSTLY_Q6_K 18, MOSTLY_IQ4_NL 25, MOSTLY_BF16 32,
	// MOSTLY_MXFP4_MOE 38.
	for typ, want := range map[gguf.Type]uint32{F32: 0, F16: 1, Q4_0: 2, Q8_0: 7, Q2_K: 10, Q3_K: 12, Q4_K: 15,
		Q5_K: 17, Q6_K: 18, IQ4NL: 25, BF16: 32, gguf.TypeMXFP4: 38} {
		m, ok := ForType(typ)
		require.True(t, ok, typ.String())
		assert.Equal(t, want, m.FileType(), typ.String())
		assert.Equal(t, typ, m.Base(), typ.String())
	}
	for _, typ := range []gguf.Type{gguf.TypeQ8_K, gguf.TypeI8} {
		_, ok := ForType(typ)
		assert.False(t, ok, typ.String())
	}
	// llama.cpp's loader names a file mostly of IQ3_S IQ3_S (26), not
	// IQ3_XS (22) of the same base, and one of IQ2_S IQ2_S (28), whose
	// base is IQ2_XS, not IQ2_M (29), whose base IQ2_S is.
	for typ, want := range map[gguf.Type]Mix{IQ1S: MixIQ1_S, IQ1M: MixIQ1_M, IQ2XXS: MixIQ2_XXS,
		IQ2XS: MixIQ2_XS, IQ2S: MixIQ2_S, IQ3XXS: MixIQ3_XXS, IQ3S: MixIQ3_S} {
		m, ok := ForType(typ)
		require.True(t, ok, typ.String())
		assert.Equal(t, want, m, typ.String())
	}
}

func TestLookup(t *testing.T) {
	// llama_ftype values from llama.cpp's include/llama.h.
	want := map[string]struct {
		ftype uint32
		base  gguf.Type
	}{
		"F32": {0, F32}, "F16": {1, F16}, "Q4_0": {2, Q4_0}, "Q4_1": {3, Q4_1}, "Q8_0": {7, Q8_0},
		"Q5_0": {8, Q5_0}, "Q5_1": {9, Q5_1}, "Q2_K": {10, Q2_K}, "Q3_K_S": {11, Q3_K}, "Q3_K_M": {12, Q3_K},
		"Q3_K_L": {13, Q3_K}, "Q4_K_S": {14, Q4_K}, "Q4_K_M": {15, Q4_K}, "Q5_K_S": {16, Q5_K},
		"Q5_K_M": {17, Q5_K}, "Q6_K": {18, Q6_K}, "IQ4_NL": {25, IQ4NL}, "IQ4_XS": {30, IQ4XS}, "BF16": {32, BF16},
		"TQ1_0": {36, gguf.TypeTQ1_0}, "TQ2_0": {37, gguf.TypeTQ2_0}, "MXFP4_MOE": {38, gguf.TypeMXFP4},
		"Q1_0": {40, gguf.TypeQ1_0}, "Q2_0": {41, gguf.TypeQ2_0}, "Q2_K_S": {21, Q2_K},
		"IQ2_XXS": {19, IQ2XXS}, "IQ2_XS": {20, IQ2XS}, "IQ3_XS": {22, IQ3S},
		"IQ3_XXS": {23, IQ3XXS}, "IQ1_S": {24, IQ1S}, "IQ3_S": {26, IQ3S}, "IQ3_M": {27, IQ3S},
		"IQ2_S": {28, IQ2XS}, "IQ2_M": {29, IQ2S}, "IQ1_M": {31, IQ1M},
		"COPY": {0, F32},
	}
	assert.Len(t, Mixes(), len(want))
	for name, w := range want {
		m, err := Lookup(name)
		require.NoError(t, err, name)
		assert.Equal(t, name, m.String())
		assert.Equal(t, w.ftype, m.FileType(), name)
		assert.Equal(t, w.base, m.Base(), name)
	}
	for alias, full := range map[string]Mix{"q4_k": MixQ4_K_M, "Q5_K": MixQ5_K_M, "q3_k": MixQ3_K_M, " q4_k_m ": MixQ4_K_M} {
		m, err := Lookup(alias)
		require.NoError(t, err)
		assert.Equal(t, full, m)
	}
	_, err := Lookup("q4km")
	var ue *UnknownMixError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, ue.Closest, "Q4_K_M")
	assert.Contains(t, err.Error(), `unknown mix "q4km" (closest: `)
	assert.True(t, Mix{}.IsZero())
	_, err = choose(Mix{}, Model{}, Tensor{Name: "a.weight", Shape: []int{2, 2}}, Options{})
	assert.Error(t, err)
}

func TestPure(t *testing.T) {
	ts := llamaTensors(8, 4096, false)
	ds, err := Plan(MixQ4_K_M, Model{Layers: 8}, ts, Options{Pure: true})
	require.NoError(t, err)
	for i, d := range ds {
		if len(ts[i].Shape) > 1 {
			assert.Equal(t, Q4_K, d.Type, d.Name)
			assert.Equal(t, "Q4_K_M base type (pure)", d.Reason)
		}
	}
}

func TestKeepType(t *testing.T) {
	d, err := choose(MixQ4_K_M, Model{Layers: 1}, Tensor{Name: "blk.0.attn_norm.weight", Shape: []int{64}}, Options{})
	require.NoError(t, err)
	assert.Equal(t, F32, d.Type)
	assert.False(t, d.Quantize)
	assert.Equal(t, "1-D tensor: kept F32", d.Reason)
	for name, why := range map[string]string{
		"blk.0.attn_q.bias":              "not a weight",
		"blk.0.ffn_gate_inp.weight":      "expert router",
		"blk.0.attn_norm.weight":         "norm",
		"position_embd.weight":           "positional embedding",
		"blk.0.ssm_conv1d.weight":        "small or positional tensor (ssm_conv1d)",
		"model.layers.0.mlp.gate.weight": "expert router",
	} {
		d, err := choose(MixQ4_K_M, Model{Layers: 1}, Tensor{Name: name, Shape: []int{64, 64}}, Options{})
		require.NoError(t, err)
		assert.Equal(t, F32, d.Type, name)
		assert.Equal(t, why+": kept F32", d.Reason, name)
	}
}

func TestSpecialModels(t *testing.T) {
	// 70B llama (80 layers, 64 heads, 8 KV heads): an attn_v that would be
	// Q4_K or Q3_K gets Q5_K. Layer 10 of 80 is not in use_more_bits
	// (80/8 = 10, (10 − 10) mod 3 = 0).
	m70 := Model{Arch: "llama", Layers: 80, Heads: 64, KVHeads: 8}
	v10 := Tensor{Name: "blk.10.attn_v.weight", Shape: []int{1024, 8192}}
	for mix, want := range map[Mix]gguf.Type{MixQ4_K_M: Q5_K, MixQ3_K_S: Q5_K, MixQ4_K_S: Q5_K, MixQ5_K_S: Q5_K, MixQ6_K: Q6_K} {
		d, err := choose(mix, m70, v10, Options{})
		require.NoError(t, err)
		assert.Equal(t, want, d.Type, "%v: %s", mix, d.Reason)
	}
	// 65B (as many KV heads as heads) is not 70B.
	d, err := choose(MixQ4_K_M, Model{Arch: "llama", Layers: 80, Heads: 64, KVHeads: 64}, v10, Options{})
	require.NoError(t, err)
	assert.Equal(t, Q4_K, d.Type)

	// 8 experts (Mixtral): attn_v and attn_k Q8_0, attn_output Q5_K, the
	// experts' ffn_down placed by the layer in its name, the router kept.
	moe := Model{Arch: "llama", Layers: 32, Heads: 32, KVHeads: 8, Experts: 8}
	for _, c := range []struct {
		name  string
		shape []int
		mix   Mix
		want  gguf.Type
	}{
		{"blk.5.attn_v.weight", []int{1024, 4096}, MixQ4_K_M, Q8_0},
		{"blk.5.attn_k.weight", []int{1024, 4096}, MixQ4_K_M, Q8_0},
		{"blk.5.attn_output.weight", []int{4096, 4096}, MixQ4_K_M, Q5_K},
		{"blk.5.attn_output.weight", []int{4096, 4096}, MixQ5_K_M, Q5_K},
		{"blk.6.ffn_down_exps.weight", []int{8, 4096, 14336}, MixQ4_K_M, Q6_K},
		{"blk.7.ffn_down_exps.weight", []int{8, 4096, 14336}, MixQ4_K_M, Q4_K},
		{"blk.7.ffn_gate_inp.weight", []int{8, 4096}, MixQ4_K_M, F32},
	} {
		d, err := choose(c.mix, moe, Tensor{Name: c.name, Shape: c.shape}, Options{})
		require.NoError(t, err)
		assert.Equal(t, c.want, d.Type, "%v %s: %s", c.mix, c.name, d.Reason)
	}

	// Falcon: output Q8_0; Q4_K_M ffn_down Q6_K in the first sixteenth,
	// Q5_K in the other use_more_bits layers, else Q4_K; Q3_K_L
	// attn_output Q4_K and ffn_down Q4_K.
	fal := Model{Arch: "falcon", Layers: 32, Heads: 71, KVHeads: 1}
	for _, c := range []struct {
		name string
		mix  Mix
		want gguf.Type
	}{
		{"output.weight", MixQ4_K_M, Q8_0},
		{"blk.1.ffn_down.weight", MixQ4_K_M, Q6_K},
		{"blk.3.ffn_down.weight", MixQ4_K_M, Q5_K},
		{"blk.4.ffn_down.weight", MixQ4_K_M, Q4_K},
		{"blk.4.attn_output.weight", MixQ3_K_L, Q4_K},
		{"blk.4.ffn_down.weight", MixQ3_K_L, Q4_K},
		{"blk.4.ffn_down.weight", MixQ3_K_M, Q3_K},
		{"blk.6.ffn_down.weight", MixQ3_K_M, Q4_K},
		{"blk.4.ffn_down.weight", MixQ4_K_S, Q4_K},
	} {
		d, err := choose(c.mix, fal, Tensor{Name: c.name, Shape: []int{4544, 4608}}, Options{})
		require.NoError(t, err)
		assert.Equal(t, c.want, d.Type, "%v %s: %s", c.mix, c.name, d.Reason)
	}

	// A fused QKV follows attn_v's rules.
	d, err = choose(MixQ4_K_M, Model{Layers: 32}, Tensor{Name: "blk.0.attn_qkv.weight", Shape: []int{9216, 3072}}, Options{})
	require.NoError(t, err)
	assert.Equal(t, Q6_K, d.Type)
}

func TestHFNames(t *testing.T) {
	model := Model{Arch: "llama", Layers: 32, Heads: 32, KVHeads: 32}
	for _, c := range []struct {
		name  string
		shape []int
		cat   Category
		layer int
		want  gguf.Type
	}{
		{"model.embed_tokens.weight", []int{32000, 4096}, TokenEmbd, -1, Q4_K},
		{"lm_head.weight", []int{32000, 4096}, Output, -1, Q6_K},
		{"model.norm.weight", []int{4096}, Other, -1, F32},
		{"model.layers.0.input_layernorm.weight", []int{4096}, Other, 0, F32},
		{"model.layers.3.self_attn.v_proj.weight", []int{4096, 4096}, AttnV, 3, Q6_K},
		{"model.layers.4.self_attn.v_proj.weight", []int{4096, 4096}, AttnV, 4, Q4_K},
		{"model.layers.4.mlp.down_proj.weight", []int{4096, 11008}, FFNDown, 4, Q4_K},
		{"model.layers.30.mlp.down_proj.weight", []int{4096, 11008}, FFNDown, 30, Q6_K},
		{"model.layers.4.self_attn.o_proj.weight", []int{4096, 4096}, AttnOutput, 4, Q4_K},
		{"model.layers.4.self_attn.qkv_proj.weight", []int{12288, 4096}, AttnQKV, 4, Q4_K},
		{"model.layers.4.mlp.gate_proj.weight", []int{11008, 4096}, FFNGate, 4, Q4_K},
		{"model.layers.4.mlp.up_proj.weight", []int{11008, 4096}, FFNUp, 4, Q4_K},
		{"model.layers.0.block_sparse_moe.experts.3.w2.weight", []int{4096, 14336}, FFNDown, 0, Q6_K},
		{"model.layers.0.block_sparse_moe.experts.3.w1.weight", []int{14336, 4096}, FFNGate, 0, Q4_K},
		{"model.layers.0.block_sparse_moe.gate.weight", []int{8, 4096}, Other, 0, F32},
	} {
		assert.Equal(t, c.cat, CategoryOf(c.name), c.name)
		assert.Equal(t, c.layer, LayerOf(c.name), c.name)
		d, err := choose(MixQ4_K_M, model, Tensor{Name: c.name, Shape: c.shape}, Options{})
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, d.Type, "%s: %s", c.name, d.Reason)
	}
}

func TestCategoryAndLayer(t *testing.T) {
	for name, c := range map[string]Category{
		"token_embd.weight": TokenEmbd, "per_layer_token_embd.weight": TokenEmbd, "output.weight": Output,
		"output_norm.weight": Other, "blk.0.attn_q.weight": AttnQ, "blk.0.attn_k.weight": AttnK,
		"blk.0.attn_v.weight": AttnV, "blk.0.attn_qkv.weight": AttnQKV, "blk.0.attn_kv_b.weight": AttnKVB,
		"blk.0.attn_output.weight": AttnOutput, "blk.0.ffn_up_exps.weight": FFNUp,
		"blk.0.ffn_gate_shexp.weight": FFNGate, "blk.0.ffn_down.weight": FFNDown, "blk.0.attn_q_a.weight": Other,
		"model.layers.0.self_attn.kv_b_proj.weight": AttnKVB, "transformer.h.0.self_attention.query_key_value.weight": AttnQKV,
	} {
		assert.Equal(t, c, CategoryOf(name), name)
	}
	for name, l := range map[string]int{
		"blk.12.attn_q.weight": 12, "model.layers.7.mlp.up_proj.weight": 7, "transformer.h.3.mlp.weight": 3,
		"token_embd.weight": -1, "blk.x.attn_q.weight": -1, "blk.01.attn_q.weight": -1, "blk.-1.attn_q.weight": -1,
		"blk.5": -1,
	} {
		assert.Equal(t, l, LayerOf(name), name)
	}
	assert.Equal(t, "attn_v", AttnV.String())
	assert.Equal(t, "Category(99)", Category(99).String())
}

func TestTensorErrors(t *testing.T) {
	v40 := Tensor{Name: "blk.40.attn_v.weight", Shape: []int{4096, 4096}}
	var te *TensorError
	_, err := choose(MixQ4_K_M, Model{Layers: 32}, v40, Options{})
	require.ErrorAs(t, err, &te)
	assert.Equal(t, `tensor "blk.40.attn_v.weight": layer 40 outside the model's 32 layers`, err.Error())
	_, err = choose(MixQ4_K_M, Model{}, v40, Options{})
	require.ErrorAs(t, err, &te)
	assert.Contains(t, te.Reason, "layer count")
	_, err = choose(MixQ4_K_M, Model{Layers: 32}, Tensor{Name: "attn_v.weight", Shape: []int{8, 256}}, Options{})
	require.ErrorAs(t, err, &te)
	assert.Contains(t, te.Reason, "no layer index")
	// Mixes without layer rules for it, pure mode and float mixes need no position.
	for _, mix := range []Mix{MixQ6_K, MixF16} {
		_, err = choose(mix, Model{}, v40, Options{})
		assert.NoError(t, err, mix.String())
	}
	_, err = choose(MixQ4_K_M, Model{}, v40, Options{Pure: true})
	assert.NoError(t, err)

	_, err = Plan(MixQ4_K_M, Model{Layers: 32}, []Tensor{v40}, Options{})
	require.ErrorAs(t, err, &te)
	_, err = Plan(MixQ4_K_M, Model{Layers: 32, Experts: 8}, []Tensor{{Name: "ffn_down_exps.weight", Shape: []int{8, 64, 256}}}, Options{})
	require.ErrorAs(t, err, &te)
	assert.Contains(t, te.Reason, "no layer index")
	_, err = choose(MixQ4_K_M, Model{Layers: 1}, Tensor{Name: "blk.0.attn_q.weight", Shape: []int{4, 0}}, Options{})
	require.ErrorAs(t, err, &te)
	assert.Contains(t, te.Reason, "row length 0")

	// Plan infers the layer count from the names when the model lacks it.
	ds, err := Plan(MixQ4_K_M, Model{}, llamaTensors(8, 4096, false), Options{})
	require.NoError(t, err)
	for _, d := range ds {
		if d.Name == "blk.7.attn_v.weight" {
			assert.Equal(t, Q6_K, d.Type, "layer 7 of 8 is in the last eighth")
		}
	}
}

func TestPlanCountsLikeLlamaQuantize(t *testing.T) {
	// A hybrid model of 8 layers with attention in layers 1, 3, 5 and 7
	// only, listed out of order. The attn_v tensors are placed by rank
	// among the 4 of them: use_more_bits(i, 4) holds for i = 2 ((2 − 0)
	// mod 3 = 2) and i = 3 (≥ 7·4/8 = 3), so layers 5 and 7 get Q6_K and
	// layers 1 and 3 keep Q4_K. ffn_down, one per layer, is placed by layer
	// of 8: use_more_bits(i, 8) holds for 0 (< 1), 3 and 6 ((i − 1) mod 3
	// = 2) and 7 (≥ 7).
	var ts []Tensor
	for _, l := range []int{7, 0, 5, 2, 3, 6, 1, 4} {
		ts = append(ts, Tensor{Name: fmt.Sprintf("blk.%d.ffn_down.weight", l), Shape: []int{256, 256}})
		if l%2 == 1 {
			ts = append(ts, Tensor{Name: fmt.Sprintf("blk.%d.attn_v.weight", l), Shape: []int{256, 256}})
		}
	}
	ds, err := Plan(MixQ4_K_M, Model{Layers: 8}, ts, Options{})
	require.NoError(t, err)
	want := map[string]gguf.Type{
		"blk.1.attn_v.weight": Q4_K, "blk.3.attn_v.weight": Q4_K, "blk.5.attn_v.weight": Q6_K, "blk.7.attn_v.weight": Q6_K,
		"blk.0.ffn_down.weight": Q6_K, "blk.1.ffn_down.weight": Q4_K, "blk.2.ffn_down.weight": Q4_K,
		"blk.3.ffn_down.weight": Q6_K, "blk.4.ffn_down.weight": Q4_K, "blk.5.ffn_down.weight": Q4_K,
		"blk.6.ffn_down.weight": Q6_K, "blk.7.ffn_down.weight": Q6_K,
	}
	require.Len(t, ds, len(want))
	for _, d := range ds {
		assert.Equal(t, want[d.Name], d.Type, "%s: %s", d.Name, d.Reason)
	}
}

func TestOverridesFlag(t *testing.T) {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ovs Overrides
	fs.Var(&ovs, "type-for", "RE=TYPE")
	require.NoError(t, fs.Parse([]string{"-type-for", "ffn_down=q6_k", "-type-for", "attn_v=q8_0"}))
	require.Len(t, ovs, 2)
	assert.Equal(t, "ffn_down=q6_k,attn_v=q8_0", ovs.String())
	assert.Equal(t, Q8_0, ovs[1].Type)
	err := fs.Parse([]string{"-type-for", "ffn_down=q9_k"})
	require.Error(t, err) // the flag package keeps only the message
	assert.Contains(t, err.Error(), `override "ffn_down=q9_k": unknown type "q9_k"`)
	var oe *OverrideError
	require.ErrorAs(t, ovs.Set("x=q9_k"), &oe)
	assert.Equal(t, "x=q9_k", oe.Value)
	assert.Equal(t, "", (*Overrides)(nil).String())
}
