package ggufmix_test

import (
	"errors"
	"fmt"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
)

func ExamplePlan() {
	mix, _ := ggufmix.Lookup("q4_k_m")
	over, _ := ggufmix.ParseOverrides([]string{`blk\.1\.ffn_down=q8_0`})
	// A 32-layer Llama-2-7B: embedding, output head, and per layer two
	// norms, four attention and three FFN matrices.
	tensors := []ggufmix.Tensor{
		{Name: "token_embd.weight", Shape: []int{32000, 4096}},
		{Name: "output_norm.weight", Shape: []int{4096}},
		{Name: "output.weight", Shape: []int{32000, 4096}},
	}
	for i := range 32 {
		p := fmt.Sprintf("blk.%d.", i)
		for _, t := range []ggufmix.Tensor{
			{Name: p + "attn_norm.weight", Shape: []int{4096}},
			{Name: p + "attn_q.weight", Shape: []int{4096, 4096}},
			{Name: p + "attn_k.weight", Shape: []int{4096, 4096}},
			{Name: p + "attn_v.weight", Shape: []int{4096, 4096}},
			{Name: p + "attn_output.weight", Shape: []int{4096, 4096}},
			{Name: p + "ffn_norm.weight", Shape: []int{4096}},
			{Name: p + "ffn_gate.weight", Shape: []int{11008, 4096}},
			{Name: p + "ffn_up.weight", Shape: []int{11008, 4096}},
			{Name: p + "ffn_down.weight", Shape: []int{4096, 11008}},
		} {
			tensors = append(tensors, t)
		}
	}
	model := ggufmix.Model{Arch: "llama", Layers: 32, Heads: 32, KVHeads: 32}
	decisions, err := ggufmix.Plan(mix, model, tensors, ggufmix.Options{Overrides: over})
	if err != nil {
		panic(err)
	}
	show := map[string]bool{"token_embd.weight": true, "output.weight": true, "blk.0.attn_norm.weight": true,
		"blk.0.attn_v.weight": true, "blk.1.ffn_down.weight": true, "blk.4.ffn_down.weight": true,
		"blk.6.ffn_down.weight": true}
	for _, d := range decisions {
		if show[d.Name] {
			fmt.Printf("%-22s %-4v %s\n", d.Name, d.Type, d.Reason)
		}
	}
	// Output:
	// token_embd.weight      Q4_K Q4_K_M base type
	// output.weight          Q6_K output head: Q6_K
	// blk.0.attn_norm.weight F32  1-D tensor: kept F32
	// blk.0.attn_v.weight    Q6_K Q4_K_M: attn_v 0 of 32, in the first eighth (use_more_bits): Q6_K
	// blk.1.ffn_down.weight  Q8_0 override blk\.1\.ffn_down=q8_0: Q8_0
	// blk.4.ffn_down.weight  Q4_K Q4_K_M base type
	// blk.6.ffn_down.weight  Q6_K Q4_K_M: ffn_down in layer 6 of 32, every third layer in between (use_more_bits): Q6_K
}

// Every mix, with the llama_ftype value llama.cpp's llama.h gives it (the
// general.file_type of a file of that mix) and its base block type.
func ExampleMix() {
	for _, m := range []ggufmix.Mix{
		ggufmix.MixF32, ggufmix.MixF16, ggufmix.MixBF16,
		ggufmix.MixQ4_0, ggufmix.MixQ4_1, ggufmix.MixQ5_0, ggufmix.MixQ5_1, ggufmix.MixQ8_0,
		ggufmix.MixQ2_K, ggufmix.MixQ2_K_S, ggufmix.MixQ3_K_S, ggufmix.MixQ3_K_M, ggufmix.MixQ3_K_L,
		ggufmix.MixQ4_K_S, ggufmix.MixQ4_K_M, ggufmix.MixQ5_K_S, ggufmix.MixQ5_K_M,
		ggufmix.MixQ6_K, ggufmix.MixIQ1_S, ggufmix.MixIQ1_M,
		ggufmix.MixIQ2_XXS, ggufmix.MixIQ2_XS, ggufmix.MixIQ2_S, ggufmix.MixIQ2_M,
		ggufmix.MixIQ3_XXS, ggufmix.MixIQ3_XS, ggufmix.MixIQ3_S, ggufmix.MixIQ3_M,
		ggufmix.MixIQ4_NL, ggufmix.MixIQ4_XS,
		ggufmix.MixTQ1_0, ggufmix.MixTQ2_0, ggufmix.MixMXFP4_MOE, ggufmix.MixQ1_0, ggufmix.MixQ2_0,
		ggufmix.MixCOPY,
	} {
		fmt.Println(m, m.FileType(), m.Base())
	}
	fmt.Println(len(ggufmix.Mixes()), "mixes")
	// Output:
	// F32 0 F32
	// F16 1 F16
	// BF16 32 BF16
	// Q4_0 2 Q4_0
	// Q4_1 3 Q4_1
	// Q5_0 8 Q5_0
	// Q5_1 9 Q5_1
	// Q8_0 7 Q8_0
	// Q2_K 10 Q2_K
	// Q2_K_S 21 Q2_K
	// Q3_K_S 11 Q3_K
	// Q3_K_M 12 Q3_K
	// Q3_K_L 13 Q3_K
	// Q4_K_S 14 Q4_K
	// Q4_K_M 15 Q4_K
	// Q5_K_S 16 Q5_K
	// Q5_K_M 17 Q5_K
	// Q6_K 18 Q6_K
	// IQ1_S 24 IQ1_S
	// IQ1_M 31 IQ1_M
	// IQ2_XXS 19 IQ2_XXS
	// IQ2_XS 20 IQ2_XS
	// IQ2_S 28 IQ2_XS
	// IQ2_M 29 IQ2_S
	// IQ3_XXS 23 IQ3_XXS
	// IQ3_XS 22 IQ3_S
	// IQ3_S 26 IQ3_S
	// IQ3_M 27 IQ3_S
	// IQ4_NL 25 IQ4_NL
	// IQ4_XS 30 IQ4_XS
	// TQ1_0 36 TQ1_0
	// TQ2_0 37 TQ2_0
	// MXFP4_MOE 38 MXFP4
	// Q1_0 40 Q1_0
	// Q2_0 41 Q2_0
	// COPY 0 F32
	// 36 mixes
}

