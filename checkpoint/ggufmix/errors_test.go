package ggufmix

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorMessages checks that messages carry no package name and that
// Detail leaves out the flag and value for callers that give them.
func TestErrorMessages(t *testing.T) {
	_, err := ParseOverride("ffn_down=q7_k")
	var oe *OverrideError
	require.True(t, errors.As(err, &oe))
	assert.Equal(t, `-type-for "ffn_down=q7_k": unknown type "q7_k" (closest: "q2_k", "q3_k", "q4_k")`, err.Error())
	assert.Equal(t, `unknown type "q7_k" (closest: "q2_k", "q3_k", "q4_k")`, oe.Detail())
	_, err = Lookup("q4km")
	require.Error(t, err)
	assert.False(t, strings.HasPrefix(err.Error(), "ggufmix"), err.Error())
}
