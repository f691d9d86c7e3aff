package ggufmix_test

import (
	"fmt"

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
