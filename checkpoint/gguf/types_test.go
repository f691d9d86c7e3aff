package gguf

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSearches(t *testing.T) {
	// The types whose quantizers fit scales (and mins) by least squares.
	for _, typ := range []Type{TypeQ2_K, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K, TypeQ8_K, TypeIQ4_NL, TypeIQ4_XS,
		TypeQ4_1, TypeQ5_0, TypeQ5_1, TypeQ4_0, TypeIQ2_XXS, TypeIQ2_XS, TypeIQ2_S, TypeIQ3_XXS,
		TypeIQ3_S, TypeIQ1_S, TypeIQ1_M} {
		assert.True(t, Searches(typ), typ.String())
	}
	// ggml's reference Q8_0, MXFP4's fixed rule, the plain types.
	for _, typ := range []Type{TypeQ8_0, TypeMXFP4, TypeF32, TypeF16, TypeBF16,
		TypeTQ1_0, TypeTQ2_0, TypeQ1_0, TypeQ2_0} {
		assert.False(t, Searches(typ), typ.String())
	}
}

// TestCodecs checks that gguf finds a kernels codec for each block type it
// documents, with the geometry of ggml's block structs (typeTable), and a
// quantizer for each but NVFP4.
func TestCodecs(t *testing.T) {
	want := []Type{TypeQ4_0, TypeQ4_1, TypeQ5_0, TypeQ5_1, TypeQ8_0, TypeQ2_K, TypeQ3_K, TypeQ4_K,
		TypeQ5_K, TypeQ6_K, TypeQ8_K, TypeIQ4_NL, TypeIQ4_XS, TypeMXFP4, TypeNVFP4,
		TypeTQ1_0, TypeTQ2_0, TypeQ1_0, TypeQ2_0, TypeIQ2_XXS, TypeIQ2_XS, TypeIQ2_S,
		TypeIQ3_XXS, TypeIQ3_S, TypeIQ1_S, TypeIQ1_M}
	assert.Len(t, codecs, len(want))
	for _, typ := range want {
		c, ok := codecs[typ]
		if !assert.True(t, ok, typ.String()) {
			continue
		}
		assert.Equal(t, [2]int{typ.BlockSize(), typ.BlockBytes()}, [2]int{c.BlockLen, c.BlockBytes}, typ.String())
		assert.Equal(t, typ != TypeNVFP4, c.Quantize != nil, typ.String())
		assert.True(t, CanFloat32(typ), typ.String())
	}
}
