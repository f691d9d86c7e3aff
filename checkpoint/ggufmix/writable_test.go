package ggufmix

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
)

// TestOverrideTypesAreTheLayouts ties overrideTypes to the types the gguf
// layout writes: every override type has a datatype of the layout, and
// every datatype the layout takes is an override type, but Q8_K.
func TestOverrideTypesAreTheLayouts(t *testing.T) {
	l, err := layout.Get("gguf")
	require.NoError(t, err)
	for _, typ := range overrideTypes {
		dt, err := layout.DataType(l, strings.ToLower(typ.String()))
		require.NoError(t, err, typ.String())
		got, ok := layout.GGUFTypeOf(dt)
		require.True(t, ok, typ.String())
		assert.Equal(t, typ, got)
	}
	_, err = layout.DataType(l, "no such type")
	var de *layout.DataTypeError
	require.True(t, errors.As(err, &de))
	require.NotEmpty(t, de.Accepted)
	for _, name := range de.Accepted {
		dt, err := layout.DataType(l, name)
		require.NoError(t, err, name)
		typ, ok := layout.GGUFTypeOf(dt)
		require.True(t, ok, name)
		if typ == gguf.TypeQ8_K {
			continue
		}
		assert.Contains(t, overrideTypes, typ, "the layout writes %s: -type-for should take it", name)
	}
}
