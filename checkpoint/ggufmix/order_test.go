package ggufmix

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLlamaOrder pins the order Plan ranks tensors in: llama.cpp's, by
// layer (tensors without one first), then by name.
func TestLlamaOrder(t *testing.T) {
	names := []string{"blk.1.attn_v.weight", "output.weight", "blk.0.ffn_down.weight",
		"blk.10.attn_v.weight", "blk.0.attn_v.weight", "token_embd.weight"}
	tensors := make([]Tensor, len(names))
	layers := make([]int, len(names))
	for i, n := range names {
		tensors[i], layers[i] = Tensor{Name: n}, LayerOf(n)
	}
	var got []string
	for _, i := range llamaOrder(tensors, layers) {
		got = append(got, names[i])
	}
	assert.Equal(t, []string{"output.weight", "token_embd.weight", "blk.0.attn_v.weight",
		"blk.0.ffn_down.weight", "blk.1.attn_v.weight", "blk.10.attn_v.weight"}, got)
}