// An override as llama-quantize's --tensor-type takes it; Match finds the
// first override that applies to a tensor. The closest names of an unknown
// one are those fewest edits away, in the order of the known types.
func ExampleParseOverride() {
	o, err := ggufmix.ParseOverride(`ffn_(up|down)=Q6_K`)
	if err != nil {
		panic(err)
	}
	for _, name := range []string{"blk.3.ffn_down.weight", "blk.3.ffn_gate.weight"} {
		if m, ok := ggufmix.Match([]ggufmix.Override{o}, name); ok {
			fmt.Println(name, m.Type)
		} else {
			fmt.Println(name, "no override")
		}
	}
	_, err = ggufmix.ParseOverride("ffn_down=q7_k")
	fmt.Println(err)
	// Output:
	// blk.3.ffn_down.weight Q6_K
	// blk.3.ffn_gate.weight no override
	// override "ffn_down=q7_k": unknown type "q7_k" (closest: "q2_k", "q3_k", "q4_k")
}

// An unknown mix name (Q4_K_M is one edit away, Q4_0 and Q4_1 two), and a
// tensor the rules cannot place.
func Example_errors() {
	_, err := ggufmix.Lookup("Q4_KM")
	var um *ggufmix.UnknownMixError
	fmt.Println(errors.As(err, &um), um.Closest)

	mix, _ := ggufmix.Lookup("q4_k_m")
	model := ggufmix.Model{Arch: "llama", Layers: 2, Heads: 8, KVHeads: 8}
	tensors := []ggufmix.Tensor{{Name: "blk.7.ffn_down.weight", Shape: []int{64, 256}}}
	_, err = ggufmix.Plan(mix, model, tensors, ggufmix.Options{})
	var te *ggufmix.TensorError
	fmt.Println(errors.As(err, &te), te.Name)
	fmt.Println(err)
	// Output:
	// true [Q4_K_M Q4_0 Q4_1]
	// true blk.7.ffn_down.weight
	// tensor "blk.7.ffn_down.weight": layer 7 outside the model's 2 layers
}

// Fit chooses types for a byte budget: here two tensors of a mix, each
// with the bytes and the error (as a noise-to-signal ratio, which package
// convert measures on sampled rows) of three of its candidate types.
func ExampleFit() {
	mix, _ := ggufmix.Lookup("q4_k_m")
	tensors := []ggufmix.Tensor{
		{Name: "blk.0.attn_v.weight", Shape: []int{1024, 4096}},
		{Name: "blk.0.ffn_up.weight", Shape: []int{14336, 4096}},
	}
	ds, _ := ggufmix.Plan(mix, ggufmix.Model{Arch: "llama", Layers: 1}, tensors, ggufmix.Options{})
	fmt.Println(len(ggufmix.TargetTypes), "types,", len(ggufmix.Candidates(ds[0], 4096, false)), "without an importance vector")
	cost := func(rows int64, err ...float64) []ggufmix.Candidate {
		var out []ggufmix.Candidate
		for i, t := range []gguf.Type{gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ6_K} {
			size, _ := t.Size(rows * 4096)
			out = append(out, ggufmix.Candidate{Type: t, Bytes: size, Err: err[i]})
		}
		return out
	}
	cands := [][]ggufmix.Candidate{cost(1024, 0.030, 0.008, 0.0005), cost(14336, 0.030, 0.008, 0.0005)}
	for _, budget := range []int64{40 << 20, 30 << 20, 20 << 20} {
		err := ggufmix.Fit(ds, cands, budget)
		if errors.Is(err, ggufmix.ErrTargetTooSmall) {
			fmt.Println(err)
			continue
		}
		fmt.Println(ds[0].Type, ds[1].Type, "-", ds[1].Reason)
	}
	// Output:
	// 16 types, 10 without an importance vector
	// Q6_K Q4_K - size target: Q4_K, of 3 candidate types
	// Q6_K Q3_K - size target: Q3_K, of 3 candidate types
	// size target too small: the tensors it chooses types for take 27033600 bytes at least, and it leaves them 20971520
}
