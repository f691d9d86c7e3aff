package ggufmix

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorMessages checks that messages carry no package name and no
// command-line flag, and that Detail leaves out the value for callers that
// give it.
func TestErrorMessages(t *testing.T) {
	_, err := ParseOverride("ffn_down=q7_k")
	var oe *OverrideError
	require.True(t, errors.As(err, &oe))
	assert.Equal(t, `override "ffn_down=q7_k": unknown type "q7_k" (closest: "q2_k", "q3_k", "q4_k")`, err.Error())
	assert.Equal(t, `unknown type "q7_k" (closest: "q2_k", "q3_k", "q4_k")`, oe.Detail())
	assert.Empty(t, oe.Generic)
	// Q8_K is a type only generic GGUF output takes: the error says so as a
	// field, for the caller to name its own way to ask for it.
	_, err = ParseOverride("ffn_down=Q8_K")
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, OverrideError{Value: "ffn_down=Q8_K", Reason: "Q8_K is ggml's intermediate for dot products, " +
		"not a weight type llama.cpp computes with: use q8_0 (8.5 bits per value)", Generic: "q8_k"}, *oe)
	assert.NotContains(t, err.Error(), "-dtype")
	_, err = Lookup("q4km")
	require.Error(t, err)
	assert.False(t, strings.HasPrefix(err.Error(), "ggufmix"), err.Error())
}
